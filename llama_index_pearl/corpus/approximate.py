"""How the default store is searched: exactly, or past a unit count through an HNSW graph over the same vectors.

:class:`StoreView` is one state of the store as retrieval reads it (units numbered in store order).

Below :attr:`ApproximateSearch.from_units` units the default store is exact (``IndexFlatIP``) and nothing here
runs. From that count on, the store's vectors move into FAISS's ``IndexHNSWFlat`` (inner product), whose
storage is itself an ``IndexFlatIP``: exact scores of chosen units, and the exact pass that lexical fusion
needs, still read the vectors in place; only the top-n search walks the graph. HNSW cannot remove a vector,
so a deleted unit's vector stays in the graph as a tombstone that maps to no unit (searches walk through it but
never return it), until tombstones outnumber the live units and the graph is rebuilt from the live vectors.
The file is FAISS's own binary format (``faiss.write_index``), no pickle. Why these defaults:
benchmarks/README.md, "Scale".

Pipeline step: corpus (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

import numpy as np

from llama_index_pearl.config import PearlConfig

__all__ = ["ApproximateSearch", "StoreView", "flat_storage", "graph_of", "one_faiss_thread"]


@dataclass(frozen=True)
class ApproximateSearch:
    """When the default store turns approximate, and its HNSW parameters (from :class:`PearlConfig`).

    Args:
        from_units: Unit count from which the store is an HNSW graph.
        m: Neighbours per node (FAISS's ``M``).
        ef_construction: Candidate list while inserting (``efConstruction``).
        ef_search: Candidate list while searching (``efSearch``; at least the units asked for).
    """

    from_units: int
    m: int
    ef_construction: int
    ef_search: int

    @classmethod
    def of(cls, config: PearlConfig) -> ApproximateSearch | None:
        """The config's settings; ``None`` when ``approximate_from`` is ``None`` (always exact)."""
        if config.approximate_from is None:
            return None
        return cls(config.approximate_from, config.hnsw_m, config.hnsw_ef_construction, config.hnsw_ef_search)

    def graph(self, vectors: np.ndarray, ids: np.ndarray) -> Any:
        """A new ``IndexIDMap2`` over an ``IndexHNSWFlat`` holding ``vectors`` under FAISS ids ``ids``."""
        import faiss

        hnsw = faiss.IndexHNSWFlat(vectors.shape[1], self.m, faiss.METRIC_INNER_PRODUCT)
        hnsw.hnsw.efConstruction = self.ef_construction
        hnsw.hnsw.efSearch = self.ef_search
        index = faiss.IndexIDMap2(hnsw)
        if len(vectors):
            index.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32), ids.astype(np.int64))
        return index


def graph_of(index: Any) -> Any | None:
    """The ``IndexHNSW`` inside a store's ``IndexIDMap2``, ``None`` for the exact ``IndexFlatIP``."""
    import faiss

    inner = faiss.downcast_index(index.index)
    return inner if isinstance(inner, faiss.IndexHNSW) else None


def flat_storage(index: Any) -> Any:
    """The ``IndexFlatIP`` holding a store's vectors in row order (the store's own, or its graph's storage)."""
    import faiss

    graph = graph_of(index)
    return faiss.downcast_index(graph.storage) if graph is not None else faiss.downcast_index(index.index)


class StoreView:
    """One state of a ``PearlFaissStore``: units numbered in store order (their FAISS ids), their vectors read in place.

    Valid until the store changes (the index swaps views under its write lock). Scores of chosen units
    (:meth:`scores`) and of all of them (:meth:`all_scores`) are exact; the top-n search (:meth:`top`) is exact too,
    unless the store is an HNSW graph: it then walks the graph (``walks_graph`` is true).

    Args:
        client: The store's ``IndexIDMap2`` over an ``IndexFlatIP`` or an ``IndexHNSWFlat``.
        node_to_faiss: Node id -> FAISS id.
    """

    def __init__(self, client: Any, node_to_faiss: Mapping[str, int]) -> None:
        import faiss

        by_faiss_id = sorted(node_to_faiss.items(), key=lambda item: item[1])
        self.unit_ids = [node_id for node_id, _ in by_faiss_id]
        faiss_ids = np.asarray([fid for _, fid in by_faiss_id], dtype=np.int64)
        self._client = client
        self._graph = graph_of(client)
        self.walks_graph = self._graph is not None
        self._flat = flat_storage(client)
        rows_to_fid = faiss.vector_to_array(client.id_map).astype(np.int64)
        # units are numbered in FAISS id order, so a FAISS id's unit is found by bisection: memory follows the
        # unit count, never the largest id (a folder's ids may start anywhere)
        self._faiss_ids = faiss_ids
        row_units = self._unit_of(rows_to_fid)
        live = row_units >= 0
        self._unit_row = np.empty(len(faiss_ids), dtype=np.int64)
        self._unit_row[row_units[live]] = np.flatnonzero(live)
        # the graph walks through a deleted unit's vector (a tombstone) but never returns it
        self._deleted = faiss.IDSelectorBatch(rows_to_fid[~live]) if not live.all() else None
        self._live = faiss.IDSelectorNot(self._deleted) if self._deleted is not None else None

    def top(self, queries: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        """FAISS's top-``n`` per query row (exact, or the graph's): ``(scores, unit numbers)``, ``-1`` where none."""
        import faiss

        params = None
        if self._graph is not None:
            params = faiss.SearchParametersHNSW(efSearch=max(self._graph.hnsw.efSearch, n), sel=self._live)
        with one_faiss_thread() if len(queries) == 1 else nullcontext():
            scores, faiss_ids = self._client.search(queries, min(n, len(self.unit_ids)), params=params)
        return scores, self._unit_of(faiss_ids)

    def _unit_of(self, faiss_ids: np.ndarray) -> np.ndarray:
        """The unit number of each FAISS id, ``-1`` for an id no unit has (a tombstone, or FAISS's -1)."""
        if not len(self._faiss_ids):
            return np.full(np.shape(faiss_ids), -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(self._faiss_ids, faiss_ids), len(self._faiss_ids) - 1)
        return np.where(self._faiss_ids[at] == faiss_ids, at, -1)

    def scores(self, query: np.ndarray, units: np.ndarray) -> np.ndarray:
        """Cosines of some units (their unit numbers) with the query."""
        return self._vectors()[self._unit_row[units]] @ query

    def all_scores(self, query: np.ndarray) -> np.ndarray:
        """Every unit's cosine with the query, by unit number (one read of every stored vector)."""
        return (self._vectors() @ query)[self._unit_row]

    def _vectors(self) -> np.ndarray:
        import faiss

        n, d = self._flat.ntotal, self._flat.d
        return faiss.rev_swig_ptr(self._flat.get_xb(), n * d).reshape(n, d)


@contextmanager
def one_faiss_thread() -> Iterator[None]:
    """FAISS on one OpenMP thread for the block: one query needs no thread team, and waking one on a busy
    machine costs more than the search (benchmarks/README.md). OpenMP's thread count is a setting of the
    calling thread, so other threads are not affected; it is restored afterwards."""
    import faiss

    previous = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(previous)
