"""One interface for every vector store: a search ranks a revision's tables for questions.

A :class:`TableSearch` is chosen once per revision of an index (``RetrievalState``), by the store that holds
the unit vectors; the retriever and the answer (:mod:`~llama_index_pearl.retrieval.answer`) see only the interface,
what every search can do: its :class:`SearchSpace` and :meth:`~TableSearch.rank`.

============================ ================================== ================================================
search                       store                              ranks tables by
============================ ================================== ================================================
``FaissSearch``              the default ``PearlFaissStore``    its vectors, in process: exact max-pooling, one
(``faiss_search``)                                              top-n search, a pass over all vectors when the
                                                                top-n cannot decide or lexical evidence is added
``GroupedSearch``            Qdrant                             one grouped search, pooled on the server, where no
(``grouped_search``)                                            lexical evidence is added and no scope; else as
                                                                ``StoreSearch``
``StoreSearch``              any other LlamaIndex store         its top units through LlamaIndex's retriever,
(``store_search``)                                              fetched in rounds until the ranking is final
============================ ================================== ================================================

Scoring given tables for a ranked question (outside its ranking, by their own units, within a scope) is a
capability, :class:`ScopedScoring`, that only a search reading the stored vectors has: ``FaissSearch``. A store
known only through LlamaIndex says nothing of an unfetched unit, so ``StoreSearch`` and ``GroupedSearch`` lack it,
and the answer falls back (a table outside the ranking scores as its last, a scope's ranking is the ranking kept to
its tables).

A search runs as a generator of steps that its retriever performs (:class:`Work`: CPU-bound work, in a worker
thread for an async retrieval; :class:`Fetch`: a store's top units through LlamaIndex, sync or async), so one
search serves ``retrieve``, ``aretrieve`` and their batch forms alike. Every search reads the revision through one
:class:`SearchSpace`: its units and tables numbered, their memberships, their BM25. What a search is asked is a
:class:`SearchRequest`: how many tables, how many units first, the lexical weight, the scope; never the set's rule.

Pipeline step: search (docs/architecture.md).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
from llama_index.core.schema import QueryBundle
from llama_index.core.vector_stores.types import BasePydanticVectorStore

from llama_index_pearl.corpus.catalog import UnitInfo
from llama_index_pearl.corpus.lexical import LexicalIndex
from llama_index_pearl.retrieval.search.lexical import LexicalScorer
from llama_index_pearl.retrieval.search.pooling import Memberships, PooledTable
from llama_index_pearl.retrieval.search.scope import SCOPE_CACHE_SIZE, Scope

__all__ = [
    "MIN_FETCH",
    "Fetch",
    "Question",
    "Ranked",
    "ScopedScoring",
    "SearchKind",
    "SearchRequest",
    "SearchSpace",
    "SearchSteps",
    "SpaceOf",
    "TableSearch",
    "Work",
]

MIN_FETCH = 32  # units asked for in a first round, at least

SpaceOf = Callable[[Sequence[str] | None], "SearchSpace"]  # the space, units in a given order (None: the catalog's)


@dataclass(frozen=True)
class Work:
    """CPU-bound work: run in place, or in a worker thread by an async retrieval."""

    run: Callable[[], Any]


@dataclass(frozen=True)
class Fetch:
    """The top ``n`` units of the store, through LlamaIndex's retriever: answered with ``UnitHit``s."""

    query: QueryBundle
    n: int


SearchSteps = Generator[Work | Fetch, Any, Any]


@dataclass(frozen=True)
class Question:
    """A question as a search reads it.

    Args:
        text: The question (what BM25 reads).
        embedding: Its unit-length query vector.
        word_vectors: The unit-length vector of each of its content words
            (:func:`~llama_index_pearl.retrieval.answer.evidence.content_words`; ``None``: not embedded).
        asked: The question as the user wrote it, before the thesaurus added its schema words (empty: ``text``).
    """

    text: str
    embedding: list[float]
    word_vectors: np.ndarray | None = None
    asked: str = ""

    @property
    def as_asked(self) -> str:
        """The question in the user's own words."""
        return self.asked or self.text


@dataclass(frozen=True)
class SearchRequest:
    """What a retriever asks of a revision's search, for each of its questions.

    Args:
        depth: Tables ranked: as deep as the answer reads (``SetAnswer.depth``: its set and its routing).
        fetch_k: Units asked for in a first round (``None``: ``max(MIN_FETCH, 4 × tables wanted)``).
        lexical_weight: Cosine added to a unit for its relative BM25 score (``0``: the encoder alone).
        scope: The tables the retrieval may return (``None``: every table).
    """

    depth: int
    fetch_k: int | None
    lexical_weight: float
    scope: Scope | None

    def first_fetch(self, n_units: int, k: int) -> int:
        """Units asked for in a first round when ``k`` tables are wanted of ``n_units`` units."""
        return min(n_units, self.fetch_k or max(MIN_FETCH, 4 * k))


@dataclass(frozen=True)
class Ranked:
    """A question's pooled ranking, and what its search needs to score other tables for it.

    Args:
        question: The question.
        tables: Its tables, best first.
        vector: The query vector as the search read it (``FaissSearch`` only).
        boost: The lexical score the search added to each unit, by unit number (``FaissSearch`` only).
        lexical_weight: The weight of that lexical score (the request's).
    """

    question: Question
    tables: list[PooledTable]
    vector: np.ndarray | None = None
    boost: np.ndarray | None = None
    lexical_weight: float = 0.0


class TableSearch(Protocol):
    """A search of one revision's tables: what every search can do (see the module docstring)."""

    @property
    def space(self) -> SearchSpace: ...

    def rank(self, questions: Sequence[Question], request: SearchRequest) -> SearchSteps:
        """Each question's ranking (``list[Ranked]``): ``request.depth`` tables, best first, within its scope."""
        ...


@runtime_checkable
class ScopedScoring(Protocol):
    """What a search that reads the stored vectors can do beside ranking: score given tables for a ranked question.

    Optional: the answer asks ``isinstance(search, ScopedScoring)`` and falls back where a search lacks it.
    """

    def score(self, ranked: Ranked, table_ids: Sequence[str]) -> list[PooledTable]:
        """The pooled records of tables outside ``ranked`` (their own best units)."""
        ...

    def own_scores(self, ranked: Ranked, table_ids: Sequence[str]) -> dict[str, float | None]:
        """Each table's best score among the units that stand for it alone (``None`` for a table with none)."""
        ...

    def rank_within(self, ranked: Ranked, scope: Scope, k: int) -> Ranked:
        """A question's ranking of a scope's first ``k`` tables, scored as a search within it scores them (only
        the units of its tables)."""
        ...


class SearchKind(Protocol):
    """A kind of search, as a revision chooses one: ``FaissSearch.of``, ``GroupedSearch.of``, ``StoreSearch.of``."""

    def __call__(self, store: BasePydanticVectorStore, space: SpaceOf) -> TableSearch | None:
        """The search of ``store``, or ``None`` where this kind does not serve it.

        Args:
            store: The index's vector store.
            space: Makes the revision's :class:`SearchSpace` with the units in the order this search numbers them.
        """
        ...


class SearchSpace:
    """One revision's units and tables as every search reads them: numbered, their memberships, their BM25.

    Units are numbered in the search's order (the store's, for the default store), tables in the index's.

    Args:
        unit_ids: Every unit, in the search's order.
        table_ids: Every table, in the index's order.
        units: Each unit's kind, tables and question (a unit missing here stands for no table).
        lexical_texts: What BM25 reads of each unit (read on first lexical use, when nothing was persisted).
        persisted_lexical: The BM25 index a loaded folder holds (``None``: none, or the index changed since),
            in ``catalog_order``.
        catalog_order: The units in the catalog's order.
    """

    def __init__(
        self,
        unit_ids: Sequence[str],
        table_ids: Sequence[str],
        units: Mapping[str, UnitInfo],
        lexical_texts: Callable[[Sequence[str]], list[str]],
        persisted_lexical: Callable[[], LexicalIndex | None],
        catalog_order: Sequence[str],
    ) -> None:
        self.unit_ids = list(unit_ids)
        self.table_ids = list(table_ids)
        self.table_number = number = {table_id: i for i, table_id in enumerate(self.table_ids)}
        self.unit_number = {unit_id: i for i, unit_id in enumerate(self.unit_ids)}
        self.units: dict[str, UnitInfo] = {u: units.get(u, UnitInfo(None, [], None)) for u in self.unit_ids}
        lists = [[number[t] for t in info.table_ids if t in number] for info in self.units.values()]
        self.memberships = Memberships.from_lists(lists, self.table_ids, self.unit_ids)
        # BM25 comes from the folder a loaded index was read from, else from the units' texts, on first use;
        # both read the index as it is now, which is this revision while the reader holds the index's lock
        self._lexical_texts = lexical_texts
        self._persisted = persisted_lexical
        self._catalog_order = list(catalog_order)
        self._lexical: LexicalScorer | None = None
        self._scoped_lexical: dict[frozenset[str], LexicalScorer] = {}
        self._lock = threading.Lock()

    def lexical(self) -> LexicalScorer:
        """BM25 over the units' lexical texts, in unit-number order; read or built on first use."""
        with self._lock:
            if self._lexical is None:
                if not self.unit_ids:
                    raise ValueError("The index holds no units to score")
                persisted = self._persisted()
                if persisted is not None:  # the folder's, in this space's unit order
                    index = persisted.in_order(self._catalog_order, self.unit_ids)
                    self._lexical = LexicalScorer(self.unit_ids, index=index)
                else:
                    self._lexical = LexicalScorer(self.unit_ids, self._lexical_texts(self.unit_ids))
            return self._lexical

    def lexical_within(self, scope: Scope) -> LexicalScorer | None:
        """BM25 over the scope's units alone, in the order of ``scope.units``; built on a scope's first use.

        A word's weight (its idf) and a unit's length are those of an index holding only the scope's tables:
        a word common in the scope and rare elsewhere counts as little as it would there. ``None``: no unit.

        Args:
            scope: The scope (:class:`~llama_index_pearl.retrieval.search.scope.Scopes`).
        """
        if not len(scope.units):
            return None
        with self._lock:
            found = self._scoped_lexical.get(scope.tables)
        if found is None:
            unit_ids = [self.unit_ids[int(u)] for u in scope.units]
            found = LexicalScorer(unit_ids, self._lexical_texts(unit_ids))
            with self._lock:
                if len(self._scoped_lexical) >= SCOPE_CACHE_SIZE:
                    self._scoped_lexical.clear()
                self._scoped_lexical[scope.tables] = found
        return found

    def relative_lexical(self, question: str, scope: Scope | None = None) -> np.ndarray | None:
        """Each unit's BM25 divided by the best unit's, by unit number (float64; ``0`` outside the scope).

        ``None`` when no unit (of the scope) shares a word with the question.

        Args:
            question: The question.
            scope: Score within its units, as an index of its tables alone would (``None``: every unit).
        """
        if scope is None:
            return self.lexical().relative(question)
        scorer = self.lexical_within(scope)
        relative = scorer.relative(question) if scorer is not None else None
        if relative is None:
            return None
        spread = np.zeros(len(self.unit_ids), dtype=np.float64)
        spread[scope.units] = relative
        return spread

    def lexical_scores(self, question: str, scope: Scope | None = None) -> dict[str, float]:
        """Units that share a word with ``question``: their relative BM25 (:meth:`relative_lexical`), by unit id.

        Args:
            question: The question.
            scope: As in :meth:`relative_lexical`.
        """
        if scope is None:
            return self.lexical().scores(question)
        scorer = self.lexical_within(scope)
        return scorer.scores(question) if scorer is not None else {}

    def boost(self, question: str, weight: float, scope: Scope | None = None) -> np.ndarray | None:
        """``weight`` × each unit's relative BM25 score, by unit number; ``None`` when there is none to add.

        Args:
            question: The question.
            weight: The retriever's ``lexical_weight`` (``0``: BM25 is not read).
            scope: As in :meth:`relative_lexical`.
        """
        if weight <= 0:
            return None
        relative = self.relative_lexical(question, scope)
        return None if relative is None else (weight * relative).astype(np.float32)
