"""Retrieval: question -> unit scores -> tables, max-pooled, with join hints; query and chat engines.

Pipeline step: retrieval (docs/architecture.md).
"""
