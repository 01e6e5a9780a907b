"""The stores of a loaded index folder: its vector store at load, LlamaIndex's stores of its units when first needed.

Both are read from the files the :class:`~llama_index_pearl.storage.snapshot.FolderSnapshot` of the load holds
(FAISS reads the bytes of its file once :mod:`~llama_index_pearl.store.faiss_file` has checked them, never a
path), and checked against the catalog, the tables and each other. :class:`IndexUnits` is the index's side of
it: its units and their vector index, given by a build, or read the first time either is needed after a load.

Pipeline step: storage (docs/architecture.md).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from llama_index.core import StorageContext, VectorStoreIndex, load_index_from_storage
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.schema import TextNode
from llama_index.core.storage.docstore import SimpleDocumentStore
from llama_index.core.storage.index_store import SimpleIndexStore
from llama_index.core.vector_stores.types import BasePydanticVectorStore

from llama_index_pearl.corpus.catalog import Catalog, UnitInfo
from llama_index_pearl.corpus.units import lexical_text
from llama_index_pearl.storage.catalog_files import CATALOG
from llama_index_pearl.storage.integrity import IndexFileError, check_units, check_vector_ids, reading
from llama_index_pearl.storage.snapshot import FolderSnapshot
from llama_index_pearl.store.any_store import store_dimension
from llama_index_pearl.store.embedding import KeepUnitsWhole
from llama_index_pearl.store.faiss_store import ID_MAP_FILE, PearlFaissStore
from llama_index_pearl.store.hnsw import HnswSettings

__all__ = ["DOCSTORE", "FAISS_FILE", "INDEX_STORE", "IndexUnits", "OpenedStores"]

DOCSTORE = "docstore.json"
INDEX_STORE = "pearl_index_store.json"
FAISS_FILE = "faiss.index"


class OpenedStores:
    """The vector store of a folder (at load) and LlamaIndex's stores of its units (when first needed).

    Args:
        snapshot: The index folder, its files held open.
        manifest: Its manifest.
        model: The encoder.
        storage_context: The caller's, for an external vector store; ``None``: the folder's FAISS files.
        approximate: How the folder's FAISS store searches past ``PearlConfig.approximate_from`` units.
    """

    def __init__(
        self,
        snapshot: FolderSnapshot,
        manifest: dict[str, Any],
        model: BaseEmbedding,
        storage_context: StorageContext | None,
        approximate: HnswSettings | None = None,
    ) -> None:
        self._snapshot = snapshot
        self._folder = snapshot.folder
        self._manifest = manifest
        self._approximate = approximate
        self._dimension = manifest["dimension"]
        self._n_units = manifest["n_units"]
        self._model = model
        self._storage_context = storage_context
        self._store: BasePydanticVectorStore | None = None

    def vector_store(self, unit_ids: set[str] | None) -> BasePydanticVectorStore:
        """The store of the vectors, its dimension checked (and, for FAISS, that its vectors are ``unit_ids``')."""
        if self._store is not None:
            return self._store
        folder, dimension = self._folder, self._dimension
        if self._storage_context is None:
            where = self._manifest.get("vectors_at") or {}
            if where.get("server"):  # the folder holds no vectors: say where they are
                raise ValueError(
                    f"The index at {str(folder)!r} keeps its vectors in {where.get('store')} on {where['server']} "
                    f"(collection {where.get('collection')!r}); pass storage_context=StorageContext.from_defaults("
                    f"vector_store=<that store>, persist_dir=...) to PearlTableIndex.load"
                )
            # read from the held files (checked at load), each checked before FAISS reads it
            store = PearlFaissStore.from_bytes(
                self._snapshot.read(FAISS_FILE),
                self._snapshot.read(ID_MAP_FILE),
                names=(str(folder / FAISS_FILE), str(folder / ID_MAP_FILE)),
                dimension=dimension,
                units=self._n_units,
                approximate=self._approximate,
            )
            if unit_ids is not None:
                check_vector_ids(folder / ID_MAP_FILE, store.id_map(), unit_ids)
        else:
            store = self._storage_context.vector_store
            store_dim = store_dimension(store)
            if store_dim is not None and store_dim != dimension:
                raise ValueError(
                    f"Vector store dimension mismatch: {type(store).__name__} holds dimension {store_dim}, "
                    f"the index at {str(folder)!r} has dimension {dimension}"
                )
        self._store = store
        return store

    def open(self, table_ids: set[str], catalog: Catalog) -> tuple[VectorStoreIndex, list[TextNode]]:
        """LlamaIndex's vector index and the units, checked against the tables, the vectors and ``catalog``."""
        folder, snapshot = self._folder, self._snapshot
        docstore, index_store = snapshot.json(DOCSTORE), snapshot.json(INDEX_STORE)  # LlamaIndex's errors name no file
        with reading(folder / DOCSTORE):
            docs = SimpleDocumentStore.from_dict(docstore)
        with reading(folder / INDEX_STORE):
            indexes = SimpleIndexStore.from_dict(index_store)
        store = self.vector_store(None)
        if self._storage_context is None:
            context = StorageContext.from_defaults(vector_store=store, index_store=indexes, docstore=docs)
        else:
            context = self._storage_context
            context.index_store = indexes
            context.docstore = docs
        try:
            # the docstore keeps every unit even for stores that hold text (Qdrant): the
            # retriever, persistence and incremental updates read units from it
            vector_index = load_index_from_storage(
                context, embed_model=self._model, store_nodes_override=True, transformations=[KeepUnitsWhole()]
            )
        except Exception as exc:
            raise ValueError(
                f"Corrupted LlamaIndex stores ({DOCSTORE}, {INDEX_STORE}) in {str(folder)!r}: {exc}"
            ) from exc
        with reading(folder / DOCSTORE):
            units = list(vector_index.docstore.docs.values())
        return vector_index, self._checked(units, catalog, table_ids)

    def _checked(self, units: list[TextNode], catalog: Catalog, table_ids: set[str]) -> list[TextNode]:
        folder = self._folder
        check_units(folder / DOCSTORE, units, table_ids, self._n_units)
        for unit in units:
            if catalog.units.get(unit.node_id) != UnitInfo.of(unit):
                raise IndexFileError(folder / DOCSTORE, f"unit {unit.node_id} is not the one {CATALOG} lists")
        store = self.vector_store(None)
        if isinstance(store, PearlFaissStore):
            check_vector_ids(folder / ID_MAP_FILE, store.id_map(), {u.node_id for u in units})
        return units


class IndexUnits:
    """An index's units by id and their vector index: given, or read (and checked) the first time either is needed.

    Args:
        units: The units (``None``: ``open_units`` reads them).
        vector_index: Their vector index (``None``: ``open_units`` makes it).
        open_units: Reads ``(vector_index, units)`` (a loaded folder's, :meth:`OpenedStores.open`); one of
            ``units`` and ``open_units`` is given.
    """

    def __init__(
        self,
        units: Sequence[TextNode] | None,
        vector_index: VectorStoreIndex | None,
        open_units: Callable[[], tuple[VectorStoreIndex, list[TextNode]]] | None,
    ) -> None:
        self._units = {u.node_id: u for u in units} if units is not None else None
        self._vector_index = vector_index
        self._open = open_units
        self._opening = threading.Lock()

    @property
    def read(self) -> bool:
        """Whether the units are in memory (a build's, or read since a load)."""
        return self._units is not None

    def opened(self) -> tuple[VectorStoreIndex, dict[str, TextNode]]:
        """The vector index and the units by id (changed in place by an update)."""
        if self._units is None:
            with self._opening:
                if self._units is None:
                    assert self._open is not None
                    vector_index, units = self._open()
                    self._vector_index = vector_index
                    self._units = {u.node_id: u for u in units}
        assert self._vector_index is not None
        return self._vector_index, self._units

    def lexical_texts(self, unit_ids: Sequence[str]) -> list[str]:
        """What BM25 reads of each unit (its embedded text and the rows it leaves out); ``""`` for an id not held."""
        units = self.opened()[1]
        return [lexical_text(units[u]) if u in units else "" for u in unit_ids]
