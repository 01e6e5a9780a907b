"""Text and encoders: the one text rendering of table views, and the encoder and LLM a build uses.

Pipeline step: text (docs/architecture.md).
"""
