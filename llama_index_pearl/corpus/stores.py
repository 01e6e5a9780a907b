"""Vector stores: the default exact FAISS store (which can delete), and store introspection.

The default store is :class:`PearlFaissStore`: exact inner product
(``IndexFlatIP``, so inner product equals cosine on normalised vectors) behind an
``IndexIDMap2``, so units can be deleted by node id for incremental indexing.
LlamaIndex's ``FaissMapVectorStore`` uses ``ntotal`` as the next FAISS id, which
collides with a live id after a delete; this subclass draws ids from a monotonic
counter persisted with the id map (JSON), and adds vectors in one batch. What retrieval and persistence
need of its FAISS internals are methods: :meth:`PearlFaissStore.exact_view` (the vectors numbered in store
order, searched exactly), :meth:`~PearlFaissStore.id_map` and :meth:`~PearlFaissStore.vectors_of`; no other
module reads its private attributes.

Pipeline step: corpus (docs/architecture.md).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from typing import Any

import numpy as np
from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.schema import BaseNode, TextNode, TransformComponent
from llama_index.core.vector_stores.types import BasePydanticVectorStore
from llama_index.vector_stores.faiss import FaissMapVectorStore

__all__ = [
    "ID_MAP_FILE",
    "ExactView",
    "KeepUnitsWhole",
    "PearlFaissStore",
    "build_vector_index",
    "delete_units",
    "embedded",
    "exact_faiss_store",
    "index_dimension",
    "normalise",
    "one_faiss_thread",
    "store_dimension",
    "unit_vectors",
]

ID_MAP_FILE = "id_map.json"


class PearlFaissStore(FaissMapVectorStore):
    """Exact FAISS store with deletes: ``IndexIDMap2`` over ``IndexFlatIP``, monotonic ids.

    Args:
        faiss_index: A ``faiss.IndexIDMap2`` (use :func:`exact_faiss_store` for a new one).
    """

    _next_id: int = PrivateAttr(default=0)

    def add(self, nodes: Sequence[BaseNode], **add_kwargs: Any) -> list[str]:
        """Add nodes with embeddings; each gets a FAISS id never used before in this store."""
        if not nodes:
            return []
        vectors = np.asarray([n.get_embedding() for n in nodes], dtype=np.float32)
        ids = np.arange(self._next_id, self._next_id + len(nodes), dtype=np.int64)
        self._faiss_index.add_with_ids(vectors, ids)
        for node, faiss_id in zip(nodes, ids.tolist()):
            old = self._node_id_to_faiss_id_map.get(node.node_id)
            if old is not None:  # re-adding a node replaces its vector
                self._faiss_index.remove_ids(np.array([old], dtype=np.int64))
                self._faiss_id_to_node_id_map.pop(old, None)
            self._node_id_to_faiss_id_map[node.node_id] = faiss_id
            self._faiss_id_to_node_id_map[faiss_id] = node.node_id
        self._next_id += len(nodes)
        return [n.node_id for n in nodes]

    def persist(self, persist_path: str = "", fs: Any = None) -> None:
        """Write the FAISS index and, next to it, the id map and id counter as JSON."""
        super().persist(persist_path=persist_path, fs=fs)
        with open(os.path.join(os.path.dirname(persist_path), ID_MAP_FILE), "w") as handle:
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

    def exact_view(self) -> ExactView:
        """The stored vectors numbered in store order, for exact search until the store next changes."""
        return ExactView(self._faiss_index, self._node_id_to_faiss_id_map)

    @classmethod
    def from_files(cls, faiss_path: str, id_map_path: str) -> PearlFaissStore:
        """Read a store written by :meth:`persist` (FAISS binary + JSON; no pickle).

        Args:
            faiss_path: The FAISS index file.
            id_map_path: The JSON id map next to it.

        Raises:
            ValueError: The FAISS file is not an ``IndexIDMap2``, or the id map is
                corrupted or disagrees with the index.
        """
        import faiss

        try:
            index = faiss.read_index(faiss_path)
        except RuntimeError as exc:
            raise ValueError(f"Corrupted FAISS file {faiss_path!r}: {exc}") from exc
        if not isinstance(index, faiss.IndexIDMap2):
            raise ValueError(f"FAISS file {faiss_path!r} holds a {type(index).__name__}, expected an IndexIDMap2")
        try:
            with open(id_map_path) as handle:
                data = json.load(handle)
            mapping = {str(k): int(v) for k, v in data["node_id_to_faiss_id_map"].items()}
            next_id = int(data["next_id"])
        except (OSError, json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"Corrupted FAISS id map {id_map_path!r}: {exc}") from exc
        if len(mapping) != index.ntotal:
            raise ValueError(
                f"FAISS id map {id_map_path!r} lists {len(mapping)} vectors, the index holds {index.ntotal}"
            )
        store = cls(faiss_index=index)
        store._node_id_to_faiss_id_map = mapping
        store._faiss_id_to_node_id_map = {v: k for k, v in mapping.items()}
        store._next_id = max(next_id, max(mapping.values(), default=-1) + 1)
        return store


class ExactView:
    """One state of a :class:`PearlFaissStore`: units numbered in store order (their FAISS ids), exact scores.

    Valid until the store changes (the index swaps views under its write lock). Reads the vectors in place.

    Args:
        client: The store's ``IndexIDMap2`` over an ``IndexFlatIP``.
        node_to_faiss: Node id -> FAISS id.
    """

    def __init__(self, client: Any, node_to_faiss: Mapping[str, int]) -> None:
        import faiss

        by_faiss_id = sorted(node_to_faiss.items(), key=lambda item: item[1])
        self.unit_ids = [node_id for node_id, _ in by_faiss_id]
        faiss_ids = np.asarray([fid for _, fid in by_faiss_id], dtype=np.int64)
        self._client = client
        self._flat = faiss.downcast_index(client.index)
        self._fid_to_unit = np.full(int(faiss_ids.max(initial=-1)) + 1, -1, dtype=np.int64)
        self._fid_to_unit[faiss_ids] = np.arange(len(faiss_ids))
        rows_to_fid = faiss.vector_to_array(client.id_map).astype(np.int64)
        self._unit_row = np.empty(len(faiss_ids), dtype=np.int64)
        self._unit_row[self._fid_to_unit[rows_to_fid]] = np.arange(len(rows_to_fid))

    def top(self, queries: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        """FAISS's exact top-``n`` per query row: ``(scores, unit numbers)``, ``-1`` where none."""
        with one_faiss_thread() if len(queries) == 1 else nullcontext():
            scores, faiss_ids = self._client.search(queries, n)
        units = np.where(faiss_ids >= 0, self._fid_to_unit[np.maximum(faiss_ids, 0)], -1)
        return scores, units

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


def exact_faiss_store(dim: int) -> PearlFaissStore:
    """A new empty :class:`PearlFaissStore` of dimension ``dim``."""
    import faiss

    return PearlFaissStore(faiss_index=faiss.IndexIDMap2(faiss.IndexFlatIP(dim)))


def unit_vectors(store: BasePydanticVectorStore, unit_ids: Sequence[str]) -> np.ndarray | None:
    """Stored vectors of ``unit_ids`` (rows in that order); ``None`` for a store other than the default FAISS.

    Args:
        store: The index's vector store.
        unit_ids: Unit (node) ids, all present in the store.
    """
    return store.vectors_of(unit_ids) if isinstance(store, PearlFaissStore) else None


def store_dimension(store: BasePydanticVectorStore) -> int | None:
    """The vector dimension a store holds, when it can be told cheaply (else ``None``).

    Knows FAISS (``index.d``), Qdrant (collection config; ``None`` while the
    collection does not exist) and stores with an ``embed_dim`` or ``dim``
    attribute (pgvector, Milvus).

    Args:
        store: A LlamaIndex vector store.
    """
    client = getattr(store, "client", None)
    if hasattr(client, "d"):
        return int(client.d)
    collection = getattr(store, "collection_name", None)
    if client is not None and collection and hasattr(client, "get_collection"):
        try:
            if hasattr(client, "collection_exists") and not client.collection_exists(collection):
                return None
            vectors = client.get_collection(collection).config.params.vectors
        except Exception:  # a remote store we cannot ask; the check is best effort
            return None
        size = getattr(vectors, "size", None)
        if size is None and isinstance(vectors, dict) and vectors:
            size = getattr(next(iter(vectors.values())), "size", None)
        return int(size) if size is not None else None
    for attribute in ("embed_dim", "dim"):
        value = getattr(store, attribute, None)
        if isinstance(value, int) and value > 0:
            return value
    return None


class KeepUnitsWhole(TransformComponent):
    """The index's transformation: none. A unit is embedded and stored whole, never split.

    Given no transformations, LlamaIndex builds its default ``SentenceSplitter``, which
    loads tiktoken for nodes it is never handed (benchmarks/README.md, "Constants").
    """

    def __call__(self, nodes: Sequence[BaseNode], **kwargs: Any) -> Sequence[BaseNode]:
        return nodes


def build_vector_index(
    units: Sequence[TextNode],
    embed_model: BaseEmbedding,
    storage_context: StorageContext | None = None,
    show_progress: bool = False,
) -> VectorStoreIndex:
    """Embed units once (normalised) and store them; default store is exact FAISS IP."""
    with embedded(units, embed_model, show_progress) as nodes:
        if storage_context is None:
            storage_context = StorageContext.from_defaults(vector_store=exact_faiss_store(len(nodes[0].embedding)))
        # store_nodes_override: the docstore keeps every unit even when the store holds text
        # (Qdrant), so persist/load and incremental deletes work the same with every store
        return VectorStoreIndex(
            nodes=nodes,
            storage_context=storage_context,
            embed_model=embed_model,
            show_progress=False,
            store_nodes_override=True,
            transformations=[KeepUnitsWhole()],
        )


@contextmanager
def embedded(
    units: Sequence[TextNode], embed_model: BaseEmbedding, show_progress: bool = False
) -> Iterator[list[TextNode]]:
    """The units carrying their normalised vectors for the block (builds and inserts store them there).

    The vectors are dropped afterwards, also when the block raises: they live in the
    vector store, and units stay light in the docstore and in memory.
    """
    texts = [u.get_content(metadata_mode="embed") for u in units]
    vectors = normalise(embed_model.get_text_embedding_batch(texts, show_progress=show_progress))
    for unit, vector in zip(units, vectors):
        unit.embedding = vector
    try:
        yield list(units)
    finally:
        for unit in units:
            unit.embedding = None


def delete_units(vector_index: VectorStoreIndex, unit_ids: Sequence[str]) -> None:
    """Remove units from the store and the docstore.

    Raises:
        NotImplementedError: The store cannot delete; the message names it and the stores that can.
    """
    try:
        vector_index.delete_nodes(list(unit_ids), delete_from_docstore=True)
    except NotImplementedError as exc:
        raise NotImplementedError(
            f"{type(vector_index.vector_store).__name__} cannot delete units; build with the default store "
            "(PearlFaissStore) or a store that implements delete_nodes (Qdrant, pgvector, Milvus...)"
        ) from exc


def index_dimension(vector_index: VectorStoreIndex, embed_model: BaseEmbedding) -> int:
    """The vectors' dimension: the store's own when it says, else that of a probe embedding."""
    return store_dimension(vector_index.vector_store) or len(embed_model.get_query_embedding("dimension probe"))


def normalise(vectors: Sequence[Sequence[float]]) -> list[list[float]]:
    array = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (array / norms).tolist()
