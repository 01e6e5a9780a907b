"""The words of a question each table holds, read off the BM25 matrix of the tables' whole-table units.

What the set's evidence (:func:`~llama_index_pearl.retrieval.answer.evidence.word_shares`) and the routing's
(:func:`~llama_index_pearl.retrieval.answer.routing.source_evidence`) read of a question's words.

Pipeline step: answer (docs/architecture.md).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

import numpy as np

from llama_index_pearl.corpus.units import UnitKind
from llama_index_pearl.retrieval.answer.evidence import word_weights
from llama_index_pearl.retrieval.answer.named_values import own_name_words
from llama_index_pearl.retrieval.search.lexical import text_tokens
from llama_index_pearl.retrieval.search.scope import Scope
from llama_index_pearl.retrieval.search.search import SearchSpace
from llama_index_pearl.text.serialization import table_name_in_text

__all__ = ["QuestionWords"]

_WORD_KINDS = frozenset({UnitKind.ORIGINAL.value, UnitKind.SCHEMA.value})


class QuestionWords:
    """The words of a question each table holds, read off the BM25 matrix of the tables' whole-table units.

    Args:
        space: The revision's units, tables and BM25.
        table_text: A table's text for an LLM (its name is read from it, once per table).
        sources: Table -> its source (a table's own name leaves out what every table of its source carries).
    """

    def __init__(
        self, space: SearchSpace, table_text: Callable[[str], str], sources: Mapping[str, str | None] | None = None
    ) -> None:
        self._space = space
        self._table_text = table_text
        self._sources = sources or {}
        memberships = space.memberships
        # the table whose words a unit holds: a whole table's unit (its name, headers and rows), else none (-1)
        counts = np.diff(memberships.unit_ptr)
        whole = np.fromiter((info.kind in _WORD_KINDS for info in space.units.values()), dtype=bool, count=len(counts))
        single = (counts == 1) & whole
        self._words_of = np.full(len(counts), -1, dtype=np.int64)
        self._words_of[single] = memberships.unit_tables[memberships.unit_ptr[:-1][single]]
        self._names: list[frozenset[str]] | None = None
        self._own: dict[str, frozenset[str]] | None = None
        self._lock = threading.Lock()

    def of(self, question: str, scope: Scope | None = None) -> tuple[dict[str, frozenset[str]], dict[str, float]]:
        """The question's words each table holds (in its name, headers or rows), and each word's weight.

        A word is held by a table when its whole-table unit (``original``, ``schema``) holds the token; a word that
        names tables (their name holds it) is held by those tables only, not by the tables whose key columns name
        them (`concert.stadium_id`). Weights: :func:`~llama_index_pearl.retrieval.answer.evidence.word_weights`.

        Args:
            question: The question.
            scope: Only its tables hold words, and a word's weight is its idf over them.
        """
        space = self._space
        index = space.lexical().index
        names = self.table_name_words()
        inside = scope.inside if scope is not None else None
        held: dict[int, set[str]] = {}
        holders: dict[str, int] = {}
        for word in set(index.question_tokens(question)):
            postings = index.postings(word)
            if postings is None:
                continue
            tables = self._words_of[postings[0]]
            tables = np.unique(tables[tables >= 0])
            if inside is not None:
                tables = tables[inside[tables]]
            named = [t for t in tables.tolist() if word in names[t]]
            if named:  # a word naming a table is that table's, not the tables whose key columns name it
                tables = np.asarray(named, dtype=np.int64)
            holders[word] = len(tables)
            for table in tables.tolist():
                held.setdefault(table, set()).add(word)
        words = {space.table_ids[t]: frozenset(ws) for t, ws in held.items()}
        return words, word_weights(holders, len(scope.tables) if scope is not None else len(space.table_ids))

    def table_name_words(self) -> list[frozenset[str]]:
        """Each table's name as words (read from its catalog text once, by table number)."""
        with self._lock:
            if self._names is None:
                texts = (self._table_text(t) for t in self._space.table_ids)
                self._names = [frozenset(text_tokens(table_name_in_text(x) or "")) for x in texts]
            return self._names

    def own_name_words(self) -> dict[str, frozenset[str]]:
        """Each table's name words less those every table of its source carries, by table id
        (:func:`~llama_index_pearl.retrieval.answer.named_values.own_name_words`; read once per revision)."""
        if self._own is None:
            own = own_name_words(dict(zip(self._space.table_ids, self.table_name_words())), self._sources)
            with self._lock:
                self._own = self._own if self._own is not None else own
        return self._own
