"""The default store's search: its vectors read in process, tables max-pooled exactly.

The default store (:class:`~llama_index_pearl.store.faiss_store.PearlFaissStore`) is searched through its
:class:`~llama_index_pearl.store.view.StoreView`: one top-n search, ties settled from the stored vectors
of the tied tables (:func:`~llama_index_pearl.retrieval.search.pooling.pool_top_units`), and in the rare case the
top-n cannot decide (fewer than k tables, or a tie at its last score), or when lexical evidence is added,
one pass scoring every stored vector, its best units pooled
(:func:`~llama_index_pearl.retrieval.search.pooling.pool_best_units`). Past ``PearlConfig.approximate_from`` units
the store is an HNSW graph (:mod:`~llama_index_pearl.store.hnsw`): the top-n comes from the graph,
widened by every unit of the first k tables it names
(:meth:`~llama_index_pearl.retrieval.search.pooling.Memberships.with_units_of_first_tables`), and pooled from exact
scores; that pass scores only those units and the lexically best ones. A scope's units are scored exactly
whatever the store. Tables outside a ranking are scored from their own stored vectors (:meth:`FaissSearch.score`).

Pipeline step: search (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from llama_index.core.vector_stores.types import BasePydanticVectorStore

from llama_index_pearl.retrieval.search.pooling import PooledTable, next_fetch_size, pool_best_units, pool_top_units
from llama_index_pearl.retrieval.search.scope import Scope
from llama_index_pearl.retrieval.search.search import (
    Question,
    Ranked,
    SearchRequest,
    SearchSpace,
    SearchSteps,
    SpaceOf,
    Work,
)
from llama_index_pearl.store.faiss_store import PearlFaissStore
from llama_index_pearl.store.view import StoreView

__all__ = ["APPROXIMATE_CANDIDATES", "FaissSearch"]

APPROXIMATE_CANDIDATES = 1_000  # units an HNSW store scores exactly, at least, where the exact store scores all


class FaissSearch:
    """The search of a :class:`PearlFaissStore`: a :class:`~llama_index_pearl.retrieval.search.search.TableSearch`
    with :class:`~llama_index_pearl.retrieval.search.search.ScopedScoring` (it scores given tables from their stored
    vectors).

    Args:
        view: The store's vectors, numbered in store order.
        space: The revision, its units numbered as ``view`` numbers them.
    """

    def __init__(self, view: StoreView, space: SearchSpace) -> None:
        self.view = view
        self.space = space

    @classmethod
    def of(cls, store: BasePydanticVectorStore, space: SpaceOf) -> FaissSearch | None:
        """The search of the default store, its units numbered in store order; ``None`` for another store."""
        if not isinstance(store, PearlFaissStore):
            return None
        view = store.view()
        return cls(view, space(view.unit_ids))

    def rank(self, questions: Sequence[Question], request: SearchRequest) -> SearchSteps:
        """Each question's ranking, the batch in one step (one top-n search for all of them)."""
        return (yield Work(lambda: self._rank(questions, request)))

    def _rank(self, questions: Sequence[Question], request: SearchRequest) -> list[Ranked]:
        depth, scope = request.depth, request.scope
        matrix = np.asarray([q.embedding for q in questions], dtype=np.float32)
        boosts = [self.space.boost(q.text, request.lexical_weight, scope) for q in questions]
        if scope is not None:
            tables = [self.search_scoped(vector, depth, boost, scope) for vector, boost in zip(matrix, boosts)]
        else:
            tables = self.search_many(matrix, depth, request.first_fetch(len(self.space.unit_ids), depth), boosts)
        weight = request.lexical_weight
        return [Ranked(q, t, v, b, weight) for q, t, v, b in zip(questions, tables, matrix, boosts)]

    def score(self, ranked: Ranked, table_ids: Sequence[str]) -> list[PooledTable]:
        """Each table's best unit for the question, scored as the ranking scored its units."""
        assert ranked.vector is not None
        space, query, boost = self.space, ranked.vector, ranked.boost
        out = []
        for table_id in table_ids:
            units = space.memberships.units_of(space.table_number[table_id])
            cosines = np.asarray(self.view.scores(query, units), dtype=np.float64)
            scores = cosines + (boost[units] if boost is not None else 0.0)
            best = int(np.argmax(scores))
            unit = space.unit_ids[int(units[best])]
            out.append(PooledTable(table_id, float(scores[best]), unit, float(cosines[best])))
        return out

    def rank_within(self, ranked: Ranked, scope: Scope, k: int) -> Ranked:
        """The question's first ``k`` tables of a scope (:meth:`search_scoped`; the words' evidence weighed within
        the scope, as a retrieval scoped by filters weighs it)."""
        assert ranked.vector is not None
        boost = self.space.boost(ranked.question.text, ranked.lexical_weight, scope)
        tables = self.search_scoped(ranked.vector, k, boost, scope)
        return Ranked(ranked.question, tables, ranked.vector, boost, ranked.lexical_weight)

    def own_scores(self, ranked: Ranked, table_ids: Sequence[str]) -> dict[str, float | None]:
        """Each table's best unit among those that stand for it alone, scored as the ranking scored its units."""
        assert ranked.vector is not None
        space, query, boost = self.space, ranked.vector, ranked.boost
        memberships = space.memberships
        counts = np.diff(memberships.unit_ptr)
        out: dict[str, float | None] = {}
        for table_id in table_ids:
            units = memberships.units_of(space.table_number[table_id])
            units = units[counts[units] == 1]
            if not len(units):
                out[table_id] = None
                continue
            scores = np.asarray(self.view.scores(query, units), dtype=np.float64)
            out[table_id] = float((scores + (boost[units] if boost is not None else 0.0)).max())
        return out

    def search_many(
        self, queries: np.ndarray, k: int, fetch: int, boosts: Sequence[np.ndarray | None] | None = None
    ) -> list[list[PooledTable]]:
        """Exact top-``k`` tables per query embedding.

        Args:
            queries: Query embeddings, one row each.
            k: Tables wanted.
            fetch: Units asked for in the top-n search.
            boosts: Lexical score to add per unit, per query (:meth:`SearchSpace.boost`). A unit the top-n
                missed may then outrank it, so every stored vector is scored (the same work as FAISS's
                exact flat search) and the best fused units pooled.
        """
        vectors = np.ascontiguousarray(queries, dtype=np.float32)
        n = min(fetch, len(self.space.unit_ids))
        if n == 0:
            return [[] for _ in range(len(vectors))]
        boosts = list(boosts) if boosts is not None else [None] * len(vectors)
        results = [[] if b is None else self._pool_everything(v, k, n, b) for v, b in zip(vectors, boosts)]
        dense = [i for i, b in enumerate(boosts) if b is None]
        if dense:
            scores, units = self.view.top(vectors[dense], n)
            for row, i in enumerate(dense):
                results[i] = self._pool(vectors[i], scores[row], units[row], k)
        return results

    def _pool(self, query: np.ndarray, scores: np.ndarray, units: np.ndarray, k: int) -> list[PooledTable]:
        view, space = self.view, self.space
        kept = units >= 0
        units, scores = units[kept], scores[kept]
        fetched = len(units)
        if view.walks_graph:  # the graph's units and its first tables' units, as if no other unit were stored
            units = space.memberships.with_units_of_first_tables(units, k)
            scores = view.scores(query, units)
        order = np.lexsort((units, -scores))  # equal scores in store order, as pooling defines
        pooled = pool_top_units(
            units[order],
            scores[order],
            space.memberships,
            k,
            exhausted=view.walks_graph or fetched >= len(space.unit_ids),
            unit_scores=lambda wanted: view.scores(query, wanted),
        )
        if pooled is None or (view.walks_graph and len(pooled) < min(k, len(space.table_ids))):
            return self._pool_everything(query, k, next_fetch_size(fetched, len(space.unit_ids)), None)
        return pooled

    def _pool_everything(self, query: np.ndarray, k: int, fetch: int, boost: np.ndarray | None) -> list[PooledTable]:
        """Exact pooling of every stored vector's score (plus the lexical boost, if any), best units first.

        On an HNSW store only candidates are scored: the graph's top units and, with a boost, as many of the
        lexically best (every other unit scores ``-inf``); a full pass would cost what the graph saves.
        """
        view = self.view
        cosines = self._candidate_cosines(query, fetch, k, boost) if view.walks_graph else view.all_scores(query)
        if boost is None:
            return pool_best_units(cosines, self.space.memberships, k, fetch)
        return pool_best_units(cosines + boost, self.space.memberships, k, fetch, cosines)

    def _candidate_cosines(self, query: np.ndarray, fetch: int, k: int, boost: np.ndarray | None) -> np.ndarray:
        n_units = len(self.space.unit_ids)
        m = min(n_units, max(fetch, APPROXIMATE_CANDIDATES))
        _, top = self.view.top(query[None, :], m)
        candidates = self.space.memberships.with_units_of_first_tables(top[0][top[0] >= 0], k)
        if boost is not None:
            candidates = np.union1d(candidates, np.argpartition(-boost, m - 1)[:m])
        cosines = np.full(n_units, -np.inf, dtype=np.float32)
        cosines[candidates] = self.view.scores(query, candidates)
        return cosines

    def search_scoped(self, query: np.ndarray, k: int, boost: np.ndarray | None, scope: Scope) -> list[PooledTable]:
        """Exact top-``k`` tables of a scope: every unit in scope scored, the best pooled.

        A database's units are few beside a lake's, so they are scored exactly whatever the store (the exact one or
        an HNSW graph); a unit outside the scope scores ``-inf`` and pools no table.

        Args:
            query: The query embedding.
            k: Tables wanted.
            boost: Lexical score to add per unit (:meth:`SearchSpace.boost`), or ``None``.
            scope: The scope (:class:`~llama_index_pearl.retrieval.search.scope.Scopes`).
        """
        k = min(k, len(scope.tables))
        if k == 0 or not len(scope.units):
            return []
        cosines = np.full(len(self.space.unit_ids), -np.inf, dtype=np.float32)
        cosines[scope.units] = self.view.scores(query, scope.units)
        scores = cosines if boost is None else cosines + boost
        pooled = pool_best_units(scores, self.space.memberships, k, k, None if boost is None else cosines)
        return [t for t in pooled if t.table_id in scope.tables]
