from llama_index_pearl.joins.paths import ColumnPair, JoinKind, JoinPath

__all__ = ["ColumnPair", "JoinKind", "JoinPath"]
