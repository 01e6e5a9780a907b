"""The search of any LlamaIndex vector store: its top units through LlamaIndex's retriever, pooled in rounds.

The store is asked for its top-n units (a :class:`~llama_index_pearl.retrieval.search.Fetch` step, which the
retriever runs sync or async), pooled with :func:`~llama_index_pearl.retrieval.pooling.max_pool`, over-fetching
(n × 4 each round) until k distinct tables are found and their ties are settled
(:func:`~llama_index_pearl.retrieval.pooling.ranking_is_final`) or the store is exhausted: exact over whatever
units the store returns. With lexical evidence the search fetches more while an unfetched unit could be lifted
into the top k by its words (:func:`~llama_index_pearl.retrieval.pooling.lexical_candidates`). Within a scope
only units whose tables are all in it count. Tables outside a ranking cannot be scored (a store says nothing of
an unfetched unit).

Pipeline step: retrieval (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from llama_index.core.schema import QueryBundle
from llama_index.core.vector_stores.types import BasePydanticVectorStore

from llama_index_pearl.retrieval.pooling import (
    PooledTable,
    UnitHit,
    fuse_lexical,
    lexical_candidates,
    max_pool,
    next_fetch_size,
    ranking_is_final,
)
from llama_index_pearl.retrieval.scope import Scope
from llama_index_pearl.retrieval.search import (
    Fetch,
    Question,
    Ranked,
    Request,
    SearchSpace,
    SearchSteps,
    SpaceOf,
    Work,
)

__all__ = ["StoreSearch"]


class StoreSearch:
    """The search of a store PEARL knows only through LlamaIndex (one :class:`~.search.TableSearch`).

    Args:
        space: The revision, its units numbered in the catalog's order.
    """

    def __init__(self, space: SearchSpace) -> None:
        self.space = space

    @classmethod
    def of(cls, store: BasePydanticVectorStore, space: SpaceOf) -> StoreSearch:
        """The search of any store (the kind a revision tries last), its units in the catalog's order."""
        return cls(space(None))

    def rank(self, questions: Sequence[Question], request: Request) -> SearchSteps:
        """Each question's ranking, one question after the other."""
        ranked = []
        for question in questions:
            ranked.append(Ranked(question, (yield from self._tables(question, request))))
        return ranked

    def score(self, ranked: Ranked, table_ids: Sequence[str]) -> None:
        """``None``: a store is not asked for the cosines of given units."""
        return None

    def own_scores(self, ranked: Ranked, table_ids: Sequence[str]) -> None:
        """``None``: a store is not asked for the cosines of given units."""
        return None

    def rank_within(self, ranked: Ranked, scope: Scope, k: int) -> None:
        """``None``: the ranking is kept to the scope's tables instead."""
        return None

    def _tables(self, question: Question, request: Request) -> SearchSteps:
        lexical = yield from self._lexical(question, request)
        return (yield from self._pooled(question, lexical, request))

    def _lexical(self, question: Question, request: Request) -> SearchSteps:
        """Each unit's relative BM25 score, by unit id (none without lexical evidence)."""
        if request.lexical_weight <= 0:
            return {}
        return (yield Work(lambda: self.space.lexical_scores(question.text, request.scope)))

    def _pooled(self, question: Question, lexical: dict[str, float], request: Request) -> SearchSteps:
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
            hits = _pool_round(kept, lexical, request.lexical_weight, fetch, n_units, k, exhausted=len(fetched) < fetch)
            if hits is not None:
                return hits
            fetch = next_fetch_size(fetch, n_units)


def _pool_round(
    fetched: list[UnitHit],
    lexical: dict[str, float],
    weight: float,
    fetch: int,
    n_units: int,
    k: int,
    exhausted: bool,
) -> list[PooledTable] | None:
    """One round: the top-k tables once final, ``None`` to fetch more.

    A generic store cannot say what an unfetched unit's cosine is, so while one could be lifted
    into the top k by its words, the search fetches more: the ranking stays exact.
    """
    settled = not lexical_candidates(fetched, lexical, weight, k)
    tables = max_pool(fuse_lexical(fetched, lexical, weight))
    exhausted = exhausted or fetch >= n_units
    if not (exhausted or (settled and ranking_is_final(tables, k))):
        return None
    return tables[:k]


def _in_scope(table_ids: Sequence[str], scope: Scope) -> bool:
    """Whether a unit counts within a scope: every table it stands for is in it."""
    return bool(table_ids) and all(t in scope.tables for t in table_ids)
