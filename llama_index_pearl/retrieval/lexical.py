"""Lexical (BM25) scores of units, fused with dense scores before max-pooling.

A small sentence encoder matches meaning but blurs exact words: a question that
names a column (``pet type``), a value (``"Phillips AAF"``) or a table
(``car makers``) often ranks a unit that merely sounds alike above the unit that
holds those words. BM25 over the very text each unit embeds (questions, table
names, headers, rows) supplies that evidence. The fused score of a unit is

    cos(q, u) + weight * bm25(q, u) / max over units of bm25(q, ·)

so the best lexical match of a question gains at most ``weight`` cosine and a
question sharing no word with the corpus is ranked by the encoder alone.

Tokens: identifiers are split (``Has_Pet`` and ``carMakers`` become words),
English stop words dropped and plurals folded (:func:`~llama_index_pearl.joins.profiles.singular`),
since questions say "pets" of a table named ``Pets`` or ``pet``.

BM25 is the maintained ``bm25s`` library; the index is rebuilt from the unit
texts (nothing extra is persisted, so a loaded index cannot disagree with its units).

Pipeline step: retrieval (docs/architecture.md).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

import bm25s
import numpy as np
from bm25s.stopwords import STOPWORDS_EN

from llama_index_pearl.joins.profiles import singular

__all__ = ["DEFAULT_LEXICAL_WEIGHT", "LexicalScorer", "lexical_tokens", "split_identifiers", "text_tokens"]

# Chosen on every dev set and both generators together (README, Benchmarks): heuristic R@2 at 0.05 / 0.075 / 0.1
# was spider 89.20 / 89.59 / 90.04, spider_realistic 86.52 / 86.42 / 87.07, spider_rows10 89.39 / 90.02 / 90.38
# (encoder only: 86.0, 84.0, 86.9), while spider_realistic's 3-hop R@5 fell 91.89 / 90.09 / 89.19, and 0.2 lost
# on every set (spider_realistic 80.6, below encoder only). 0.075 is the middle of the plateau, not one set's best.
DEFAULT_LEXICAL_WEIGHT = 0.075

# bm25s sets its logger to DEBUG on import, so every index build printed "Building index from tokens" wherever the
# application logs; inherit the application's level instead
logging.getLogger("bm25s").setLevel(logging.NOTSET)

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# bm25s's own token rule and English stop words (scikit-learn's CountVectorizer pattern), applied here directly:
# bm25s.tokenize builds a vocabulary and progress bars per call, 0.2 ms of a 0.6 ms query on spider
_TOKEN = re.compile(r"(?u)\b\w\w+\b")
_STOPWORDS = frozenset(STOPWORDS_EN)


def split_identifiers(text: str) -> str:
    """``Has_Pet carMakers`` -> ``Has Pet car Makers`` (snake and camel case become words)."""
    return _CAMEL.sub(" ", text).replace("_", " ")


def text_tokens(text: str) -> list[str]:
    """Tokens of one text for BM25: split identifiers, lower case, no stop words, plurals folded."""
    words = _TOKEN.findall(split_identifiers(text).lower())
    return [singular(w) for w in words if w not in _STOPWORDS]


def lexical_tokens(texts: Sequence[str]) -> list[list[str]]:
    """:func:`text_tokens` of each text."""
    return [text_tokens(t) for t in texts]


class LexicalScorer:
    """BM25 over a fixed list of documents (units or tables), scores normalised per question.

    Args:
        doc_ids: One id per document.
        texts: The documents' texts, in the order of ``doc_ids``.
    """

    def __init__(self, doc_ids: Sequence[str], texts: Sequence[str]) -> None:
        if len(doc_ids) != len(texts):
            raise ValueError(f"LexicalScorer got {len(doc_ids)} ids for {len(texts)} texts")
        if not doc_ids:
            raise ValueError("LexicalScorer needs at least one document")
        self._ids = list(doc_ids)
        self._bm25 = bm25s.BM25()
        self._bm25.index(lexical_tokens(texts), show_progress=False)

    @property
    def doc_ids(self) -> list[str]:
        return list(self._ids)

    def raw_scores(self, question: str) -> np.ndarray:
        """BM25 of every document for ``question`` (zeros when it shares no term), in ``doc_ids`` order."""
        tokens = [t for t in text_tokens(question) if t in self._bm25.vocab_dict]
        if not tokens:
            return np.zeros(len(self._ids), dtype=np.float32)
        return np.asarray(self._bm25.get_scores(tokens), dtype=np.float32)

    def scores(self, question: str) -> dict[str, float]:
        """Documents that share a term with ``question``: BM25 divided by the best document's, in (0, 1]."""
        raw = self.raw_scores(question)
        top = float(raw.max(initial=0.0))
        if top <= 0.0:
            return {}
        hits = np.flatnonzero(raw > 0)
        return {self._ids[i]: float(raw[i] / top) for i in hits}

    def rank(self, question: str, k: int) -> list[str]:
        """Top-``k`` document ids by BM25 (fewer when fewer share a term with ``question``)."""
        raw = self.raw_scores(question)
        order = np.argsort(-raw, kind="stable")[:k]
        return [self._ids[i] for i in order if raw[i] > 0]
