"""``catalog.json``, ``lexical.npz`` and ``columns.npz``: what a query reads of a persisted index, ready to use.

- ``catalog.json``: the :class:`~llama_index_pearl.corpus.catalog.Catalog` (each table's text for an
  LLM, each unit's kind, tables and question, in unit order);
- ``lexical.npz``: the BM25 index of the units' lexical texts in catalog order
  (:class:`~llama_index_pearl.corpus.lexical.LexicalIndex`): its score matrix as three arrays, the
  token of each column as UTF-8 (tokens hold no newline: one a line, an empty line for a column no
  token names), and the number of documents.
  NumPy's own format, read with ``allow_pickle=False``: nothing is executed.
- ``columns.npz``: the vectors of the catalog's columns and name words
  (:class:`~llama_index_pearl.corpus.columns.ColumnIndex`; ``catalog.json`` names them), two float arrays
  checked like ``lexical.npz``'s. An index persisted before column vectors has neither.

All are derived from the units at persist and checked against the other files when read
(an :class:`~llama_index_pearl.storage.integrity.IndexFileError` names the file and the problem).

Pipeline step: storage (docs/architecture.md).
"""

from __future__ import annotations

import io
import json
import math
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from llama_index_pearl.corpus.catalog import Catalog
from llama_index_pearl.corpus.columns import ColumnIndex
from llama_index_pearl.corpus.lexical import LexicalIndex
from llama_index_pearl.storage.integrity import IndexFileError, reading

__all__ = [
    "CATALOG",
    "COLUMNS",
    "LEXICAL",
    "read_catalog",
    "read_columns",
    "read_lexical",
    "write_catalog",
    "write_columns",
    "write_lexical",
]

CATALOG = "catalog.json"
LEXICAL = "lexical.npz"
COLUMNS = "columns.npz"
_COLUMN_ARRAYS = {"vectors": ("f", 2), "word_vectors": ("f", 2)}
# the arrays of lexical.npz: the kinds of number each holds (float, signed or unsigned integers, bytes), its dimensions
_ARRAYS = {"data": ("f", 1), "indices": ("iu", 1), "indptr": ("iu", 1), "vocabulary": ("u", 1), "n_docs": ("iu", 0)}
_HEADERS = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}


def write_catalog(catalog: Catalog, path: Path) -> None:
    path.write_text(json.dumps(catalog.to_dict(), ensure_ascii=False), encoding="utf-8")


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
        with reading(path), zipfile.ZipFile(io.BytesIO(data)) as archive:
            arrays = {name: _member(archive, name, *kind, len(data)) for name, kind in _ARRAYS.items()}
            columns = arrays["vocabulary"].tobytes().decode("utf-8").split("\n")
            vocabulary = {token: i for i, token in enumerate(columns) if token}
            index = LexicalIndex(vocabulary, arrays["data"], arrays["indices"], arrays["indptr"], int(arrays["n_docs"]))
            if len(columns) != len(index.indptr) - 1 and len(index.indptr) > 1:
                raise ValueError(f"{len(columns)} tokens for {len(index.indptr) - 1} columns")
    except (zipfile.BadZipFile, EOFError) as exc:
        raise IndexFileError(path, f"{type(exc).__name__}: {exc}") from exc
    _check(path, index, n_docs)
    return index


def write_columns(columns: ColumnIndex, path: Path) -> None:
    with path.open("wb") as handle:
        np.savez(handle, vectors=_rows(columns.vectors), word_vectors=_rows(columns.word_vectors))


def _rows(matrix: np.ndarray) -> np.ndarray:
    rows = np.ascontiguousarray(matrix, dtype=np.float32)
    return rows if rows.ndim == 2 else np.zeros((len(rows), 0), dtype=np.float32)


def read_columns(path: Path, data: bytes, names: ColumnIndex, dimension: int) -> ColumnIndex:
    """The column and word vectors the catalog names, checked against its names and the index's dimension.

    Args:
        path: ``columns.npz`` (named in errors).
        data: Its bytes.
        names: The catalog's columns and words (:meth:`Catalog.from_dict`: their vectors not read yet).
        dimension: The index's vector dimension.
    """
    try:
        with reading(path), zipfile.ZipFile(io.BytesIO(data)) as archive:
            arrays = {name: _member(archive, name, *kind, len(data)) for name, kind in _COLUMN_ARRAYS.items()}
    except (zipfile.BadZipFile, EOFError) as exc:
        raise IndexFileError(path, f"{type(exc).__name__}: {exc}") from exc
    for name, count in (("vectors", len(names.columns)), ("word_vectors", len(names.words))):
        matrix = arrays[name]
        if len(matrix) != count or (count and matrix.shape[1] != dimension):
            raise IndexFileError(
                path, f"{name} holds {matrix.shape}, the catalog names {count} of dimension {dimension}"
            )
        if not np.all(np.isfinite(matrix)):
            raise IndexFileError(path, f"{name} holds values that are not finite")
    return ColumnIndex(
        names.table_ids, names.columns, arrays["vectors"].astype(np.float32), names.words, arrays["word_vectors"]
    )


def _member(archive: zipfile.ZipFile, name: str, kinds: str, dimensions: int, size: int) -> np.ndarray:
    """One array of the archive, its header's shape and type checked against the bytes it has before it is read.

    NumPy allocates what a header claims before it reads (a 100-byte member may claim 64 GiB), and unpacks
    what the archive's directory claims; ``np.savez`` stores each member as it is, so a member must be stored
    (not compressed) within the file, and its header must claim exactly the bytes that follow it.
    """
    info = archive.getinfo(f"{name}.npy")
    if info.compress_type != zipfile.ZIP_STORED or info.file_size > size:
        raise ValueError(f"member {name!r} is compressed or larger than the file; np.savez stores members as they are")
    with archive.open(info) as member:
        version = np.lib.format.read_magic(member)
        if version not in _HEADERS:
            raise ValueError(f"member {name!r} is of NumPy format {version}")
        shape, _, dtype = _HEADERS[version](member)
        claimed = math.prod(shape) * dtype.itemsize
        wrong = dtype.kind not in kinds or dtype.hasobject or len(shape) != dimensions
        if wrong or claimed != info.file_size - member.tell():
            raise ValueError(
                f"member {name!r} claims {dtype} of shape {shape} ({claimed:,} bytes) in "
                f"{info.file_size - member.tell():,} bytes"
            )
    with archive.open(info) as member:
        return np.lib.format.read_array(member, allow_pickle=False)


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
