"""Units embedded once, with unit-length vectors, and stored: what a build and an insert do with their new units.

Every vector PEARL stores or asks with has unit length (:func:`normalise`), so inner product equals cosine in
any store. A build stores its units in a new store (:func:`build_vector_index`: the default FAISS store unless
the caller's ``storage_context`` names another); an insert embeds its units for the block in which the index
adds them (:func:`embedded`).

Pipeline step: store (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.schema import BaseNode, TextNode, TransformComponent

from llama_index_pearl.store.faiss_store import new_faiss_store
from llama_index_pearl.store.hnsw import HnswSettings
from llama_index_pearl.text.models import unit_rows

__all__ = ["KeepUnitsWhole", "build_vector_index", "embedded", "normalise"]


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
    progress: Callable[[int], None] | None = None,
    approximate: HnswSettings | None = None,
) -> VectorStoreIndex:
    """Embed units once (normalised) and store them; default store is FAISS IP, exact below ``approximate``.

    Args:
        units: The units.
        embed_model: The encoder.
        storage_context: Where the vectors go; ``None``: a new
            :class:`~llama_index_pearl.store.faiss_store.PearlFaissStore`.
        progress: Told how many more units are embedded, batch by batch (a shown stage's ``bar.update``).
        approximate: When the default store turns into an HNSW graph (``None``: never).
    """
    with embedded(units, embed_model, progress) as nodes:
        if storage_context is None:
            store = new_faiss_store(len(nodes[0].embedding), approximate)
            storage_context = StorageContext.from_defaults(vector_store=store)
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
    units: Sequence[TextNode], embed_model: BaseEmbedding, progress: Callable[[int], None] | None = None
) -> Iterator[list[TextNode]]:
    """The units carrying their normalised vectors for the block (builds and inserts store them there).

    The vectors are dropped afterwards, also when the block raises: they live in the
    vector store, and units stay light in the docstore and in memory.

    Args:
        units: The units to embed (their embedded text: ``metadata_mode="embed"``).
        embed_model: The encoder.
        progress: Told how many more units are embedded, batch by batch (a shown stage's ``bar.update``).
    """
    texts = [u.get_content(metadata_mode="embed") for u in units]
    vectors = normalise(_embed(texts, embed_model, progress))
    for unit, vector in zip(units, vectors):
        unit.embedding = vector
    try:
        yield list(units)
    finally:
        for unit in units:
            unit.embedding = None


def _embed(texts: list[str], embed_model: BaseEmbedding, progress: Callable[[int], None] | None) -> list[list[float]]:
    """The texts' vectors; told, one encoder batch at a time (the batches LlamaIndex makes anyway)."""
    if progress is None:
        return embed_model.get_text_embedding_batch(texts)
    step = max(1, int(getattr(embed_model, "embed_batch_size", 0) or 1))
    vectors: list[list[float]] = []
    for start in range(0, len(texts), step):
        vectors.extend(embed_model.get_text_embedding_batch(texts[start : start + step]))
        progress(len(texts[start : start + step]))
    return vectors


def normalise(vectors: Sequence[Sequence[float]]) -> list[list[float]]:
    """Each vector scaled to unit length (a zero vector stays zero), as float32 values.

    >>> normalise([[3.0, 4.0], [0.0, 0.0]])
    [[0.6000000238418579, 0.800000011920929], [0.0, 0.0]]

    Args:
        vectors: Rows of floats, one per vector.
    """
    return unit_rows(np.asarray(vectors, dtype=np.float32)).tolist()
