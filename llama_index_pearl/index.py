"""``PearlTableIndex``: tables in, an augmented and embedded unit corpus out.

The offline build (paper Algorithm 1: load, serialize, discover join paths,
generate questions, embed) lives in :mod:`llama_index_pearl.build`; this module
holds the index object: its accessors, engines and persistence entry points
(``insert_tables``/``delete_table`` come from
:class:`~llama_index_pearl.incremental.IncrementalMixin`). Retrieval lives in
:mod:`llama_index_pearl.retriever`.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import networkx as nx
from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.chat_engine.types import BaseChatEngine, ChatMode
from llama_index.core.llms import LLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import TextNode

from llama_index_pearl.build import build_corpus, estimate_generation_cost, serializer_for
from llama_index_pearl.concurrency import ReadWriteLock
from llama_index_pearl.config import BuildReport, PearlConfig, generation_cache, generator_from_name
from llama_index_pearl.generation import GenerationCache, QueryGenerator
from llama_index_pearl.incremental import IncrementalMixin
from llama_index_pearl.joins import JoinPath, paths_from_graph
from llama_index_pearl.lexical import LexicalScorer
from llama_index_pearl.query_plan import query_plan
from llama_index_pearl.serialization import DEFAULT_MAX_ROWS
from llama_index_pearl.sources import DEFAULT_MAX_ROWS_READ, CsvOptions, TableSource
from llama_index_pearl.stores import build_vector_index, normalise, store_dimension
from llama_index_pearl.table import Table
from llama_index_pearl.units import Serializer

if TYPE_CHECKING:
    from llama_index_pearl.retriever import PearlRetriever

__all__ = ["BuildReport", "PearlConfig", "PearlTableIndex", "build_vector_index"]


class PearlTableIndex(IncrementalMixin):
    """A join-aware table index: tables, their units, and a vector store of units.

    Build one with :meth:`from_tables` or :meth:`load`; query it through
    :meth:`as_retriever`, :meth:`as_query_engine` or :meth:`as_chat_engine`.

    Thread safety: any number of threads (or coroutines) may retrieve while one
    thread runs :meth:`insert_tables` or :meth:`delete_table`; updates run one at
    a time. Each retrieval sees the index before or after an update's changes are
    applied, never half of them (a ``replace`` insert is a delete, then an insert).
    Generation and embedding of an update do not block retrieval; applying the
    result (vector store and tables) does, briefly. :meth:`persist` writes a
    consistent snapshot.
    """

    def __init__(
        self,
        tables: Sequence[Table],
        vector_index: VectorStoreIndex,
        embed_model: BaseEmbedding,
        config: PearlConfig,
        units: Sequence[TextNode],
        join_graph: nx.Graph | None = None,
        llm: LLM | None = None,
        report: BuildReport | None = None,
        generator: QueryGenerator | None = None,
        cache_dir: str | Path | None = None,
    ) -> None:
        self._tables = {t.id: t for t in tables}
        self._vector_index = vector_index
        self._embed_model = embed_model
        self._config = config
        self._units = {u.node_id: u for u in units}
        self._join_graph = join_graph if join_graph is not None else _graph_of(tables)
        self._llm = llm
        self._generator = generator
        self._cache_dir = cache_dir
        self.report = report or BuildReport(n_tables=len(tables), n_units=len(units))
        self._serializer = serializer_for(embed_model, config)
        self._rw = ReadWriteLock()  # retrievals share it; an update's apply step holds it alone
        self._update_lock = threading.RLock()  # one insert_tables/delete_table at a time

    # ------------------------------------------------------------------ build
    @classmethod
    def from_tables(
        cls,
        tables: TableSource,
        *,
        embed_model: BaseEmbedding | None = None,
        llm: LLM | None = None,
        generator: QueryGenerator | None = None,
        storage_context: StorageContext | None = None,
        augment: bool = True,
        budget: int | None = None,
        lambda_div: float = 0.1,
        use_declared_joins: bool = True,
        cross_source_joins: str = "evidence",
        explicit_only: bool = False,
        implicit_only: bool = False,
        no_originals: bool = False,
        single_hop: bool = False,
        single_hop_questions: int | None = None,
        random_view: bool = False,
        random_query: bool = False,
        concurrency: int = 4,
        cache_dir: str | Path | None = None,
        include_titles: bool = True,
        max_rows: int = DEFAULT_MAX_ROWS,
        max_rows_read: int | None = DEFAULT_MAX_ROWS_READ,
        csv_options: CsvOptions | Mapping[str, Any] | None = None,
        show_progress: bool = False,
    ) -> PearlTableIndex:
        """Build an index over tables.

        Args:
            tables: Anything :func:`~llama_index_pearl.sources.load_tables` accepts:
                ``dict`` of DataFrames, ``Table`` list, CSV/Parquet folder or
                files, SQLAlchemy URL/engine, or ``SQLDatabase``.
            embed_model: Encoder; default ``Settings.embed_model`` if explicitly
                set, else the bundled all-MiniLM-L6-v2.
            llm: LLM for query generation; default ``Settings.llm`` if explicitly
                set, else none.
            generator: Query generator; default ``LLMQueryGenerator(llm)`` when an
                LLM resolves, else the offline ``HeuristicQueryGenerator``.
            storage_context: Where vectors go; its ``vector_store`` is honoured.
                Default: an exact FAISS inner-product index.
            augment: Run join discovery and query generation (``False``: the
                whole-table baseline).
            budget: Paths kept per pool by lazy greedy (paper's K). Default: every
                candidate path when the generator is free (the heuristic), ⌊|C|/2⌋
                with an LLM (see :meth:`estimate_cost` before spending).
            lambda_div: Diversity weight λ_div of path selection (paper: 0.1).
            use_declared_joins: Use foreign keys declared by SQL sources as edges.
            cross_source_joins: Joins between tables of different sources
                (``Table.source``: database/schema, sub-folder): ``"evidence"``
                (default) keeps only those backed by values chance does not explain,
                ``"never"`` drops them, ``"always"`` ignores provenance.
            explicit_only: Ablation: joined entries of explicit paths only.
            implicit_only: Ablation: sub-entries of implicit paths only.
            no_originals: Ablation: drop the whole-table units.
            single_hop: Add per-table questions for tables in no selected path
                (paper appendix E; use it for single-table corpora).
            single_hop_questions: Questions per such table (5 with an LLM, 2 heuristic).
            random_view: Ablation: random column subsets instead of path units.
            random_query: Ablation: per-table questions for every table, no paths.
            concurrency: LLM requests in flight during generation.
            cache_dir: Folder of the generation cache (JSONL). Default for an LLM
                generator: ``~/.cache/llama-index-pearl``; the heuristic is not cached.
            include_titles: Render table titles/descriptions in units.
            max_rows: Rows per table view (paper: 10).
            max_rows_read: Leading rows read per table from its source, 10,000 by
                default (SQL: ``LIMIT``, run by the server; CSV: ``nrows``; Parquet:
                leading row groups; DataFrames: cut); ``None`` reads everything.
                Join discovery and units use this sample, and only it is persisted;
                the exact row count is kept in ``Table.total_rows``.
            csv_options: ``{"encoding": ..., "delimiter": ..., "quotechar": ...}`` for
                CSV files; detected per file where not given.
            show_progress: Show progress bars on long stages.

        Raises:
            ValueError: A bad source, table or setting (the message names it).
            GenerationFailed: At least the generator's ``max_failed_share`` of its
                LLM requests failed (default: all of them); accepted answers are cached.
        """
        built = build_corpus(
            tables,
            embed_model=embed_model,
            llm=llm,
            generator=generator,
            storage_context=storage_context,
            augment=augment,
            budget=budget,
            lambda_div=lambda_div,
            use_declared_joins=use_declared_joins,
            cross_source_joins=cross_source_joins,
            explicit_only=explicit_only,
            implicit_only=implicit_only,
            no_originals=no_originals,
            single_hop=single_hop,
            single_hop_questions=single_hop_questions,
            random_view=random_view,
            random_query=random_query,
            concurrency=concurrency,
            cache_dir=cache_dir,
            include_titles=include_titles,
            max_rows=max_rows,
            max_rows_read=max_rows_read,
            csv_options=csv_options,
            show_progress=show_progress,
        )
        return cls(**vars(built), cache_dir=cache_dir)

    @classmethod
    def estimate_cost(
        cls,
        tables: TableSource,
        *,
        embed_model: BaseEmbedding | None = None,
        llm: LLM | None = None,
        generator: QueryGenerator | None = None,
        budget: int | None = None,
        lambda_div: float = 0.1,
        use_declared_joins: bool = True,
        cross_source_joins: str = "evidence",
        cache_dir: str | Path | None = None,
        max_rows_read: int | None = DEFAULT_MAX_ROWS_READ,
        csv_options: CsvOptions | Mapping[str, Any] | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """Dry run: discover and select paths, build every prompt, call no LLM.

        Args:
            tables: As in :meth:`from_tables`.
            embed_model: Encoder used by join discovery.
            llm: The LLM a build would use (its prompts are counted).
            generator: Explicit generator instead of ``llm``.
            budget: Paths per pool, as in :meth:`from_tables`.
            lambda_div: Diversity weight, as in :meth:`from_tables`.
            use_declared_joins: As in :meth:`from_tables`.
            cross_source_joins: As in :meth:`from_tables`.
            cache_dir: Generation cache a build would use (as in :meth:`from_tables`;
                LLM builds default to the user cache); ``cached_requests`` counts
                the requests it already answers, which a build will not send.
            max_rows_read: As in :meth:`from_tables`.
            csv_options: As in :meth:`from_tables`.
            **options: Ablation flags of :class:`~llama_index_pearl.augment.AugmentOptions`.

        Returns:
            ``{"tables", "paths", "fallback_paths", "requests", "cached_requests",
            "prompt_tokens", "per_path_avg", "max_prompt_tokens"}``: ``paths`` go to the
            generator (LLM calls), ``fallback_paths`` to its free fallback.
        """
        return estimate_generation_cost(
            tables,
            embed_model=embed_model,
            llm=llm,
            generator=generator,
            budget=budget,
            lambda_div=lambda_div,
            use_declared_joins=use_declared_joins,
            cross_source_joins=cross_source_joins,
            cache_dir=cache_dir,
            max_rows_read=max_rows_read,
            csv_options=csv_options,
            **options,
        )

    # ------------------------------------------------------------ accessors
    @property
    def tables(self) -> dict[str, Table]:
        return self._tables

    @property
    def units(self) -> list[TextNode]:
        return list(self._units.values())

    def unit(self, unit_id: str) -> TextNode | None:
        return self._units.get(unit_id)

    @property
    def join_graph(self) -> nx.Graph:
        return self._join_graph

    @property
    def join_paths(self) -> list[JoinPath]:
        """The selected join paths (explicit and implicit) the units were built from."""
        return paths_from_graph(self._join_graph)

    @property
    def embed_model(self) -> BaseEmbedding:
        return self._embed_model

    @property
    def config(self) -> PearlConfig:
        return self._config

    @property
    def serializer(self) -> Serializer:
        return self._serializer

    @property
    def vector_index(self) -> VectorStoreIndex:
        return self._vector_index

    @property
    def storage_context(self) -> StorageContext:
        return self._vector_index.storage_context

    @property
    def dimension(self) -> int:
        return store_dimension(self._vector_index.vector_store) or len(self.embed_query("dimension probe"))

    @property
    def generator(self) -> QueryGenerator | None:
        """The query generator used for new paths (``None`` for a whole-table index).

        After :meth:`load` it is rebuilt from the recorded name: the heuristic
        generator with its settings, or ``LLMQueryGenerator`` over the ``llm``
        given to :meth:`load`.

        Raises:
            ValueError: The index was built with an LLM and none was given.
        """
        if self._generator is None and self._config.augment:
            self._generator = generator_from_name(self._config.generator, self._llm)
        return self._generator

    def generation_cache(self) -> GenerationCache | None:
        """The generation cache a build or insert uses (LLM: on by default; heuristic: only with ``cache_dir``)."""
        return generation_cache(self.generator, self._cache_dir)

    def embed_query(self, query: str) -> list[float]:
        """The normalised query vector; a non-finite one (a broken encoder) raises ``ValueError``."""
        return _finite(normalise([self._embed_model.get_query_embedding(query)])[0], query)

    async def aembed_query(self, query: str) -> list[float]:
        return _finite(normalise([await self._embed_model.aget_query_embedding(query)])[0], query)

    def lexical_scorer(self) -> LexicalScorer:
        """BM25 over the units' embedded texts (built on first use, again after each insert/delete)."""
        return query_plan(self).lexical_scorer()

    def table_text(self, table_id: str) -> str:
        """The table as shown to an LLM: header and leading rows, no encoder budget."""
        table = self._tables[table_id]
        view = self._serializer.view(table)
        return Serializer(include_titles=self._config.include_titles, max_rows=self._config.max_rows)([view])

    # -------------------------------------------------------------- engines
    def as_retriever(self, similarity_top_k: int = 5, **kwargs: Any) -> PearlRetriever:
        """A table-level retriever (max-pooled unit scores)."""
        from llama_index_pearl.retriever import PearlRetriever

        return PearlRetriever(self, similarity_top_k=similarity_top_k, **kwargs)

    def as_query_engine(
        self,
        llm: LLM | None = None,
        similarity_top_k: int = 5,
        include_join_hints_in_text: bool = False,
        **kwargs: Any,
    ) -> RetrieverQueryEngine:
        """A ``RetrieverQueryEngine`` over retrieved tables.

        Args:
            llm: Answering LLM; default the index's LLM, else an explicitly set ``Settings.llm``.
            similarity_top_k: Tables retrieved per question.
            include_join_hints_in_text: Show the LLM how the retrieved tables join.
            **kwargs: Passed to ``RetrieverQueryEngine.from_args``.

        Raises:
            ValueError: No LLM (never LlamaIndex's OpenAI default); the message says where to give one.
        """
        from llama_index_pearl.engines import query_engine

        retriever = self.as_retriever(similarity_top_k, include_join_hints_in_text=include_join_hints_in_text)
        return query_engine(retriever, llm or self._llm, **kwargs)

    def as_chat_engine(
        self,
        llm: LLM | None = None,
        similarity_top_k: int = 5,
        include_join_hints_in_text: bool = False,
        chat_mode: ChatMode | str = ChatMode.CONDENSE_PLUS_CONTEXT,
        **kwargs: Any,
    ) -> BaseChatEngine:
        """A chat engine grounded on retrieved tables.

        Args:
            llm: Chat LLM; default the index's LLM, else an explicitly set ``Settings.llm``.
            similarity_top_k: Tables retrieved per turn.
            include_join_hints_in_text: Show the LLM how the retrieved tables join.
            chat_mode: ``"condense_plus_context"`` (default), ``"context"`` or ``"condense_question"``.
            **kwargs: Passed to the chat engine's ``from_defaults``.

        Raises:
            ValueError: Another ``chat_mode``, or no LLM.
        """
        from llama_index_pearl.engines import chat_engine

        retriever = self.as_retriever(similarity_top_k, include_join_hints_in_text=include_join_hints_in_text)
        return chat_engine(retriever, llm or self._llm, chat_mode=chat_mode, **kwargs)

    def read_lock(self) -> AbstractContextManager[None]:
        """Hold off index updates' apply step for the block (retrievals take it; see the class docstring)."""
        return self._rw.reading()

    def aread_lock(self) -> AbstractAsyncContextManager[None]:
        """:meth:`read_lock` for coroutines (waits on a worker thread, never on the event loop)."""
        return self._rw.areading()

    # ---------------------------------------------------------- persistence
    def persist(self, persist_dir: str | Path) -> None:
        """Write the index to a folder (JSON, JSONL and a FAISS file; no pickle).

        The files go to a temporary sibling folder that then replaces ``persist_dir``
        atomically: a crash leaves the previous index or the new one, never a mix.

        Raises:
            ValueError: ``persist_dir`` is a file, or a non-empty folder that is not
                a PEARL index (it would be replaced).
        """
        from llama_index_pearl.persistence import persist_index

        with self.read_lock():
            persist_index(self, Path(persist_dir))

    @classmethod
    def load(
        cls,
        persist_dir: str | Path,
        *,
        embed_model: BaseEmbedding | None = None,
        llm: LLM | None = None,
        storage_context: StorageContext | None = None,
        allow_encoder_change: bool = False,
    ) -> PearlTableIndex:
        """Load and verify an index written by :meth:`persist`.

        Args:
            persist_dir: The folder.
            embed_model: Must be the encoder the index was built with (class and
                model name, as recorded in the manifest). Default: the recorded
                encoder (the bundled MiniLM or a local Hugging Face model), or an
                explicitly set ``Settings.embed_model`` that matches it.
            llm: LLM for engines built from this index.
            storage_context: For an external vector store (Qdrant, pgvector...).
            allow_encoder_change: Accept another encoder of the same dimension
                (a warning is logged); its vectors must be comparable.

        Raises:
            ValueError: missing/partial folder, other format version, another
                encoder, a dimension mismatch, or any file that is malformed or
                disagrees with the manifest or the other files; the message names
                the file and the problem.
        """
        from llama_index_pearl.persistence import load_index

        return load_index(
            cls,
            Path(persist_dir),
            embed_model=embed_model,
            llm=llm,
            storage_context=storage_context,
            allow_encoder_change=allow_encoder_change,
        )


def _finite(vector: list[float], query: str) -> list[float]:
    """NaN or infinite scores would rank nothing (FAISS returns no hits); say so instead."""
    if not all(math.isfinite(x) for x in vector):
        raise ValueError(f"The encoder returned a non-finite embedding for the query {query[:80]!r}")
    return vector


def _graph_of(tables: Sequence[Table]) -> nx.Graph:
    graph = nx.Graph()
    graph.add_nodes_from(t.id for t in tables)
    return graph
