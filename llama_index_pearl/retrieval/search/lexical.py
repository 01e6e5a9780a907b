"""Lexical (BM25) scores of units, fused with dense scores before max-pooling.

A small sentence encoder matches meaning but blurs exact words: a question that
names a column (``pet type``), a value (``"Phillips AAF"``) or a table
(``car makers``) often ranks a unit that merely sounds alike above the unit that
holds those words. BM25 over the very text each unit embeds (questions, table
names, headers, rows) supplies that evidence. The fused score of a unit is

    cos(q, u) + weight * bm25(q, u) / max over units of bm25(q, ·)

so the best lexical match of a question gains at most ``weight`` cosine and a
question sharing no word with the corpus is ranked by the encoder alone.

Tokens and the BM25 index are the corpus's (:mod:`llama_index_pearl.corpus.lexical`): an index built in
this process indexes its units on its first lexical query, a loaded one reads the persisted BM25 arrays.

Pipeline step: search (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from llama_index_pearl.corpus.lexical import LexicalIndex, lexical_tokens, text_tokens

__all__ = ["DEFAULT_LEXICAL_WEIGHT", "LexicalScorer", "lexical_tokens", "text_tokens"]

# The middle of the plateau on every dev set and both generators, not one set's best
# (benchmarks/README.md, "Constants": retrieval.search.lexical.DEFAULT_LEXICAL_WEIGHT).
DEFAULT_LEXICAL_WEIGHT = 0.075


class LexicalScorer:
    """BM25 over a fixed list of documents (units or tables), scores normalised per question.

    Args:
        doc_ids: One id per document.
        texts: The documents' texts, in the order of ``doc_ids`` (indexed here), or ``None`` with ``index``.
        index: A lexical index of the documents already built, in the order of ``doc_ids``.
    """

    def __init__(
        self, doc_ids: Sequence[str], texts: Sequence[str] | None = None, index: LexicalIndex | None = None
    ) -> None:
        if (texts is None) == (index is None):
            raise ValueError("LexicalScorer takes the documents' texts or their index, one of the two")
        n_docs = len(texts) if texts is not None else index.n_docs  # type: ignore[union-attr]
        if len(doc_ids) != n_docs:
            raise ValueError(f"LexicalScorer got {len(doc_ids)} ids for {n_docs} documents")
        if not doc_ids:
            raise ValueError("LexicalScorer needs at least one document")
        self._ids = list(doc_ids)
        self.index = index if index is not None else LexicalIndex.build(texts)  # type: ignore[arg-type]

    @property
    def doc_ids(self) -> list[str]:
        return list(self._ids)

    def raw_scores(self, question: str) -> np.ndarray:
        """BM25 of every document for ``question`` (zeros when it shares no term), in ``doc_ids`` order."""
        return self.index.raw_scores(question)

    def relative(self, question: str) -> np.ndarray | None:
        """Each document's BM25 divided by the best document's, in ``doc_ids`` order (float64, in [0, 1]).

        ``None`` when no document shares a term with ``question``: the one normalisation of lexical evidence,
        read by :meth:`scores` (a mapping by id) and by a search's lexical boost (an array by unit number).
        """
        raw = self.raw_scores(question)
        top = float(raw.max(initial=0.0))
        if top <= 0.0:
            return None
        return raw.astype(np.float64) / top

    def scores(self, question: str) -> dict[str, float]:
        """Documents that share a term with ``question``: BM25 divided by the best document's, in (0, 1]."""
        relative = self.relative(question)
        if relative is None:
            return {}
        hits = np.flatnonzero(relative > 0)
        # in float32, as a store's scores are (a float64 quotient of float32 values rounds to the float32 one)
        return {self._ids[i]: float(value) for i, value in zip(hits, relative[hits].astype(np.float32))}

    def rank(self, question: str, k: int) -> list[str]:
        """Top-``k`` document ids by BM25 (fewer when fewer share a term with ``question``)."""
        raw = self.raw_scores(question)
        order = np.argsort(-raw, kind="stable")[:k]
        return [self._ids[i] for i in order if raw[i] > 0]
