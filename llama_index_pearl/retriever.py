"""``PearlRetriever``: embed the question once, max-pool unit scores to tables.

No LLM runs at query time (paper section 3.2). The retriever asks the vector
store for the top-n units, adds each unit's lexical (BM25) evidence
(:mod:`llama_index_pearl.lexical`; units the store did not return but whose
words could lift them into the top k are scored from their stored vectors),
pools them to tables with :func:`~llama_index_pearl.pooling.max_pool`, and over-fetches (n × 4 each round)
until k distinct tables are found and ties among them are settled
(:func:`~llama_index_pearl.pooling.ranking_is_final`) or the store is exhausted. With the default
exact FAISS store the result is exact max-pooling; with an approximate or remote
store it is exact over whatever units the store returns. Each returned table
carries join hints (:mod:`llama_index_pearl.join_hints`) towards the other
returned tables.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

import numpy as np
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.callbacks import CallbackManager
from llama_index.core.schema import NodeWithScore, QueryBundle, QueryType, TextNode

from llama_index_pearl.join_hints import JoinHint, compute_join_hints, format_join_hints, hints_for_table
from llama_index_pearl.lexical import DEFAULT_LEXICAL_WEIGHT
from llama_index_pearl.pooling import (
    TableHit,
    UnitHit,
    fuse_lexical,
    lexical_candidates,
    max_pool,
    next_fetch_size,
    ranking_is_final,
)
from llama_index_pearl.stores import unit_vectors

if TYPE_CHECKING:
    from llama_index_pearl.index import PearlTableIndex

__all__ = ["PearlRetriever"]

_TABLE_NAMESPACE = uuid.UUID("0b7f6e1c-2a8d-4f5e-a1c3-9d4e8b7a6c52")
MIN_FETCH = 32


class PearlRetriever(BaseRetriever):
    """Table-level retriever over a :class:`~llama_index_pearl.index.PearlTableIndex`.

    Args:
        index: The index to search.
        similarity_top_k: How many tables to return.
        fetch_k: Units asked for in the first round; default ``max(32, 4k)``.
        include_join_hints_in_text: Append join hints to the node text
            (``JOIN concert.stadium_id = stadium.stadium_id (explicit)``), for LLM consumption;
            each hint goes to the later-ranked of its two tables, so the nodes together
            list every join once.
        lexical_weight: Cosine added to a unit for its BM25 score relative to the
            question's best lexical match (:mod:`llama_index_pearl.lexical`); ``0``
            ranks by the encoder alone, as in the paper.
        callback_manager: LlamaIndex callbacks.
        verbose: Log each retrieval.

    Each result is one ``NodeWithScore`` per table: the node text is the table's
    serialization for an LLM, the score is the pooled cosine, and the metadata
    names the table (``table_id``), the unit that matched (``matched_unit_id``,
    ``matched_kind``, ``matched_table_ids``, ``matched_question``) and
    ``join_hints``: for each other returned table it joins (directly, or through
    one named intermediate table), the column pairs and whether each join is
    declared, explicit or implicit (see :class:`~llama_index_pearl.join_hints.JoinHint`).
    """

    def __init__(
        self,
        index: PearlTableIndex,
        similarity_top_k: int = 5,
        fetch_k: int | None = None,
        include_join_hints_in_text: bool = False,
        lexical_weight: float = DEFAULT_LEXICAL_WEIGHT,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
        **kwargs: Any,
    ) -> None:
        if not _positive_int(similarity_top_k):
            raise ValueError(f"similarity_top_k must be an integer >= 1, got {similarity_top_k!r}")
        if fetch_k is not None and not _positive_int(fetch_k):
            raise ValueError(f"fetch_k must be an integer >= 1, got {fetch_k!r}")
        if not 0.0 <= lexical_weight < float("inf"):
            raise ValueError(f"lexical_weight must be a finite number >= 0, got {lexical_weight}")
        self._index = index
        self._lexical_weight = float(lexical_weight)
        self._similarity_top_k = similarity_top_k
        self._fetch_k = fetch_k
        self._include_join_hints_in_text = include_join_hints_in_text
        super().__init__(callback_manager=callback_manager, verbose=verbose, **kwargs)

    @property
    def similarity_top_k(self) -> int:
        return self._similarity_top_k

    def _first_fetch(self, n_units: int) -> int:
        wanted = self._fetch_k or max(MIN_FETCH, 4 * self._similarity_top_k)
        return min(n_units, wanted)

    # ------------------------------------------------------- thread safety
    def retrieve(self, str_or_query_bundle: QueryType) -> list[NodeWithScore]:
        """Retrieve tables; an ``insert_tables``/``delete_table`` applies before or after, never during."""
        with self._index.read_lock():
            return super().retrieve(str_or_query_bundle)

    async def aretrieve(self, str_or_query_bundle: QueryType) -> list[NodeWithScore]:
        """Async :meth:`retrieve`; waiting for an update happens off the event loop."""
        async with self._index.aread_lock():
            return await super().aretrieve(str_or_query_bundle)

    # ----------------------------------------------------------------- sync
    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if query_bundle.embedding is None:
            query_bundle = _with_embedding(query_bundle, self._index.embed_query(query_bundle.query_str))
        n_units = len(self._index.units)
        fetch = self._first_fetch(n_units)
        lexical = self._lexical_scores(query_bundle)
        while True:
            hits = self._fetch(query_bundle, fetch)
            nodes = self._pool(self._fuse(hits, lexical, query_bundle), hits, fetch, n_units)
            if nodes is not None:
                return nodes
            fetch = next_fetch_size(fetch, n_units)

    def _fetch(self, query_bundle: QueryBundle, fetch: int) -> list[UnitHit]:
        unit_retriever = self._index.vector_index.as_retriever(similarity_top_k=fetch)
        return [self._hit(n) for n in unit_retriever.retrieve(query_bundle)]

    # ---------------------------------------------------------------- async
    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if query_bundle.embedding is None:
            query_bundle = _with_embedding(query_bundle, await self._index.aembed_query(query_bundle.query_str))
        n_units = len(self._index.units)
        fetch = self._first_fetch(n_units)
        lexical = self._lexical_scores(query_bundle)
        while True:
            hits = await self._afetch(query_bundle, fetch)
            nodes = self._pool(self._fuse(hits, lexical, query_bundle), hits, fetch, n_units)
            if nodes is not None:
                return nodes
            fetch = next_fetch_size(fetch, n_units)

    async def _afetch(self, query_bundle: QueryBundle, fetch: int) -> list[UnitHit]:
        unit_retriever = self._index.vector_index.as_retriever(similarity_top_k=fetch)
        return [self._hit(n) for n in await unit_retriever.aretrieve(query_bundle)]

    # -------------------------------------------------------------- helpers
    def _lexical_scores(self, query_bundle: QueryBundle) -> dict[str, float]:
        if self._lexical_weight <= 0:
            return {}
        return self._index.lexical_scorer().scores(query_bundle.query_str)

    def _fuse(
        self, hits: list[UnitHit], lexical: dict[str, float], query_bundle: QueryBundle
    ) -> tuple[list[UnitHit], bool]:
        """Fetched units with lexical scores added, plus unfetched units that could now enter the top k.

        Their cosine comes from the stored vectors (default FAISS store). A store
        that cannot return vectors leaves them open (second value ``False``): the
        retriever fetches more until none is left, so the ranking stays exact.
        """
        weight = self._lexical_weight
        fused = fuse_lexical(hits, lexical, weight)
        missing = lexical_candidates(hits, lexical, weight, self._similarity_top_k)
        if not missing:
            return fused, True
        vectors = unit_vectors(self._index.vector_index.vector_store, missing)
        if vectors is None:
            return fused, False
        floor = min(h.score for h in hits)
        cosines = vectors @ np.asarray(query_bundle.embedding, dtype=np.float32)
        for unit_id, cosine in zip(missing, cosines):
            unit = self._index.unit(unit_id)
            score = float(cosine) + weight * lexical[unit_id]
            if unit is not None and score >= floor:  # below the floor it cannot reach the top k
                fused.append(UnitHit(unit_id, list(unit.metadata.get("table_ids", [])), score))
        return fused, True

    def _pool(
        self, scored: tuple[list[UnitHit], bool], fetched: list[UnitHit], fetch: int, n_units: int
    ) -> list[NodeWithScore] | None:
        """One round: max-pool the (fused) units; the table nodes once done, ``None`` to fetch more."""
        hits, settled = scored
        tables = max_pool(hits)
        exhausted = len(fetched) < fetch or fetch >= n_units
        if exhausted or (settled and ranking_is_final(tables, self._similarity_top_k)):
            return self._to_nodes(tables[: self._similarity_top_k])
        return None

    def _hit(self, node_with_score: NodeWithScore) -> UnitHit:
        node = node_with_score.node
        unit = self._index.unit(node.node_id)
        metadata = unit.metadata if unit is not None else node.metadata
        return UnitHit(node.node_id, list(metadata.get("table_ids", [])), float(node_with_score.score or 0.0))

    def _to_nodes(self, tables: list[TableHit]) -> list[NodeWithScore]:
        hints = compute_join_hints(self._index.join_graph, [hit.table_id for hit in tables])
        return [
            NodeWithScore(node=self._table_node(hit, hints_for_table(hints, hit.table_id)), score=hit.score)
            for hit in tables
        ]

    def _table_node(self, hit: TableHit, hints: list[JoinHint]) -> TextNode:
        unit = self._index.unit(hit.unit_id)
        unit_meta = unit.metadata if unit is not None else {}
        metadata = {
            "table_id": hit.table_id,
            "matched_unit_id": hit.unit_id,
            "matched_kind": unit_meta.get("kind"),
            "matched_table_ids": list(unit_meta.get("table_ids", [])),
            "matched_question": unit_meta.get("question"),
            "join_hints": [h.to_dict() for h in hints],
        }
        text = self._index.table_text(hit.table_id)
        # in the text, a hint follows the later-ranked of its two tables, so a context that
        # concatenates the nodes (query/chat engines) reads each join once
        own = [h for h in hints if h.tables[-1] == hit.table_id]
        if self._include_join_hints_in_text and own:
            text = f"{text}\n{format_join_hints(own)}"
        node = TextNode(id_=str(uuid.uuid5(_TABLE_NAMESPACE, hit.table_id)), text=text, metadata=metadata)
        hidden = [k for k in metadata if k != "table_id"]
        node.excluded_llm_metadata_keys = hidden
        node.excluded_embed_metadata_keys = list(metadata)
        return node


def _positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _with_embedding(query_bundle: QueryBundle, embedding: list[float]) -> QueryBundle:
    """The same question with its (normalised) query embedding attached."""
    return QueryBundle(
        query_str=query_bundle.query_str,
        custom_embedding_strs=query_bundle.custom_embedding_strs,
        embedding=embedding,
    )
