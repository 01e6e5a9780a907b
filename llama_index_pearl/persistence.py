"""On-disk format of a ``PearlTableIndex``: explicit files, no pickle.

A folder holds:

- ``pearl.json``: manifest (format name and version, embedding model and
  dimension, build config, counts, build report);
- ``tables.jsonl``: one table a line (id, name, title, description, source, columns,
  declared foreign keys, cells as text);
- ``join_graph.json``: the join graph as node-link JSON;
- ``docstore.json``, ``index_store.json``: LlamaIndex's JSON stores of the units;
- ``default__vector_store.json``: the FAISS index (``faiss.write_index`` binary of
  an ``IndexIDMap2`` over ``IndexFlatIP``) and ``id_map.json`` (unit id -> FAISS id,
  and the next free FAISS id) when the default store is used; external stores
  keep their own data.

Version 2 (incremental indexing) replaced version 1's positional FAISS index with
the id-mapped one and added ``edges`` to the join graph; version 1 folders are
refused with a message asking for a rebuild.

Loading reads JSON and FAISS's own binary format only; nothing is executed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from llama_index.core import StorageContext, load_index_from_storage
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.llms import LLM

from llama_index_pearl.joins import graph_from_json, graph_to_json
from llama_index_pearl.models import embed_model_name, resolve_embed_model, resolve_llm
from llama_index_pearl.stores import ID_MAP_FILE, PearlFaissStore, store_dimension
from llama_index_pearl.table import ForeignKey, Table

if TYPE_CHECKING:
    from llama_index_pearl.index import PearlTableIndex

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "load_index", "persist_index"]

FORMAT_NAME = "llama-index-pearl"
FORMAT_VERSION = 2
MANIFEST = "pearl.json"
TABLES = "tables.jsonl"
GRAPH = "join_graph.json"
DOCSTORE = "docstore.json"
INDEX_STORE = "index_store.json"
FAISS_FILE = "default__vector_store.json"


def persist_index(index: PearlTableIndex, folder: Path) -> None:
    """Write every file of the format into ``folder`` (created if needed)."""
    folder.mkdir(parents=True, exist_ok=True)
    index.storage_context.persist(persist_dir=str(folder))
    _write_tables(index.tables.values(), folder / TABLES)
    (folder / GRAPH).write_text(json.dumps(graph_to_json(index.join_graph)))
    manifest = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "embed_model": embed_model_name(index.embed_model),
        "dimension": index.dimension,
        "vector_store": _store_kind(index),
        "n_tables": len(index.tables),
        "n_units": len(index.units),
        "config": index.config.to_dict(),
        "report": index.report.to_dict(),
    }
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2))


def _store_kind(index: PearlTableIndex) -> str:
    return "faiss" if isinstance(index.vector_index.vector_store, PearlFaissStore) else "external"


def _write_tables(tables: Any, path: Path) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for table in tables:
            record = {
                "id": table.id,
                "name": table.name,
                "title": table.title,
                "description": table.description,
                "source": table.source,
                "columns": table.columns,
                "foreign_keys": [fk.to_dict() for fk in table.foreign_keys],
                "rows": table.text_rows(),
            }
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def _read_tables(path: Path) -> list[Table]:
    tables = []
    with path.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            try:
                record = json.loads(line)
                df = pd.DataFrame(record["rows"], columns=record["columns"], dtype=object)
                tables.append(
                    Table(
                        id=record["id"],
                        df=df,
                        title=record.get("title"),
                        description=record.get("description"),
                        foreign_keys=[ForeignKey.from_dict(fk) for fk in record.get("foreign_keys", [])],
                        name=record.get("name"),
                        source=record.get("source"),
                    )
                )
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
                raise ValueError(f"Corrupted index file {str(path)!r}, line {line_no}: {exc}") from exc
    return tables


def _read_manifest(folder: Path) -> dict[str, Any]:
    if not folder.is_dir():
        raise ValueError(f"No PEARL index at {str(folder)!r}: folder does not exist")
    path = folder / MANIFEST
    if not path.is_file():
        raise ValueError(f"{str(folder)!r} is not a PEARL index folder: {MANIFEST} is missing")
    try:
        manifest = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"Corrupted {str(path)!r}: {exc}") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
        raise ValueError(f"{str(path)!r} is not a {FORMAT_NAME} manifest")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise ValueError(
            f"Index at {str(folder)!r} has format version {manifest.get('format_version')!r}; "
            f"this llama-index-pearl reads version {FORMAT_VERSION}. Rebuild the index."
        )
    return manifest


def _check_files(folder: Path, manifest: dict[str, Any], external_store: bool) -> None:
    needed = [TABLES, GRAPH, DOCSTORE, INDEX_STORE]
    if manifest.get("vector_store") == "faiss" and not external_store:
        needed.extend([FAISS_FILE, ID_MAP_FILE])
    missing = [name for name in needed if not (folder / name).is_file()]
    if missing:
        raise ValueError(f"Partial PEARL index at {str(folder)!r}: missing {', '.join(missing)}")


def load_index(
    cls: type[PearlTableIndex],
    folder: Path,
    *,
    embed_model: BaseEmbedding | None = None,
    llm: LLM | None = None,
    storage_context: StorageContext | None = None,
) -> PearlTableIndex:
    """Read a folder written by :func:`persist_index`; see ``PearlTableIndex.load``."""
    from llama_index_pearl.index import BuildReport, PearlConfig

    manifest = _read_manifest(folder)
    _check_files(folder, manifest, external_store=storage_context is not None)
    model = resolve_embed_model(embed_model)
    dimension = int(manifest["dimension"])
    model_dimension = len(model.get_query_embedding("dimension probe"))
    if model_dimension != dimension:
        raise ValueError(
            f"Embedding dimension mismatch: index at {str(folder)!r} was built with "
            f"{manifest.get('embed_model')!r} (dimension {dimension}), the given model "
            f"produces dimension {model_dimension}"
        )
    if storage_context is None:
        storage_context = _faiss_storage(folder, dimension)
    else:
        store_dim = store_dimension(storage_context.vector_store)
        if store_dim is not None and store_dim != dimension:
            raise ValueError(
                f"Vector store dimension mismatch: {type(storage_context.vector_store).__name__} holds "
                f"dimension {store_dim}, the index at {str(folder)!r} has dimension {dimension}"
            )
    try:
        # the docstore keeps every unit even for stores that hold text (Qdrant): the
        # retriever, persistence and incremental updates read units from it
        vector_index = load_index_from_storage(storage_context, embed_model=model, store_nodes_override=True)
    except Exception as exc:
        raise ValueError(f"Corrupted LlamaIndex stores in {str(folder)!r}: {exc}") from exc
    units = list(vector_index.docstore.docs.values())
    if len(units) != manifest.get("n_units"):
        raise ValueError(
            f"Partial PEARL index at {str(folder)!r}: manifest lists {manifest.get('n_units')} units, "
            f"docstore holds {len(units)}"
        )
    tables = _read_tables(folder / TABLES)
    try:
        graph = graph_from_json(json.loads((folder / GRAPH).read_text()))
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"Corrupted join graph {str(folder / GRAPH)!r}: {exc}") from exc
    report = BuildReport(**manifest.get("report", {}))
    config = PearlConfig.from_dict(manifest.get("config", {}))
    return cls(tables, vector_index, model, config, units, join_graph=graph, llm=resolve_llm(llm), report=report)


def _faiss_storage(folder: Path, dimension: int) -> StorageContext:
    store = PearlFaissStore.from_files(str(folder / FAISS_FILE), str(folder / ID_MAP_FILE))
    if store.client.d != dimension:
        raise ValueError(
            f"Vector store dimension {store.client.d} does not match the manifest's {dimension} in {str(folder)!r}"
        )
    return StorageContext.from_defaults(vector_store=store, persist_dir=str(folder))
