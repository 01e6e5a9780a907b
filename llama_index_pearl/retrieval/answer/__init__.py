"""The answer: the route, the set of tables, first among the ranking's, as result nodes with join hints.

Pipeline step: answer (docs/architecture.md).
"""
