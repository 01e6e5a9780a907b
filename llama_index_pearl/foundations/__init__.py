"""Foundations: optional imports naming their extra, and the stage timer.

Pipeline step: foundations (docs/architecture.md).
"""
