"""``IndexState``: what every reader of an index sees of it, as a Protocol.

Below the index itself: updates (:mod:`~llama_index_pearl.corpus.updates`) and retrieval
(:mod:`~llama_index_pearl.retrieval.state`) extend it with what they need, and ``PearlTableIndex``
satisfies both, so neither imports the index.

Pipeline step: corpus (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

import networkx as nx
from llama_index.core import VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.schema import TextNode

from llama_index_pearl.tables.table import Table

__all__ = ["IndexContents", "IndexState"]


class IndexContents(Protocol):
    """Tables, units and join graph of an index (what plans a delete, and an insert's scope)."""

    @property
    def tables(self) -> Mapping[str, Table]: ...

    @property
    def units(self) -> list[TextNode]: ...

    @property
    def join_graph(self) -> nx.Graph: ...


class IndexState(IndexContents, Protocol):
    """Tables, units, join graph, encoder and vector store of an index."""

    @property
    def embed_model(self) -> BaseEmbedding: ...

    @property
    def vector_index(self) -> VectorStoreIndex: ...
