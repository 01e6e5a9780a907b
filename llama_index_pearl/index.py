"""``PearlTableIndex``: tables in, an augmented and embedded unit corpus out.

The offline build (paper Algorithm 1: load, serialize, discover join paths, generate questions, embed) lives
in :mod:`~llama_index_pearl.corpus.build`, update planning in :mod:`~llama_index_pearl.corpus.updates`, the
file format in :mod:`~llama_index_pearl.storage.persistence`, the revisions and their locks in
:mod:`~llama_index_pearl.storage.revisions`, retrieval in :mod:`~llama_index_pearl.retrieval.retriever`; this
module holds the index object: its tables, joins, units and store, and the ways to ask and change them.

Pipeline step: index (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from pathlib import Path

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
    IndexBuilds,
    IndexParts,
    serializer_for,
)
from llama_index_pearl.corpus.catalog import Catalog, UnitInfo
from llama_index_pearl.corpus.lexical import LexicalIndex
from llama_index_pearl.corpus.units import lexical_text
from llama_index_pearl.corpus.updates import IndexChange, IndexUpdates
from llama_index_pearl.generation import GenerationCache, IndexGenerator, QueryGenerator, cache_for
from llama_index_pearl.joins import JoinPath, paths_from_graph
from llama_index_pearl.retrieval.engines import IndexEngines
from llama_index_pearl.retrieval.lexical import LexicalScorer
from llama_index_pearl.retrieval.retriever import unit_query_vector
from llama_index_pearl.retrieval.state import RetrievalState
from llama_index_pearl.storage.persistence import load_index, persist_index
from llama_index_pearl.storage.revisions import Revisions
from llama_index_pearl.storage.unit_stores import IndexUnits
from llama_index_pearl.store.any_store import delete_units, store_dimension
from llama_index_pearl.tables.table import Table
from llama_index_pearl.text.serialization import Serializer

__all__ = ["BuildReport", "PearlConfig", "PearlTableIndex"]

dispatcher = instrument.get_dispatcher(__name__)


class PearlTableIndex(IndexBuilds, IndexUpdates, IndexEngines):
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
        if units is None and (parts.open_units is None or parts.vector_store is None):
            raise ValueError("PearlTableIndex needs its units, or open_units and vector_store to read them later")
        self._tables = tables if isinstance(tables, MutableMapping) else {t.id: t for t in tables}
        self._units = IndexUnits(units, parts.vector_index, parts.open_units)
        self._embed_model = parts.embed_model
        self._config = config
        store = parts.vector_store
        self._vector_store = store if store is not None else parts.vector_index.vector_store  # type: ignore[union-attr]
        if catalog is None:  # texts are rendered when first asked for
            units_info = {u.node_id: UnitInfo.of(u) for u in units}  # type: ignore[union-attr]
            sources = {t.id: t.source for t in self._tables.values() if t.source is not None}
            catalog = Catalog(units=units_info, sources=sources)
        self._catalog = catalog
        self._lexical = parts.lexical  # the persisted BM25 index: valid until the first change
        self._join_graph = parts.join_graph if parts.join_graph is not None else _graph_of(self._tables)
        self._llm = parts.llm
        augment = config.augment
        self._generator = IndexGenerator(
            parts.generator if augment else None, parts.generator_spec if augment else None, parts.llm
        )
        self.report = parts.report or BuildReport(n_tables=len(self._tables), n_units=len(self._catalog.units))
        self._serializer = serializer_for(parts.embed_model, config)
        self._revisions: Revisions[RetrievalState] = Revisions(lambda previous: RetrievalState(self, previous))

    # ------------------------------------------------------------ accessors
    @property
    def tables(self) -> MutableMapping[str, Table]:
        """The tables by id (after :meth:`load`, read from the folder when a table is first asked for)."""
        return self._tables

    @property
    def units(self) -> list[TextNode]:
        """The units (after :meth:`load`, read from the folder and checked when first needed)."""
        return list(self._units.opened()[1].values())

    def unit(self, unit_id: str) -> TextNode | None:
        return self._units.opened()[1].get(unit_id)

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
        return self._units.opened()[0]

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
        return self._revisions.number

    @property
    def lock_timeout(self) -> float:
        """Seconds a retrieval or an update waits for the index's locks before raising ``LockTimeout``.

        ``float("inf")`` waits as long as it takes; anything but a number > 0 is a ``ValueError`` here.
        """
        return self._revisions.timeout

    @lock_timeout.setter
    def lock_timeout(self, seconds: float) -> None:
        self._revisions.timeout = seconds

    def retrieval_state(self) -> RetrievalState:
        """What a query reads of the current revision (call it holding :meth:`read_lock`).

        Built on the first call after a build or load, then by every :meth:`apply_change`, which swaps
        it with the change; retrievers only read it.
        """
        return self._revisions.state()

    @property
    def dimension(self) -> int:
        return store_dimension(self._vector_store) or len(self._embed_model.get_query_embedding("dimension probe"))

    @property
    def generator_name(self) -> str:
        """The ``model_name`` of the query generator (``"none"`` for a whole-table index)."""
        return self._generator.name

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
        units = self._units.opened()[1]
        return [lexical_text(units[u]) if u in units else "" for u in unit_ids]

    # -------------------------------------------------------------- updates
    def _updating(self) -> AbstractContextManager[None]:
        return self._revisions.updating()

    def apply_change(self, change: IndexChange) -> None:
        """Apply a planned update (:mod:`~llama_index_pearl.corpus.updates`): vector store, then state, atomically.

        Retrievals see all of it or none of it: the new retrieval state is built and swapped in under
        the same write lock. ``change.units`` must carry their vectors.

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
            self._catalog.change(
                change.removed_tables, change.removed_units, change.table_texts, change.units, sources, change.columns
            )
            self.report.recount(self._tables, units.values(), self._join_graph)

    def read_lock(self, timeout: float | None = None) -> AbstractContextManager[None]:
        """Hold off index updates' apply step for the block (retrievals take it; see the class docstring).

        Re-entrant: a retrieval inside the block never waits for a queued update. An update started
        inside the block raises ``RuntimeError`` (it would wait for the block).

        Args:
            timeout: Seconds to wait for an update's apply step; default :attr:`lock_timeout`.
        """
        return self._revisions.reading(timeout)

    def aread_lock(self, timeout: float | None = None) -> AbstractAsyncContextManager[None]:
        """:meth:`read_lock` for coroutines: waits on the event loop, never on an executor thread."""
        return self._revisions.areading(timeout)

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
            vector_index, units = self._units.opened()
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
                generator=self._generator.built,
                generator_spec=self._generator.spec,
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
