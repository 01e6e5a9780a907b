"""The lexical index of a unit corpus: BM25 over the units' lexical texts, built once, persisted ready to use.

Tokens: identifiers are split as join naming and the heuristic questions split them
(:func:`~llama_index_pearl.text.words.split_identifiers`: ``Has_Pet``, ``carMakers`` and ``HTTPServer``
become words), English stop words dropped and plurals folded (:func:`~llama_index_pearl.text.words.singular`),
since questions say "pets" of a table named ``Pets`` or ``pet``. A question's token the index lacks is read as the
forms of its family the index holds (:meth:`LexicalIndex.question_tokens`: "rented" as ``rental``).

BM25 is the maintained ``bm25s`` library (Lucene's BM25, its defaults). It builds the index: one
score per (token, document) in a sparse column matrix. Scoring a question only sums the columns
of its tokens, so :class:`LexicalIndex` keeps the matrix and the vocabulary as plain arrays and
scores them with numpy, exactly as ``bm25s`` does (``tests/test_lexical.py`` checks it): a query,
and a loaded index, import neither ``bm25s`` nor SciPy (benchmarks/README.md, "Cold start").

Pipeline step: corpus (docs/architecture.md).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence

import numpy as np

from llama_index_pearl.text.words import family_forms, singular, split_identifiers

__all__ = ["STOP_WORDS", "LexicalIndex", "lexical_tokens", "text_tokens"]

# bm25s's own token rule and English stop words (``bm25s.stopwords.STOPWORDS_EN``, equal: tests/test_lexical.py),
# applied here directly: bm25s.tokenize builds a vocabulary and progress bars per call
# (benchmarks/README.md, "Constants")
_TOKEN = re.compile(r"(?u)\b\w\w+\b")
STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
    ]
)


def text_tokens(text: str) -> list[str]:
    """Tokens of one text for BM25: split identifiers, lower case, no stop words, plurals folded."""
    words = _TOKEN.findall(split_identifiers(text).lower())
    return [singular(w) for w in words if w not in STOP_WORDS]


def lexical_tokens(texts: Sequence[str]) -> list[list[str]]:
    """:func:`text_tokens` of each text."""
    return [text_tokens(t) for t in texts]


class LexicalIndex:
    """BM25 scores of a fixed list of documents: a sparse (token x document) matrix and its vocabulary.

    Args:
        vocabulary: Token -> column of the matrix (every column below ``len(indptr) - 1``).
        data: Score of each stored (token, document) pair, grouped by token (float32).
        indices: The document of each entry of ``data``.
        indptr: Where each token's entries start in ``data`` (``len(vocabulary) + 1`` offsets).
        n_docs: Number of documents.
    """

    def __init__(
        self, vocabulary: Mapping[str, int], data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, n_docs: int
    ) -> None:
        self.vocabulary = vocabulary
        self.data = data
        self.indices = indices
        self.indptr = indptr
        self.n_docs = n_docs

    @classmethod
    def build(cls, texts: Sequence[str]) -> LexicalIndex:
        """Index ``texts`` with ``bm25s`` (imported here: only a build pays for it).

        Raises:
            ValueError: No texts.
        """
        if not texts:
            raise ValueError("A lexical index needs at least one document")
        import bm25s

        # bm25s sets its logger to DEBUG on import, so every index build printed "Building index from tokens"
        # wherever the application logs; inherit the application's level instead
        logging.getLogger("bm25s").setLevel(logging.NOTSET)
        bm25 = bm25s.BM25()
        bm25.index(lexical_tokens(texts), show_progress=False)
        scores = bm25.scores
        # bm25s adds an empty token (no column) to its vocabulary; no question token is empty
        vocabulary = {token: column for token, column in bm25.vocab_dict.items() if token}
        return cls(vocabulary, scores["data"], scores["indices"], scores["indptr"], int(scores["num_docs"]))

    def tokens_by_column(self) -> list[str]:
        """The token of each column of the matrix (``""`` for a column no token names)."""
        tokens = [""] * (len(self.indptr) - 1)
        for token, column in self.vocabulary.items():
            tokens[column] = token
        return tokens

    def raw_scores(self, question: str) -> np.ndarray:
        """BM25 of every document for ``question`` (zeros when it shares no term), in document order.

        Each of the question's tokens adds its column, in the question's order (a repeated token
        counts again), which is how ``bm25s`` sums them.
        """
        scores = np.zeros(self.n_docs, dtype=np.float32)
        for token in self.question_tokens(question):
            postings = self.postings(token)
            if postings is not None:
                np.add.at(scores, *postings)
        return scores

    def question_tokens(self, question: str) -> list[str]:
        """The question's tokens as this index spells them: a token it lacks reads as the forms of its family it
        holds (:func:`~llama_index_pearl.text.words.family_forms`: "rented" as ``rental``), or is dropped.

        Args:
            question: The question.
        """
        return [form for token in text_tokens(question) for form in family_forms(token, self.vocabulary)]

    def postings(self, token: str) -> tuple[np.ndarray, np.ndarray] | None:
        """The documents that hold ``token`` and its BM25 score in each (``None``: no document holds it).

        Args:
            token: A token, as :func:`text_tokens` makes them.
        """
        column = self.vocabulary.get(token)
        if column is None:
            return None
        start, end = self.indptr[column], self.indptr[column + 1]
        return self.indices[start:end], self.data[start:end]

    def in_order(self, current: Sequence[str], wanted: Sequence[str]) -> LexicalIndex:
        """The same index with its documents, named ``current``, in the order of ``wanted`` (the same names).

        Args:
            current: The documents' ids in this index's order.
            wanted: The same ids in the order wanted.
        """
        position = {doc_id: i for i, doc_id in enumerate(current)}
        order = [position[doc_id] for doc_id in wanted]
        return self if order == list(range(len(order))) else self.reordered(order)

    def reordered(self, order: Sequence[int]) -> LexicalIndex:
        """The same index with document ``order[i]`` as document ``i`` (BM25 does not depend on the order).

        Args:
            order: A permutation of the document numbers.
        """
        new_number = np.empty(self.n_docs, dtype=self.indices.dtype)
        new_number[np.asarray(order, dtype=np.int64)] = np.arange(self.n_docs, dtype=self.indices.dtype)
        return LexicalIndex(self.vocabulary, self.data, new_number[self.indices], self.indptr, self.n_docs)
