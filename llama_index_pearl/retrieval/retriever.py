"""``PearlRetriever``: embed the question once, max-pool unit scores to tables, the set first.

No LLM runs at query time (paper section 3.2). The retriever reads one revision of the index (its
:class:`~llama_index_pearl.retrieval.state.RetrievalState`) and asks it through two interfaces:

- its **search** (:mod:`~llama_index_pearl.retrieval.search.search`), chosen by the vector store: the default FAISS
  store in process, exactly (:mod:`~llama_index_pearl.retrieval.search.faiss_search`); a Qdrant store by grouped search
  when no lexical evidence is added (:mod:`~llama_index_pearl.retrieval.search.grouped_search`); any other store
  through LlamaIndex's retriever, in pooling rounds (:mod:`~llama_index_pearl.retrieval.search.store_search`);
- its **answer** step (:mod:`~llama_index_pearl.retrieval.answer.answer`): the set of tables first, as result nodes.

A unit's score is its cosine plus lexical (BM25) evidence (:mod:`llama_index_pearl.retrieval.search.lexical`,
``lexical_weight``).

``_retrieve``, ``_aretrieve``, ``retrieve_many`` and ``aretrieve_many`` run one body
(:meth:`PearlRetriever._body`), a generator over the questions that asks its driver for the steps that differ:
take the read lock (answered with the index's retrieval state), embed, fetch units from a store
(:class:`~llama_index_pearl.retrieval.search.search.Fetch`), and run CPU-bound work
(:class:`~llama_index_pearl.retrieval.search.search.Work`), which the async driver runs in a worker thread. The read
lock is held from the first step to the result, so an ``insert_tables`` or ``delete_table`` applies before or
after a retrieval, never during it.

Pipeline step: retrieval (docs/architecture.md).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Generator, Sequence
from contextlib import AsyncExitStack, ExitStack
from dataclasses import dataclass
from typing import Any, Literal

import llama_index.core.instrumentation as instrument
import numpy as np
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.callbacks import CallbackManager
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.core.vector_stores.types import MetadataFilters

from llama_index_pearl.corpus.units import TABLE_IDS, unit_meta
from llama_index_pearl.retrieval.answer.answer import AnswerRequest
from llama_index_pearl.retrieval.answer.evidence import content_words
from llama_index_pearl.retrieval.answer.table_sets import SetRule
from llama_index_pearl.retrieval.search.lexical import DEFAULT_LEXICAL_WEIGHT
from llama_index_pearl.retrieval.search.pooling import UnitHit
from llama_index_pearl.retrieval.search.search import Fetch, Question, SearchRequest, Work
from llama_index_pearl.retrieval.state import RetrievableIndex, RetrievalState
from llama_index_pearl.store.embedding import normalise
from llama_index_pearl.text.models import check_question, embed_queries, finite_query_vector

__all__ = ["PearlRetriever", "embed_query", "unit_query_vector"]

dispatcher = instrument.get_dispatcher(__name__)


@dataclass(frozen=True)
class _Read:
    """Take the index's read lock until the retrieval returns; answered with the retrieval state."""


@dataclass(frozen=True)
class _Embed:
    """Embed these strings as one query (several: their mean, as LlamaIndex aggregates them)."""

    strings: tuple[str, ...]


@dataclass(frozen=True)
class _EmbedWords:
    """Embed each of these words apart, in one encoder call (the question's content words the index lacks)."""

    words: tuple[str, ...]


Step = _Read | _Embed | _EmbedWords | Fetch | Work
Body = Generator[Step, Any, list[list[NodeWithScore]]]


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
            question's best lexical match (:mod:`llama_index_pearl.retrieval.search.lexical`); ``0``
            ranks by the encoder alone, as in the paper.
        set_rule: How the connected set of tables is chosen (:mod:`llama_index_pearl.retrieval.answer.table_sets`);
            ``"index"`` (default): the index's, its bars from ``PearlConfig.needed_confidence`` and
            ``maybe_confidence``; ``None`` returns the pooled ranking as it is.
        set_margin: Return the whole set and this many other tables (at most ``similarity_top_k`` unless the set
            is larger: what a SQL writer needs); ``None``: ``similarity_top_k`` tables, the set first (a larger
            set is cut there, the tables that came into it last left out; ``set_size`` says how large it was).
        filters: LlamaIndex ``MetadataFilters`` on a table's ``table_id`` and ``source``: the retrieval is that of
            an index holding only the tables they keep (:mod:`~llama_index_pearl.retrieval.search.scope`).
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
    implicit (see :class:`~llama_index_pearl.retrieval.answer.join_hints.JoinHint`). The set of tables
    (:mod:`~llama_index_pearl.retrieval.answer.table_sets`) comes first, so its scores need
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
        set_rule: SetRule | Literal["index"] | None = "index",
        set_margin: int | None = None,
        filters: MetadataFilters | None = None,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        if fetch_k is not None and not _positive_int(fetch_k):
            raise ValueError(f"fetch_k must be an integer >= 1, got {fetch_k!r}")
        if not 0.0 <= lexical_weight < float("inf"):
            raise ValueError(f"lexical_weight must be a finite number >= 0, got {lexical_weight}")
        if set_margin is not None and not _int_at_least(set_margin, 0):
            raise ValueError(f"set_margin must be an integer >= 0 or None, got {set_margin!r}")
        if set_rule is not None and set_rule != "index" and not isinstance(set_rule, SetRule):
            raise ValueError(f"set_rule must be a SetRule, 'index' or None, got {set_rule!r}")
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

    # ------------------------------------------------------------- the body
    def _body(self, bundles: Sequence[QueryBundle]) -> Body:
        """The retrieval of some questions, as the steps its driver runs (see the module docstring)."""
        for bundle in bundles:
            check_question(bundle)
        state: RetrievalState = yield _Read()
        asked, request = yield Work(lambda: self._requests(state))
        texts = yield Work(lambda: [state.lexical_text(bundle.query_str, asked.scope) for bundle in bundles])
        questions = []
        for bundle, text in zip(bundles, texts):
            embedding = _given_embedding(bundle)
            if embedding is None:
                strings = tuple(bundle.embedding_strs)
                embedding = state.query_cache.get(strings)
                if embedding is None:
                    embedding = yield _Embed(strings)
                    state.query_cache.put(strings, embedding)
            questions.append(Question(text, embedding, asked=bundle.query_str))
        if self._set_rule is not None and len(state.columns.vectors):
            questions = yield from self._with_words(state, questions)
        rankings = yield from state.search.rank(questions, request)
        hints = self._include_join_hints_in_text
        answer = state.answer_in(asked.scope)
        return (yield Work(lambda: [answer.result(ranked, asked, hints) for ranked in rankings]))

    @staticmethod
    def _with_words(state: RetrievalState, questions: list[Question]) -> Generator[Step, Any, list[Question]]:
        """The questions with the vectors of their content words: the index's own, else embedded once, together."""
        asked = [content_words(q.text) for q in questions]
        known: dict[str, list[float]] = {}
        unknown: list[str] = []
        for words in asked:
            have, lack = state.word_vectors(words)
            known.update(have)
            unknown.extend(w for w in lack if w not in unknown)
        if unknown:
            vectors = yield _EmbedWords(tuple(unknown))
            for word, vector in zip(unknown, normalise(vectors)):
                state.word_cache.put((word,), vector)
                known[word] = vector
        dimension = len(questions[0].embedding) if questions else 0
        matrices = [
            np.asarray([known[w] for w in words], dtype=np.float32).reshape(len(words), dimension) for words in asked
        ]
        return [dataclasses.replace(q, word_vectors=m) for q, m in zip(questions, matrices)]

    def _requests(self, state: RetrievalState) -> tuple[AnswerRequest, SearchRequest]:
        """What this retriever asks of a revision now: of its answer, and of its search as deep as that answer
        reads (the scope read there)."""
        scope = state.scope(self._filters)
        rule = state.set_rule if self._set_rule == "index" else self._set_rule
        asked = AnswerRequest(k=self._similarity_top_k, rule=rule, margin=self._set_margin, scope=scope)
        depth = state.answer_in(scope).depth(asked)
        weight = self._lexical_weight
        return asked, SearchRequest(depth=depth, fetch_k=self._fetch_k, lexical_weight=weight, scope=scope)

    # -------------------------------------------------------------- drivers
    @dispatcher.span
    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._drive(self._body([query_bundle]))[0]

    @dispatcher.span
    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return (await self._adrive(self._body([query_bundle])))[0]

    def _drive(self, body: Body) -> list[list[NodeWithScore]]:
        with ExitStack() as held:
            answer = None
            try:
                while True:
                    answer = self._run(body.send(answer), held)
            except StopIteration as done:
                return done.value
            finally:
                body.close()

    async def _adrive(self, body: Body) -> list[list[NodeWithScore]]:
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
            held.enter_context(self._index.revisions.reading())
            return self._index.revisions.state()
        if isinstance(step, _Embed):
            return self._embed(step.strings)
        if isinstance(step, _EmbedWords):
            return self._index.embed_model.get_text_embedding_batch(list(step.words))
        if isinstance(step, Fetch):
            return [self._hit(n) for n in self._unit_retriever(step.n).retrieve(step.query)]
        return step.run()

    async def _arun(self, step: Step, held: AsyncExitStack) -> Any:
        if isinstance(step, _Read):
            await held.enter_async_context(self._index.revisions.areading())
            return self._index.revisions.state()
        if isinstance(step, _Embed):
            return await self._aembed(step.strings)
        if isinstance(step, _EmbedWords):
            return await self._index.embed_model.aget_text_embedding_batch(list(step.words))
        if isinstance(step, Fetch):
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
        info = self._index.catalog.units.get(node.node_id)  # the unit's tables, whatever metadata the store kept
        table_ids = info.table_ids if info is not None else unit_meta(node).get(TABLE_IDS, [])
        return UnitHit(node.node_id, list(table_ids), float(node_with_score.score or 0.0))

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
        return self._drive(self._body(bundles)) if bundles else []

    @dispatcher.span
    async def aretrieve_many(
        self, questions: Sequence[str | QueryBundle], batch_size: int = 64
    ) -> list[list[NodeWithScore]]:
        """Async twin of :meth:`retrieve_many`: the encoder and the search run in worker threads."""
        bundles = await asyncio.to_thread(self._embedded, questions, batch_size)
        return await self._adrive(self._body(bundles)) if bundles else []

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


def _int_at_least(value: object, minimum: int) -> bool:
    """An integer, never a ``bool`` or a ``float`` however whole (``False`` and ``0.0`` are refused as ``True``)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def _positive_int(value: object) -> bool:
    return _int_at_least(value, 1)


def _given_embedding(query_bundle: QueryBundle) -> list[float] | None:
    """The bundle's own embedding once known to be finite (a ``ValueError`` naming the query if not)."""
    if query_bundle.embedding is None:
        return None
    return finite_query_vector(query_bundle.embedding, query_bundle.query_str)


def embed_query(embed_model: BaseEmbedding, query: str) -> list[float]:
    """The unit-length vector of one question, as a retrieval embeds it (a broken encoder's raises ``ValueError``).

    Args:
        embed_model: The index's encoder.
        query: The question.
    """
    return unit_query_vector(embed_model.get_query_embedding(query), (query,))


def unit_query_vector(vector: Sequence[float], strings: tuple[str, ...]) -> list[float]:
    """A query vector of unit length; a non-finite one (a broken encoder) raises ``ValueError`` naming the query.

    Args:
        vector: What the encoder gave for ``strings``.
        strings: The query strings embedded.
    """
    return finite_query_vector(normalise([vector])[0], " | ".join(strings))
