"""``RetrievalState``: what a query reads of one revision of an index, built once, swapped by the index.

The index owns it (``PearlTableIndex.retrieval_state``): built on the first retrieval after a build or load,
then built again by every update (``apply_change``, under the index's write lock) from the previous one, and
swapped in with the change. Retrievers read it under the read lock and never write it; its lazy parts (BM25,
join hints) and the query-embedding cache it hands on to the next state are safe under threads.

It numbers units in the store's order and tables in the index's order, keeps unit <-> table membership as
arrays (:class:`~llama_index_pearl.retrieval.pooling.Memberships`), and searches:

- the default store (:class:`~llama_index_pearl.corpus.stores.PearlFaissStore`) exactly through its
  :class:`~llama_index_pearl.corpus.stores.ExactView`: one top-n search, ties settled from the stored vectors
  of the tied tables (:func:`~llama_index_pearl.retrieval.pooling.pool_top_units`), and in the rare case the
  top-n cannot decide (fewer than k tables, or a tie at its last score), or when lexical evidence is added,
  one pass scoring every stored vector, its best units pooled
  (:func:`~llama_index_pearl.retrieval.pooling.pool_best_units`); past ``PearlConfig.approximate_from`` units
  the store is an HNSW graph (:mod:`~llama_index_pearl.corpus.approximate`): the top-n comes from the graph,
  widened by every unit of the first k tables it names
  (:meth:`~llama_index_pearl.retrieval.pooling.Memberships.with_units_of_first_tables`), and pooled from exact
  scores; that pass scores only those units and the lexically best ones;
- a Qdrant store with Qdrant's grouped search (:mod:`~llama_index_pearl.retrieval.grouped_search`);
- other stores through LlamaIndex's retriever (``PearlRetriever`` fetches, this state pools).

Pipeline step: retrieval (docs/architecture.md).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

import networkx as nx
import numpy as np
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import BasePydanticVectorStore, MetadataFilters

from llama_index_pearl.corpus.catalog import Catalog
from llama_index_pearl.corpus.lexical import LexicalIndex
from llama_index_pearl.corpus.stores import PearlFaissStore
from llama_index_pearl.corpus.units import UnitKind
from llama_index_pearl.retrieval.grouped_search import grouped_store, grouped_top_k
from llama_index_pearl.retrieval.lexical import LexicalScorer, text_tokens
from llama_index_pearl.retrieval.pooling import (
    Memberships,
    PooledTable,
    next_fetch_size,
    pool_best_units,
    pool_top_units,
)
from llama_index_pearl.retrieval.query_cache import QueryEmbeddingCache
from llama_index_pearl.retrieval.result_nodes import ResultNodes, UnitInfo
from llama_index_pearl.retrieval.scope import tables_in_scope
from llama_index_pearl.retrieval.table_sets import SetRule, TableSet, choose_table_set, set_first, word_weights
from llama_index_pearl.storage.state import IndexState
from llama_index_pearl.text.serialization import table_name_in_text

__all__ = ["RetrievableIndex", "RetrievalState", "Scope"]

_WORD_KINDS = frozenset({UnitKind.ORIGINAL.value, UnitKind.SCHEMA.value})
APPROXIMATE_CANDIDATES = 1_000  # units an HNSW store scores exactly, at least, where the exact store scores all


class RetrievableIndex(IndexState, Protocol):
    """What retrieval reads of an index (``PearlTableIndex`` is one); the retriever never imports the index."""

    @property
    def revision(self) -> int: ...

    @property
    def vector_store(self) -> BasePydanticVectorStore: ...

    @property
    def catalog(self) -> Catalog: ...

    def unit(self, unit_id: str) -> TextNode | None: ...

    def table_text(self, table_id: str) -> str: ...

    def lexical_texts(self, unit_ids: Sequence[str]) -> list[str]: ...

    def persisted_lexical(self) -> LexicalIndex | None: ...

    def retrieval_state(self) -> RetrievalState: ...

    def read_lock(self) -> AbstractContextManager[None]: ...

    def aread_lock(self) -> AbstractAsyncContextManager[None]: ...


@dataclass(frozen=True)
class Scope:
    """The tables a scoped retrieval may return (:mod:`~llama_index_pearl.retrieval.scope`), as a state reads them.

    Args:
        tables: The tables in scope.
        units: Unit numbers of the units whose tables are all in scope.
        graph: The join graph among the tables in scope.
    """

    tables: frozenset[str]
    units: np.ndarray
    graph: nx.Graph


SCOPE_CACHE_SIZE = 256  # distinct filters whose scope a state keeps


class RetrievalState:
    """Arrays, searches and caches for retrieving from one revision of a :class:`RetrievableIndex`.

    Args:
        index: The index, read once here (call with its read or write lock held).
        previous: The state of the previous revision: its table texts (of unchanged tables) and its
            query-embedding cache are reused.
    """

    def __init__(self, index: RetrievableIndex, previous: RetrievalState | None = None) -> None:
        self.revision = index.revision
        store = index.vector_store
        self.view = store.exact_view() if isinstance(store, PearlFaissStore) else None
        self.grouped = None if self.view is not None else grouped_store(store)
        catalog = index.catalog.units
        self.unit_ids = self.view.unit_ids if self.view is not None else list(catalog)
        self.table_ids = list(index.tables)
        self._table_number = number = {table_id: i for i, table_id in enumerate(self.table_ids)}
        self.units: dict[str, UnitInfo] = {u: catalog.get(u, UnitInfo(None, [], None)) for u in self.unit_ids}
        lists = [[number[t] for t in info.table_ids if t in number] for info in self.units.values()]
        self.memberships = Memberships.from_lists(lists, self.table_ids, self.unit_ids)
        self._unit_number = {unit_id: i for i, unit_id in enumerate(self.unit_ids)}
        # the table whose words a unit holds: a whole table's unit (its name, headers and rows), else none (-1)
        self._words_of = np.asarray(
            [
                ts[0] if len(ts) == 1 and info.kind in _WORD_KINDS else -1
                for ts, info in zip(lists, self.units.values())
            ],
            dtype=np.int64,
        )
        self.sources = dict(index.catalog.sources)
        self.nodes = ResultNodes(index.join_graph, index.table_text, self.sources)
        self.query_cache = previous.query_cache if previous is not None else QueryEmbeddingCache()
        # BM25 comes from the folder a loaded index was read from, else from the units' texts, on first use;
        # both read the index as it is now, which is this revision while the reader holds the index's lock
        self._read_persisted: Callable[[], LexicalIndex | None] = index.persisted_lexical
        self._catalog_order = list(catalog)
        self._lexical_texts = index.lexical_texts
        self._lexical: LexicalScorer | None = None
        self._lexical_lock = threading.Lock()
        self._table_text = index.table_text
        self._name_words: list[frozenset[str]] | None = None
        self._scopes: dict[str, Scope] = {}

    @property
    def direct(self) -> bool:
        """Searched in process (the default FAISS store)."""
        return self.view is not None

    # --------------------------------------------------------------- lexical
    def lexical_scorer(self) -> LexicalScorer:
        """BM25 over the units' lexical texts, in unit-number order; read or built on first use of this state."""
        with self._lexical_lock:
            if self._lexical is None:
                if not self.unit_ids:
                    raise ValueError("The index holds no units to score")
                persisted = self._persisted_lexical()
                if persisted is not None:
                    self._lexical = LexicalScorer(self.unit_ids, index=persisted)
                else:
                    self._lexical = LexicalScorer(self.unit_ids, self._lexical_texts(self.unit_ids))
            return self._lexical

    def _persisted_lexical(self) -> LexicalIndex | None:
        """The loaded folder's BM25 index in this state's unit order, if the index has not changed since."""
        persisted = self._read_persisted()
        if persisted is None:
            return None
        return persisted.in_order(self._catalog_order, self.unit_ids)

    def lexical_boost(self, question: str, weight: float) -> np.ndarray | None:
        """``weight`` × each unit's normalised lexical score, by unit number; ``None`` when there is none to add.

        Args:
            question: The question.
            weight: The retriever's ``lexical_weight``.
        """
        if weight <= 0:
            return None
        raw = self.lexical_scorer().raw_scores(question)
        top = float(raw.max(initial=0.0))
        if top <= 0.0:
            return None
        return (weight * (raw.astype(np.float64) / top)).astype(np.float32)

    # ----------------------------------------------------------------- scope
    def scope(self, filters: MetadataFilters | None) -> Scope | None:
        """The tables, units and joins ``filters`` keep (``None``: every table); computed once per filters.

        Args:
            filters: LlamaIndex's filters on ``table_id`` and ``source``.
        """
        if filters is None:
            return None
        key = json.dumps(filters.model_dump(mode="json"), sort_keys=True)
        with self._lexical_lock:
            found = self._scopes.get(key)
        if found is not None:
            return found
        tables = tables_in_scope(filters, self.table_ids, self.sources)
        inside = np.zeros(len(self.table_ids), dtype=bool)
        inside[[self._table_number[t] for t in tables]] = True
        units = np.asarray(
            [u for u in range(len(self.unit_ids)) if len(ts := self.memberships.tables_of(u)) and inside[ts].all()],
            dtype=np.int64,
        )
        found = Scope(tables, units, self.nodes.graph.subgraph(tables))
        with self._lexical_lock:
            if len(self._scopes) >= SCOPE_CACHE_SIZE:
                self._scopes.clear()
            self._scopes[key] = found
        return found

    def question_words(
        self, question: str, scope: Scope | None = None
    ) -> tuple[dict[str, frozenset[str]], dict[str, float]]:
        """The question's words each table holds (in its name, headers or rows), and each word's weight.

        Read off the BM25 index of the tables' ``original`` and ``schema`` units: a word is held by a table
        when its whole-table unit holds the token; a word that names tables (their name holds it) is held by those
        tables only, not by the tables whose key columns name them (`concert.stadium_id`). Weights:
        :func:`~llama_index_pearl.retrieval.table_sets.word_weights`.

        Args:
            question: The question.
            scope: Only its tables hold words, and a word's weight is its idf over them.
        """
        index = self.lexical_scorer().index
        names = self._table_name_words()
        inside = None
        if scope is not None:
            inside = np.zeros(len(self.table_ids), dtype=bool)
            inside[[self._table_number[t] for t in scope.tables]] = True
        held: dict[int, set[str]] = {}
        holders: dict[str, int] = {}
        for word in set(text_tokens(question)):
            column = index.vocabulary.get(word)
            if column is None:
                continue
            tables = self._words_of[index.indices[index.indptr[column] : index.indptr[column + 1]]]
            tables = np.unique(tables[tables >= 0])
            if inside is not None:
                tables = tables[inside[tables]]
            named = [t for t in tables.tolist() if word in names[t]]
            if named:  # a word naming a table is that table's, not the tables whose key columns name it
                tables = np.asarray(named, dtype=np.int64)
            holders[word] = len(tables)
            for table in tables.tolist():
                held.setdefault(table, set()).add(word)
        words = {self.table_ids[t]: frozenset(ws) for t, ws in held.items()}
        return words, word_weights(holders, len(scope.tables) if scope is not None else len(self.table_ids))

    # ---------------------------------------------------------------- answer
    def answer(
        self,
        question: str,
        ranked: Sequence[PooledTable],
        k: int,
        rule: SetRule | None,
        margin: int | None = None,
        bridge_scores: Callable[[list[str]], list[PooledTable]] | None = None,
        scope: Scope | None = None,
    ) -> tuple[list[PooledTable], TableSet]:
        """The tables to return: the connected set first, then the other tables of ``ranked``.

        Args:
            question: The question.
            ranked: The pooled ranking, at least ``rule.depth`` tables deep where the index holds them.
            k: Tables returned, the set first (cut at ``k`` when larger); ``margin`` given: at most this many
                unless the set is larger.
            rule: How the set is chosen; ``None``: the ranking as pooled, no set.
            margin: Return the set and this many other tables (at most ``k`` in all, unless the set is larger).
            bridge_scores: The pooled records of bridges outside ``ranked`` (from their own units); ``None`` (a
                store that cannot score given units): such a bridge scores as the ranking's last table, no unit named.
            scope: The tables the retrieval may return (``ranked`` holds only those); ``None``: every table.
        """
        if rule is None or not ranked:
            return list(ranked[:k]), TableSet((), {})
        words, weights = self.question_words(question, scope)
        graph = scope.graph if scope is not None else self.nodes.graph
        pairs = [(t.table_id, t.score) for t in ranked]
        table_set = choose_table_set(pairs, words, weights, graph, rule, self.sources)
        known = {t.table_id: t for t in ranked}
        missing = [t for t in table_set.tables if t not in known]
        if missing:
            extra = bridge_scores(missing) if bridge_scores is not None else None
            if extra is None:
                last = ranked[-1]
                extra = [PooledTable(t, last.score, "", last.cosine) for t in missing]  # no unit of its own known
            known.update((t.table_id, t) for t in extra)
        size = len(table_set.tables)
        if margin is None:  # k tables, as every LlamaIndex retriever returns: a larger set is cut, least sure last
            table_set, count = table_set.cut(k), k
        else:  # the whole set and ``margin`` more, at most k unless the set is larger
            count = max(size, min(k, size + margin))
        order = set_first((t.table_id for t in ranked), table_set)
        return [known[t] for t in order[:count]], table_set

    def bridge_records(self, query: np.ndarray, boost: np.ndarray | None) -> Callable[[list[str]], list[PooledTable]]:
        """Pooled records of given tables for one query (default FAISS store): each table's best unit, scored."""
        assert self.view is not None
        view, number = self.view, self._table_number

        def records(table_ids: list[str]) -> list[PooledTable]:
            out = []
            for table_id in table_ids:
                units = self.memberships.units_of(number[table_id])
                cosines = np.asarray(view.scores(query, units), dtype=np.float64)
                scores = cosines + (boost[units] if boost is not None else 0.0)
                best = int(np.argmax(scores))
                out.append(
                    PooledTable(table_id, float(scores[best]), self.unit_ids[int(units[best])], float(cosines[best]))
                )
            return out

        return records

    def _table_name_words(self) -> list[frozenset[str]]:
        """Each table's name as words (read from its catalog text once, by table number)."""
        with self._lexical_lock:
            if self._name_words is None:
                texts = (self._table_text(t) for t in self.table_ids)
                self._name_words = [frozenset(text_tokens(table_name_in_text(x) or "")) for x in texts]
            return self._name_words

    # ---------------------------------------------------------------- search
    def search_many(
        self, queries: np.ndarray, k: int, fetch: int, boosts: Sequence[np.ndarray | None] | None = None
    ) -> list[list[PooledTable]]:
        """Exact top-``k`` tables per query embedding (default FAISS store only).

        Args:
            queries: Query embeddings, one row each.
            k: Tables wanted.
            fetch: Units asked for in the top-n search.
            boosts: Lexical score to add per unit, per query (:meth:`lexical_boost`). A unit the top-n
                missed may then outrank it, so every stored vector is scored (the same work as FAISS's
                exact flat search) and the best fused units pooled.
        """
        vectors = np.ascontiguousarray(queries, dtype=np.float32)
        n = min(fetch, len(self.unit_ids))
        if n == 0:
            return [[] for _ in range(len(vectors))]
        boosts = list(boosts) if boosts is not None else [None] * len(vectors)
        results = [[] if b is None else self._pool_everything(v, k, n, b) for v, b in zip(vectors, boosts)]
        dense = [i for i, b in enumerate(boosts) if b is None]
        if dense:
            assert self.view is not None
            scores, units = self.view.top(vectors[dense], n)
            for row, i in enumerate(dense):
                results[i] = self._pool(vectors[i], scores[row], units[row], k)
        return results

    def _pool(self, query: np.ndarray, scores: np.ndarray, units: np.ndarray, k: int) -> list[PooledTable]:
        assert self.view is not None
        view = self.view
        kept = units >= 0
        units, scores = units[kept], scores[kept]
        fetched = len(units)
        if view.approximate:  # the graph's units and its first tables' units, as if no other unit were stored
            units = self.memberships.with_units_of_first_tables(units, k)
            scores = view.scores(query, units)
        order = np.lexsort((units, -scores))  # equal scores in store order, as pooling defines
        pooled = pool_top_units(
            units[order],
            scores[order],
            self.memberships,
            k,
            exhausted=view.approximate or fetched >= len(self.unit_ids),
            unit_scores=lambda wanted: view.scores(query, wanted),
        )
        if pooled is None or (view.approximate and len(pooled) < min(k, len(self.table_ids))):
            return self._pool_everything(query, k, next_fetch_size(fetched, len(self.unit_ids)), None)
        return pooled

    def _pool_everything(self, query: np.ndarray, k: int, fetch: int, boost: np.ndarray | None) -> list[PooledTable]:
        """Exact pooling of every stored vector's score (plus the lexical boost, if any), best units first.

        On an HNSW store only candidates are scored: the graph's top units and, with a boost, as many of the
        lexically best (every other unit scores ``-inf``); a full pass would cost what the graph saves.
        """
        assert self.view is not None
        cosines = (
            self._candidate_cosines(query, fetch, k, boost) if self.view.approximate else self.view.all_scores(query)
        )
        if boost is None:
            return pool_best_units(cosines, self.memberships, k, fetch)
        return pool_best_units(cosines + boost, self.memberships, k, fetch, cosines)

    def _candidate_cosines(self, query: np.ndarray, fetch: int, k: int, boost: np.ndarray | None) -> np.ndarray:
        assert self.view is not None
        m = min(len(self.unit_ids), max(fetch, APPROXIMATE_CANDIDATES))
        _, top = self.view.top(query[None, :], m)
        candidates = self.memberships.with_units_of_first_tables(top[0][top[0] >= 0], k)
        if boost is not None:
            candidates = np.union1d(candidates, np.argpartition(-boost, m - 1)[:m])
        cosines = np.full(len(self.unit_ids), -np.inf, dtype=np.float32)
        cosines[candidates] = self.view.scores(query, candidates)
        return cosines

    def search_scoped(self, query: np.ndarray, k: int, boost: np.ndarray | None, scope: Scope) -> list[PooledTable]:
        """Exact top-``k`` tables of a scope (default FAISS store): every unit in scope scored, the best pooled.

        A database's units are few beside a lake's, so they are scored exactly whatever the store (the exact one or
        an HNSW graph); a unit outside the scope scores ``-inf`` and pools no table.

        Args:
            query: The query embedding.
            k: Tables wanted.
            boost: Lexical score to add per unit (:meth:`lexical_boost`), or ``None``.
            scope: From :meth:`scope`.
        """
        assert self.view is not None
        k = min(k, len(scope.tables))
        if k == 0 or not len(scope.units):
            return []
        cosines = np.full(len(self.unit_ids), -np.inf, dtype=np.float32)
        cosines[scope.units] = self.view.scores(query, scope.units)
        scores = cosines if boost is None else cosines + boost
        pooled = pool_best_units(scores, self.memberships, k, k, None if boost is None else cosines)
        return [t for t in pooled if t.table_id in scope.tables]

    def search_grouped(self, query: Sequence[float], k: int) -> list[PooledTable]:
        """Exact top-``k`` tables pooled by Qdrant's grouped search (module ``grouped_search``)."""
        assert self.grouped is not None
        return grouped_top_k(self.grouped, query, k, len(self.table_ids), self._store_order)

    def _store_order(self, table_id: str, unit_id: str) -> tuple[int, int]:
        """Where ``max_pool`` over units in store order would meet this table first (fully tied tables)."""
        tables = self.units[unit_id].table_ids if unit_id in self.units else []
        position = tables.index(table_id) if table_id in tables else 0
        return self._unit_number.get(unit_id, len(self.unit_ids)), position
