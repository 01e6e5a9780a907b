"""One state of the default store as retrieval reads it: units numbered in store order, vectors read in place.

Exact scores of chosen units and of all of them read the stored vectors where FAISS keeps them (the store's
``IndexFlatIP``, or its HNSW graph's storage: :mod:`~llama_index_pearl.store.hnsw`); only the top-n search of an
HNSW store walks the graph.

Pipeline step: store (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext
from typing import Any

import numpy as np

from llama_index_pearl.store.hnsw import flat_storage, graph_of

__all__ = ["StoreView", "one_faiss_thread"]


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
