"""What a query needs, prepared once per index state: unit/table arrays, direct FAISS search, result nodes.

A :class:`QueryPlan` is built on the first retrieval after a build, load or
incremental update and reused until the index changes. It numbers units in the
store's order and tables in the index's order, keeps unit <-> table membership
as arrays (:class:`~llama_index_pearl.retrieval.pooling.Memberships`), and, for the default
store (:class:`~llama_index_pearl.corpus.stores.PearlFaissStore`), searches the FAISS
index directly: one top-n search, ties settled from the stored vectors of the
tied tables (:func:`~llama_index_pearl.retrieval.pooling.pool_top_units`), and in the rare
case the top-n cannot decide (fewer than k tables, or a tie at its last score)
one pass scoring every stored vector, its best units pooled
(:func:`~llama_index_pearl.retrieval.pooling.pool_best_units`).
A Qdrant store pools on the server (:mod:`llama_index_pearl.retrieval.grouped_search`); other
stores go through LlamaIndex's retriever (see ``PearlRetriever``).

Result nodes reuse what does not depend on the query: each table's text and
node id are computed when the plan is built, join hints once per distinct result set.

Pipeline step: retrieval (docs/architecture.md).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from contextlib import AbstractAsyncContextManager, AbstractContextManager, contextmanager, nullcontext
from typing import Any, Protocol

import numpy as np
from llama_index.core.schema import NodeWithScore, TextNode

from llama_index_pearl.corpus.stores import PearlFaissStore
from llama_index_pearl.corpus.units import lexical_text
from llama_index_pearl.retrieval.grouped_search import grouped_store, grouped_top_k
from llama_index_pearl.retrieval.join_hints import JoinHint, compute_join_hints, format_join_hints, hints_for_table
from llama_index_pearl.retrieval.lexical import LexicalScorer
from llama_index_pearl.retrieval.pooling import Memberships, Pooled, next_fetch_size, pool_best_units, pool_top_units
from llama_index_pearl.storage.state import IndexState

__all__ = ["QueryPlan", "RetrievableIndex", "one_faiss_thread", "query_plan"]

_TABLE_NAMESPACE = uuid.UUID("0b7f6e1c-2a8d-4f5e-a1c3-9d4e8b7a6c52")
HINT_CACHE_SIZE = 4096  # result sets
Hit = tuple[str, float, str]  # table id, pooled score, matched unit id


class RetrievableIndex(IndexState, Protocol):
    """What retrieval reads of an index (``PearlTableIndex`` is one); the retriever never imports the index."""

    @property
    def revision(self) -> int: ...

    def unit(self, unit_id: str) -> TextNode | None: ...

    def table_text(self, table_id: str) -> str: ...

    def embed_query(self, query: str) -> list[float]: ...

    async def aembed_query(self, query: str) -> list[float]: ...

    def read_lock(self) -> AbstractContextManager[None]: ...

    def aread_lock(self) -> AbstractAsyncContextManager[None]: ...


def query_plan(index: RetrievableIndex) -> QueryPlan:
    """The index's plan, rebuilt when the index or its store changed since the last one."""
    plan = index.__dict__.get("_query_plan")
    if plan is None or plan.fingerprint != _fingerprint(index):
        plan = QueryPlan(index, previous=plan)
        index.__dict__["_query_plan"] = plan
    return plan


def _fingerprint(index: RetrievableIndex) -> tuple[Any, ...]:
    store = index.vector_index.vector_store
    faiss_state = (store.client.ntotal, store._next_id) if isinstance(store, PearlFaissStore) else None
    return (index.revision, id(index.join_graph), len(index.tables), faiss_state)


@contextmanager
def one_faiss_thread() -> Iterator[None]:
    """One query needs no thread team; waking one on a busy machine costs more than the search."""
    import faiss

    previous = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(previous)


class QueryPlan:
    """Arrays and caches for retrieving from one state of a :class:`RetrievableIndex`.

    Args:
        index: The index (read, never changed).
        previous: The plan of the index's previous state: texts of tables left unchanged are reused.
    """

    def __init__(self, index: RetrievableIndex, previous: QueryPlan | None = None) -> None:
        self.fingerprint = _fingerprint(index)
        self._index = index
        store = index.vector_index.vector_store
        self.direct = isinstance(store, PearlFaissStore)
        self.grouped = None if self.direct else grouped_store(store)
        if self.direct:
            by_faiss_id = sorted(store._node_id_to_faiss_id_map.items(), key=lambda item: item[1])
            self.unit_ids = [node_id for node_id, _ in by_faiss_id]
            self._prepare_faiss(store, np.asarray([fid for _, fid in by_faiss_id], dtype=np.int64))
        else:
            self.unit_ids = [u.node_id for u in index.units]
        self.table_ids = list(index.tables)
        number = {table_id: i for i, table_id in enumerate(self.table_ids)}
        self._unit_meta = {}
        lists = []
        for unit_id in self.unit_ids:
            unit = index.unit(unit_id)
            metadata = unit.metadata if unit is not None else {}
            table_ids = [t for t in metadata.get("table_ids", []) if t in number]
            self._unit_meta[unit_id] = (
                metadata.get("kind"),
                list(metadata.get("table_ids", [])),
                metadata.get("question"),
            )
            lists.append([number[t] for t in table_ids])
        self.memberships = Memberships.from_lists(lists, len(self.table_ids))
        self._unit_number = {unit_id: i for i, unit_id in enumerate(self.unit_ids)}
        # every table's text up front, kept across updates while the table is unchanged. Rendered on first return
        # instead, the 25,000-table synthetic index paid it in its queries: (c) beyond the search 1.5-1.7 -> 3.6 ms p50,
        # for thousands of queries, to save its first query 6.8 s
        reusable = previous._texts if previous is not None else {}
        self._texts: dict[str, tuple[Any, str, str]] = {}
        for table_id, table in index.tables.items():
            old = reusable.get(table_id)
            if old is not None and old[0] is table:
                self._texts[table_id] = old
            else:
                node_id = str(uuid.uuid5(_TABLE_NAMESPACE, table_id))
                self._texts[table_id] = (table, node_id, index.table_text(table_id))
        self._hints: dict[tuple[str, ...], list[JoinHint]] = {}
        self._lexical: LexicalScorer | None = None
        self._hint_dicts: dict[int, tuple[JoinHint, dict[str, Any]]] = {}

    def _prepare_faiss(self, store: PearlFaissStore, faiss_ids: np.ndarray) -> None:
        import faiss

        self._faiss = store.client
        self._flat = faiss.downcast_index(store.client.index)
        self._fid_to_unit = np.full(int(faiss_ids.max(initial=-1)) + 1, -1, dtype=np.int64)
        self._fid_to_unit[faiss_ids] = np.arange(len(faiss_ids))
        rows_to_fid = faiss.vector_to_array(store.client.id_map).astype(np.int64)
        self._unit_row = np.empty(len(faiss_ids), dtype=np.int64)
        self._unit_row[self._fid_to_unit[rows_to_fid]] = np.arange(len(rows_to_fid))

    # --------------------------------------------------------------- search
    def _vectors(self) -> np.ndarray:
        """The stored vectors, read in place (FAISS rows)."""
        import faiss

        n, d = self._flat.ntotal, self._flat.d
        return faiss.rev_swig_ptr(self._flat.get_xb(), n * d).reshape(n, d)

    def _unit_scores(self, query: np.ndarray, units: np.ndarray) -> np.ndarray:
        return self._vectors()[self._unit_row[units]] @ query

    def lexical_scorer(self) -> LexicalScorer:
        """BM25 over the units' lexical texts, in unit-number order; built on first use of this index state."""
        if self._lexical is None:
            if not self.unit_ids:
                raise ValueError("The index holds no units to score")
            units = [self._index.unit(unit_id) for unit_id in self.unit_ids]
            texts = [lexical_text(u) if u is not None else "" for u in units]
            self._lexical = LexicalScorer(self.unit_ids, texts)
        return self._lexical

    def lexical_boost(self, question: str, weight: float) -> np.ndarray | None:
        """``weight`` × each unit's normalised lexical score, by unit number; ``None`` when there is none to add.

        Args:
            question: The question.
            weight: The retriever's ``lexical_weight``.
        """
        if weight <= 0:
            return None
        raw = self.lexical_scorer().raw_scores(question)
        top = float(raw.max(initial=0.0))
        if top <= 0.0:
            return None
        return (weight * (raw.astype(np.float64) / top)).astype(np.float32)

    def search(self, query: Sequence[float], k: int, fetch: int, boost: np.ndarray | None = None) -> list[Hit]:
        """Exact top-``k`` tables for one query embedding (default FAISS store only).

        Args:
            query: The query embedding.
            k: Tables wanted.
            fetch: Units asked for in the top-n search.
            boost: Lexical score to add per unit (:meth:`lexical_boost`). A unit the
                top-n missed may then outrank it, so every stored vector is scored
                (the same work as FAISS's exact flat search) and the best fused units pooled.
        """
        return self.search_many(np.asarray(query, dtype=np.float32).reshape(1, -1), k, fetch, [boost])[0]

    def search_many(
        self, queries: np.ndarray, k: int, fetch: int, boosts: Sequence[np.ndarray | None] | None = None
    ) -> list[list[Hit]]:
        """:meth:`search` for a batch of query embeddings: one FAISS search for those without a boost."""
        vectors = np.ascontiguousarray(queries, dtype=np.float32)
        n = min(fetch, len(self.unit_ids))
        if n == 0:
            return [[] for _ in range(len(vectors))]
        boosts = list(boosts) if boosts is not None else [None] * len(vectors)
        results: list[list[Hit]] = [
            [] if b is None else self._pool_everything(v, k, n, b) for v, b in zip(vectors, boosts)
        ]
        dense = [i for i, b in enumerate(boosts) if b is None]
        if dense:
            with one_faiss_thread() if len(dense) == 1 else nullcontext():
                scores, faiss_ids = self._faiss.search(vectors[dense], n)
            for row, i in enumerate(dense):
                results[i] = self._pool(vectors[i], scores[row], faiss_ids[row], k)
        return results

    def _pool(self, query: np.ndarray, scores: np.ndarray, faiss_ids: np.ndarray, k: int) -> list[Hit]:
        kept = faiss_ids >= 0
        units = self._fid_to_unit[faiss_ids[kept]]
        scores = scores[kept]
        order = np.lexsort((units, -scores))  # equal scores in store order, as pooling defines
        pooled = pool_top_units(
            units[order],
            scores[order],
            self.memberships,
            k,
            exhausted=len(units) >= len(self.unit_ids),
            unit_scores=lambda wanted: self._unit_scores(query, wanted),
        )
        if pooled is None:
            return self._pool_everything(query, k, next_fetch_size(len(units), len(self.unit_ids)), None)
        return self.hits(pooled)

    def _pool_everything(self, query: np.ndarray, k: int, fetch: int, boost: np.ndarray | None) -> list[Hit]:
        """Exact pooling of every stored vector's score (plus the lexical boost, if any), best units first."""
        all_scores = (self._vectors() @ query)[self._unit_row]
        if boost is not None:
            all_scores = all_scores + boost
        return self.hits(pool_best_units(all_scores, self.memberships, k, fetch))

    def search_grouped(self, query: Sequence[float], k: int) -> list[Hit]:
        """Exact top-``k`` tables pooled by Qdrant's grouped search (module ``grouped_search``)."""
        assert self.grouped is not None
        return grouped_top_k(self.grouped, query, k, len(self.table_ids), self._store_order)

    def _store_order(self, table_id: str, unit_id: str) -> tuple[int, int]:
        """Where ``max_pool`` over units in store order would meet this table first (fully tied tables)."""
        tables = self._unit_meta.get(unit_id, (None, [], None))[1]
        position = tables.index(table_id) if table_id in tables else 0
        return self._unit_number.get(unit_id, len(self.unit_ids)), position

    def hits(self, pooled: Sequence[Pooled]) -> list[Hit]:
        return [(self.table_ids[p.table], p.score, self.unit_ids[p.unit]) for p in pooled]

    # ---------------------------------------------------------------- nodes
    def nodes(self, hits: Sequence[Hit], include_join_hints_in_text: bool) -> list[NodeWithScore]:
        """One ``NodeWithScore`` per table: its text, the matched unit and the join hints of this result set."""
        hints = self._join_hints(tuple(table_id for table_id, _, _ in hits))
        return [
            NodeWithScore(
                node=self._node(hit, hints_for_table(hints, hit[0]), include_join_hints_in_text), score=hit[1]
            )
            for hit in hits
        ]

    def _join_hints(self, table_ids: tuple[str, ...]) -> list[JoinHint]:
        """Hints of a result set, computed once per distinct set of returned tables (in order)."""
        hints = self._hints.get(table_ids)
        if hints is None:
            if len(self._hints) >= HINT_CACHE_SIZE:
                self._hints.clear()
                self._hint_dicts.clear()
            hints = self._hints[table_ids] = compute_join_hints(self._index.join_graph, table_ids)
        return hints

    def _hint_dict(self, hint: JoinHint) -> dict[str, Any]:
        """``hint.to_dict()``, built once per hint and copied per result (callers may edit their metadata)."""
        cached = self._hint_dicts.get(id(hint))
        if cached is None or cached[0] is not hint:
            cached = self._hint_dicts[id(hint)] = (hint, hint.to_dict())
        data = cached[1]
        hops, alternatives = (
            [{**join, "column_pairs": [list(pair) for pair in join["column_pairs"]]} for join in data[part]]
            for part in ("hops", "alternatives")
        )
        return {"tables": list(data["tables"]), "via": data["via"], "hops": hops, "alternatives": alternatives}

    def _node(self, hit: Hit, hints: list[JoinHint], include_join_hints_in_text: bool) -> TextNode:
        table_id, _, unit_id = hit
        kind, unit_tables, question = self._unit_meta.get(unit_id, (None, [], None))
        metadata = {
            "table_id": table_id,
            "matched_unit_id": unit_id,
            "matched_kind": kind,
            "matched_table_ids": list(unit_tables),
            "matched_question": question,
            "join_hints": [self._hint_dict(h) for h in hints],
        }
        _, node_id, text = self._texts[table_id]
        # in the text, a hint follows the later-ranked of its two tables, so a context that
        # concatenates the nodes (query/chat engines) reads each join once
        own = [h for h in hints if h.tables[-1] == table_id]
        if include_join_hints_in_text and own:
            text = f"{text}\n{format_join_hints(own)}"
        # excluded keys given to the constructor: assigned afterwards, each is validated again (pydantic)
        return TextNode(
            id_=node_id,
            text=text,
            metadata=metadata,
            excluded_llm_metadata_keys=[key for key in metadata if key != "table_id"],
            excluded_embed_metadata_keys=list(metadata),
        )
