"""Baselines that ``pearl eval`` compares PEARL with.

``bm25`` ranks tables with BM25 (:class:`~llama_index_pearl.retrieval.search.lexical.LexicalScorer`,
the tokens PEARL's hybrid scoring uses) over exactly the text PEARL's lexical index reads for
each whole table, so the comparison isolates the scoring model, not the serialization.

Pipeline step: evaluation (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from llama_index_pearl.corpus.units import lexical_text, original_unit
from llama_index_pearl.retrieval.search.lexical import LexicalScorer
from llama_index_pearl.tables.table import Table
from llama_index_pearl.text.serialization import Serializer

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
        texts = [lexical_text(original_unit(t, serializer)) for t in tables]
        self._scorer = LexicalScorer([t.id for t in tables], texts)

    def rank(self, question: str, k: int) -> list[str]:
        """Top-k table ids for a question (fewer when the question shares no term)."""
        return self._scorer.rank(question, k)
