"""``PearlRetriever``: embed the question once, max-pool unit scores to tables.

No LLM runs at query time (paper section 3.2). Where pooling happens depends on
the vector store (:mod:`llama_index_pearl.retrieval.state`):

- the default exact FAISS store is searched directly: one top-n search, ties among the top-k
  tables settled from the tied tables' stored vectors, and one pass over every
  stored vector only when the top-n cannot decide. Exact max-pooling, with a
  bounded cost per query;
- a Qdrant store pools on the server when no lexical evidence is added (``lexical_weight=0``, or a question
  that shares no word with any unit): one grouped search by table
  (:mod:`llama_index_pearl.retrieval.grouped_search`), exact like the default; otherwise it is a generic store;
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

``_retrieve`` and ``_aretrieve`` run one body (:meth:`PearlRetriever._body`), a generator that asks its
driver for the steps that differ: take the read lock (answered with the index's retrieval state), embed,
fetch units from a generic store, and run CPU-bound work (the search), which the async driver runs in a
worker thread. The read lock is held from the first step to the result, so an ``insert_tables`` or
``delete_table`` applies before or after a retrieval, never during it.

Pipeline step: retrieval (docs/architecture.md).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Generator, Sequence
from contextlib import AsyncExitStack, ExitStack
from dataclasses import dataclass
from typing import Any

import llama_index.core.instrumentation as instrument
import numpy as np
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.callbacks import CallbackManager
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.core.vector_stores.types import MetadataFilters

from llama_index_pearl.corpus.stores import normalise
from llama_index_pearl.corpus.units import TABLE_IDS, unit_meta
from llama_index_pearl.retrieval.lexical import DEFAULT_LEXICAL_WEIGHT
from llama_index_pearl.retrieval.pooling import (
    PooledTable,
    UnitHit,
    fuse_lexical,
    lexical_candidates,
    max_pool,
    next_fetch_size,
    ranking_is_final,
)
from llama_index_pearl.retrieval.state import RetrievableIndex, RetrievalState, Scope
from llama_index_pearl.retrieval.table_sets import DEFAULT_SET_RULE, SetRule
from llama_index_pearl.text.models import check_question, embed_queries, finite_query_vector

__all__ = ["PearlRetriever", "unit_query_vector"]

dispatcher = instrument.get_dispatcher(__name__)

MIN_FETCH = 32


@dataclass(frozen=True)
class _Read:
    """Take the index's read lock until the retrieval returns; answered with the retrieval state."""


@dataclass(frozen=True)
class _Embed:
    """Embed these strings as one query (several: their mean, as LlamaIndex aggregates them)."""

    strings: tuple[str, ...]


@dataclass(frozen=True)
class _Fetch:
    """The top ``n`` units of a generic store, through LlamaIndex's retriever."""

    query: QueryBundle
    n: int


@dataclass(frozen=True)
class _Work:
    """CPU-bound work: run in place, or in a worker thread by the async driver."""

    run: Callable[[], Any]


Step = _Read | _Embed | _Fetch | _Work
Body = Generator[Step, Any, list[NodeWithScore]]


class PearlRetriever(BaseRetriever):
    """Table-level retriever over a :class:`~llama_index_pearl.index.PearlTableIndex`.

    Args:
        index: The index to search.
        similarity_top_k: How many tables to return (settable afterwards, as on ``VectorIndexRetriever``).
        fetch_k: Units asked for in the first round; default ``max(32, 4k)``.
        include_join_hints_in_text: Append join hints to the node text
            (``JOIN concert.stadium_id = stadium.stadium_id (explicit)``), for LLM consumption;
            each hint goes to the later-ranked of its two tables, so the nodes together
            list every join once.
        lexical_weight: Cosine added to a unit for its BM25 score relative to the
            question's best lexical match (:mod:`llama_index_pearl.retrieval.lexical`); ``0``
            ranks by the encoder alone, as in the paper.
        set_rule: How the connected set of tables is chosen (:mod:`llama_index_pearl.retrieval.table_sets`);
            ``None`` returns the pooled ranking as it is.
        set_margin: Return the whole set and this many other tables (at most ``similarity_top_k`` unless the set
            is larger: what a SQL writer needs); ``None``: ``similarity_top_k`` tables, the set first (a larger
            set is cut there, its least sure members left out; ``set_size`` says how large it was).
        filters: LlamaIndex ``MetadataFilters`` on a table's ``table_id`` and ``source``: the retrieval is that of
            an index holding only the tables they keep (:mod:`~llama_index_pearl.retrieval.scope`).
        callback_manager: LlamaIndex callbacks.
        verbose: Log each retrieval.

    Each result is one ``NodeWithScore`` per table: the node text is the table's
    serialization for an LLM, the score is the table's pooled score (the best fused
    score, cosine plus lexical evidence, over the units that contain the table), and the
    metadata names the table (``table_id``) and its ``source``, the unit that matched (``matched_unit_id``,
    ``matched_kind``, ``matched_table_ids``, ``matched_question``), that unit's raw
    ``cosine`` with the question, the set (``in_set``; ``set_reason``: ``matched``, ``bridge`` or
    ``unjoined``; ``set_confidence``: how surely the question needs the table; ``set_size``: the whole set's
    size), and ``join_hints``: for each other returned table it joins (directly, or through one named
    intermediate table), the column pairs and whether each join is declared, explicit or
    implicit (see :class:`~llama_index_pearl.retrieval.join_hints.JoinHint`). The set of tables
    (:mod:`~llama_index_pearl.retrieval.table_sets`) comes first, so its scores need
    not descend; then the other tables by score.

    A ``QueryBundle``'s ``embedding`` is used as given; else its ``custom_embedding_strs`` are
    embedded (their mean, like LlamaIndex's retrievers), else its ``query_str``. Lexical
    evidence always reads ``query_str``.
    """

    def __init__(
        self,
        index: RetrievableIndex,
        similarity_top_k: int = 5,
        fetch_k: int | None = None,
        include_join_hints_in_text: bool = False,
        lexical_weight: float = DEFAULT_LEXICAL_WEIGHT,
        set_rule: SetRule | None = DEFAULT_SET_RULE,
        set_margin: int | None = None,
        filters: MetadataFilters | None = None,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        if fetch_k is not None and not _positive_int(fetch_k):
            raise ValueError(f"fetch_k must be an integer >= 1, got {fetch_k!r}")
        if not 0.0 <= lexical_weight < float("inf"):
            raise ValueError(f"lexical_weight must be a finite number >= 0, got {lexical_weight}")
        if set_margin is not None and not (_positive_int(set_margin) or set_margin == 0):
            raise ValueError(f"set_margin must be an integer >= 0 or None, got {set_margin!r}")
        if filters is not None and not isinstance(filters, MetadataFilters):
            raise ValueError(f"filters must be LlamaIndex's MetadataFilters, got {type(filters).__name__}")
        self._index = index
        self._filters = filters
        self._set_rule = set_rule
        self._set_margin = set_margin
        self._lexical_weight = float(lexical_weight)
        self.similarity_top_k = similarity_top_k
        self._fetch_k = fetch_k
        self._include_join_hints_in_text = include_join_hints_in_text
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    @property
    def similarity_top_k(self) -> int:
        """Tables returned per question."""
        return self._similarity_top_k

    @similarity_top_k.setter
    def similarity_top_k(self, value: int) -> None:
        if not _positive_int(value):
            raise ValueError(f"similarity_top_k must be an integer >= 1, got {value!r}")
        self._similarity_top_k = value

    @property
    def lexical_weight(self) -> float:
        return self._lexical_weight

    def _first_fetch(self, n_units: int, k: int) -> int:
        return min(n_units, self._fetch_k or max(MIN_FETCH, 4 * k))

    # ------------------------------------------------------------- the body
    def _body(self, query_bundle: QueryBundle) -> Body:
        """One retrieval, as the steps its driver runs (see the module docstring)."""
        check_question(query_bundle)
        k = self._similarity_top_k
        state: RetrievalState = yield _Read()
        embedding = _given_embedding(query_bundle)
        if embedding is None:
            strings = tuple(query_bundle.embedding_strs)
            embedding = state.query_cache.get(strings)
            if embedding is None:
                embedding = yield _Embed(strings)
                state.query_cache.put(strings, embedding)
        question = query_bundle.query_str
        depth = self._depth(k)
        scope = yield _Work(lambda: state.scope(self._filters))
        if state.direct:
            return (yield _Work(lambda: self._search(state, question, embedding, k, scope)))
        bundle = QueryBundle(query_str=question, embedding=embedding)
        hits = yield from self._pooled(state, bundle, depth, scope)
        answer = yield _Work(lambda: self._answer(state, question, hits, None, scope))
        return answer

    def _depth(self, k: int) -> int:
        """Tables pooled: ``k``, or as deep as the set rule reads."""
        return max(k, self._set_rule.depth) if self._set_rule is not None else k

    def _answer(
        self,
        state: RetrievalState,
        question: str,
        hits: list[PooledTable],
        bridges: Callable | None,
        scope: Scope | None,
    ) -> list[NodeWithScore]:
        k = self._similarity_top_k
        ranked, table_set = state.answer(question, hits, k, self._set_rule, self._set_margin, bridges, scope)
        return state.nodes.nodes(ranked, state.units, self._include_join_hints_in_text, table_set)

    def _search(
        self, state: RetrievalState, question: str, embedding: list[float], k: int, scope: Scope | None
    ) -> list[NodeWithScore]:
        boost = state.lexical_boost(question, self._lexical_weight)
        query = np.asarray(embedding, dtype=np.float32).reshape(1, -1)
        depth = self._depth(k)
        if scope is not None:
            hits = state.search_scoped(query[0], depth, boost, scope)
        else:
            hits = state.search_many(query, depth, self._first_fetch(len(state.unit_ids), depth), [boost])[0]
        return self._answer(state, question, hits, state.bridge_records(query[0], boost), scope)

    def _pooled(
        self, state: RetrievalState, query: QueryBundle, k: int, scope: Scope | None
    ) -> Generator[Step, Any, list[PooledTable]]:
        """Qdrant's grouped search, or pooling rounds over a generic store's top units (those in scope)."""
        lexical: dict[str, float] = {}
        if self._lexical_weight > 0:
            lexical = yield _Work(lambda: state.lexical_scorer().scores(query.query_str))
        if state.grouped is not None and not lexical and scope is None:
            return (yield _Work(lambda: state.search_grouped(query.embedding or [], k)))
        n_units = len(state.unit_ids)
        if scope is not None:
            k = min(k, len(scope.tables))
            lexical = {u: x for u, x in lexical.items() if _in_scope(state.units[u].table_ids, scope)}
        fetch = self._first_fetch(n_units, k)
        while True:
            fetched: list[UnitHit] = yield _Fetch(query, fetch)
            kept = fetched if scope is None else [h for h in fetched if _in_scope(h.table_ids, scope)]
            hits = self._pool_round(kept, lexical, fetch, n_units, k, exhausted=len(fetched) < fetch)
            if hits is not None:
                return hits
            fetch = next_fetch_size(fetch, n_units)

    def _pool_round(
        self, fetched: list[UnitHit], lexical: dict[str, float], fetch: int, n_units: int, k: int, exhausted: bool
    ) -> list[PooledTable] | None:
        """One round of the generic path: the top-k tables once final, ``None`` to fetch more.

        A generic store cannot say what an unfetched unit's cosine is, so while one could be lifted
        into the top k by its words, the retriever fetches more: the ranking stays exact.
        """
        weight = self._lexical_weight
        settled = not lexical_candidates(fetched, lexical, weight, k)
        tables = max_pool(fuse_lexical(fetched, lexical, weight))
        exhausted = exhausted or fetch >= n_units
        if not (exhausted or (settled and ranking_is_final(tables, k))):
            return None
        return tables[:k]

    # -------------------------------------------------------------- drivers
    @dispatcher.span
    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        body = self._body(query_bundle)
        with ExitStack() as held:
            answer = None
            try:
                while True:
                    answer = self._run(body.send(answer), held)
            except StopIteration as done:
                return done.value
            finally:
                body.close()

    @dispatcher.span
    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        body = self._body(query_bundle)
        async with AsyncExitStack() as held:
            answer = None
            try:
                while True:
                    answer = await self._arun(body.send(answer), held)
            except StopIteration as done:
                return done.value
            finally:
                body.close()

    def _run(self, step: Step, held: ExitStack) -> Any:
        if isinstance(step, _Read):
            held.enter_context(self._index.read_lock())
            return self._index.retrieval_state()
        if isinstance(step, _Embed):
            return self._embed(step.strings)
        if isinstance(step, _Fetch):
            return [self._hit(n) for n in self._unit_retriever(step.n).retrieve(step.query)]
        return step.run()

    async def _arun(self, step: Step, held: AsyncExitStack) -> Any:
        if isinstance(step, _Read):
            await held.enter_async_context(self._index.aread_lock())
            return self._index.retrieval_state()
        if isinstance(step, _Embed):
            return await self._aembed(step.strings)
        if isinstance(step, _Fetch):
            return [self._hit(n) for n in await self._unit_retriever(step.n).aretrieve(step.query)]
        return await asyncio.to_thread(step.run)

    def _embed(self, strings: tuple[str, ...]) -> list[float]:
        model = self._index.embed_model
        if len(strings) == 1:
            return unit_query_vector(model.get_query_embedding(strings[0]), strings)
        return unit_query_vector(model.get_agg_embedding_from_queries(list(strings)), strings)

    async def _aembed(self, strings: tuple[str, ...]) -> list[float]:
        model = self._index.embed_model
        if len(strings) == 1:
            return unit_query_vector(await model.aget_query_embedding(strings[0]), strings)
        return unit_query_vector(await model.aget_agg_embedding_from_queries(list(strings)), strings)

    def _unit_retriever(self, n: int) -> BaseRetriever:
        return self._index.vector_index.as_retriever(similarity_top_k=n)

    def _hit(self, node_with_score: NodeWithScore) -> UnitHit:
        node = node_with_score.node
        unit = self._index.unit(node.node_id)
        meta = unit_meta(unit if unit is not None else node)
        return UnitHit(node.node_id, list(meta.get(TABLE_IDS, [])), float(node_with_score.score or 0.0))

    # ---------------------------------------------------------------- batch
    @dispatcher.span
    def retrieve_many(self, questions: Sequence[str | QueryBundle], batch_size: int = 64) -> list[list[NodeWithScore]]:
        """Retrieve for many questions: embeddings in batches, one store search for all of them.

        Results equal :meth:`retrieve` on each question. Per-question retrieval
        events are not emitted (one batch is not one query); the batch is one span.

        Args:
            questions: Questions, or query bundles (an attached embedding is used as is).
            batch_size: Questions per encoder call.
        """
        bundles = self._embedded(questions, batch_size)  # before the lock: a batch may take seconds
        if not bundles:
            return []
        with self._index.read_lock():
            state = self._index.retrieval_state()
            if not state.direct:
                return [self._retrieve(b) for b in bundles]
            return self._search_many(state, bundles)

    @dispatcher.span
    async def aretrieve_many(
        self, questions: Sequence[str | QueryBundle], batch_size: int = 64
    ) -> list[list[NodeWithScore]]:
        """Async twin of :meth:`retrieve_many`: the encoder and the search run in worker threads."""
        bundles = await asyncio.to_thread(self._embedded, questions, batch_size)
        if not bundles:
            return []
        async with self._index.aread_lock():
            state = self._index.retrieval_state()
            if not state.direct:
                return [await self._aretrieve(b) for b in bundles]
            return await asyncio.to_thread(self._search_many, state, bundles)

    def _search_many(self, state: RetrievalState, bundles: list[QueryBundle]) -> list[list[NodeWithScore]]:
        depth = self._depth(self._similarity_top_k)
        matrix = np.asarray([b.embedding for b in bundles], dtype=np.float32)
        boosts = [state.lexical_boost(b.query_str, self._lexical_weight) for b in bundles]
        scope = state.scope(self._filters)
        if scope is not None:
            hits = [state.search_scoped(vector, depth, boost, scope) for vector, boost in zip(matrix, boosts)]
        else:
            hits = state.search_many(matrix, depth, self._first_fetch(len(state.unit_ids), depth), boosts)
        return [
            self._answer(state, b.query_str, h, state.bridge_records(vector, boost), scope)
            for b, h, vector, boost in zip(bundles, hits, matrix, boosts)
        ]

    def _embedded(self, questions: Sequence[str | QueryBundle], batch_size: int) -> list[QueryBundle]:
        """Bundles with their embeddings: given ones checked, plain questions embedded in batches."""
        bundles = [q if isinstance(q, QueryBundle) else QueryBundle(query_str=q) for q in questions]
        for bundle in bundles:
            check_question(bundle)
        plain = [i for i, b in enumerate(bundles) if b.embedding is None and not b.custom_embedding_strs]
        if plain:
            vectors = embed_queries(self._index.embed_model, [bundles[i].query_str for i in plain], batch_size)
            for i, vector in zip(plain, vectors):
                bundles[i] = QueryBundle(query_str=bundles[i].query_str, embedding=vector.tolist())
        for i, bundle in enumerate(bundles):
            embedding = _given_embedding(bundle)
            if embedding is None:
                embedding = self._embed(tuple(bundle.embedding_strs))
            bundles[i] = QueryBundle(query_str=bundle.query_str, embedding=embedding)
        return bundles


def _in_scope(table_ids: Sequence[str], scope: Scope) -> bool:
    """Whether a unit counts within a scope: every table it stands for is in it."""
    return bool(table_ids) and all(t in scope.tables for t in table_ids)


def _positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _given_embedding(query_bundle: QueryBundle) -> list[float] | None:
    """The bundle's own embedding once known to be finite (a ``ValueError`` naming the query if not)."""
    if query_bundle.embedding is None:
        return None
    return finite_query_vector(query_bundle.embedding, query_bundle.query_str)


def unit_query_vector(vector: Sequence[float], strings: tuple[str, ...]) -> list[float]:
    """A query vector of unit length; a non-finite one (a broken encoder) raises ``ValueError`` naming the query.

    Args:
        vector: What the encoder gave for ``strings``.
        strings: The query strings embedded.
    """
    return finite_query_vector(normalise([vector])[0], " | ".join(strings))
