"""Indexes made for tests: a built index's tables, encoder and config, with units written by hand."""

from __future__ import annotations

from collections.abc import Sequence

from llama_index.core import StorageContext
from llama_index.core.schema import TextNode

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.corpus.build import IndexParts
from llama_index_pearl.retrieval.search.lexical import LexicalScorer
from llama_index_pearl.store.embedding import build_vector_index


def with_units(
    index: PearlTableIndex, units: Sequence[TextNode], storage_context: StorageContext | None = None
) -> PearlTableIndex:
    """An index of ``index``'s tables holding ``units`` (embedded now, into ``storage_context``'s store), no joins."""
    vector_index = build_vector_index(list(units), index.embed_model, storage_context)
    parts = IndexParts(
        tables=list(index.tables.values()),
        embed_model=index.embed_model,
        config=index.config,
        vector_index=vector_index,
        units=units,
    )
    return PearlTableIndex(parts)


def lexical_scorer(index: PearlTableIndex) -> LexicalScorer:
    """The BM25 scorer of the index's current revision, the one a retrieval fuses (read or built on first use)."""
    with index.read_lock():
        return index.revisions.state().lexical_scorer()


def set_confidences(index: PearlTableIndex, question: str, k: int) -> dict[str, float]:
    """The tables of the question's set among ``k`` retrieved, and each one's confidence."""
    nodes = index.as_retriever(similarity_top_k=k).retrieve(question)
    return {n.node.metadata["table_id"]: n.node.metadata["set_confidence"] for n in nodes if n.node.metadata["in_set"]}
