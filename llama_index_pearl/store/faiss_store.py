"""The default vector store: FAISS, exact below a unit count and an HNSW graph past it, which can delete.

:class:`PearlFaissStore` holds exact inner products (``IndexFlatIP``, so inner product equals cosine on normalised
vectors) behind an ``IndexIDMap2``, so units can be deleted by node id for incremental indexing; from a unit
count on (``PearlConfig.approximate_from``) an HNSW graph over the same vectors
(:mod:`~llama_index_pearl.store.hnsw`).
LlamaIndex's ``FaissMapVectorStore`` uses ``ntotal`` as the next FAISS id, which
collides with a live id after a delete; this subclass draws ids from a monotonic
counter persisted with the id map (JSON), and adds vectors in one batch. What retrieval and persistence
need of its FAISS internals are methods: :meth:`PearlFaissStore.view` (the vectors numbered in store
order, what retrieval searches), :meth:`~PearlFaissStore.id_map` and :meth:`~PearlFaissStore.vectors_of`; no other
module reads its private attributes.

Pipeline step: store (docs/architecture.md).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

import numpy as np
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.schema import BaseNode
from llama_index.core.vector_stores.types import VectorStoreQuery, VectorStoreQueryResult
from llama_index.vector_stores.faiss import FaissMapVectorStore

from llama_index_pearl.store.faiss_file import read_faiss_store
from llama_index_pearl.store.hnsw import HnswSettings, graph_of
from llama_index_pearl.store.view import StoreView

__all__ = ["ID_MAP_FILE", "PearlFaissStore", "new_faiss_store"]

ID_MAP_FILE = "id_map.json"


class PearlFaissStore(FaissMapVectorStore):
    """FAISS store with deletes: ``IndexIDMap2`` over ``IndexFlatIP`` (exact), monotonic ids.

    Past ``approximate.from_units`` units its vectors move into an HNSW graph
    (:mod:`~llama_index_pearl.store.hnsw`); below it nothing differs.

    Args:
        faiss_index: A ``faiss.IndexIDMap2`` (use :func:`new_faiss_store` for a new one).
    """

    _next_id: int = PrivateAttr(default=0)
    _approximate: HnswSettings | None = PrivateAttr(default=None)

    def add(self, nodes: Sequence[BaseNode], **add_kwargs: Any) -> list[str]:
        """Add nodes with embeddings; each gets a FAISS id never used before in this store."""
        if not nodes:
            return []
        vectors = np.asarray([n.get_embedding() for n in nodes], dtype=np.float32)
        ids = np.arange(self._next_id, self._next_id + len(nodes), dtype=np.int64)
        self._faiss_index.add_with_ids(vectors, ids)
        replaced = []
        for node, faiss_id in zip(nodes, ids.tolist()):
            old = self._node_id_to_faiss_id_map.get(node.node_id)
            if old is not None:  # re-adding a node replaces its vector
                replaced.append(old)
                self._faiss_id_to_node_id_map.pop(old, None)
            self._node_id_to_faiss_id_map[node.node_id] = faiss_id
            self._faiss_id_to_node_id_map[faiss_id] = node.node_id
        self._next_id += len(nodes)
        self._remove(replaced)
        self._follow_size()
        return [n.node_id for n in nodes]

    def delete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        """Delete the unit whose node id is ``ref_doc_id`` (units are their own documents)."""
        self.delete_nodes([ref_doc_id])

    def delete_nodes(self, node_ids: list[str] | None = None, filters: Any = None, **delete_kwargs: Any) -> None:
        """Delete units by node id (ids not in the store are ignored).

        Raises:
            NotImplementedError: Metadata filters (FAISS has none).
            ValueError: No node ids.
        """
        if filters is not None:
            raise NotImplementedError("Metadata filters not implemented for FAISS")
        if node_ids is None:
            raise ValueError("node_ids must be provided to delete nodes")
        removed = [self._node_id_to_faiss_id_map.pop(u) for u in node_ids if u in self._node_id_to_faiss_id_map]
        for faiss_id in removed:
            self._faiss_id_to_node_id_map.pop(faiss_id, None)
        self._remove(removed)

    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        """Top-k units (LlamaIndex's own query path); an HNSW graph's tombstones are skipped."""
        if query.filters is not None:
            raise ValueError("Metadata filters not implemented for FAISS")
        vector = np.asarray([query.query_embedding], dtype=np.float32)
        scores, ids = self._faiss_index.search(vector, query.similarity_top_k + self.tombstones())
        kept = [
            (float(s), self._faiss_id_to_node_id_map[i])
            for s, i in zip(scores[0], ids[0].tolist())
            if i in self._faiss_id_to_node_id_map
        ][: query.similarity_top_k]
        return VectorStoreQueryResult(similarities=[s for s, _ in kept], ids=[u for _, u in kept])

    def tombstones(self) -> int:
        """Vectors of deleted units still in an HNSW graph (0 for the exact store)."""
        return int(self._faiss_index.ntotal) - len(self._node_id_to_faiss_id_map)

    def approximate(self, settings: HnswSettings | None) -> None:
        """Search approximately from ``settings.from_units`` units on (``None``: always exact); applied now."""
        self._approximate = settings
        graph = graph_of(self._faiss_index)
        if graph is not None and settings is not None:
            graph.hnsw.efSearch = settings.ef_search
        self._follow_size()

    def _remove(self, faiss_ids: Sequence[int]) -> None:
        """Drop vectors; an HNSW graph keeps them as tombstones until they outnumber the live units."""
        if not faiss_ids:
            return
        if graph_of(self._faiss_index) is None:
            self._faiss_index.remove_ids(np.asarray(faiss_ids, dtype=np.int64))
        elif self.tombstones() > len(self._node_id_to_faiss_id_map):
            self._rebuild(self._approximate or _graph_settings(self._faiss_index))

    def _follow_size(self) -> None:
        """Turn into an HNSW graph once the live units reach the threshold (never back: deletes keep the graph)."""
        settings = self._approximate
        if (
            settings is not None
            and graph_of(self._faiss_index) is None
            and len(self._node_id_to_faiss_id_map) >= settings.from_units
        ):
            self._rebuild(settings)

    def _rebuild(self, settings: HnswSettings) -> None:
        live = np.asarray(sorted(self._faiss_id_to_node_id_map), dtype=np.int64)
        vectors = self._faiss_index.reconstruct_batch(live) if len(live) else np.zeros((0, self._faiss_index.d))
        self._faiss_index = settings.graph(vectors, live)

    def persist(self, persist_path: str = "", fs: Any = None) -> None:
        """Write the FAISS index and, next to it, the id map and id counter as JSON."""
        super().persist(persist_path=persist_path, fs=fs)
        with open(os.path.join(os.path.dirname(persist_path), ID_MAP_FILE), "w", encoding="utf-8") as handle:
            json.dump(
                {
                    "next_id": self._next_id,
                    "node_id_to_faiss_id_map": self._node_id_to_faiss_id_map,
                },
                handle,
            )

    def id_map(self) -> dict[str, int]:
        """A copy of the node id -> FAISS id map."""
        return dict(self._node_id_to_faiss_id_map)

    def vectors_of(self, unit_ids: Sequence[str]) -> np.ndarray:
        """Stored vectors of ``unit_ids`` (rows in that order; every id must be in the store)."""
        if not unit_ids:
            return np.zeros((0, self._faiss_index.d), dtype=np.float32)
        keys = np.asarray([self._node_id_to_faiss_id_map[u] for u in unit_ids], dtype=np.int64)
        return np.asarray(self._faiss_index.reconstruct_batch(keys), dtype=np.float32)

    def view(self) -> StoreView:
        """The stored vectors numbered in store order, for search until the store next changes."""
        return StoreView(self._faiss_index, self._node_id_to_faiss_id_map)

    @classmethod
    def from_files(cls, faiss_path: str, id_map_path: str, approximate: HnswSettings | None = None) -> PearlFaissStore:
        """Read a store written by :meth:`persist` (FAISS binary + JSON; no pickle), checked as :meth:`from_bytes` does.

        Raises:
            ValueError: Either file cannot be read, or is not one PEARL writes (:meth:`from_bytes`).
        """
        files = []
        for path in (faiss_path, id_map_path):
            try:
                with open(path, "rb") as handle:
                    files.append(handle.read())
            except OSError as exc:
                raise ValueError(f"Cannot read the FAISS store file {path!r}: {exc}") from exc
        return cls.from_bytes(*files, names=(faiss_path, id_map_path), approximate=approximate)

    @classmethod
    def from_bytes(
        cls,
        faiss_data: bytes,
        id_map_data: bytes,
        *,
        names: tuple[str, str],
        dimension: int | None = None,
        units: int | None = None,
        approximate: HnswSettings | None = None,
    ) -> PearlFaissStore:
        """A store from the bytes of its two files, each checked before FAISS reads it (:mod:`.faiss_file`).

        Args:
            faiss_data: The FAISS index file's bytes.
            id_map_data: The JSON id map's bytes.
            names: The two files' paths, for errors.
            dimension: The vectors' dimension, where known (an index's manifest).
            units: The units the store holds, where known.
            approximate: The build's settings of approximate search (:meth:`approximate`).

        Raises:
            ValueError: The FAISS file is not one PEARL writes (an ``IndexIDMap2`` over an exact or HNSW
                inner-product index, its sizes those of the file, its vectors finite unit vectors), or the
                id map is corrupted or disagrees with it; the message names the file.
        """
        index, mapping, next_id = read_faiss_store(faiss_data, id_map_data, names, dimension, units)
        store = cls(faiss_index=index)
        store._node_id_to_faiss_id_map = mapping
        store._faiss_id_to_node_id_map = {v: k for k, v in mapping.items()}
        store._next_id = next_id
        store.approximate(approximate)
        return store


def new_faiss_store(dim: int, approximate: HnswSettings | None = None) -> PearlFaissStore:
    """A new empty :class:`PearlFaissStore` of dimension ``dim``: exact, an HNSW graph from ``approximate.from_units``
    units on (``None``: always exact)."""
    import faiss

    store = PearlFaissStore(faiss_index=faiss.IndexIDMap2(faiss.IndexFlatIP(dim)))
    store.approximate(approximate)
    return store


def _graph_settings(index: Any) -> HnswSettings:
    """The settings an HNSW graph was built with (a store loaded without the build's settings)."""
    graph = graph_of(index)
    return HnswSettings(0, graph.hnsw.nb_neighbors(1), graph.hnsw.efConstruction, graph.hnsw.efSearch)
