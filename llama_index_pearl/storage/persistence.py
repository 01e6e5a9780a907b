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

``persist`` refuses a non-empty folder that is not a PEARL index (its manifest's content is
checked), writes a temporary sibling folder and swaps it in atomically
(:mod:`llama_index_pearl.storage.atomic`). ``load`` holds the folder's files open
(:mod:`llama_index_pearl.storage.snapshot`) and checks, before anything is used, the manifest
and every file's size and SHA-256, so any change after persist is refused at load; then it
reads what a query needs (manifest, catalog, join graph, FAISS index and id map) and checks
them against each other (:mod:`llama_index_pearl.storage.integrity`). What a query does not
read is read the first time something needs it, from the files held open since load (their
SHA-256 checked again), and checked with the same errors: the units and LlamaIndex's stores
(``docstore.json``, checked against the catalog and the vectors; :mod:`~llama_index_pearl.storage.unit_stores`),
the tables' rows (``tables.jsonl``) and the BM25 arrays (``lexical.npz``). A persist over the
folder after load is not seen by the loaded index.
Loading reads JSON, NumPy's format (no pickle) and FAISS's own binary format only; nothing
is executed.

Pipeline step: storage (docs/architecture.md).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import networkx as nx
from llama_index.core import StorageContext
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.llms import LLM

from llama_index_pearl.config import PearlConfig
from llama_index_pearl.corpus.build import BuildReport, IndexParts
from llama_index_pearl.corpus.catalog import Catalog
from llama_index_pearl.corpus.columns import ColumnIndex
from llama_index_pearl.joins import graph_from_json, graph_to_json
from llama_index_pearl.storage.atomic import recoverable, remove_stale, swap_in, temporary_sibling
from llama_index_pearl.storage.catalog_files import (
    CATALOG,
    COLUMNS,
    LEXICAL,
    read_catalog,
    read_columns,
    read_lexical,
    write_catalog,
    write_columns,
    write_lexical,
)
from llama_index_pearl.storage.integrity import (
    IndexFileError,
    check_graph,
    check_manifest_fields,
    file_digests,
    reading,
)
from llama_index_pearl.storage.recorded_encoder import check_dimension, index_encoder
from llama_index_pearl.storage.snapshot import FolderReplaced, FolderSnapshot
from llama_index_pearl.storage.table_records import LazyTables, write_tables_file
from llama_index_pearl.storage.unit_stores import DOCSTORE, FAISS_FILE, INDEX_STORE, OpenedStores
from llama_index_pearl.store.any_store import index_dimension, store_location
from llama_index_pearl.store.faiss_store import ID_MAP_FILE, PearlFaissStore
from llama_index_pearl.store.hnsw import HnswSettings
from llama_index_pearl.tables.table import Table
from llama_index_pearl.text.models import embed_model_name, encoder_identity, resolve_llm

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "is_index_folder",
    "load_graph_and_tables",
    "load_index",
    "load_join_graph",
    "persist_index",
]

logger = logging.getLogger(__name__)

FORMAT_NAME = "llama-index-pearl"
FORMAT_VERSION = 6
MANIFEST = "pearl.json"
TABLES = "tables.jsonl"
GRAPH = "join_graph.json"
LLAMA_INDEX_STORE = "index_store.json"  # what load_index_from_storage reads: a stub naming PearlTableIndex.load
LLAMA_FAISS_FILE = "default__vector_store.json"  # where StorageContext.persist writes the store (renamed to FAISS_FILE)
_LOAD_TRIES = 3  # a folder replaced under a load each time is being persisted in a loop: say so
T = TypeVar("T")
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
    remove_stale(folder)
    with temporary_sibling(folder) as tmp:
        _write_files(index, tmp)
        swap_in(tmp, folder)


def _write_files(index: IndexParts, folder: Path) -> None:
    index.vector_index.storage_context.persist(persist_dir=str(folder))
    if (folder / LLAMA_FAISS_FILE).is_file():
        os.replace(folder / LLAMA_FAISS_FILE, folder / FAISS_FILE)
    os.replace(folder / LLAMA_INDEX_STORE, folder / INDEX_STORE)
    (folder / LLAMA_INDEX_STORE).write_text(json.dumps(_NOT_LLAMA_INDEX_LOADABLE), encoding="utf-8")
    write_tables_file(index.tables if isinstance(index.tables, list) else index.tables.values(), folder / TABLES)
    if index.catalog is None or index.lexical is None:
        raise ValueError("persist needs the index's catalog and lexical index")
    write_catalog(index.catalog, folder / CATALOG)
    write_lexical(index.lexical(), folder / LEXICAL)
    if index.catalog.columns.columns or index.catalog.columns.words:
        write_columns(index.catalog.columns, folder / COLUMNS)
    (folder / GRAPH).write_text(json.dumps(graph_to_json(index.join_graph)), encoding="utf-8")
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
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    with (folder / MANIFEST).open("rb") as handle:
        os.fsync(handle.fileno())


def _refuse_foreign(folder: Path) -> None:
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"Cannot persist to {str(folder)!r}: it is a file")
    problem = _foreign(folder) if folder.is_dir() and any(folder.iterdir()) else None
    if problem is not None:
        raise ValueError(
            f"Cannot persist to {str(folder)!r}: the folder holds files and is not a PEARL index ({problem}); "
            "persist replaces the whole folder: choose an empty or new folder"
        )


def _foreign(folder: Path) -> str | None:
    """Why a non-empty ``folder`` is not a PEARL index that persist may replace (``None``: it is one).

    Its manifest must be one (any format version: a rebuild replaces an old index), and every file in
    the folder one the manifest lists: anything else would be deleted with it.
    """
    path = folder / MANIFEST
    if path.is_symlink():
        return f"its {MANIFEST} is a symbolic link"
    if not path.is_file():
        return f"no {MANIFEST}"
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return f"its {MANIFEST} is not a manifest: {type(exc).__name__}"
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
        return f"its {MANIFEST} is not a {FORMAT_NAME} manifest"
    listed = manifest.get("files")
    if not isinstance(listed, dict):
        return f"its {MANIFEST} lists no files"
    others = sorted(p.name for p in folder.iterdir() if p.name != MANIFEST and p.name not in listed)
    if others:
        return f"it holds {len(others)} file(s) the manifest does not list, e.g. {others[0]!r}"
    return None


def _store_kind(index: IndexParts) -> str:
    return "faiss" if isinstance(index.vector_index.vector_store, PearlFaissStore) else "external"


def _read_manifest(snapshot: FolderSnapshot) -> dict[str, Any]:
    path = snapshot.path(MANIFEST)
    with reading(path):
        manifest = json.loads(snapshot.manifest_bytes.decode("utf-8"))
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
        raise IndexFileError(path, f"not a {FORMAT_NAME} manifest")
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        raise ValueError(
            f"Index at {str(snapshot.folder)!r} has format version {version!r}; "
            f"this llama-index-pearl reads version {FORMAT_VERSION}. Rebuild the index."
        )
    check_manifest_fields(path, manifest)
    return manifest


def _hold_files(snapshot: FolderSnapshot, manifest: dict[str, Any], needed: list[str]) -> None:
    """Every file the manifest lists, held open and checked; each ``needed`` one present and listed."""
    folder = snapshot.folder
    missing = [name for name in needed if not os.path.lexists(folder / name)]  # a link or a pipe: refused by hold
    if missing:
        raise ValueError(f"Partial PEARL index at {str(folder)!r}: missing {', '.join(missing)}")
    unlisted = [name for name in needed if name not in manifest["files"]]
    if unlisted:
        raise IndexFileError(snapshot.path(MANIFEST), f"'files' lists no digest of {', '.join(unlisted)}")
    snapshot.hold(snapshot.path(MANIFEST), manifest["files"])


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
    catalog, the join graph, the vectors) against each other; the rest is read when first needed,
    from the files held open since (see the module docstring). A folder replaced by a persist
    while this runs is loaded again.
    """
    left = recoverable(folder)
    if left is not None:
        logger.warning("%s is missing; loading the index an interrupted persist left at %s", folder, left)
        folder = left
    return _retried(folder, lambda: _load(folder, embed_model, llm, storage_context, allow_encoder_change))


def _retried(folder: Path, load: Callable[[], T]) -> T:
    """``load()``, again (a few times) while a persist replaces ``folder`` under it."""
    for _ in range(_LOAD_TRIES):
        try:
            return load()
        except FolderReplaced:
            logger.info("%s was replaced by a persist while it was loading; loading it again", folder)
    raise ValueError(
        f"{str(folder)!r} was replaced by another persist each of the {_LOAD_TRIES} times it was loaded; "
        "load it once the persists are done"
    )


def _load(
    folder: Path,
    embed_model: BaseEmbedding | None,
    llm: LLM | None,
    storage_context: StorageContext | None,
    allow_encoder_change: bool,
) -> IndexParts:
    snapshot = FolderSnapshot(folder, MANIFEST)
    manifest = _read_manifest(snapshot)
    model = index_encoder(folder, manifest, embed_model, allow_encoder_change)
    needed = [TABLES, GRAPH, DOCSTORE, INDEX_STORE, CATALOG, LEXICAL]
    if manifest["vector_store"] == "faiss" and storage_context is None:
        needed.extend([FAISS_FILE, ID_MAP_FILE])
    _hold_files(snapshot, manifest, needed)
    with reading(folder / MANIFEST):
        report = BuildReport.from_dict(manifest["report"])
        config = PearlConfig.from_dict(manifest["config"])
        spec = manifest["generator"]
        if spec is not None and not isinstance(spec, dict):
            raise IndexFileError(folder / MANIFEST, f"field 'generator' must be an object or null, got {spec!r:.80}")
    stores = OpenedStores(snapshot, manifest, model, storage_context, HnswSettings.of(config))
    catalog = read_catalog(folder / CATALOG, snapshot.json(CATALOG), manifest["n_tables"], manifest["n_units"])
    catalog.columns = _column_vectors(snapshot, manifest, catalog)
    graph = _read_graph(snapshot, set(catalog.texts))
    store = stores.vector_store(set(catalog.units))
    check_dimension(folder, manifest, model)
    snapshot.keep_only({TABLES, DOCSTORE, INDEX_STORE, LEXICAL})  # what is read after load
    return IndexParts(
        tables=LazyTables(folder / TABLES, list(catalog.texts), lambda parse: snapshot.parse_lines(TABLES, parse)),
        embed_model=model,
        config=config,
        join_graph=graph,
        llm=resolve_llm(llm),
        report=report,
        generator_spec=spec,
        catalog=catalog,
        vector_store=store,
        open_units=lambda: stores.open(set(catalog.texts), catalog),
        lexical=lambda: read_lexical(folder / LEXICAL, snapshot.read(LEXICAL), len(catalog.units)),
    )


def _column_vectors(snapshot: FolderSnapshot, manifest: dict[str, Any], catalog: Catalog) -> ColumnIndex:
    """The vectors of the columns the catalog names, from ``columns.npz`` (none: a folder from before them)."""
    names = catalog.columns
    if not names.columns and not names.words:
        return names
    if COLUMNS not in manifest["files"]:
        raise IndexFileError(snapshot.path(CATALOG), f"names column vectors, but the manifest lists no {COLUMNS}")
    return read_columns(snapshot.path(COLUMNS), snapshot.read(COLUMNS), names, manifest["dimension"])


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
    return _retried(folder, lambda: _drawing(folder, with_tables=False))[0]


def load_graph_and_tables(folder: Path) -> tuple[nx.Graph, list[Table]]:
    """The join graph and the tables (rows as persisted) of an index folder, without its encoder or units.

    What drawing the graph needs (``pearl graph``); checked as :func:`load_join_graph` checks the graph
    and as a loaded index checks its tables.

    Raises:
        ValueError: As :func:`load_join_graph`, and a tables file that is malformed or modified after persist.
    """
    return _retried(folder, lambda: _drawing(folder, with_tables=True))


def _drawing(folder: Path, with_tables: bool) -> tuple[nx.Graph, list[Table]]:
    snapshot = FolderSnapshot(folder, MANIFEST)
    manifest = _read_manifest(snapshot)
    needed = [GRAPH, CATALOG, *([TABLES] if with_tables else [])]
    files = manifest["files"]
    unlisted = [name for name in needed if name not in files]
    if unlisted:
        raise IndexFileError(folder / MANIFEST, f"'files' lists no digest of {', '.join(unlisted)}")
    snapshot.hold(folder / MANIFEST, {name: files[name] for name in needed})
    catalog = read_catalog(folder / CATALOG, snapshot.json(CATALOG), manifest["n_tables"], manifest["n_units"])
    graph = _read_graph(snapshot, set(catalog.texts))
    if not with_tables:
        return graph, []
    tables = LazyTables(folder / TABLES, list(catalog.texts), lambda parse: snapshot.parse_lines(TABLES, parse))
    return graph, list(tables.values())


def _read_graph(snapshot: FolderSnapshot, table_ids: set[str]) -> nx.Graph:
    path = snapshot.path(GRAPH)
    with reading(path):
        graph = graph_from_json(snapshot.json(GRAPH))
    check_graph(path, graph, table_ids)
    return graph
