"""Corpus: generated questions and join paths become indexed units, embedded into a vector store.

Pipeline step: corpus (docs/architecture.md).
"""
