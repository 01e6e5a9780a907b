"""The search of any LlamaIndex vector store: its top units through LlamaIndex's retriever, pooled in rounds.

The store is asked for its top-n units (a :class:`~llama_index_pearl.retrieval.search.search.Fetch` step, which the
retriever runs sync or async), pooled with :func:`~llama_index_pearl.retrieval.search.pooling.max_pool`, over-fetching
(n × 4 each round) until k distinct tables are found and their ties are settled
(:func:`~llama_index_pearl.retrieval.search.pooling.ranking_is_final`) or the store is exhausted: exact over whatever
units the store returns. With lexical evidence the search fetches more while an unfetched unit could be lifted
into the top k by its words (:func:`~llama_index_pearl.retrieval.search.pooling.lexical_candidates`). Within a scope
only units whose tables are all in it count. It has no
:class:`~llama_index_pearl.retrieval.search.search.ScopedScoring`: a store says nothing of an unfetched unit.

Pipeline step: search (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from llama_index.core.schema import QueryBundle
from llama_index.core.vector_stores.types import BasePydanticVectorStore

from llama_index_pearl.retrieval.search.pooling import (
    PooledTable,
    UnitHit,
    fuse_lexical,
    lexical_candidates,
    max_pool,
    next_fetch_size,
    ranking_is_final,
)
from llama_index_pearl.retrieval.search.scope import Scope
from llama_index_pearl.retrieval.search.search import (
    Fetch,
    Question,
    Ranked,
    SearchRequest,
    SearchSpace,
    SearchSteps,
    SpaceOf,
    Work,
)

__all__ = ["StoreSearch"]


class StoreSearch:
    """The search of a store PEARL knows only through LlamaIndex (a :class:`~.search.TableSearch`, no
    :class:`~.search.ScopedScoring`).

    Args:
        space: The revision, its units numbered in the catalog's order.
    """

    def __init__(self, space: SearchSpace) -> None:
        self.space = space

    @classmethod
    def of(cls, store: BasePydanticVectorStore, space: SpaceOf) -> StoreSearch:
        """The search of any store (the kind a revision tries last), its units in the catalog's order."""
        return cls(space(None))

    def rank(self, questions: Sequence[Question], request: SearchRequest) -> SearchSteps:
        """Each question's ranking, one question after the other."""
        ranked = []
        for question in questions:
            ranked.append(Ranked(question, (yield from self._tables(question, request))))
        return ranked

    def _tables(self, question: Question, request: SearchRequest) -> SearchSteps:
        lexical = yield from self._lexical(question, request)
        return (yield from self._pooled(question, lexical, request))

    def _lexical(self, question: Question, request: SearchRequest) -> SearchSteps:
        """Each unit's relative BM25 score, by unit id (none without lexical evidence)."""
        if request.lexical_weight <= 0:
            return {}
        return (yield Work(lambda: self.space.lexical_scores(question.text, request.scope)))

    def _pooled(self, question: Question, lexical: dict[str, float], request: SearchRequest) -> SearchSteps:
        """Pooling rounds over the store's top units (those in scope) until the ranking is final."""
        query = QueryBundle(query_str=question.text, embedding=question.embedding)
        k, scope, n_units = request.depth, request.scope, len(self.space.unit_ids)
        if scope is not None:
            k = min(k, len(scope.tables))
            lexical = {u: x for u, x in lexical.items() if _in_scope(self.space.units[u].table_ids, scope)}
        fetch = request.first_fetch(n_units, k)
        while True:
            fetched: list[UnitHit] = yield Fetch(query, fetch)
            kept = fetched if scope is None else [h for h in fetched if _in_scope(h.table_ids, scope)]
            kept = self._in_unit_order(kept)
            exhausted = len(fetched) < fetch or fetch >= n_units
            hits = _pool_round(kept, lexical, request.lexical_weight, k, exhausted, _floor(fetched))
            if hits is not None:
                return hits
            fetch = next_fetch_size(fetch, n_units)

    def _in_unit_order(self, hits: list[UnitHit]) -> list[UnitHit]:
        """Hits by descending score, equal scores in unit order: a store's own order of ties (its ids, its heap)
        is not the default store's, and the ranking, the set and its tiers must not depend on the store."""
        number = self.space.unit_number
        return sorted(hits, key=lambda h: (-h.score, number.get(h.unit_id, len(number))))


def _pool_round(
    fetched: list[UnitHit],
    lexical: dict[str, float],
    weight: float,
    k: int,
    exhausted: bool,
    floor: float,
) -> list[PooledTable] | None:
    """One round: the top-k tables once final, ``None`` to fetch more.

    A generic store cannot say what an unfetched unit's cosine is, so while one could be lifted
    into the top k by its words, the search fetches more: the ranking stays exact. Nor can it say which
    unfetched unit ties the last fetched one: while the k-th table scores no more than that (``floor``), a tied
    table of an earlier unit may be unfetched, so the search fetches more (the default store orders ties alike).
    """
    settled = not lexical_candidates(fetched, lexical, weight, k)
    tables = max_pool(fuse_lexical(fetched, lexical, weight))
    above = len(tables) >= k and tables[k - 1].score > floor
    if not (exhausted or (settled and above and ranking_is_final(tables, k))):
        return None
    return tables[:k]


def _floor(fetched: Sequence[UnitHit]) -> float:
    """The lowest score the store returned: no unfetched unit scores more."""
    return min((h.score for h in fetched), default=float("-inf"))


def _in_scope(table_ids: Sequence[str], scope: Scope) -> bool:
    """Whether a unit counts within a scope: every table it stands for is in it."""
    return bool(table_ids) and all(t in scope.tables for t in table_ids)
