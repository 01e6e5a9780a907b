"""Checks a persisted index folder must pass before it is used.

``load()`` trusts nothing it reads: the manifest's fields and types, each file's
size and SHA-256 as recorded at persist time, and the files against each other
(every unit's tables exist, every vector belongs to a unit, every unit has a
vector, graph nodes and paths name known tables). Every failure, malformed JSON
included, is one :class:`IndexFileError` (a ``ValueError``) naming the file and
the problem, never a ``KeyError`` on the first query.

Pipeline step: storage (docs/architecture.md).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import networkx as nx
from llama_index.core.schema import BaseNode

from llama_index_pearl.corpus.units import TABLE_IDS, unit_meta
from llama_index_pearl.joins import JoinPath
from llama_index_pearl.joins.graph import join_edge, joins_between, stored_paths

__all__ = [
    "IndexFileError",
    "check_graph",
    "check_manifest_fields",
    "check_units",
    "check_vector_ids",
    "file_digests",
    "read_at",
    "reading",
    "sha256_of",
]

_CHUNK = 1 << 20
# manifest field -> type
_FIELDS: dict[str, type] = {
    "dimension": int,
    "n_units": int,
    "n_tables": int,
    "vector_store": str,
    "config": dict,
    "report": dict,
    "encoder": dict,
    "files": dict,
}


class IndexFileError(ValueError):
    """A persisted index file is missing, malformed or disagrees with the others."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"Corrupted PEARL index file {str(path)!r}: {problem}")
        self.path = path


@contextmanager
def reading(path: Path) -> Iterator[None]:
    """Turn anything a malformed ``path`` makes the code below raise into one :class:`IndexFileError`."""
    try:
        yield
    except IndexFileError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError, OSError) as exc:
        raise IndexFileError(path, f"{type(exc).__name__}: {str(exc)[:300]}") from exc


def check_manifest_fields(path: Path, manifest: Mapping[str, Any]) -> None:
    """Every field the loader reads is present with its type (``generator``: an object or null)."""
    if "generator" not in manifest:
        raise IndexFileError(path, "field 'generator' is missing")
    for name, kind in _FIELDS.items():
        value = manifest.get(name)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise IndexFileError(path, f"field {name!r} must be a {kind.__name__}, got {value!r:.80}")
    if manifest["dimension"] < 1 or manifest["n_units"] < 0 or manifest["n_tables"] < 0:
        raise IndexFileError(path, "dimension, n_units and n_tables must be positive")


def read_at(fd: int, size: int, offset: int) -> bytes:
    """Up to ``size`` bytes of an open file from ``offset`` (``os.pread``; seek and read where it is missing)."""
    if hasattr(os, "pread"):
        return os.pread(fd, size, offset)
    os.lseek(fd, offset, os.SEEK_SET)
    return os.read(fd, size)


def sha256_of(fd: int) -> str:
    """The SHA-256 (hex) of an open file's whole content, read by offset."""
    sha, offset = hashlib.sha256(), 0
    while chunk := read_at(fd, _CHUNK, offset):
        sha.update(chunk)
        offset += len(chunk)
    return sha.hexdigest()


def file_digests(folder: Path, names: Iterable[str]) -> dict[str, dict[str, Any]]:
    """``{name: {"bytes": size, "sha256": hex}}``; each file is fsynced too (it is about to be swapped in)."""
    digests = {}
    for name in sorted(names):
        fd = os.open(folder / name, os.O_RDONLY)
        try:
            os.fsync(fd)
            digests[name] = {"bytes": os.fstat(fd).st_size, "sha256": sha256_of(fd)}
        finally:
            os.close(fd)
    return digests


def check_units(path: Path, units: Iterable[BaseNode], table_ids: set[str], expected: int) -> None:
    """As many units as the manifest says, each standing for known tables."""
    count = 0
    with reading(path):
        for unit in units:
            count += 1
            ids = unit_meta(unit).get(TABLE_IDS)
            if not isinstance(ids, list) or not ids:
                raise IndexFileError(path, f"unit {unit.node_id} has no {TABLE_IDS}")
            unknown = [t for t in ids if t not in table_ids]
            if unknown:
                raise IndexFileError(path, f"unit {unit.node_id} names table(s) {unknown} absent from tables.jsonl")
    if count != expected:
        raise IndexFileError(path, f"holds {count} units, the manifest lists {expected}")


def check_vector_ids(path: Path, vector_ids: Iterable[str], unit_ids: set[str]) -> None:
    """Every vector maps to a unit and every unit has a vector."""
    ids = set(vector_ids)
    orphans, missing = ids - unit_ids, unit_ids - ids
    if orphans:
        raise IndexFileError(path, f"{len(orphans)} vector(s) map to no unit, e.g. {sorted(orphans)[0]!r}")
    if missing:
        raise IndexFileError(path, f"{len(missing)} unit(s) have no vector, e.g. {sorted(missing)[0]!r}")


def check_graph(path: Path, graph: nx.Graph, table_ids: set[str]) -> None:
    """Graph nodes and stored paths name known tables, and every edge and stored path parses.

    Parsed here, once (what a query's join hints, an insert or the graph page read of them), so that
    nothing read later meets a malformed join the load let through.
    """
    with reading(path):
        unknown = [n for n in graph.nodes if n not in table_ids]
        if unknown:
            raise IndexFileError(path, f"node(s) {unknown[:5]} absent from the index's tables")
        paths = stored_paths(graph)
        if not isinstance(paths, list):
            raise IndexFileError(path, "its 'paths' are not a list")
        for number, stored in enumerate(paths):
            tables = stored["tables"]
            if not isinstance(tables, list) or any(t not in table_ids for t in tables):
                raise IndexFileError(path, f"path {number} names tables absent from the index's tables")
            _parses(path, f"path {number}", lambda stored=stored: JoinPath.from_dict(stored))
        for a, b in graph.edges:
            _parses(path, f"the edge of {a!r} and {b!r}", lambda a=a, b=b: _edge_joins(graph, a, b))


def _edge_joins(graph: nx.Graph, a: str, b: str) -> None:
    join_edge(graph, a, b)
    joins = joins_between(graph, a, b)
    if not joins:
        raise ValueError("it holds no column pair")
    for join in joins:
        if {join.left_table, join.right_table} != {a, b}:
            raise ValueError(f"it holds a join of {join.left_table!r} and {join.right_table!r}")


def _parses(path: Path, what: str, parse: Callable[[], Any]) -> None:
    try:
        parse()
    except (ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError) as exc:
        raise IndexFileError(path, f"{what}: {type(exc).__name__}: {str(exc)[:300]}") from exc
