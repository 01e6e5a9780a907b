"""``PearlTableIndex``: tables in, an augmented and embedded unit corpus out, and the ways to ask and change it.

The whole life of an index is read here, each public method handing the work to the pipeline that does it: the
offline build (paper Algorithm 1) to :mod:`~llama_index_pearl.corpus.build`, inserts and deletes to
:mod:`~llama_index_pearl.corpus.updates`, the file format to :mod:`~llama_index_pearl.storage.persistence`,
retrieval to :mod:`~llama_index_pearl.retrieval.retriever` and the engines to
:mod:`~llama_index_pearl.retrieval.engines`. The index holds its tables, joins, units (``IndexUnits``), store,
catalog and revisions (:class:`~llama_index_pearl.foundations.revisions.Revisions`: the current revision's retrieval
state and the locks that order retrievals and updates), and applies each update's change.

Pipeline step: index (docs/architecture.md).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, MutableMapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import llama_index.core.instrumentation as instrument
import networkx as nx
from llama_index.core import Settings, StorageContext, VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.callbacks import CallbackManager
from llama_index.core.chat_engine.types import BaseChatEngine, ChatMode
from llama_index.core.llms import LLM
from llama_index.core.objects import ObjectRetriever, SQLTableSchema
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import BasePydanticVectorStore

from llama_index_pearl.config import PearlConfig
from llama_index_pearl.corpus.build import (
    BuildInputs,
    BuildReport,
    IndexParts,
    build_corpus,
    estimate_generation_cost,
    serializer_for,
)
from llama_index_pearl.corpus.catalog import Catalog
from llama_index_pearl.corpus.lexical import LexicalIndex
from llama_index_pearl.corpus.updates import IndexChange, UpdateReport, delete_from, insert_into
from llama_index_pearl.corpus.values import table_values
from llama_index_pearl.foundations.revisions import Revisions
from llama_index_pearl.foundations.threads import run_in_thread
from llama_index_pearl.generation import IndexGenerator, QueryGenerator
from llama_index_pearl.joins import JoinPath, paths_from_graph
from llama_index_pearl.retrieval.engines import PearlSQLQueryEngine, chat_engine, query_engine, sql_query_engine
from llama_index_pearl.retrieval.retriever import PearlRetriever
from llama_index_pearl.retrieval.sql_tables import SQL_SET_MARGIN, sql_table_retriever
from llama_index_pearl.retrieval.state import RetrievalState, Revision
from llama_index_pearl.storage.persistence import load_index, persist_index
from llama_index_pearl.storage.unit_stores import IndexUnits
from llama_index_pearl.store.any_store import delete_units, store_dimension
from llama_index_pearl.tables.inputs import TablesInput
from llama_index_pearl.tables.table import Table
from llama_index_pearl.text.serialization import Serializer

__all__ = ["BuildReport", "PearlConfig", "PearlTableIndex"]

dispatcher = instrument.get_dispatcher(__name__)


class PearlTableIndex:
    """A join-aware table index: tables, their units, and a vector store of units.

    Build one with :meth:`from_tables` or :meth:`load`; query it through :meth:`as_retriever`,
    :meth:`as_query_engine`, :meth:`as_chat_engine` or the text-to-SQL engines; change it with
    :meth:`insert_tables` and :meth:`delete_table`; write it with :meth:`persist`.

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
        self._vector_store = parts.store()
        tables, config = parts.tables, parts.config
        self._tables = tables if isinstance(tables, MutableMapping) else {t.id: t for t in tables}
        self._units = IndexUnits(parts.units, parts.vector_index, parts.open_units)
        self._embed_model = parts.embed_model
        self._config = config
        # without a catalog (units written by hand) each table's text is rendered when first asked for
        catalog = parts.catalog
        self._catalog = catalog if catalog is not None else Catalog.of_units(self._tables.values(), parts.units or ())
        self._lexical = parts.lexical  # the persisted BM25 index: valid until the first change
        self._join_graph = parts.join_graph if parts.join_graph is not None else _graph_of(self._tables)
        self._llm = parts.llm
        augment = config.augment
        self._generator = IndexGenerator(
            parts.generator if augment else None, parts.generator_spec if augment else None, parts.llm
        )
        self.report = parts.report or BuildReport(n_tables=len(self._tables), n_units=len(self._catalog.units))
        self._serializer = serializer_for(parts.embed_model, config)
        self._revisions: Revisions[RetrievalState] = Revisions(self._retrieval_state)

    # ------------------------------------------------------------------------------------ build, load, persist
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
            embed_model: Encoder; default ``Settings.embed_model`` when it was set, else the bundled
                all-MiniLM-L6-v2 (LlamaIndex's OpenAI default is never resolved:
                :mod:`~llama_index_pearl.text.models` says how).
            llm: LLM for query generation and the glossary (``PearlConfig.glossary``); default none
                (``Settings.llm`` is not read: a build pays for an LLM only when one is given here or in
                ``generator``).
            generator: Query generator; default ``LLMQueryGenerator(llm)`` when ``llm`` is
                given, else the offline ``HeuristicQueryGenerator``. A paid generator logs
                (INFO) what it will send before sending it.
            storage_context: Where vectors go; its ``vector_store`` is honoured.
                Default: an exact FAISS inner-product index.
            show_progress: Draw a progress bar per stage, named after it, on stderr (off: the build prints
                nothing; the first use of the bundled encoder also says it is exported to ONNX, once).
            **overrides: Fields of ``config`` to replace, e.g. ``budget=40`` or
                ``include_titles=False``.

        Raises:
            TypeError: An override that is no build option.
            ValueError: A bad input, table or setting (the message names it).
            GenerationFailed: At least the generator's ``max_failed_share`` of its
                LLM requests failed (default: all of them); accepted answers are cached.
        """
        chosen = PearlConfig.with_overrides(config, **overrides)
        inputs = BuildInputs(
            tables=tables,
            config=chosen,
            embed_model=embed_model,
            llm=llm,
            generator=generator,
            storage_context=storage_context,
            show_progress=show_progress,
        )
        return cls(_traced_build(inputs))

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
        llm: LLM | None = None,
        generator: QueryGenerator | None = None,
        config: PearlConfig | None = None,
        embed_model: BaseEmbedding | None = None,
        **overrides: Any,
    ) -> dict[str, Any]:
        """Dry run: discover and select paths, build every prompt, call no LLM.

        Args:
            tables: As in :meth:`from_tables`.
            llm: The LLM a build would use (its prompts are counted).
            generator: Explicit generator instead of ``llm``.
            config: As in :meth:`from_tables`; its ``cache_dir`` (LLM builds default to
                the user cache) answers ``cached_requests``, which a build will not send.
            embed_model: Encoder used by join discovery.
            **overrides: Fields of ``config`` to replace, as in :meth:`from_tables`.

        Returns:
            ``{"tables", "paths", "fallback_paths", "requests", "cached_requests",
            "prompt_tokens", "per_path_avg", "max_prompt_tokens", "glossary_tables", "glossary_cached",
            "glossary_prompt_tokens"}``: ``paths`` go to the generator (LLM calls), ``fallback_paths`` to
            its free fallback; ``glossary_tables`` are the tables the glossary's LLM would be sent.
        """
        chosen = PearlConfig.with_overrides(config, **overrides)
        inputs = BuildInputs(tables=tables, config=chosen, embed_model=embed_model, llm=llm, generator=generator)
        return estimate_generation_cost(inputs)

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
                encoder: ``Settings.embed_model`` when it is that encoder, else the
                bundled MiniLM or a local Hugging Face model rebuilt by name (another
                encoder in ``Settings`` is not used: a warning says so).
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

    def persist(self, persist_dir: str | Path) -> None:
        """Write the index to a folder (JSON, JSONL and a FAISS file; no pickle).

        The files go to a temporary sibling folder that then replaces ``persist_dir``
        atomically: a crash leaves the previous index or the new one, never a mix.

        Raises:
            ValueError: ``persist_dir`` is a file, or a non-empty folder that is not
                a PEARL index (it would be replaced).
        """
        with self.read_lock():
            persist_index(self._parts(), Path(persist_dir))

    # --------------------------------------------------------------------------------------------------- ask
    def as_retriever(
        self, similarity_top_k: int = 5, callback_manager: CallbackManager | None = None, **kwargs: Any
    ) -> PearlRetriever:
        """A table-level retriever (max-pooled unit scores).

        Args:
            similarity_top_k: Tables retrieved per question.
            callback_manager: LlamaIndex callbacks; default ``Settings.callback_manager``, as for
                LlamaIndex's own indexes.
            **kwargs: ``PearlRetriever``'s other arguments (``lexical_weight``, ``fetch_k``,
                ``include_join_hints_in_text``, ``verbose``); another name is a ``TypeError``.
        """
        manager = callback_manager or Settings.callback_manager
        return PearlRetriever(self, similarity_top_k=similarity_top_k, callback_manager=manager, **kwargs)

    def as_query_engine(self, llm: LLM | None = None, **kwargs: Any) -> RetrieverQueryEngine:
        """A ``RetrieverQueryEngine`` over retrieved tables, built as ``BaseIndex.as_query_engine`` builds one.

        Args:
            llm: Answering LLM; default the index's LLM, else ``Settings.llm``.
            **kwargs: The retriever's arguments (:meth:`as_retriever`: ``similarity_top_k``,
                ``lexical_weight``, ``include_join_hints_in_text``...) and
                ``RetrieverQueryEngine.from_args``'s (``response_mode``, ``node_postprocessors``...);
                ``callback_manager`` and ``verbose`` go to both.

        Raises:
            TypeError: An argument that neither the retriever nor the engine takes (named).
            ValueError: No LLM; the message says where to give one.
        """
        return query_engine(self.as_retriever, llm or self._llm, **kwargs)

    def as_chat_engine(
        self, chat_mode: ChatMode | str = ChatMode.BEST, llm: LLM | None = None, **kwargs: Any
    ) -> BaseChatEngine:
        """A chat engine grounded on retrieved tables, built as ``BaseIndex.as_chat_engine`` builds one.

        Args:
            chat_mode: ``"best"`` (default) and ``"condense_plus_context"``: ``CondensePlusContextChatEngine``;
                ``"context"``: ``ContextChatEngine``; ``"condense_question"``: ``CondenseQuestionChatEngine``
                over :meth:`as_query_engine`.
            llm: Chat LLM; default the index's LLM, else ``Settings.llm``.
            **kwargs: The retriever's arguments and the chat engine's ``from_defaults`` arguments
                (``system_prompt``, ``memory``...), as in :meth:`as_query_engine`.

        Raises:
            ValueError: ``"simple"`` (it never reads the tables), ``"react"``/``"openai"`` (removed from
                LlamaIndex), an unknown mode, or no LLM.
            TypeError: An argument that neither the retriever nor the engine takes (named).
        """
        return chat_engine(self.as_retriever, llm or self._llm, chat_mode, **kwargs)

    def as_sql_table_retriever(
        self,
        sql_database: Any,
        similarity_top_k: int = 5,
        join_keys: bool = True,
        context_strs: Mapping[str, str] | None = None,
        set_margin: int | None = SQL_SET_MARGIN,
        **kwargs: Any,
    ) -> ObjectRetriever[SQLTableSchema]:
        """The ``table_retriever`` of LlamaIndex's ``SQLTableRetrieverQueryEngine`` and ``NLSQLRetriever``.

        ``retrieve``/``aretrieve`` return ``SQLTableSchema``s in PEARL's order, named as
        ``sql_database`` names the tables, each ``context_str`` holding how the table joins the
        other retrieved tables, as SQL with identifiers quoted for the database's dialect
        (:mod:`~llama_index_pearl.retrieval.sql_tables`).

        Args:
            sql_database: The LlamaIndex ``SQLDatabase`` the SQL runs on; it must hold every
                table of the index (on PostgreSQL, ``SQLDatabase(engine, schema=...)`` of their schema).
            similarity_top_k: At most this many tables per question, unless the connected set is larger.
            join_keys: Put the joins in ``context_str`` (``JOIN stadium ON concert.stadium_id = stadium.stadium_id``).
            context_strs: Table descriptions by database table name, shown before the join keys.
            set_margin: The connected set of tables and this many other candidates (``None``:
                ``similarity_top_k`` tables, the set first); see ``PearlRetriever``.
            **kwargs: Passed to :meth:`as_retriever` (``lexical_weight``, ``fetch_k``, ``set_rule``).

        Raises:
            ValueError: A table of the index (or a key of ``context_strs``) the database does not hold;
                the message names it.
        """
        retriever = self.as_retriever(similarity_top_k, set_margin=set_margin, **kwargs)
        return sql_table_retriever(self, sql_database, retriever, join_keys=join_keys, context_strs=context_strs)

    def as_sql_query_engine(
        self,
        sql_database: Any,
        llm: LLM | None = None,
        similarity_top_k: int = 5,
        join_keys: bool = True,
        **kwargs: Any,
    ) -> PearlSQLQueryEngine:
        """LlamaIndex's ``SQLTableRetrieverQueryEngine``, with :meth:`as_sql_table_retriever` choosing the tables.

        Built from LlamaIndex's public parts (:class:`~llama_index_pearl.retrieval.engines.PearlSQLQueryEngine`)
        so that its ``NLSQLRetriever`` gets the index's encoder instead of ``Settings.embed_model``.

        Args:
            sql_database: The LlamaIndex ``SQLDatabase`` the SQL runs on.
            llm: Writes the SQL (and the answer); default the index's LLM, else ``Settings.llm``.
            similarity_top_k: Tables shown to the LLM per question.
            join_keys: Show the join keys between them.
            **kwargs: The retriever's arguments (:meth:`as_retriever`: ``filters``, ``set_margin``,
                ``lexical_weight``...), :meth:`as_sql_table_retriever`'s ``context_strs``, and
                ``SQLTableRetrieverQueryEngine``'s (``synthesize_response``, ``sql_only``, ``rows_retrievers``,
                ``text_to_sql_prompt``...); ``callback_manager`` and ``verbose`` go to both.

        Raises:
            TypeError: An argument that neither the retriever nor the engine takes (named).
            ValueError: No LLM, or a table of the index the database does not hold.
        """

        def tables(**arguments: Any) -> ObjectRetriever[SQLTableSchema]:
            return self.as_sql_table_retriever(sql_database, similarity_top_k, join_keys, **arguments)

        return sql_query_engine(tables, sql_database, llm or self._llm, self._embed_model, **kwargs)

    # ------------------------------------------------------------------------------------------------ update
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
            show_progress: Draw a progress bar per stage, named after it, on stderr.
            **overrides: This insert's ``concurrency``, ``cache_dir``, ``csv_options``, ``strict`` or
                ``skip_bad_lines``; ``needed_confidence`` and ``maybe_confidence`` become the index's bars from
                this insert on (its retrievers read them; :meth:`persist` writes them). Every other option is the
                build's.

        Returns:
            What changed and what it cost.

        Raises:
            ValueError: A table id already exists and ``replace`` is false (the
                message names it), no tables were given, or an override of an
                option the build fixed.
            LockTimeout: Another update, or retrievals, held the index past :attr:`lock_timeout`.
            RuntimeError: Called while holding :meth:`read_lock` (it would wait for itself).
        """
        with self._revisions.updating():
            config = self._config.for_update(**overrides)
            kept = self._config.after_update(config)
            apply = functools.partial(self._apply, config=kept)
            return insert_into(self, tables, config, apply, replace=replace, show_progress=show_progress, llm=self._llm)

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
        with self._revisions.updating():
            return delete_from(self, table_id, self._apply)

    async def adelete_table(self, table_id: str) -> UpdateReport:
        """:meth:`delete_table` on a thread of its own: the event loop goes on."""
        return await run_in_thread(lambda: self.delete_table(table_id))

    # ---------------------------------------------------------------------------------------- what it holds
    @property
    def tables(self) -> MutableMapping[str, Table]:
        """The tables by id (after :meth:`load`, read from the folder when a table is first asked for)."""
        return self._tables

    @property
    def join_graph(self) -> nx.Graph:
        """The join graph: a node per table, an edge per joined pair holding its joins and selected paths."""
        return self._join_graph

    @property
    def join_paths(self) -> list[JoinPath]:
        """The selected join paths (explicit and implicit) the units were built from."""
        return paths_from_graph(self._join_graph)

    @property
    def units(self) -> list[TextNode]:
        """The units (after :meth:`load`, read from the folder and checked when first needed)."""
        return list(self._units.opened()[1].values())

    @property
    def catalog(self) -> Catalog:
        """Each table's text for an LLM and each unit's kind, tables and question: what a retrieval reads."""
        return self._catalog

    @property
    def config(self) -> PearlConfig:
        """The build settings (persisted with the index)."""
        return self._config

    @property
    def embed_model(self) -> BaseEmbedding:
        """The encoder of the units and of every question."""
        return self._embed_model

    @property
    def vector_store(self) -> BasePydanticVectorStore:
        """The store of the unit vectors (a loaded index has it before its LlamaIndex stores are read)."""
        return self._vector_store

    @property
    def vector_index(self) -> VectorStoreIndex:
        """LlamaIndex's ``VectorStoreIndex`` of the units (after :meth:`load`, read when first needed)."""
        return self._units.opened()[0]

    @property
    def storage_context(self) -> StorageContext:
        """The ``vector_index``'s storage context."""
        return self.vector_index.storage_context

    @property
    def dimension(self) -> int:
        """The vectors' dimension: the store's, else that of a probe embedding."""
        return store_dimension(self._vector_store) or len(self._embed_model.get_query_embedding("dimension probe"))

    @property
    def serializer(self) -> Serializer:
        """How the index renders a table's view as text (rows per view, titles, the encoder's window)."""
        return self._serializer

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
        return self._generator.get()

    @property
    def generator_name(self) -> str:
        """The ``model_name`` of the query generator (``"none"`` for a whole-table index)."""
        return self._generator.name

    def table_text(self, table_id: str) -> str:
        """The table as shown to an LLM: header and leading rows, within ``config.table_text_chars`` (cuts marked).

        Rendered when the table enters the index (an index made from units without a catalog: when first asked for).
        """
        text = self._catalog.texts.get(table_id)
        if text is None:
            table = self._tables[table_id]
            text = self._catalog.texts[table_id] = self._serializer.table_text(table, self._config.table_text_chars)
        return text

    # ---------------------------------------------------------------------------------------- thread safety
    @property
    def revisions(self) -> Revisions[RetrievalState]:
        """The index's revisions: how many updates it applied, the current one's retrieval state, and the locks
        that order retrievals and updates (what a retriever reads; see the class docstring)."""
        return self._revisions

    @property
    def lock_timeout(self) -> float:
        """Seconds a retrieval or an update waits for the index's locks before raising ``LockTimeout``.

        ``float("inf")`` waits as long as it takes; anything but a number > 0 is a ``ValueError`` here.
        """
        return self._revisions.timeout

    @lock_timeout.setter
    def lock_timeout(self, seconds: float) -> None:
        self._revisions.timeout = seconds

    def read_lock(self, timeout: float | None = None) -> AbstractContextManager[None]:
        """Hold off index updates' apply step for the block (retrievals take it; see the class docstring).

        Re-entrant: a retrieval inside the block never waits for a queued update. An update started
        inside the block raises ``RuntimeError`` (it would wait for the block).

        Args:
            timeout: Seconds to wait for an update's apply step; default :attr:`lock_timeout`.
        """
        return self._revisions.reading(timeout)

    # ------------------------------------------------------------------------------------------------ private
    def _retrieval_state(self, previous: RetrievalState | None) -> RetrievalState:
        """The retrieval state of the current revision (built holding the read or the write lock)."""
        revision = Revision(
            number=self._revisions.number,
            table_ids=list(self._tables),
            catalog=self._catalog,
            join_graph=self._join_graph,
            vector_store=self._vector_store,
            config=self._config,
            table_text=self.table_text,
            lexical_texts=self._units.lexical_texts,
            persisted_lexical=lambda: self._lexical() if self._lexical is not None else None,
        )
        return RetrievalState(revision, previous)

    def _apply(self, change: IndexChange, config: PearlConfig | None = None) -> None:
        """Apply a planned update (:mod:`~llama_index_pearl.corpus.updates`): vector store, then state, atomically.

        Retrievals see all of it or none of it: the new retrieval state is built and swapped in under
        the same write lock. ``change.units`` must carry their vectors; ``config``, the index's settings after it
        (an insert's bars), applies with it.

        Raises:
            NotImplementedError: Units to remove and a vector store that cannot delete.
            LockTimeout: Retrievals held the read lock past :attr:`lock_timeout`.
        """
        vector_index, units = self._units.opened()
        with self._revisions.applying():
            if change.removed_units:
                delete_units(vector_index, change.removed_units)
            if change.units:
                vector_index.insert_nodes(change.units)
            self._lexical = None  # the units changed: BM25 is built again from them
            self._join_graph = change.apply_to(self._tables, units, self._join_graph)
            sources = {t: self._tables[t].source for t in change.table_texts if t in self._tables}
            values = {t: table_values(self._tables[t]) for t in change.table_texts if t in self._tables}
            self._catalog.change(
                change.removed_tables,
                change.removed_units,
                change.table_texts,
                change.units,
                sources,
                change.columns,
                values,
            )
            self.report.recount(self._tables, units.values(), self._join_graph)
            if config is not None:
                self._config = config

    def _parts(self) -> IndexParts:
        """What the index is made of, for :meth:`persist` (call holding the read lock)."""
        vector_index, units = self._units.opened()
        for table_id in self._tables:  # the catalog holds every table's text (some may not be rendered yet)
            self.table_text(table_id)
        return IndexParts(
            tables=list(self._tables.values()),
            embed_model=self._embed_model,
            config=self._config,
            vector_index=vector_index,
            units=list(units.values()),
            join_graph=self._join_graph,
            llm=self._llm,
            report=self.report,
            generator=self._generator.built,
            generator_spec=self._generator.spec,
            catalog=self._catalog,
            lexical=self._catalog_lexical,
        )

    def _catalog_lexical(self) -> LexicalIndex:
        """The BM25 index of the units in catalog order (the retrieval state's, reordered if its order differs)."""
        state = self._revisions.state()
        return state.lexical_scorer().index.in_order(state.unit_ids, list(self._catalog.units))


def _graph_of(tables: Mapping[str, Table]) -> nx.Graph:
    graph = nx.Graph()
    graph.add_nodes_from(tables)
    return graph


def _build(inputs: BuildInputs) -> IndexParts:
    return build_corpus(inputs)


# a classmethod's span would be named after the class's type ("type.from_tables"): name it as users call it
_build.__qualname__ = "PearlTableIndex.from_tables"
_traced_build = dispatcher.span(_build)
