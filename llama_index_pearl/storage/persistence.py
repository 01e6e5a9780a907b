"""On-disk format of a ``PearlTableIndex``: explicit files, no pickle.

A folder holds:

- ``pearl.json``: manifest (format name and version, encoder class and model
  name, dimension, build config, counts, build report, and each other file's
  size and SHA-256), written last;
- ``tables.jsonl``: one table a line (id, name, title, description, source, columns,
  declared foreign keys, cells as text; :mod:`~llama_index_pearl.storage.table_records`);
- ``catalog.json`` and ``lexical.npz``: what a query reads, ready to use (each table's text for an
  LLM, each unit's kind, tables and question; the units' BM25 index;
  :mod:`~llama_index_pearl.storage.catalog_files`);
- ``join_graph.json``: the join graph as node-link JSON;
- ``docstore.json``, ``pearl_index_store.json``: LlamaIndex's JSON stores of the units;
- ``faiss.index``: the FAISS index (``faiss.write_index`` binary of an
  ``IndexIDMap2`` over ``IndexFlatIP``) and ``id_map.json`` (unit id -> FAISS id,
  and the next free FAISS id) when the default store is used; external stores
  keep their own data;
- ``index_store.json``: a stub for LlamaIndex's ``load_index_from_storage``, whose
  one index type is a message saying to use ``PearlTableIndex.load`` (a plain
  LlamaIndex load would otherwise read the FAISS binary as JSON, or load an
  index without its tables, graph and vectors).

This is format 6, the first and only one: no release was made before it, so no reader of an
earlier format is kept, and a folder of another version is refused with a message asking for a
rebuild.

``persist`` writes a temporary sibling folder and swaps it in atomically
(:mod:`llama_index_pearl.storage.atomic`). ``load`` checks, before anything is used, the
manifest and every file's size and SHA-256, so any change after persist is refused at load;
then it reads what a query needs (manifest, catalog, join graph, FAISS index and id map) and
checks them against each other (:mod:`llama_index_pearl.storage.integrity`). What a query
does not read is read and checked the first time something needs it, with the same errors:
the units and LlamaIndex's stores (``docstore.json``, checked against the catalog and the
vectors), the tables' rows (``tables.jsonl``) and the BM25 arrays (``lexical.npz``).
Loading reads JSON, NumPy's format (no pickle) and FAISS's own binary format only; nothing
is executed.

Pipeline step: storage (docs/architecture.md).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import uuid
from pathlib import Path
from typing import Any

import networkx as nx
from llama_index.core import StorageContext, VectorStoreIndex, load_index_from_storage
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.llms import LLM
from llama_index.core.schema import TextNode
from llama_index.core.storage.index_store import SimpleIndexStore
from llama_index.core.vector_stores.types import BasePydanticVectorStore

from llama_index_pearl.config import PearlConfig
from llama_index_pearl.corpus.approximate import ApproximateSearch
from llama_index_pearl.corpus.build import BuildReport, IndexParts
from llama_index_pearl.corpus.catalog import Catalog, UnitInfo
from llama_index_pearl.corpus.stores import (
    ID_MAP_FILE,
    KeepUnitsWhole,
    PearlFaissStore,
    index_dimension,
    store_dimension,
    store_location,
)
from llama_index_pearl.joins import graph_from_json, graph_to_json
from llama_index_pearl.storage.atomic import recoverable, swap_in
from llama_index_pearl.storage.catalog_files import (
    CATALOG,
    LEXICAL,
    read_catalog,
    read_lexical,
    write_catalog,
    write_lexical,
)
from llama_index_pearl.storage.integrity import (
    IndexFileError,
    check_digests,
    check_graph,
    check_manifest_fields,
    check_units,
    check_vector_ids,
    file_digests,
    read_json,
    reading,
)
from llama_index_pearl.storage.table_records import LazyTables, write_tables_file
from llama_index_pearl.text.models import (
    embed_model_name,
    encoder_from_identity,
    encoder_identity,
    prepare_encoder,
    resolve_llm,
    same_encoder,
)

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "is_index_folder", "load_index", "load_join_graph", "persist_index"]

logger = logging.getLogger(__name__)

FORMAT_NAME = "llama-index-pearl"
FORMAT_VERSION = 6
MANIFEST = "pearl.json"
TABLES = "tables.jsonl"
GRAPH = "join_graph.json"
DOCSTORE = "docstore.json"
INDEX_STORE = "pearl_index_store.json"
FAISS_FILE = "faiss.index"
LLAMA_INDEX_STORE = "index_store.json"  # what load_index_from_storage reads: a stub naming PearlTableIndex.load
LLAMA_FAISS_FILE = "default__vector_store.json"  # where StorageContext.persist writes the store (renamed to FAISS_FILE)
_NOT_LLAMA_INDEX_LOADABLE = {
    "index_store/data": {
        "llama-index-pearl": {
            "__type__": "this folder is a llama-index-pearl index: load it with PearlTableIndex.load(folder)",
            "__data__": "{}",
        }
    }
}


def persist_index(index: IndexParts, folder: Path) -> None:
    """Write every file of the format into a temporary sibling of ``folder``, then swap it in.

    A crash before the swap leaves the previous index untouched (and a hidden
    ``.NAME.pearl-tmp-*`` sibling); the swap itself is one atomic rename exchange
    on Linux. ``folder`` may be missing, empty, or a PEARL index; anything else is
    refused rather than replaced.
    """
    # absolute, so "." has a parent and a name; a symlinked folder is replaced where it points
    folder = folder.resolve() if folder.is_symlink() else Path(os.path.abspath(folder))
    _refuse_foreign(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = folder.parent / f".{folder.name}.pearl-tmp-{uuid.uuid4().hex[:8]}"
    try:
        tmp.mkdir()
        _write_files(index, tmp)
        swap_in(tmp, folder)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _write_files(index: IndexParts, folder: Path) -> None:
    index.vector_index.storage_context.persist(persist_dir=str(folder))
    if (folder / LLAMA_FAISS_FILE).is_file():
        os.replace(folder / LLAMA_FAISS_FILE, folder / FAISS_FILE)
    os.replace(folder / LLAMA_INDEX_STORE, folder / INDEX_STORE)
    (folder / LLAMA_INDEX_STORE).write_text(json.dumps(_NOT_LLAMA_INDEX_LOADABLE))
    write_tables_file(index.tables if isinstance(index.tables, list) else index.tables.values(), folder / TABLES)
    if index.catalog is None or index.lexical is None:
        raise ValueError("persist needs the index's catalog and lexical index")
    write_catalog(index.catalog, folder / CATALOG)
    write_lexical(index.lexical(), folder / LEXICAL)
    (folder / GRAPH).write_text(json.dumps(graph_to_json(index.join_graph)))
    generator = index.generator.to_spec() if index.generator is not None else index.generator_spec
    manifest = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "embed_model": embed_model_name(index.embed_model),
        "encoder": encoder_identity(index.embed_model),
        "dimension": index_dimension(index.vector_index, index.embed_model),
        "vector_store": _store_kind(index),
        "vectors_at": store_location(index.vector_index.vector_store),  # what lives outside this folder
        "n_tables": len(index.tables),
        "n_units": len(index.units),
        "config": index.config.to_dict(),
        "generator": generator if index.config.augment else None,
        "report": index.report.to_dict(),
        "files": file_digests(folder, (p.name for p in folder.iterdir() if p.is_file())),
    }
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2))
    with (folder / MANIFEST).open("rb") as handle:
        os.fsync(handle.fileno())


def _refuse_foreign(folder: Path) -> None:
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"Cannot persist to {str(folder)!r}: it is a file")
    if folder.is_dir() and any(folder.iterdir()) and not (folder / MANIFEST).is_file():
        raise ValueError(
            f"Cannot persist to {str(folder)!r}: the folder holds files and is not a PEARL index "
            "(persist replaces the whole folder); choose an empty or new folder"
        )


def _store_kind(index: IndexParts) -> str:
    return "faiss" if isinstance(index.vector_index.vector_store, PearlFaissStore) else "external"


def _read_manifest(folder: Path) -> dict[str, Any]:
    if not folder.is_dir():
        raise ValueError(f"No PEARL index at {str(folder)!r}: folder does not exist")
    path = folder / MANIFEST
    if not path.is_file():
        raise ValueError(f"{str(folder)!r} is not a PEARL index folder: {MANIFEST} is missing")
    manifest = read_json(path)
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
        raise IndexFileError(path, f"not a {FORMAT_NAME} manifest")
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        raise ValueError(
            f"Index at {str(folder)!r} has format version {version!r}; "
            f"this llama-index-pearl reads version {FORMAT_VERSION}. Rebuild the index."
        )
    check_manifest_fields(path, manifest)
    return manifest


def _check_files(folder: Path, manifest: dict[str, Any], external_store: bool) -> None:
    needed = [TABLES, GRAPH, DOCSTORE, INDEX_STORE, CATALOG, LEXICAL]
    if manifest["vector_store"] == "faiss" and not external_store:
        needed.extend([FAISS_FILE, ID_MAP_FILE])
    missing = [name for name in needed if not (folder / name).is_file()]
    if missing:
        raise ValueError(f"Partial PEARL index at {str(folder)!r}: missing {', '.join(missing)}")
    check_digests(folder, folder / MANIFEST, manifest["files"])


def _encoder(folder: Path, manifest: dict[str, Any], given: BaseEmbedding | None, allow_change: bool) -> BaseEmbedding:
    """The given encoder if it is the index's (or a change is allowed), else the recorded one."""
    recorded = manifest["encoder"]
    model = given
    if model is None:
        model = encoder_from_identity(recorded)
        if model is None:
            raise ValueError(
                f"The index at {str(folder)!r} was built with encoder {recorded.get('class', '?')}"
                f"({recorded.get('model_name')!r}), which cannot be rebuilt here: pass embed_model="
            )
    identity = encoder_identity(model)
    if not allow_change and not same_encoder(identity, recorded):
        raise ValueError(
            f"Encoder mismatch: the index at {str(folder)!r} was built with {recorded.get('class', '?')}"
            f"({recorded.get('model_name')!r}), the given encoder is {identity['class']}({identity['model_name']!r}); "
            "its vectors would rank nonsense. Pass the index's encoder, or allow_encoder_change=True "
            "if the two are known to embed alike"
        )
    if allow_change and not same_encoder(identity, recorded):
        logger.warning(
            "Loading %s with encoder %s (built with %s): allow_encoder_change=True", folder, identity, recorded
        )
    prepare_encoder(model, batches=False, background=True)  # while the index is read; _check_dimension waits
    return model


def _check_dimension(folder: Path, manifest: dict[str, Any], model: BaseEmbedding) -> None:
    dimension = manifest["dimension"]
    model_dimension = len(model.get_query_embedding("dimension probe"))
    if model_dimension != dimension:
        recorded = manifest["encoder"]
        raise ValueError(
            f"Embedding dimension mismatch: index at {str(folder)!r} was built with "
            f"{recorded.get('model_name')!r} (dimension {dimension}), the given model "
            f"produces dimension {model_dimension}"
        )


def load_index(
    folder: Path,
    *,
    embed_model: BaseEmbedding | None = None,
    llm: LLM | None = None,
    storage_context: StorageContext | None = None,
    allow_encoder_change: bool = False,
) -> IndexParts:
    """Read and verify a folder written by :func:`persist_index`; see ``PearlTableIndex.load``.

    The manifest and every file's size and SHA-256 are checked here, then what a query reads (the
    catalog, the join graph, the vectors) against each other; the rest is read when first needed
    (see the module docstring).
    """
    left = recoverable(folder)
    if left is not None:
        logger.warning("%s is missing; loading the index an interrupted persist left at %s", folder, left)
        folder = left
    manifest = _read_manifest(folder)
    model = _encoder(folder, manifest, embed_model, allow_encoder_change)
    _check_files(folder, manifest, external_store=storage_context is not None)
    with reading(folder / MANIFEST):
        report = BuildReport(**manifest["report"])
        config = PearlConfig.from_dict(manifest["config"])
        spec = manifest["generator"]
        if spec is not None and not isinstance(spec, dict):
            raise IndexFileError(folder / MANIFEST, f"field 'generator' must be an object or null, got {spec!r:.80}")
    stores = _Stores(folder, manifest, model, storage_context, ApproximateSearch.of(config))
    catalog = read_catalog(folder / CATALOG, manifest["n_tables"], manifest["n_units"])
    graph = _read_graph(folder, set(catalog.texts))
    store = stores.vector_store(set(catalog.units))
    _check_dimension(folder, manifest, model)
    return IndexParts(
        LazyTables(folder / TABLES, list(catalog.texts)),
        None,
        model,
        config,
        None,
        graph,
        resolve_llm(llm),
        report,
        None,
        spec,
        catalog,
        store,
        open_units=lambda: stores.open(set(catalog.texts), catalog),
        lexical=lambda: read_lexical(folder / LEXICAL, len(catalog.units)),
    )


def is_index_folder(path: Path) -> bool:
    """Whether ``path`` is a folder :func:`persist_index` wrote (it holds the manifest)."""
    return path.is_dir() and (path / MANIFEST).is_file()


def load_join_graph(folder: Path) -> nx.Graph:
    """The join graph of an index folder, without its encoder, units or tables (``pearl joins INDEX_DIR``).

    The manifest and the graph file's size and SHA-256 are checked, and the graph against the
    index's table ids, as :func:`load_index` checks them.

    Raises:
        ValueError: Not an index folder, another format version, or a graph file that is malformed,
            modified after persist, or names tables the index does not hold.
    """
    manifest = _read_manifest(folder)
    files = manifest["files"]
    unlisted = [name for name in (GRAPH, CATALOG) if name not in files]
    if unlisted:
        raise IndexFileError(folder / MANIFEST, f"'files' lists no digest of {', '.join(unlisted)}")
    check_digests(folder, folder / MANIFEST, {name: files[name] for name in (GRAPH, CATALOG)})
    table_ids = set(read_catalog(folder / CATALOG, manifest["n_tables"], manifest["n_units"]).texts)
    return _read_graph(folder, table_ids)


def _read_graph(folder: Path, table_ids: set[str]) -> nx.Graph:
    with reading(folder / GRAPH):
        graph = graph_from_json(read_json(folder / GRAPH))
    check_graph(folder / GRAPH, graph, table_ids)
    return graph


class _Stores:
    """The vector store of a folder (at load) and LlamaIndex's stores of its units (when first needed).

    Args:
        folder: The index folder.
        manifest: Its manifest.
        model: The encoder.
        storage_context: The caller's, for an external vector store; ``None``: the folder's FAISS files.
    """

    def __init__(
        self,
        folder: Path,
        manifest: dict[str, Any],
        model: BaseEmbedding,
        storage_context: StorageContext | None,
        approximate: ApproximateSearch | None = None,
    ) -> None:
        self._folder = folder
        self._manifest = manifest
        self._dimension = manifest["dimension"]
        self._n_units = manifest["n_units"]
        self._model = model
        self._storage_context = storage_context
        self._approximate = approximate
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
            store = PearlFaissStore.from_files(
                str(folder / FAISS_FILE), str(folder / ID_MAP_FILE), approximate=self._approximate
            )
            if store.client.d != dimension:
                raise ValueError(
                    f"Vector store dimension {store.client.d} does not match the manifest's {dimension} in "
                    f"{str(folder)!r}"
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
        folder, index_store = self._folder, INDEX_STORE
        for name in (DOCSTORE, index_store):  # LlamaIndex's own errors name no file
            read_json(folder / name)
        store = self.vector_store(None)
        if self._storage_context is None:
            with reading(folder / DOCSTORE):
                context = StorageContext.from_defaults(
                    vector_store=store,
                    index_store=SimpleIndexStore.from_persist_path(str(folder / index_store)),
                    persist_dir=str(folder),
                )
        else:
            context = self._storage_context
            context.index_store = SimpleIndexStore.from_persist_path(str(folder / index_store))
        try:
            # the docstore keeps every unit even for stores that hold text (Qdrant): the
            # retriever, persistence and incremental updates read units from it
            vector_index = load_index_from_storage(
                context, embed_model=self._model, store_nodes_override=True, transformations=[KeepUnitsWhole()]
            )
        except Exception as exc:
            raise ValueError(
                f"Corrupted LlamaIndex stores ({DOCSTORE}, {index_store}) in {str(folder)!r}: {exc}"
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
