"""Max-pooling inside Qdrant: one grouped search returns each table's best unit (and its next-best one).

What it is for, and when it runs: a Qdrant-backed index whose retriever adds no lexical evidence, that is
``lexical_weight=0`` (the paper's encoder-only scores), or a question that shares no word with any unit. The
server cannot add BM25 to its scores, so at the default lexical weight nearly every question shares a word with
some unit and takes the generic path instead (:class:`~llama_index_pearl.retrieval.retriever.PearlRetriever`:
top-n units through LlamaIndex's retriever, over-fetching until no unfetched unit could be lifted into the top k
by its words), which is exact too and costs more queries. Serving that default path on the server would take a
second query for the cosines of every unit that shares a word with the question and a bound on the tables it
leaves out; it is not done. :class:`GroupedSearch` is that choice, behind the one search interface
(:mod:`~llama_index_pearl.retrieval.search.search`): a
:class:`~llama_index_pearl.retrieval.search.store_search.StoreSearch` that pools on the server when it can (no
lexical evidence, no scope).

Qdrant's ``query_points_groups`` groups points by a payload field and returns
the best ``group_size`` points of each group, best groups first. Grouping units
by ``table_ids`` (a list: an explicit unit is a member of each of its
tables' groups) is max-pooling done by the server: a group's best point is the
table's pooled score, its second point the table's next-best unit, which orders
tables tied on a shared unit exactly as :func:`~llama_index_pearl.retrieval.search.pooling.max_pool`.
The client asks for ``k`` plus a margin of groups, so one query suffices unless
more tables than the margin tie with the ``k``-th; then it asks again for twice
as many (bounded by the number of tables).

Limits: Qdrant returns a group's points in score order; among units of exactly
equal score it may name another matched unit than the FAISS default (same
table, same score). Grouped search runs over the whole collection (no payload
filter), so the collection must hold this index's units only.

Pipeline step: search (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from llama_index.core.vector_stores.types import BasePydanticVectorStore

from llama_index_pearl.corpus.units import TABLE_IDS
from llama_index_pearl.retrieval.search.pooling import PooledTable, ranking_key
from llama_index_pearl.retrieval.search.search import Question, SearchRequest, SearchSpace, SearchSteps, SpaceOf, Work
from llama_index_pearl.retrieval.search.store_search import StoreSearch

__all__ = ["GroupedSearch", "grouped_store", "grouped_top_k"]

TIE_MARGIN = 8  # extra groups asked for, so that ties with the k-th table rarely need a second query
GROUP_FIELD = TABLE_IDS  # the unit metadata key (corpus.units.UnitMeta) Qdrant's payload holds


class GroupedSearch(StoreSearch):
    """The search of a Qdrant store: one grouped search where no lexical evidence is added and no scope, else
    :class:`~llama_index_pearl.retrieval.search.store_search.StoreSearch`'s rounds.

    Args:
        target: From :func:`grouped_store`.
        space: The revision, its units numbered in the catalog's order.
    """

    def __init__(self, target: tuple[Any, str, str | None], space: SearchSpace) -> None:
        super().__init__(space)
        self._target = target

    @classmethod
    def of(cls, store: BasePydanticVectorStore, space: SpaceOf) -> GroupedSearch | None:
        """The search of a Qdrant store with a collection, its units in the catalog's order; else ``None``."""
        target = grouped_store(store)
        return cls(target, space(None)) if target is not None else None

    def _tables(self, question: Question, request: SearchRequest) -> SearchSteps:
        lexical = yield from self._lexical(question, request)
        if lexical or request.scope is not None:  # the server cannot add BM25, nor pool within a scope
            return (yield from self._pooled(question, lexical, request))
        n_tables = len(self.space.table_ids)
        return (
            yield Work(lambda: grouped_top_k(self._target, question.embedding, request.depth, n_tables, self._order))
        )

    def _order(self, table_id: str, unit_id: str) -> tuple[int, int]:
        """Where ``max_pool`` over units in store order would meet this table first (fully tied tables)."""
        space = self.space
        tables = space.units[unit_id].table_ids if unit_id in space.units else []
        position = tables.index(table_id) if table_id in tables else 0
        return space.unit_number.get(unit_id, len(space.unit_ids)), position


def grouped_store(store: Any) -> tuple[Any, str, str | None] | None:
    """``(client, collection, vector name)`` of a LlamaIndex Qdrant store with a collection, else ``None``."""
    client = getattr(store, "client", None)
    collection = getattr(store, "collection_name", None)
    if client is None or not collection or not hasattr(client, "query_points_groups"):
        return None
    try:
        if not client.collection_exists(collection):
            return None
        vectors = client.get_collection(collection).config.params.vectors
    except Exception:  # a store we cannot ask: the generic path still works
        return None
    # the collection says whether its vectors are named (and the store's public field which name is dense);
    # collections of older llama-index-vector-stores-qdrant versions hold one unnamed vector
    if not isinstance(vectors, dict):
        return client, collection, None
    name = getattr(store, "dense_vector_name", None)
    return client, collection, name if name in vectors or "" not in vectors else ""


def grouped_top_k(
    target: tuple[Any, str, str | None],
    query: Sequence[float],
    k: int,
    n_tables: int,
    order_key: Callable[[str, str], tuple[int, int]],
) -> list[PooledTable]:
    """The top-``k`` tables by pooled score, tied tables by next-best unit, from Qdrant's grouped search.

    Args:
        target: From :func:`grouped_store`.
        query: The query embedding.
        k: Tables wanted.
        n_tables: Tables in the index (the most groups there can be).
        order_key: ``(table_id, unit_id) -> key`` ordering tables that tie on both scores (store order).

    Returns:
        The tables, best first (scores are cosines: no lexical evidence is added here).
    """
    client, collection, using = target
    limit = min(n_tables, k + TIE_MARGIN)
    while True:
        response = client.query_points_groups(
            collection,
            query=list(query),
            using=using,
            group_by=GROUP_FIELD,
            limit=limit,
            group_size=2,
            with_payload=False,
        )
        tables = [_pooled(str(g.id), g.hits, order_key) for g in response.groups if g.hits]
        tables.sort(key=lambda t: (*ranking_key(t), order_key(t.table_id, t.unit_id)))
        if len(tables) < limit or limit >= n_tables or len(tables) <= k or tables[-1].score < tables[k - 1].score:
            return tables[:k]
        limit = min(n_tables, 2 * limit)


def _pooled(table: str, hits: Sequence[Any], order_key: Callable[[str, str], tuple[int, int]]) -> PooledTable:
    """A group as a ranking record; of equal-best units, the first in store order."""
    best = float(hits[0].score)
    unit = min((str(h.id) for h in hits if float(h.score) == best), key=lambda u: order_key(table, u))
    return PooledTable(table, best, unit, best, float(hits[1].score) if len(hits) > 1 else None)
