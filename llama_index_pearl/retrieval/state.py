"""``RetrievalState``: what a query reads of one revision of an index, built once, swapped by the index.

The index owns it, through its revisions (``PearlTableIndex.revisions``,
:class:`~llama_index_pearl.foundations.revisions.Revisions`): built on the first retrieval after a build or load,
then built again by every update (under the index's write lock) from the previous one, and swapped in with the
change. The index hands it what it reads of one revision as a :class:`Revision`. Retrievers read it under the
read lock and never write it; its lazy parts (BM25, join hints, scopes) and the query-embedding cache it hands on
to the next state are safe under threads.

It holds the revision's search (:mod:`~llama_index_pearl.retrieval.search.search`: the first of :data:`SEARCHES` that
serves the index's vector store), which numbers the units; the scopes of filters; the routing of a lake's questions
(:mod:`~llama_index_pearl.retrieval.answer.router`); the answer step
(:mod:`~llama_index_pearl.retrieval.answer.answer`); and the result nodes.

Pipeline step: retrieval (docs/architecture.md).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import networkx as nx
import numpy as np
from llama_index.core.vector_stores.types import BasePydanticVectorStore, MetadataFilters

from llama_index_pearl.config import PearlConfig
from llama_index_pearl.corpus.catalog import Catalog
from llama_index_pearl.corpus.lexical import LexicalIndex
from llama_index_pearl.corpus.state import IndexState
from llama_index_pearl.foundations.revisions import Revisions
from llama_index_pearl.retrieval.answer.answer import SetAnswer
from llama_index_pearl.retrieval.answer.result_nodes import ResultNodes
from llama_index_pearl.retrieval.answer.router import Router, source_names
from llama_index_pearl.retrieval.answer.table_sets import SetRule
from llama_index_pearl.retrieval.answer.words import QuestionWords
from llama_index_pearl.retrieval.query_cache import QueryEmbeddingCache
from llama_index_pearl.retrieval.search.faiss_search import FaissSearch
from llama_index_pearl.retrieval.search.grouped_search import GroupedSearch
from llama_index_pearl.retrieval.search.lexical import LexicalScorer
from llama_index_pearl.retrieval.search.scope import SCOPE_CACHE_SIZE, Scope, Scopes
from llama_index_pearl.retrieval.search.search import ScopedScoring, SearchKind, SearchSpace, TableSearch
from llama_index_pearl.retrieval.search.store_search import StoreSearch
from llama_index_pearl.text.thesaurus import BUSINESS_WORDS, name_forms, parse_business_words, with_schema_words

__all__ = ["SEARCHES", "WORD_CACHE_SIZE", "RetrievableIndex", "RetrievalState", "Revision"]

WORD_CACHE_SIZE = 4096  # a question's content words not in the index's names, embedded once each

# each kind of search says whether it serves a store; the first that does searches it (the last serves any store)
SEARCHES: tuple[SearchKind, ...] = (FaissSearch.of, GroupedSearch.of, StoreSearch.of)


class RetrievableIndex(IndexState, Protocol):
    """What a retriever reads of an index (``PearlTableIndex`` is one); the retriever never imports the index."""

    @property
    def catalog(self) -> Catalog: ...

    @property
    def revisions(self) -> Revisions[RetrievalState]: ...


@dataclass(frozen=True, kw_only=True)
class Revision:
    """What a :class:`RetrievalState` reads of one revision of an index (the index hands it over, locked).

    Args:
        number: The revision: how many updates the index has applied.
        table_ids: Every table, in the index's order.
        catalog: The index's catalog (each table's text and source, each unit's kind, tables and question).
        join_graph: The index's join graph.
        vector_store: The store of the unit vectors; it chooses the search (:data:`SEARCHES`).
        config: The index's settings (the set rule's bars).
        table_text: A table's text for an LLM.
        lexical_texts: What BM25 reads of each unit (read when no persisted BM25 index serves).
        persisted_lexical: The BM25 index a loaded folder holds, ``None`` once the index changed.
    """

    number: int
    table_ids: list[str]
    catalog: Catalog
    join_graph: nx.Graph
    vector_store: BasePydanticVectorStore
    config: PearlConfig
    table_text: Callable[[str], str]
    lexical_texts: Callable[[Sequence[str]], list[str]]
    persisted_lexical: Callable[[], LexicalIndex | None]


class RetrievalState:
    """The search, scopes, answer step and caches for retrieving from one revision of an index.

    Args:
        revision: What the state reads of the revision, read once here (the index's read or write lock held).
        previous: The state of the previous revision: its query-embedding cache is reused.
    """

    def __init__(self, revision: Revision, previous: RetrievalState | None = None) -> None:
        self.revision = revision.number
        catalog, order, table_ids = revision.catalog, list(revision.catalog.units), revision.table_ids

        def space(unit_ids: Sequence[str] | None) -> SearchSpace:
            units = order if unit_ids is None else unit_ids
            return SearchSpace(
                units, list(table_ids), catalog.units, revision.lexical_texts, revision.persisted_lexical, order
            )

        store = revision.vector_store
        self.search: TableSearch = next(s for kind in SEARCHES if (s := kind(store, space)) is not None)
        self.space = self.search.space
        self.sources = dict(catalog.sources)
        self.nodes = ResultNodes(revision.join_graph, revision.table_text, self.sources)
        self.scopes = Scopes(self.space.memberships, self.sources, self.nodes.graph)
        self.words = QuestionWords(self.space, revision.table_text, self.sources)
        self.columns = catalog.columns
        self.values = dict(catalog.values)
        self.set_rule = SetRule.of(revision.config)
        own = parse_business_words(revision.config.business_words or "")
        self.thesaurus = {**BUSINESS_WORDS, **own} if revision.config.thesaurus else own
        scoring = self.search if isinstance(self.search, ScopedScoring) else None
        preferred = source_names(revision.config.preferred_sources)
        self.router = Router(
            self.scopes, self.sources, table_ids, self.words, self.columns, revision.table_text, scoring, preferred
        )
        self.answer = self._answer(self.nodes)
        self._scoped_answers: dict[frozenset[str], SetAnswer] = {}
        self._spelled: dict[frozenset[str] | None, frozenset[str]] = {}
        self._lock = threading.Lock()
        self.query_cache = previous.query_cache if previous is not None else QueryEmbeddingCache()
        self.word_cache = previous.word_cache if previous is not None else QueryEmbeddingCache(WORD_CACHE_SIZE)

    def _answer(self, nodes: ResultNodes) -> SetAnswer:
        """The answer step over these result nodes (the index's, or a scope's)."""
        return SetAnswer(self.search, self.words, nodes, self.sources, self.router, self.columns, self.values)

    @property
    def unit_ids(self) -> list[str]:
        """Every unit, numbered as the search numbers them."""
        return self.space.unit_ids

    @property
    def table_ids(self) -> list[str]:
        """Every table, in the index's order."""
        return self.space.table_ids

    def lexical_scorer(self) -> LexicalScorer:
        """BM25 over the units' lexical texts, in unit-number order; read or built on first use of this state."""
        return self.space.lexical()

    def word_vectors(self, words: Sequence[str]) -> tuple[dict[str, list[float]], list[str]]:
        """The vectors of words known here (the index's names, the words embedded before), and the others.

        Args:
            words: A question's content words.
        """
        known, unknown = {}, []
        for word in words:
            vector = self.columns.word_vector(word)
            cached = vector.tolist() if vector is not None else self.word_cache.get((word,))
            if cached is None:
                unknown.append(word)
            else:
                known[word] = cached
        return known, unknown

    def lexical_text(self, question: str, scope: Scope | None) -> str:
        """What BM25 and the word evidence read of a question: with the thesaurus (and the user's own business words),
        the question and the schema words of its business words, save those that every source in reach spells itself
        (:func:`~llama_index_pearl.text.thesaurus.with_schema_words`).

        Args:
            question: The question.
            scope: The tables in reach (``None``: every table).
        """
        return with_schema_words(question, self._spelled_in(scope), self.thesaurus) if self.thesaurus else question

    def _spelled_in(self, scope: Scope | None) -> frozenset[str]:
        """The words that every source in reach spells in the names of its tables or their columns (in a lake, a
        word that one database spells may mean another's tables in the others), computed once per scope."""
        key = scope.tables if scope is not None else None
        with self._lock:
            found = self._spelled.get(key)
            if found is None:
                if len(self._spelled) >= SCOPE_CACHE_SIZE:
                    self._spelled.clear()
                numbers = range(len(self.table_ids)) if scope is None else np.flatnonzero(scope.inside).tolist()
                by_source: dict[str | None, list[int]] = {}
                for number in numbers:
                    by_source.setdefault(self.sources.get(self.table_ids[number]), []).append(number)
                spelled = [self._spelled_by(tables) for tables in by_source.values()]
                found = frozenset.intersection(*spelled) if spelled else frozenset()
                self._spelled[key] = found
            return found

    def _spelled_by(self, numbers: Sequence[int]) -> frozenset[str]:
        """The words of the names of some tables (by number) and of their columns, singular forms too."""
        names, columns = self.words.table_name_words(), self.columns.columns
        rows = (row for t in numbers for row in self.columns.rows_of(self.table_ids[t]))
        return frozenset().union(*(names[t] for t in numbers), name_forms(columns[row] for row in rows))

    def scope(self, filters: MetadataFilters | None) -> Scope | None:
        """The tables, units and joins ``filters`` keep (``None``: every table); computed once per filters.

        Args:
            filters: LlamaIndex's filters on ``table_id`` and ``source``.
        """
        return self.scopes.of(filters)

    def answer_in(self, scope: Scope | None) -> SetAnswer:
        """The answer step of a retrieval within ``scope``: its join hints read the join graph among the scope's
        tables, so that no hint goes through a table outside it (nor reaches an LLM's JOIN text).

        Args:
            scope: The retrieval's scope (``None``: every table, :attr:`answer`).
        """
        if scope is None:
            return self.answer
        with self._lock:
            found = self._scoped_answers.get(scope.tables)
            if found is None:
                if len(self._scoped_answers) >= SCOPE_CACHE_SIZE:
                    self._scoped_answers.clear()
                nodes = self.nodes.within(scope.graph)
                found = self._answer(nodes)
                self._scoped_answers[scope.tables] = found
            return found
