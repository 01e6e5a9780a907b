"""``catalog.json`` and ``lexical.npz``: what a query reads of a persisted index, written ready to use.

- ``catalog.json``: the :class:`~llama_index_pearl.corpus.catalog.Catalog` (each table's text for an
  LLM, each unit's kind, tables and question, in unit order);
- ``lexical.npz``: the BM25 index of the units' lexical texts in catalog order
  (:class:`~llama_index_pearl.corpus.lexical.LexicalIndex`): its score matrix as three arrays, the
  token of each column as UTF-8 (tokens hold no newline: one a line, an empty line for a column no
  token names), and the number of documents.
  NumPy's own format, read with ``allow_pickle=False``: nothing is executed.

Both are derived from the units at persist and checked against the other files when read
(an :class:`~llama_index_pearl.storage.integrity.IndexFileError` names the file and the problem).

Pipeline step: storage (docs/architecture.md).
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from llama_index_pearl.corpus.catalog import Catalog
from llama_index_pearl.corpus.lexical import LexicalIndex
from llama_index_pearl.storage.integrity import IndexFileError, reading

__all__ = ["CATALOG", "LEXICAL", "read_catalog", "read_lexical", "write_catalog", "write_lexical"]

CATALOG = "catalog.json"
LEXICAL = "lexical.npz"


def write_catalog(catalog: Catalog, path: Path) -> None:
    path.write_text(json.dumps(catalog.to_dict(), ensure_ascii=False))


def read_catalog(path: Path, data: Any, n_tables: int, n_units: int) -> Catalog:
    """The catalog, checked against the manifest's counts (every unit names tables of it: ``Catalog.from_dict``).

    Args:
        path: ``catalog.json`` (named in errors).
        data: Its decoded JSON.
        n_tables: Tables the manifest lists.
        n_units: Units the manifest lists.
    """
    with reading(path):
        catalog = Catalog.from_dict(data)
    if len(catalog.texts) != n_tables or len(catalog.units) != n_units:
        raise IndexFileError(
            path,
            f"lists {len(catalog.texts)} tables and {len(catalog.units)} units, the manifest {n_tables} and {n_units}",
        )
    return catalog


def write_lexical(index: LexicalIndex, path: Path) -> None:
    vocabulary = index.tokens_by_column()
    with path.open("wb") as handle:
        np.savez(
            handle,
            data=index.data,
            indices=index.indices,
            indptr=index.indptr,
            vocabulary=np.frombuffer("\n".join(vocabulary).encode("utf-8"), dtype=np.uint8),
            n_docs=np.asarray(index.n_docs, dtype=np.int64),
        )


def read_lexical(path: Path, data: bytes, n_docs: int) -> LexicalIndex:
    """The persisted BM25 index of the catalog's units, its arrays checked against each other.

    Args:
        path: ``lexical.npz`` (named in errors).
        data: Its bytes.
        n_docs: Units the catalog lists.
    """
    try:
        with reading(path), np.load(io.BytesIO(data), allow_pickle=False) as arrays:
            columns = arrays["vocabulary"].tobytes().decode("utf-8").split("\n")
            vocabulary = {token: i for i, token in enumerate(columns) if token}
            index = LexicalIndex(vocabulary, arrays["data"], arrays["indices"], arrays["indptr"], int(arrays["n_docs"]))
            if len(columns) != len(index.indptr) - 1 and len(index.indptr) > 1:
                raise ValueError(f"{len(columns)} tokens for {len(index.indptr) - 1} columns")
    except (zipfile.BadZipFile, EOFError) as exc:
        raise IndexFileError(path, f"{type(exc).__name__}: {exc}") from exc
    _check(path, index, n_docs)
    return index


def _check(path: Path, index: LexicalIndex, n_docs: int) -> None:
    indptr, indices = index.indptr, index.indices
    if index.n_docs != n_docs:
        raise IndexFileError(path, f"indexes {index.n_docs} documents, the catalog lists {n_docs} units")
    if len(indptr) < 1 or indptr[0] != 0 or np.any(np.diff(indptr) < 0):
        raise IndexFileError(path, "its token offsets do not match its vocabulary")
    if indptr[-1] != len(indices) or len(indices) != len(index.data):
        raise IndexFileError(path, "its arrays differ in length")
    if len(indices) and (indices.min() < 0 or indices.max() >= n_docs):
        raise IndexFileError(path, "it names documents the catalog does not list")
    if not np.all(np.isfinite(index.data)):
        raise IndexFileError(path, "it holds scores that are not finite")
