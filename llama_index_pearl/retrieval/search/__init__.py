"""The search that ranks tables: one interface for every vector store, max-pooling, lexical evidence, scopes.

Pipeline step: search (docs/architecture.md).
"""
