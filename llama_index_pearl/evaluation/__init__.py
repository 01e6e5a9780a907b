"""Evaluation: benchmark folders, recall metrics, join hints against gold SQL, baselines.

Pipeline step: evaluation (docs/architecture.md).
"""
