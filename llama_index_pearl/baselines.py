"""Baselines that ``pearl eval`` compares PEARL with.

``bm25`` ranks tables with BM25 (the maintained ``bm25s`` library) over exactly
the text PEARL embeds for each whole table, so the comparison isolates the
scoring model, not the serialization.
"""

from __future__ import annotations

from collections.abc import Sequence

from llama_index_pearl.extras import require
from llama_index_pearl.table import Table
from llama_index_pearl.units import Serializer

__all__ = ["BM25TableRanker"]


class BM25TableRanker:
    """BM25 over whole-table serializations.

    Args:
        tables: The corpus.
        serializer: Renders each table (use the index's, for the same text).
    """

    def __init__(self, tables: Sequence[Table], serializer: Serializer) -> None:
        if not tables:
            raise ValueError("BM25TableRanker needs at least one table")
        self._bm25s = require("bm25s", "bench", "the BM25 baseline")
        self._ids = [t.id for t in tables]
        texts = [serializer([serializer.view(t)]) for t in tables]
        self._retriever = self._bm25s.BM25()
        self._retriever.index(self._bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)

    def rank(self, question: str, k: int) -> list[str]:
        """Top-k table ids for a question (fewer when the question shares no term)."""
        tokens = self._bm25s.tokenize([question], stopwords="en", show_progress=False)
        k = min(k, len(self._ids))
        docs, scores = self._retriever.retrieve(tokens, k=k, show_progress=False)
        return [self._ids[int(d)] for d, s in zip(docs[0], scores[0]) if s > 0]
