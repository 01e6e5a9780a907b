"""``PearlRetriever``: embed the question once, max-pool unit scores to tables.

No LLM runs at query time (paper section 3.2). Where pooling happens depends on
the vector store:

- the default exact FAISS store is searched directly
  (:mod:`llama_index_pearl.retrieval.query_plan`): one top-n search, ties among the top-k
  tables settled from the tied tables' stored vectors, and one pass over every
  stored vector only when the top-n cannot decide. Exact max-pooling, with a
  bounded cost per query;
- a Qdrant store pools on the server: one grouped search by table
  (:mod:`llama_index_pearl.retrieval.grouped_search`), exact like the default;
- any other store is asked for its top-n units through LlamaIndex, pooled with
  :func:`~llama_index_pearl.retrieval.pooling.max_pool`, over-fetching (n × 4 each round)
  until k distinct tables are found and their ties are settled
  (:func:`~llama_index_pearl.retrieval.pooling.ranking_is_final`) or the store is
  exhausted: exact over whatever units the store returns.

A unit's score is its cosine plus lexical (BM25) evidence
(:mod:`llama_index_pearl.retrieval.lexical`, ``lexical_weight``). With lexical evidence the
direct FAISS path scores every stored vector (the work of FAISS's exact flat
search) and pools the fused scores; Qdrant's grouped search cannot add BM25, so
a question that shares words with the units takes the generic path there; the
generic path fetches more while an unfetched unit could be lifted into the top k
by its words.

Each returned table carries join hints (:mod:`llama_index_pearl.retrieval.join_hints`)
towards the other returned tables. Retrieval holds the index's read lock, so an
``insert_tables``/``delete_table`` applies before or after a query, never during.

Pipeline step: retrieval (docs/architecture.md).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.callbacks import CallbackManager
from llama_index.core.schema import NodeWithScore, QueryBundle, QueryType

from llama_index_pearl.corpus.stores import PearlFaissStore
from llama_index_pearl.retrieval.lexical import DEFAULT_LEXICAL_WEIGHT
from llama_index_pearl.retrieval.pooling import (
    UnitHit,
    fuse_lexical,
    lexical_candidates,
    max_pool,
    next_fetch_size,
    ranking_is_final,
)
from llama_index_pearl.retrieval.query_plan import Hit, QueryPlan, RetrievableIndex, query_plan
from llama_index_pearl.text.models import embed_queries, finite_query_vector

__all__ = ["PearlRetriever"]

MIN_FETCH = 32
QUERY_CACHE_SIZE = 256  # repeated questions (chat turns, retries) skip the encoder


class PearlRetriever(BaseRetriever):
    """Table-level retriever over a :class:`~llama_index_pearl.index.PearlTableIndex`.

    Args:
        index: The index to search.
        similarity_top_k: How many tables to return.
        fetch_k: Units asked for in the first round; default ``max(32, 4k)``.
        include_join_hints_in_text: Append join hints to the node text
            (``JOIN concert.stadium_id = stadium.stadium_id (explicit)``), for LLM consumption;
            each hint goes to the later-ranked of its two tables, so the nodes together
            list every join once.
        lexical_weight: Cosine added to a unit for its BM25 score relative to the
            question's best lexical match (:mod:`llama_index_pearl.retrieval.lexical`); ``0``
            ranks by the encoder alone, as in the paper.
        callback_manager: LlamaIndex callbacks.
        verbose: Log each retrieval.

    Each result is one ``NodeWithScore`` per table: the node text is the table's
    serialization for an LLM, the score is the pooled cosine, and the metadata
    names the table (``table_id``), the unit that matched (``matched_unit_id``,
    ``matched_kind``, ``matched_table_ids``, ``matched_question``) and
    ``join_hints``: for each other returned table it joins (directly, or through
    one named intermediate table), the column pairs and whether each join is
    declared, explicit or implicit (see :class:`~llama_index_pearl.retrieval.join_hints.JoinHint`).
    """

    def __init__(
        self,
        index: RetrievableIndex,
        similarity_top_k: int = 5,
        fetch_k: int | None = None,
        include_join_hints_in_text: bool = False,
        lexical_weight: float = DEFAULT_LEXICAL_WEIGHT,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
        **kwargs: Any,
    ) -> None:
        if not _positive_int(similarity_top_k):
            raise ValueError(f"similarity_top_k must be an integer >= 1, got {similarity_top_k!r}")
        if fetch_k is not None and not _positive_int(fetch_k):
            raise ValueError(f"fetch_k must be an integer >= 1, got {fetch_k!r}")
        if not 0.0 <= lexical_weight < float("inf"):
            raise ValueError(f"lexical_weight must be a finite number >= 0, got {lexical_weight}")
        self._index = index
        self._lexical_weight = float(lexical_weight)
        self._similarity_top_k = similarity_top_k
        self._fetch_k = fetch_k
        self._include_join_hints_in_text = include_join_hints_in_text
        super().__init__(callback_manager=callback_manager, verbose=verbose, **kwargs)

    @property
    def similarity_top_k(self) -> int:
        return self._similarity_top_k

    def _first_fetch(self, n_units: int) -> int:
        wanted = self._fetch_k or max(MIN_FETCH, 4 * self._similarity_top_k)
        return min(n_units, wanted)

    def _nodes(self, plan: QueryPlan, hits: list[Hit]) -> list[NodeWithScore]:
        return plan.nodes(hits, self._include_join_hints_in_text)

    # ------------------------------------------------------- thread safety
    def retrieve(self, str_or_query_bundle: QueryType) -> list[NodeWithScore]:
        """Retrieve tables; an ``insert_tables``/``delete_table`` applies before or after, never during."""
        with self._index.read_lock():
            return super().retrieve(str_or_query_bundle)

    async def aretrieve(self, str_or_query_bundle: QueryType) -> list[NodeWithScore]:
        """Async :meth:`retrieve`; waiting for an update happens off the event loop."""
        async with self._index.aread_lock():
            return await super().aretrieve(str_or_query_bundle)

    # ----------------------------------------------------------------- sync
    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if query_bundle.embedding is None:
            query_bundle = _with_embedding(query_bundle, self._embed(query_bundle.query_str))
        else:
            query_bundle = _checked(query_bundle)
        plan = query_plan(self._index)
        if plan.direct:
            return self._nodes(plan, self._search(plan, query_bundle))
        lexical = self._lexical_scores(plan, query_bundle)
        if plan.grouped is not None and not lexical:
            return self._nodes(plan, plan.search_grouped(query_bundle.embedding or [], self._similarity_top_k))
        n_units = len(plan.unit_ids)
        fetch = self._first_fetch(n_units)
        while True:
            fetched = self._fetch(query_bundle, fetch)
            hits = self._pool(plan, self._fuse(fetched, lexical), fetched, fetch, n_units)
            if hits is not None:
                return self._nodes(plan, hits)
            fetch = next_fetch_size(fetch, n_units)

    def _search(self, plan: QueryPlan, query_bundle: QueryBundle) -> list[Hit]:
        assert query_bundle.embedding is not None
        boost = plan.lexical_boost(query_bundle.query_str, self._lexical_weight)
        return plan.search(query_bundle.embedding, self._similarity_top_k, self._first_fetch(len(plan.unit_ids)), boost)

    def _fetch(self, query_bundle: QueryBundle, fetch: int) -> list[UnitHit]:
        unit_retriever = self._index.vector_index.as_retriever(similarity_top_k=fetch)
        return [self._hit(n) for n in unit_retriever.retrieve(query_bundle)]

    # ---------------------------------------------------------------- async
    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if query_bundle.embedding is None:
            question = query_bundle.query_str
            cached = self._cached(question)
            embedding = (
                cached if cached is not None else self._remember(question, await self._index.aembed_query(question))
            )
            query_bundle = _with_embedding(query_bundle, embedding)
        else:
            query_bundle = _checked(query_bundle)
        plan = query_plan(self._index)
        if plan.direct:
            return self._nodes(plan, self._search(plan, query_bundle))
        lexical = self._lexical_scores(plan, query_bundle)
        if plan.grouped is not None and not lexical:
            embedding = query_bundle.embedding or []
            hits = await asyncio.to_thread(plan.search_grouped, embedding, self._similarity_top_k)
            return self._nodes(plan, hits)
        n_units = len(plan.unit_ids)
        fetch = self._first_fetch(n_units)
        while True:
            fetched = await self._afetch(query_bundle, fetch)
            hits = self._pool(plan, self._fuse(fetched, lexical), fetched, fetch, n_units)
            if hits is not None:
                return self._nodes(plan, hits)
            fetch = next_fetch_size(fetch, n_units)

    async def _afetch(self, query_bundle: QueryBundle, fetch: int) -> list[UnitHit]:
        unit_retriever = self._index.vector_index.as_retriever(similarity_top_k=fetch)
        return [self._hit(n) for n in await unit_retriever.aretrieve(query_bundle)]

    # ---------------------------------------------------------- query cache
    def _embed(self, question: str) -> list[float]:
        cached = self._cached(question)
        return cached if cached is not None else self._remember(question, self._index.embed_query(question))

    def _query_cache(self) -> OrderedDict[tuple[int, str], list[float]]:
        """Recent query embeddings of this index (shared by its retrievers), keyed by model and question."""
        return self._index.__dict__.setdefault("_query_embeddings", OrderedDict())

    def _cached(self, question: str) -> list[float] | None:
        cache = self._query_cache()
        key = (id(self._index.embed_model), question)
        embedding = cache.get(key)
        if embedding is None:
            return None
        cache.move_to_end(key)
        return list(embedding)

    def _remember(self, question: str, embedding: list[float]) -> list[float]:
        cache = self._query_cache()
        cache[(id(self._index.embed_model), question)] = list(embedding)
        while len(cache) > QUERY_CACHE_SIZE:
            cache.popitem(last=False)
        return embedding

    # ---------------------------------------------------------------- batch
    def retrieve_many(self, questions: Sequence[str | QueryBundle], batch_size: int = 64) -> list[list[NodeWithScore]]:
        """Retrieve for many questions: embeddings in batches, one store search for all of them.

        Results equal :meth:`retrieve` on each question. Per-question retrieval
        events are not emitted (one batch is not one query).

        Args:
            questions: Questions, or query bundles (an attached embedding is used as is).
            batch_size: Questions per encoder call.
        """
        bundles = self._embedded(questions, batch_size)
        if not bundles:
            return []
        with self._index.read_lock():
            plan = query_plan(self._index)
            if not plan.direct:
                return [self._retrieve(b) for b in bundles]
            matrix = np.asarray([b.embedding for b in bundles], dtype=np.float32)
            boosts = [plan.lexical_boost(b.query_str, self._lexical_weight) for b in bundles]
            hits = plan.search_many(matrix, self._similarity_top_k, self._first_fetch(len(plan.unit_ids)), boosts)
            return [self._nodes(plan, h) for h in hits]

    async def aretrieve_many(
        self, questions: Sequence[str | QueryBundle], batch_size: int = 64
    ) -> list[list[NodeWithScore]]:
        """Async twin of :meth:`retrieve_many` (the encoder and a direct FAISS search run in a worker thread)."""
        if isinstance(self._index.vector_index.vector_store, PearlFaissStore):
            return await asyncio.to_thread(self.retrieve_many, questions, batch_size)
        bundles = await asyncio.to_thread(self._embedded, questions, batch_size)
        return [await self.aretrieve(b) for b in bundles]

    def _embedded(self, questions: Sequence[str | QueryBundle], batch_size: int) -> list[QueryBundle]:
        bundles = [q if isinstance(q, QueryBundle) else QueryBundle(query_str=q) for q in questions]
        missing = [i for i, b in enumerate(bundles) if b.embedding is None]
        if missing:
            vectors = embed_queries(self._index.embed_model, [bundles[i].query_str for i in missing], batch_size)
            for i, vector in zip(missing, vectors):
                bundles[i] = _with_embedding(bundles[i], vector.tolist())
        return [_checked(b) for b in bundles]

    # -------------------------------------------------------------- helpers
    def _lexical_scores(self, plan: QueryPlan, query_bundle: QueryBundle) -> dict[str, float]:
        if self._lexical_weight <= 0:
            return {}
        return plan.lexical_scorer().scores(query_bundle.query_str)

    def _fuse(self, hits: list[UnitHit], lexical: dict[str, float]) -> tuple[list[UnitHit], bool]:
        """Fetched units with lexical scores added, and whether no unfetched unit could still enter the top k.

        A generic store cannot say what an unfetched unit's cosine is, so while one
        could be lifted into the top k by its words (second value ``False``), the
        retriever fetches more: the ranking stays exact.
        """
        weight = self._lexical_weight
        open_candidates = lexical_candidates(hits, lexical, weight, self._similarity_top_k)
        return fuse_lexical(hits, lexical, weight), not open_candidates

    def _pool(
        self, plan: QueryPlan, scored: tuple[list[UnitHit], bool], fetched: list[UnitHit], fetch: int, n_units: int
    ) -> list[Hit] | None:
        """One round of the generic path: the top-k tables once final, ``None`` to fetch more."""
        hits, settled = scored
        tables = max_pool(hits)
        exhausted = len(fetched) < fetch or fetch >= n_units
        if exhausted or (settled and ranking_is_final(tables, self._similarity_top_k)):
            return [(t.table_id, t.score, t.unit_id) for t in tables[: self._similarity_top_k]]
        return None

    def _hit(self, node_with_score: NodeWithScore) -> UnitHit:
        node = node_with_score.node
        unit = self._index.unit(node.node_id)
        metadata = unit.metadata if unit is not None else node.metadata
        return UnitHit(node.node_id, list(metadata.get("table_ids", [])), float(node_with_score.score or 0.0))


def _positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _checked(query_bundle: QueryBundle) -> QueryBundle:
    """The bundle, once its embedding is known to be finite (a ``ValueError`` naming the query if not)."""
    finite_query_vector(query_bundle.embedding or [], query_bundle.query_str)
    return query_bundle


def _with_embedding(query_bundle: QueryBundle, embedding: list[float]) -> QueryBundle:
    """The same question with its (normalised) query embedding attached."""
    return QueryBundle(
        query_str=query_bundle.query_str,
        custom_embedding_strs=query_bundle.custom_embedding_strs,
        embedding=embedding,
    )
