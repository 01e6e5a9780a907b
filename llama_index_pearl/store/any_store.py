"""What PEARL reads of any LlamaIndex vector store, and how it deletes from one.

The default store (:class:`~llama_index_pearl.store.faiss_store.PearlFaissStore`) answers through its own
methods; any other store (Qdrant, pgvector, Milvus, Chroma...) through what LlamaIndex's store classes expose:
the vectors' dimension (:func:`store_dimension`), where the vectors are kept, for the manifest
(:func:`store_location`), and the deletion of units (:func:`delete_units`).

Pipeline step: store (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

import numpy as np
from llama_index.core import VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.vector_stores.types import BasePydanticVectorStore

from llama_index_pearl.store.faiss_store import PearlFaissStore

__all__ = ["delete_units", "index_dimension", "store_dimension", "store_location", "unit_vectors"]


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


def store_location(store: BasePydanticVectorStore) -> dict[str, str]:
    """Where a store keeps the vectors, for the manifest: ``{"store": class}``, plus ``server`` and ``collection``
    for a store of a server (Milvus, Qdrant, Chroma...). The server's address is kept without credentials.

    Args:
        store: The index's vector store.
    """
    where = {"store": type(store).__name__}
    if isinstance(store, PearlFaissStore):
        return where
    server = _server_of(store)
    if isinstance(server, str) and server:
        where["server"] = _without_credentials(server)
    collection = getattr(store, "collection_name", None) or getattr(store, "table_name", None)
    if isinstance(collection, str) and collection:
        where["collection"] = collection
    return where


def _server_of(store: BasePydanticVectorStore) -> object:
    """The address a store of a server connected to (Qdrant's ``url``; Milvus's, below), else ``None``."""
    # MilvusVectorStore's own ``uri`` field keeps its default value whatever address it was given; the address it
    # connected to is held only by its MilvusClient, in the private ``_config.uri`` (hence read defensively)
    milvus = getattr(getattr(getattr(store, "client", None), "_config", None), "uri", None)
    return milvus or getattr(store, "url", None)


def _without_credentials(address: str) -> str:
    parts = urlsplit(address)
    if parts.username is None and parts.password is None:
        return address
    return parts._replace(netloc=f"{parts.hostname}{f':{parts.port}' if parts.port else ''}").geturl()


def delete_units(vector_index: VectorStoreIndex, unit_ids: Sequence[str]) -> None:
    """Remove units from the store and the docstore.

    Args:
        vector_index: The index's vector store index.
        unit_ids: The units to remove.

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
    """The vectors' dimension: the store's own when it says, else that of a probe embedding.

    Args:
        vector_index: The index's vector store index.
        embed_model: The encoder (embeds the probe).
    """
    return store_dimension(vector_index.vector_store) or len(embed_model.get_query_embedding("dimension probe"))
