"""Storage: the index's state, its incremental updates, and verified atomic persist/load.

Pipeline step: storage (docs/architecture.md).
"""
