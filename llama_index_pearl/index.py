"""``PearlTableIndex``: tables in, an augmented and embedded unit corpus out.

The offline build (paper Algorithm 1: load, serialize, discover join
paths, generate questions, embed) lives in :mod:`~llama_index_pearl.corpus.build`, update
planning in :mod:`~llama_index_pearl.storage.incremental`, the file format in
:mod:`~llama_index_pearl.storage.persistence`, retrieval in :mod:`~llama_index_pearl.retrieval.retriever`;
this module holds the index object: its state, accessors, locks and entry points.

Pipeline step: index (docs/architecture.md).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, MutableMapping, Sequence
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from pathlib import Path
from typing import Any

import llama_index.core.instrumentation as instrument
import networkx as nx
from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.llms import LLM
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import BasePydanticVectorStore

from llama_index_pearl.config import PearlConfig
from llama_index_pearl.corpus.build import (
    BuildReport,
    IndexParts,
    build_corpus,
    estimate_generation_cost,
    serializer_for,
)
from llama_index_pearl.corpus.catalog import Catalog, UnitInfo
from llama_index_pearl.corpus.lexical import LexicalIndex
from llama_index_pearl.corpus.stores import delete_units, store_dimension
from llama_index_pearl.corpus.units import lexical_text
from llama_index_pearl.foundations.threads import run_in_thread
from llama_index_pearl.generation import GenerationCache, QueryGenerator, cache_for, restore_generator
from llama_index_pearl.joins import JoinPath, paths_from_graph
from llama_index_pearl.retrieval.engines import IndexEngines
from llama_index_pearl.retrieval.lexical import LexicalScorer
from llama_index_pearl.retrieval.retriever import unit_query_vector
from llama_index_pearl.retrieval.state import RetrievalState
from llama_index_pearl.storage.incremental import IndexChange, UpdateReport, delete_table, insert_tables
from llama_index_pearl.storage.locks import ReadWriteLock, check_timeout, holding
from llama_index_pearl.storage.persistence import load_index, persist_index
from llama_index_pearl.tables.inputs import TablesInput
from llama_index_pearl.tables.table import Table
from llama_index_pearl.text.serialization import Serializer

__all__ = ["BuildReport", "PearlConfig", "PearlTableIndex"]

dispatcher = instrument.get_dispatcher(__name__)


class PearlTableIndex(IndexEngines):
    """A join-aware table index: tables, their units, and a vector store of units.

    Build one with :meth:`from_tables` or :meth:`load`; query it through
    :meth:`as_retriever`, :meth:`as_query_engine` or :meth:`as_chat_engine`
    (:class:`~llama_index_pearl.retrieval.engines.IndexEngines`).

    Thread safety: any number of threads (or coroutines) may retrieve while one
    thread runs :meth:`insert_tables` or :meth:`delete_table`; updates run one at
    a time. Each retrieval sees the index before or after an update's changes are
    applied, never half of them (a ``replace`` insert included: its deletes and its
    insert are one change, applied once its units are embedded). Generation and
    embedding of an update do not block retrieval; applying the result (vector store,
    tables and a new :class:`~llama_index_pearl.retrieval.state.RetrievalState`) does,
    briefly. Lock waits are bounded by :attr:`lock_timeout`. :meth:`persist` writes a
    consistent snapshot.
    """

    def __init__(self, parts: IndexParts) -> None:
        """An index of what a build made or a load read (users call :meth:`from_tables` or :meth:`load`).

        Args:
            parts: What the index is made of (:class:`~llama_index_pearl.corpus.build.IndexParts`).

        Raises:
            ValueError: ``parts`` holds neither its units nor ``open_units`` and ``vector_store`` to read them later.
        """
        tables, units, catalog, config = parts.tables, parts.units, parts.catalog, parts.config
        self._tables = tables if isinstance(tables, MutableMapping) else {t.id: t for t in tables}
        self._vector_index = parts.vector_index
        self._embed_model = parts.embed_model
        self._config = config
        self._units = {u.node_id: u for u in units} if units is not None else None
        if self._units is None and (parts.open_units is None or parts.vector_store is None):
            raise ValueError("PearlTableIndex needs its units, or open_units and vector_store to read them later")
        self._open_units = parts.open_units
        self._opening = threading.Lock()
        store = parts.vector_store
        self._vector_store = store if store is not None else parts.vector_index.vector_store  # type: ignore[union-attr]
        if catalog is None:  # texts are rendered when first asked for
            units_info = {u.node_id: UnitInfo.of(u) for u in self._units.values()}  # type: ignore[union-attr]
            sources = {t.id: t.source for t in self._tables.values() if t.source is not None}
            catalog = Catalog(units=units_info, sources=sources)
        self._catalog = catalog
        self._lexical = parts.lexical  # the persisted BM25 index: valid until the first change
        self._join_graph = parts.join_graph if parts.join_graph is not None else _graph_of(self._tables)
        self._llm = parts.llm
        self._generator = parts.generator if config.augment else None
        self._generator_spec = parts.generator_spec if config.augment else None
        self.report = parts.report or BuildReport(n_tables=len(self._tables), n_units=len(self._catalog.units))
        self._serializer = serializer_for(parts.embed_model, config)
        self._revision = 0
        self._rw = ReadWriteLock()  # retrievals share it; an update's apply step holds it alone
        self._update_lock = threading.RLock()  # one insert_tables/delete_table at a time
        self._retrieval: RetrievalState | None = None  # built on first use, then by each apply_change
        self._retrieval_built = threading.Lock()

    # ------------------------------------------------------------------ build
    @classmethod
    def from_tables(
        cls,
        tables: TablesInput,
        *,
        config: PearlConfig | None = None,
        embed_model: BaseEmbedding | None = None,
        llm: LLM | None = None,
        generator: QueryGenerator | None = None,
        storage_context: StorageContext | None = None,
        show_progress: bool = False,
        **overrides: Any,
    ) -> PearlTableIndex:
        """Build an index over tables.

        Args:
            tables: Anything :func:`~llama_index_pearl.tables.inputs.load_tables` accepts:
                ``dict`` of DataFrames, ``Table`` list, CSV/Parquet folder or
                files, SQLAlchemy URL/engine, or ``SQLDatabase``.
            config: Build settings (:class:`~llama_index_pearl.config.PearlConfig`,
                which documents every option); default: the defaults.
            embed_model: Encoder; default the bundled all-MiniLM-L6-v2 (``Settings.embed_model``
                is not read: :mod:`~llama_index_pearl.text.models` says why).
            llm: LLM for query generation; default none (``Settings.llm`` is not read: a build
                pays for generation only with an LLM given here or in ``generator``).
            generator: Query generator; default ``LLMQueryGenerator(llm)`` when ``llm`` is
                given, else the offline ``HeuristicQueryGenerator``. A paid generator logs
                (INFO) what it will send before sending it.
            storage_context: Where vectors go; its ``vector_store`` is honoured.
                Default: an exact FAISS inner-product index.
            show_progress: Show progress bars on long stages.
            **overrides: Fields of ``config`` to replace, e.g. ``budget=40`` or
                ``include_titles=False``.

        Raises:
            TypeError: An override that is no build option.
            ValueError: A bad input, table or setting (the message names it).
            GenerationFailed: At least the generator's ``max_failed_share`` of its
                LLM requests failed (default: all of them); accepted answers are cached.
        """
        built = _traced_build(
            tables,
            PearlConfig.with_overrides(config, **overrides),
            embed_model=embed_model,
            llm=llm,
            generator=generator,
            storage_context=storage_context,
            show_progress=show_progress,
        )
        return cls(built)

    @classmethod
    async def afrom_tables(cls, tables: TablesInput, **kwargs: Any) -> PearlTableIndex:
        """:meth:`from_tables` on a thread of its own: the event loop goes on while the index builds.

        Args:
            tables: As in :meth:`from_tables`.
            **kwargs: :meth:`from_tables`'s keyword arguments.
        """
        return await run_in_thread(lambda: cls.from_tables(tables, **kwargs))

    @classmethod
    def estimate_cost(
        cls,
        tables: TablesInput,
        *,
        config: PearlConfig | None = None,
        embed_model: BaseEmbedding | None = None,
        llm: LLM | None = None,
        generator: QueryGenerator | None = None,
        **overrides: Any,
    ) -> dict[str, Any]:
        """Dry run: discover and select paths, build every prompt, call no LLM.

        Args:
            tables: As in :meth:`from_tables`.
            config: As in :meth:`from_tables`; its ``cache_dir`` (LLM builds default to
                the user cache) answers ``cached_requests``, which a build will not send.
            embed_model: Encoder used by join discovery.
            llm: The LLM a build would use (its prompts are counted).
            generator: Explicit generator instead of ``llm``.
            **overrides: Fields of ``config`` to replace, as in :meth:`from_tables`.

        Returns:
            ``{"tables", "paths", "fallback_paths", "requests", "cached_requests",
            "prompt_tokens", "per_path_avg", "max_prompt_tokens"}``: ``paths`` go to the
            generator (LLM calls), ``fallback_paths`` to its free fallback.
        """
        chosen = PearlConfig.with_overrides(config, **overrides)
        return estimate_generation_cost(tables, chosen, embed_model=embed_model, llm=llm, generator=generator)

    # ------------------------------------------------------------ accessors
    @property
    def tables(self) -> MutableMapping[str, Table]:
        """The tables by id (after :meth:`load`, read from the folder when a table is first asked for)."""
        return self._tables

    @property
    def units(self) -> list[TextNode]:
        return list(self._opened()[1].values())

    def unit(self, unit_id: str) -> TextNode | None:
        return self._opened()[1].get(unit_id)

    def _opened(self) -> tuple[VectorStoreIndex, dict[str, TextNode]]:
        """The vector index and the units, read from the folder (and checked) the first time after :meth:`load`."""
        if self._units is None:
            with self._opening:
                if self._units is None:
                    assert self._open_units is not None
                    vector_index, units = self._open_units()
                    self._vector_index = vector_index
                    self._units = {u.node_id: u for u in units}
        assert self._vector_index is not None
        return self._vector_index, self._units

    @property
    def catalog(self) -> Catalog:
        """Each table's text for an LLM and each unit's kind, tables and question: what a retrieval reads."""
        return self._catalog

    def persisted_lexical(self) -> LexicalIndex | None:
        """The BM25 index a loaded folder holds (documents in catalog order), until the index changes."""
        return self._lexical() if self._lexical is not None else None

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
        return self._opened()[0]

    @property
    def vector_store(self) -> BasePydanticVectorStore:
        """The store of the unit vectors (a loaded index has it before its LlamaIndex stores are read)."""
        return self._vector_store

    @property
    def storage_context(self) -> StorageContext:
        return self.vector_index.storage_context

    @property
    def revision(self) -> int:
        """Counts applied updates: state derived from an older revision is stale."""
        return self._revision

    @property
    def lock_timeout(self) -> float:
        """Seconds a retrieval or an update waits for the index's locks before raising ``LockTimeout``.

        ``float("inf")`` waits as long as it takes; anything but a number > 0 is a ``ValueError`` here.
        """
        return self._rw.timeout

    @lock_timeout.setter
    def lock_timeout(self, seconds: float) -> None:
        self._rw.timeout = check_timeout(seconds, "lock_timeout")

    def retrieval_state(self) -> RetrievalState:
        """What a query reads of the current revision (call it holding :meth:`read_lock`).

        Built on the first call after a build or load, then by every :meth:`apply_change`, which swaps
        it with the change; retrievers only read it.
        """
        state = self._retrieval
        if state is None:
            with self._retrieval_built:
                state = self._retrieval
                if state is None:
                    state = self._retrieval = RetrievalState(self)
        return state

    @property
    def dimension(self) -> int:
        return store_dimension(self._vector_store) or len(self._embed_model.get_query_embedding("dimension probe"))

    @property
    def generator_name(self) -> str:
        """The ``model_name`` of the query generator (``"none"`` for a whole-table index)."""
        if self._generator is not None:
            return self._generator.model_name
        return str((self._generator_spec or {}).get("model_name", "none"))

    @property
    def generator(self) -> QueryGenerator | None:
        """The query generator used for new paths (``None`` for a whole-table index).

        After :meth:`load` it is rebuilt from the recorded spec (see
        :func:`~llama_index_pearl.generation.register_generator`): the heuristic with
        its settings, or ``LLMQueryGenerator`` over the ``llm`` given to :meth:`load`.

        Raises:
            ValueError: The index was built with an LLM and none was given, or with
                an unregistered generator.
        """
        if self._generator is None and self._generator_spec is not None:
            self._generator = restore_generator(self._generator_spec, self._llm)
        return self._generator

    def generation_cache(self) -> GenerationCache | None:
        """The generation cache a build or insert uses (LLM: on by default; heuristic: only with ``cache_dir``)."""
        return cache_for(self.generator, self._config.cache_dir)

    def embed_query(self, query: str) -> list[float]:
        """The normalised query vector; a non-finite one (a broken encoder) raises ``ValueError``."""
        return unit_query_vector(self._embed_model.get_query_embedding(query), (query,))

    def lexical_scorer(self) -> LexicalScorer:
        """BM25 over the units' lexical texts (built on first use, again after each insert/delete)."""
        with self.read_lock():
            return self.retrieval_state().lexical_scorer()

    def table_text(self, table_id: str) -> str:
        """The table as shown to an LLM: header and leading rows, within ``config.table_text_chars`` (cuts marked).

        Rendered when the table enters the index (an index made from units without a catalog: when first asked for).
        """
        text = self._catalog.texts.get(table_id)
        if text is None:
            text = self._catalog.texts[table_id] = self._serializer.table_text(
                self._tables[table_id], self._config.table_text_chars
            )
        return text

    def lexical_texts(self, unit_ids: Sequence[str]) -> list[str]:
        """What BM25 reads of each unit (its embedded text and the rows it leaves out)."""
        units = self._opened()[1]
        return [lexical_text(units[u]) if u in units else "" for u in unit_ids]

    # -------------------------------------------------------------- updates
    @dispatcher.span
    def insert_tables(
        self, tables: TablesInput, *, replace: bool = False, show_progress: bool = False, **overrides: Any
    ) -> UpdateReport:
        """Add tables without rebuilding (paper appendix C.3).

        Candidate join edges are scored only for column pairs involving a new
        table; only paths through a new table are generated (through the
        generation cache and this index's generator); only new units are
        embedded. Existing paths, questions and vectors are kept as they are.

        Args:
            tables: Anything :meth:`from_tables` accepts; as many rows are read per
                table as the build read (``config.max_rows_read``).
            replace: Replace tables whose id already exists (their deletes and the insert are one change).
            show_progress: Show progress bars.
            **overrides: This insert's ``concurrency``, ``cache_dir`` or ``csv_options``;
                every other option is the build's.

        Returns:
            What changed and what it cost.

        Raises:
            ValueError: A table id already exists and ``replace`` is false (the
                message names it), no tables were given, or an override of an
                option the build fixed.
            LockTimeout: Another update, or retrievals, held the index past :attr:`lock_timeout`.
            RuntimeError: Called while holding :meth:`read_lock` (it would wait for itself).
        """
        with holding(self._update_lock, self.lock_timeout, "another update of the index to finish"):
            return insert_tables(self, tables, self._config.for_update(**overrides), replace, show_progress)

    async def ainsert_tables(self, tables: TablesInput, **kwargs: Any) -> UpdateReport:
        """:meth:`insert_tables` on a thread of its own (not the loop's executor): the event loop goes on.

        Args:
            tables: As in :meth:`insert_tables`.
            **kwargs: :meth:`insert_tables`'s keyword arguments.
        """
        return await run_in_thread(lambda: self.insert_tables(tables, **kwargs))

    @dispatcher.span
    def delete_table(self, table_id: str) -> UpdateReport:
        """Remove a table: its units, its join edges and the units of every path through it.

        Args:
            table_id: The table to remove.

        Returns:
            What changed.

        Raises:
            ValueError: ``table_id`` is not in the index (the message names it),
                or it is the last table.
            NotImplementedError: The vector store cannot delete (e.g. a plain
                positional ``FaissVectorStore``).
            LockTimeout: Another update, or retrievals, held the index past :attr:`lock_timeout`.
        """
        with holding(self._update_lock, self.lock_timeout, "another update of the index to finish"):
            return delete_table(self, table_id)

    async def adelete_table(self, table_id: str) -> UpdateReport:
        """:meth:`delete_table` on a thread of its own: the event loop goes on."""
        return await run_in_thread(lambda: self.delete_table(table_id))

    def apply_change(self, change: IndexChange) -> None:
        """Apply a planned update (:mod:`~llama_index_pearl.storage.incremental`): vector store, then state, atomically.

        Retrievals see all of it or none of it: the new retrieval state is built and swapped in under
        the same write lock. ``change.units`` must carry their vectors.

        Raises:
            NotImplementedError: Units to remove and a vector store that cannot delete.
            LockTimeout: Retrievals held the read lock past :attr:`lock_timeout`.
        """
        vector_index, units = self._opened()
        with self._rw.writing():
            previous, self._retrieval = self._retrieval, None
            if change.removed_units:
                delete_units(vector_index, change.removed_units)
            if change.units:
                vector_index.insert_nodes(change.units)
            self._revision += 1
            self._lexical = None  # the units changed: BM25 is built again from them
            self._join_graph = change.apply_to(self._tables, units, self._join_graph)
            sources = {t: self._tables[t].source for t in change.table_texts if t in self._tables}
            self._catalog.change(change.removed_tables, change.removed_units, change.table_texts, change.units, sources)
            self.report.recount(self._tables, units.values(), self._join_graph)
            if previous is not None:  # never queried: the first retrieval builds it
                self._retrieval = RetrievalState(self, previous)

    def read_lock(self, timeout: float | None = None) -> AbstractContextManager[None]:
        """Hold off index updates' apply step for the block (retrievals take it; see the class docstring).

        Re-entrant: a retrieval inside the block never waits for a queued update. An update started
        inside the block raises ``RuntimeError`` (it would wait for the block).

        Args:
            timeout: Seconds to wait for an update's apply step; default :attr:`lock_timeout`.
        """
        return self._rw.reading(timeout)

    def aread_lock(self, timeout: float | None = None) -> AbstractAsyncContextManager[None]:
        """:meth:`read_lock` for coroutines: waits on the event loop, never on an executor thread."""
        return self._rw.areading(timeout)

    # ---------------------------------------------------------- persistence
    def persist(self, persist_dir: str | Path) -> None:
        """Write the index to a folder (JSON, JSONL and a FAISS file; no pickle).

        The files go to a temporary sibling folder that then replaces ``persist_dir``
        atomically: a crash leaves the previous index or the new one, never a mix.

        Raises:
            ValueError: ``persist_dir`` is a file, or a non-empty folder that is not
                a PEARL index (it would be replaced).
        """
        with self.read_lock():
            vector_index, units = self._opened()
            for table_id in self._tables:  # the catalog holds every table's text (some may not be rendered yet)
                self.table_text(table_id)
            parts = IndexParts(
                tables=list(self._tables.values()),
                embed_model=self._embed_model,
                config=self._config,
                vector_index=vector_index,
                units=list(units.values()),
                join_graph=self._join_graph,
                llm=self._llm,
                report=self.report,
                generator=self._generator,
                generator_spec=self._generator_spec,
                catalog=self._catalog,
                lexical=self._catalog_lexical,
            )
            persist_index(parts, Path(persist_dir))

    def _catalog_lexical(self) -> LexicalIndex:
        """The BM25 index of the units in catalog order (the retrieval state's, reordered if its order differs)."""
        state = self.retrieval_state()
        return state.lexical_scorer().index.in_order(state.unit_ids, list(self._catalog.units))

    @classmethod
    def load(
        cls,
        persist_dir: str | Path,
        *,
        embed_model: BaseEmbedding | None = None,
        llm: LLM | None = None,
        generator: QueryGenerator | None = None,
        storage_context: StorageContext | None = None,
        allow_encoder_change: bool = False,
    ) -> PearlTableIndex:
        """Load an index written by :meth:`persist`: what a query reads now, the rest when first needed.

        Every file's size and SHA-256, the manifest, the catalog, the join graph and the vectors are read and
        checked here; the units (:attr:`units`, updates, :meth:`persist`), the tables' rows (:attr:`tables`
        values) and the BM25 arrays (the first query with words in common with the units) are read and checked
        when first used, raising the same ``ValueError`` then.

        Args:
            persist_dir: The folder.
            embed_model: Must be the encoder the index was built with (class and
                model name, as recorded in the manifest). Default: the recorded
                encoder (the bundled MiniLM or a local Hugging Face model).
            llm: LLM for engines built from this index, and for an LLM generator.
            generator: The query generator for inserts; default: the recorded one,
                rebuilt (a custom generator must be registered for that).
            storage_context: For an external vector store (Qdrant, pgvector...).
            allow_encoder_change: Accept another encoder of the same dimension
                (a warning is logged); its vectors must be comparable.

        Raises:
            ValueError: missing/partial folder, other format version, another
                encoder, a dimension mismatch, or any file that is malformed or
                disagrees with the manifest or the other files (here, or when the
                file is first read); the message names the file and the problem.
        """
        parts = load_index(
            Path(persist_dir),
            embed_model=embed_model,
            llm=llm,
            storage_context=storage_context,
            allow_encoder_change=allow_encoder_change,
        )
        if generator is not None:
            parts.generator = generator
        return cls(parts)


def _graph_of(tables: Mapping[str, Table]) -> nx.Graph:
    graph = nx.Graph()
    graph.add_nodes_from(tables)
    return graph


def _traced_build(tables: TablesInput, config: PearlConfig, **kwargs: Any) -> IndexParts:
    return build_corpus(tables, config, **kwargs)


# a classmethod's span would be named after the class's type ("type.from_tables"): name it as users call it
_traced_build.__qualname__ = "PearlTableIndex.from_tables"
_traced_build = dispatcher.span(_traced_build)
