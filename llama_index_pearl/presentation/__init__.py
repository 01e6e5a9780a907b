"""Presentation: the join-graph page and the headless browser that draws it.

Pipeline step: presentation (docs/architecture.md).
"""
