"""The default store's HNSW graph: its settings, and where a store's graph and vectors are.

Below :attr:`HnswSettings.from_units` units the default store is exact (``IndexFlatIP``) and nothing here
runs. From that count on, the store's vectors move into FAISS's ``IndexHNSWFlat`` (inner product), whose
storage is itself an ``IndexFlatIP``: exact scores of chosen units, and the exact pass that lexical fusion
needs, still read the vectors in place (:mod:`~llama_index_pearl.store.view`); only the top-n search walks the
graph. HNSW cannot remove a vector, so a deleted unit's vector stays in the graph as a tombstone that maps to no
unit (searches walk through it but never return it), until tombstones outnumber the live units and the graph is
rebuilt from the live vectors. The file is FAISS's own binary format (``faiss.write_index``), no pickle. Why
these defaults: benchmarks/README.md, "Scale".

Pipeline step: store (docs/architecture.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from llama_index_pearl.config import PearlConfig

__all__ = ["HnswSettings", "flat_storage", "graph_of"]


@dataclass(frozen=True)
class HnswSettings:
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
    def of(cls, config: PearlConfig) -> HnswSettings | None:
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
