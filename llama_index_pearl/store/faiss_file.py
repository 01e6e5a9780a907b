"""The default store's two files, read by PEARL itself before FAISS allocates anything.

``faiss.index`` is FAISS's binary format (``faiss.write_index``). FAISS's own reader trusts the sizes a file
claims (a 40 KB file may claim 16 GiB of vectors: ``std::bad_alloc``), reads any index type it knows (an
``IndexLSH`` inside the id map loads, then fails at the first query), follows neighbour ids it never bounds
(an HNSW graph's), and checks a little more or less from one version to the next (the package allows
faiss-cpu >= 1.8). So the file is walked here first, every count checked against the bytes left and, where
known, the manifest's dimension and unit count, and only what PEARL writes is accepted:

- an ``IndexIDMap2`` (``IxM2``) over an ``IndexFlatIP`` (``IxFI``), or over an ``IndexHNSWFlat`` (``IHNf``)
  whose storage is an ``IndexFlatIP``; inner product, trained, one dimension and vector count throughout;
- vectors finite and at most of unit length (PEARL stores them normalised), so that no score overflows;
- ids distinct, from 0 to :data:`MAX_FAISS_ID` (they come from a counter that starts at 0);
- a graph as FAISS builds it (``M`` and the efs within :class:`~llama_index_pearl.config.PearlConfig`'s bounds,
  each node's neighbour lists where its offsets say, every neighbour a node that exists at the level it is
  linked at), so that a search never reads outside the graph.

Only then does FAISS read the checked bytes (through a reader of them: no path is opened). ``id_map.json``
(unit id -> FAISS id, and the next id to draw) is checked against them. Each layout is FAISS's
``faiss/impl/index_read.cpp``, unchanged from 1.8 on: a header (``d`` int32, ``ntotal`` int64, two int64
fields, ``is_trained`` one byte, ``metric_type`` int32) after each four-letter code, vectors as a uint64
count followed by the values, little-endian.

Pipeline step: store (docs/architecture.md).
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

from llama_index_pearl.config import MAX_EF_CONSTRUCTION, MAX_EF_SEARCH, MAX_HNSW_M

__all__ = ["MAX_FAISS_ID", "FaissShape", "check_faiss_bytes", "check_id_map", "read_faiss_store"]

MAX_FAISS_ID = 2**53  # ids come from a counter that starts at 0: far below, and exact as a float
_IP = 0  # faiss.METRIC_INNER_PRODUCT
_MAX_LEVELS = 64  # levels of an HNSW graph (FAISS stops below a level's probability of 1e-9: ~31 for M = 2)
_LENGTH_SLACK = 1e-3  # unit vectors in float32, and a little
_HEADER = struct.Struct("<iqqqBi")  # d, ntotal, two fields no longer used, is_trained (a C++ bool), metric
_GRAPH_TAIL = struct.Struct("<iiiii")  # entry point, max level, efConstruction, efSearch, a field no longer used
# what PEARL writes, and what a folder may hold instead, by FAISS's four-letter codes
_KINDS = {
    b"IxM2": "IndexIDMap2",
    b"IxFI": "IndexFlatIP",
    b"IHNf": "IndexHNSWFlat",
    b"IxMp": "IndexIDMap",
    b"IxF2": "IndexFlatL2",
    b"IxFl": "IndexFlat",
    b"IxHe": "IndexLSH",
    b"IxHE": "IndexLSH",
    b"IxPQ": "IndexPQ",
    b"IxSQ": "IndexScalarQuantizer",
    b"IwFl": "IndexIVFFlat",
    b"IwPQ": "IndexIVFPQ",
    b"IxPT": "IndexPreTransform",
}


@dataclass(frozen=True)
class FaissShape:
    """What a checked ``faiss.index`` holds.

    Args:
        dimension: The vectors' dimension.
        ids: The FAISS id of each stored vector, in store order (an HNSW graph's tombstones included).
        graph: Whether the vectors are searched through an HNSW graph.
    """

    dimension: int
    ids: np.ndarray
    graph: bool


class _Reader:
    """The bytes of a file read front to back; a count past what is left is an error, never an allocation."""

    def __init__(self, data: bytes) -> None:
        self._data = memoryview(data)
        self.at = 0

    @property
    def size(self) -> int:
        return len(self._data)

    def left(self) -> int:
        return self.size - self.at

    def take(self, size: int, what: str) -> memoryview:
        if size > self.left():
            raise ValueError(f"ends inside {what} (byte {self.at:,}: {size:,} bytes needed, {self.left():,} left)")
        chunk = self._data[self.at : self.at + size]
        self.at += size
        return chunk

    def unpack(self, layout: struct.Struct, what: str) -> tuple[Any, ...]:
        return layout.unpack(self.take(layout.size, what))

    def code(self) -> bytes:
        return bytes(self.take(4, "an index type code"))

    def vector(self, dtype: type, what: str, expected: int | None = None) -> np.ndarray:
        """A uint64 count, then that many values of ``dtype`` (``expected``: the count the rest implies)."""
        (count,) = self.unpack(struct.Struct("<Q"), f"the size of {what}")
        size = np.dtype(dtype).itemsize
        if expected is not None and count != expected:
            raise ValueError(f"{what} claims {count:,} values, the index implies {expected:,}")
        if count > self.left() // size:
            raise ValueError(f"{what} claims {count:,} values, the file has {self.left():,} bytes left")
        return np.frombuffer(self.take(count * size, what), dtype=np.dtype(dtype).newbyteorder("<"))


def _kind(code: bytes) -> str:
    return _KINDS.get(code, f"FAISS index of code {code.decode('latin-1')!r}")


def _header(reader: _Reader, code: bytes, shape: tuple[int, int] | None, fields: tuple | None = None) -> tuple:
    """``(d, ntotal)`` of an index's header (read now, or the ``fields`` read before), checked.

    Args:
        reader: The file.
        code: The index's four-letter code.
        shape: ``(d, ntotal)`` of the index around it, which this one must share (``None``: the outermost).
        fields: The header, when it was read before the code that follows it.
    """
    d, ntotal, _, _, trained, metric = fields or reader.unpack(_HEADER, f"the header of the {_kind(code)}")
    if d < 1 or ntotal < 0:
        raise ValueError(f"its {_kind(code)} claims dimension {d} and {ntotal} vectors")
    if trained != 1 or metric != _IP:
        raise ValueError(f"its {_kind(code)} is not a trained inner-product index (metric {metric})")
    if shape is not None and (d, ntotal) != shape:
        raise ValueError(
            f"its {_kind(code)} holds {ntotal:,} vectors of dimension {d}, "
            f"the index around it {shape[1]:,} of dimension {shape[0]}"
        )
    return d, ntotal


def check_faiss_bytes(data: bytes, dimension: int | None = None, units: int | None = None) -> FaissShape:
    """The shape of a ``faiss.index`` PEARL wrote, or a ``ValueError`` saying what is wrong with it.

    Args:
        data: The file's bytes.
        dimension: The manifest's dimension (``None``: not known).
        units: The manifest's unit count (``None``: not known); an HNSW graph may hold as many tombstones.
    """
    reader = _Reader(data)
    code = reader.code()
    if code != b"IxM2":
        raise ValueError(f"it holds the type {_kind(code)}; PEARL writes IndexIDMap2")
    outer = reader.unpack(_HEADER, "the header of the IndexIDMap2")
    inner = reader.code()  # what it wraps says more than the metric the wrapper took from it
    if inner not in (b"IxFI", b"IHNf"):
        raise ValueError(f"its id map wraps the type {_kind(inner)}; PEARL writes IndexFlatIP or IndexHNSWFlat")
    d, n = _header(reader, code, None, outer)
    if dimension is not None and d != dimension:
        raise ValueError(f"its vectors have dimension {d}, the manifest says {dimension}")
    if n > reader.left() // (4 * d + 8):  # each vector: d floats and an id
        raise ValueError(f"it claims {n:,} vectors of dimension {d} in {reader.left():,} bytes")
    _header(reader, inner, (d, n))
    if inner == b"IHNf":
        _check_graph(reader, n)
        storage = reader.code()
        if storage != b"IxFI":
            raise ValueError(f"its graph stores its vectors in the type {_kind(storage)}; PEARL writes IndexFlatIP")
        _header(reader, storage, (d, n))
    _check_vectors(reader.vector(np.float32, "the vectors", n * d).reshape(n, d))
    ids = reader.vector(np.int64, "the ids", n)
    if reader.left():
        raise ValueError(f"{reader.left():,} bytes follow the index")
    _check_ids(ids)
    if units is not None and not (n == units if inner == b"IxFI" else units <= n <= 2 * units):
        raise ValueError(f"it holds {n:,} vectors, the manifest lists {units:,} units")
    return FaissShape(d, ids, inner == b"IHNf")


def _check_vectors(vectors: np.ndarray) -> None:
    with np.errstate(over="ignore", invalid="ignore"):
        lengths = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))
    bad = np.flatnonzero(~(lengths <= 1 + _LENGTH_SLACK))  # NaN and infinity fail the comparison
    if len(bad):
        row = int(bad[0])
        problem = "not finite" if not np.isfinite(vectors[row]).all() else f"of length {float(lengths[row]):.4g}"
        raise ValueError(f"vector {row} is {problem}; PEARL stores unit vectors")


def _check_ids(ids: np.ndarray) -> None:
    if len(ids) and (ids.min() < 0 or ids.max() >= MAX_FAISS_ID):
        raise ValueError(f"it holds ids outside 0..{MAX_FAISS_ID:,}")
    if len(np.unique(ids)) != len(ids):
        raise ValueError("it holds one id twice")


def _check_graph(reader: _Reader, n: int) -> None:
    """An HNSW graph as FAISS builds it over ``n`` vectors: every neighbour a node of the level it is linked at."""
    probas = reader.vector(np.float64, "the level probabilities")
    if not 1 <= len(probas) <= _MAX_LEVELS or not np.all((probas >= 0) & (probas <= 1)):
        raise ValueError(f"its graph has {len(probas)} level probabilities, or some outside 0..1")
    cum = reader.vector(np.int32, "the neighbours per level", len(probas) + 1).astype(np.int64)
    m = int(cum[1]) // 2
    if not 2 <= m <= MAX_HNSW_M or cum[0] != 0 or cum[1] != 2 * m or np.any(np.diff(cum[1:]) != m):
        raise ValueError(f"its graph's neighbours per level are not those of an M from 2 to {MAX_HNSW_M}")
    levels = reader.vector(np.int32, "the node levels", n).astype(np.int64)
    if n and (levels.min() < 1 or levels.max() > len(probas)):
        raise ValueError(f"its graph has node levels outside 1..{len(probas)}")
    offsets = reader.vector(np.uint64, "the neighbour offsets", n + 1)
    expected = np.concatenate([[0], np.cumsum(cum[levels])])
    if offsets.max() > reader.size or not np.array_equal(offsets.astype(np.int64), expected):
        raise ValueError("its graph's neighbour offsets do not follow its node levels")
    neighbours = reader.vector(np.int32, "the neighbours", int(expected[-1])).astype(np.int64)
    if len(neighbours) and (neighbours.min() < -1 or neighbours.max() >= n):
        raise ValueError(f"its graph links nodes outside 0..{n - 1}")
    for level in range(1, len(probas)):
        _check_level(neighbours, levels, expected, cum, level)
    entry, top, ef_construction, ef_search, _ = reader.unpack(_GRAPH_TAIL, "the graph's entry point")
    empty = n == 0 and (entry, top) == (-1, -1)
    if not empty and not (0 <= entry < n and top == levels.max() - 1 == levels[entry] - 1):
        raise ValueError(f"its graph enters at node {entry} of level {top}, not a node of its top level")
    if not (1 <= ef_construction <= MAX_EF_CONSTRUCTION and 1 <= ef_search <= MAX_EF_SEARCH):
        raise ValueError(
            f"its graph's efConstruction {ef_construction} or efSearch {ef_search} is past its bound "
            f"({MAX_EF_CONSTRUCTION}, {MAX_EF_SEARCH})"
        )


def _check_level(neighbours: np.ndarray, levels: np.ndarray, offsets: np.ndarray, cum: np.ndarray, level: int) -> None:
    """The neighbours linked at ``level`` are nodes that reach that level (a search reads their lists there)."""
    nodes = np.flatnonzero(levels > level)
    if not len(nodes):
        return
    slots = offsets[nodes, None] + cum[level] + np.arange(cum[level + 1] - cum[level])
    linked = neighbours[slots]
    linked = linked[linked >= 0]
    if np.any(levels[linked] <= level):
        raise ValueError(f"its graph links a node at level {level} that does not reach it")


def check_id_map(text: bytes, shape: FaissShape) -> tuple[dict[str, int], int]:
    """``(unit id -> FAISS id, next id)`` of ``id_map.json``, checked against the index's ids.

    Every unit maps to a distinct stored vector (all of them for the exact store; an HNSW graph keeps
    tombstones too), and the next id is a count in range.

    Args:
        text: The file's bytes (JSON).
        shape: The checked ``faiss.index``.
    """
    try:
        data = json.loads(text.decode("utf-8"))
    except RecursionError:  # a decoder error like any other (json.JSONDecodeError is a ValueError)
        raise ValueError("its JSON nests too deep") from None
    if not isinstance(data, dict) or not isinstance(data.get("node_id_to_faiss_id_map"), dict):
        raise ValueError("not an id map (an object with 'node_id_to_faiss_id_map')")
    mapping, next_id = data["node_id_to_faiss_id_map"], data.get("next_id")
    if not all(type(v) is int for v in mapping.values()) or type(next_id) is not int:
        raise ValueError("its ids and next_id must be integers")
    if not 0 <= next_id <= MAX_FAISS_ID:
        raise ValueError(f"next_id {next_id} is outside 0..{MAX_FAISS_ID:,}")
    used = set(mapping.values())
    stored = set(shape.ids.tolist())
    if len(used) != len(mapping) or not used <= stored or (not shape.graph and used != stored):
        raise ValueError(f"it lists {len(mapping)} vectors, the index holds {len(stored)}")
    return dict(mapping), next_id


def read_faiss_store(
    faiss_data: bytes, id_map_data: bytes, names: tuple[str, str], dimension: int | None, units: int | None
) -> tuple[Any, dict[str, int], int]:
    """The FAISS index (read by FAISS once checked), the unit id -> FAISS id map and the next id to draw.

    Args:
        faiss_data: The bytes of ``faiss.index``.
        id_map_data: The bytes of ``id_map.json``.
        names: The two files' paths, named in errors.
        dimension: The manifest's dimension (``None``: not known).
        units: The manifest's unit count (``None``: not known).

    Raises:
        ValueError: ``Corrupted FAISS file`` or ``Corrupted FAISS id map``, the file and what is wrong.
    """
    try:
        shape = check_faiss_bytes(faiss_data, dimension, units)
    except ValueError as exc:
        raise ValueError(f"Corrupted FAISS file {names[0]!r}: {exc}") from None
    try:
        mapping, next_id = check_id_map(id_map_data, shape)
    except ValueError as exc:
        raise ValueError(f"Corrupted FAISS id map {names[1]!r}: {exc}") from None
    return _faiss_read(faiss_data), mapping, max(next_id, int(shape.ids.max(initial=-1)) + 1)


def _faiss_read(data: bytes) -> Any:
    """FAISS's index of checked bytes, handed over a chunk at a time (``faiss.deserialize_index`` would copy
    them whole first: three times the file at once instead of twice)."""
    import faiss

    view, position = memoryview(data), 0

    def read(size: int) -> bytes:
        nonlocal position
        chunk = view[position : position + size].tobytes()
        position += len(chunk)
        return chunk

    return faiss.read_index(faiss.PyCallbackIOReader(read))
