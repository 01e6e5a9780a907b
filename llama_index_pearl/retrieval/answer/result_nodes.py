"""The ``NodeWithScore`` a retriever returns per table: its text, the matched unit and the join hints.

What does not depend on the question is prepared once: each table's text when the table enters the index
(``PearlTableIndex.table_text``, read from the catalog), its node id when first returned, the join hints
once per distinct result set, each hint's dict once per hint. A node's metadata is a plain dict whose keys are
declared once, by :class:`ResultMetadata`: every reader in the package reads it through :func:`result_metadata`.

Pipeline step: answer (docs/architecture.md).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypedDict, cast

import networkx as nx
from llama_index.core.schema import NodeWithScore, TextNode

from llama_index_pearl.corpus.catalog import UnitInfo
from llama_index_pearl.retrieval.answer.join_hints import (
    JoinHint,
    compute_join_hints,
    format_join_hints,
    hints_for_table,
)
from llama_index_pearl.retrieval.answer.table_sets import TableSet
from llama_index_pearl.retrieval.search.pooling import PooledTable

__all__ = [
    "HINT_CACHE_SIZE",
    "HintMetadata",
    "JoinMetadata",
    "ResultMetadata",
    "ResultNodes",
    "UnitInfo",
    "result_metadata",
]

_TABLE_NAMESPACE = uuid.UUID("0b7f6e1c-2a8d-4f5e-a1c3-9d4e8b7a6c52")
HINT_CACHE_SIZE = 4096  # result sets
_DIGITS = 4  # of the confidences a node's metadata holds


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, _DIGITS)


class JoinMetadata(TypedDict):
    """One join of a join hint, as :meth:`~llama_index_pearl.joins.graph.Join.to_dict` writes it."""

    left_table: str  # the table the join is read from
    right_table: str  # the table it reaches
    column_pairs: list[list[str]]  # [left column, right column] pairs, ANDed (a composite key)
    kind: str  # "explicit" (a key relation) or "implicit" (values or meaning only)
    declared: bool  # a SQL foreign key backs it


class HintMetadata(TypedDict):
    """One join hint of a result node's ``join_hints``, as :meth:`JoinHint.to_dict` writes it."""

    tables: list[str]  # the two retrieved tables it joins, the earlier-ranked first
    via: str | None  # the one table the joins go through, else None (a direct join)
    joins: list[JoinMetadata]  # the joins, one (direct) or two (through ``via``), in order
    alternatives: list[JoinMetadata]  # other direct joins between the two tables, never ANDed with ``joins``


class ResultMetadata(TypedDict):
    """A result node's metadata: every key :class:`ResultNodes` writes, each with its meaning (the one list).

    A plain dict at run time (``node.metadata``, serialised by LlamaIndex as it is); :func:`result_metadata`
    reads a node's through this type. Every key is present on every node; ``None`` or ``[]`` where it does not
    apply.
    """

    table_id: str  # the table the node stands for
    source: str | None  # the table's provenance (a database, a sub-folder), else None
    matched_unit_id: str  # the unit whose score is the table's score
    matched_kind: str | None  # that unit's kind (``UnitKind``)
    matched_table_ids: list[str]  # the tables that unit stands for
    matched_question: str | None  # its generated question, else None
    cosine: float  # that unit's cosine with the question (the score without lexical evidence)
    in_set: bool  # the table is in the set that answers the question
    set_tier: str | None  # its tier (``SetTier``: needed, may_be_needed) in the set that holds it, else None
    set_reason: str | None  # why it is there (``SetReason``: matched, bridge, unjoined, lookup, role, date), else None
    set_confidence: float | None  # how surely the question needs it (routed: and means its source); None: no set
    set_source: str | None  # the database whose set holds it (the routed one or a close rival), else None
    set_size: int  # how many tables the set holds
    routed_source: str | None  # the source the question was routed to, else None (not routed)
    route_confidence: float | None  # how surely (its probability), else None
    route_rivals: list[str | None]  # other sources at least ``RIVAL`` probable, answered too
    route_rival_confidences: list[float]  # how probable each rival is
    route_twins: list[str | None]  # sources holding a copy of the routed source's schema
    join_hints: list[HintMetadata]  # the joins between this table and the other returned tables


def result_metadata(hit: NodeWithScore) -> ResultMetadata:
    """A result node's metadata as the typed :class:`ResultMetadata` (every node a retriever returns holds it).

    Args:
        hit: A node of a ``PearlRetriever``'s result.
    """
    return cast(ResultMetadata, hit.node.metadata)


class ResultNodes:
    """Result nodes of one revision of an index.

    Args:
        join_graph: The index's join graph.
        table_text: A table's text for an LLM (``PearlTableIndex.table_text``).
        sources: Table -> its source (provenance), the ``source`` of its nodes.
    """

    def __init__(
        self, join_graph: nx.Graph, table_text: Callable[[str], str], sources: Mapping[str, str | None] | None = None
    ) -> None:
        self._graph = join_graph
        self._table_text = table_text
        self._sources = sources or {}
        self._node_ids: dict[str, str] = {}
        self._hints: dict[tuple[str, ...], list[JoinHint]] = {}
        self._hint_dicts: dict[int, tuple[JoinHint, dict[str, Any]]] = {}
        self._lock = threading.Lock()

    @property
    def graph(self) -> nx.Graph:
        """The join graph the hints are read from."""
        return self._graph

    def within(self, graph: nx.Graph) -> ResultNodes:
        """The result nodes of a scope: the same texts and node ids, join hints read from ``graph`` (the join
        graph among the scope's tables).

        Args:
            graph: The join graph the hints are read from.
        """
        return ResultNodes(graph, self._table_text, self._sources)

    def text(self, table_id: str) -> str:
        """The table's text (without join hints)."""
        return self._table_text(table_id)

    def _node_id(self, table_id: str) -> str:
        node_id = self._node_ids.get(table_id)
        if node_id is None:
            node_id = self._node_ids[table_id] = str(uuid.uuid5(_TABLE_NAMESPACE, table_id))
        return node_id

    def nodes(
        self,
        ranked: Sequence[PooledTable],
        units: Mapping[str, UnitInfo],
        include_join_hints_in_text: bool,
        table_set: TableSet | None = None,
    ) -> list[NodeWithScore]:
        """One ``NodeWithScore`` per retrieved table, the join hints of this result set in each node's metadata.

        Args:
            ranked: The retrieved tables, the set's first.
            units: What each matched unit is.
            include_join_hints_in_text: Append each hint to the text of the later-ranked of its two tables.
            table_set: The set (``in_set``, ``set_tier``, ``set_reason``, ``set_confidence`` and ``set_source``
                of each node: a close rival database's needed tables say their own tier and database);
                ``None``: no set.
        """
        hints = self._join_hints(tuple(table.table_id for table in ranked))
        chosen = table_set if table_set is not None else TableSet((), {})
        with_hints = include_join_hints_in_text
        return [
            NodeWithScore(
                node=self._node(table, units, hints_for_table(hints, table.table_id), with_hints, chosen),
                score=table.score,
            )
            for table in ranked
        ]

    def _join_hints(self, table_ids: tuple[str, ...]) -> list[JoinHint]:
        """Hints of a result set, computed once per distinct set of returned tables (in order)."""
        with self._lock:
            hints = self._hints.get(table_ids)
        if hints is None:
            hints = compute_join_hints(self._graph, table_ids)
            with self._lock:
                if len(self._hints) >= HINT_CACHE_SIZE:
                    self._hints.clear()
                    self._hint_dicts.clear()
                self._hints[table_ids] = hints
        return hints

    def _hint_dict(self, hint: JoinHint) -> HintMetadata:
        """``hint.to_dict()``, built once per hint and copied per result (callers may edit their metadata)."""
        with self._lock:
            cached = self._hint_dicts.get(id(hint))
            if cached is None or cached[0] is not hint:
                cached = self._hint_dicts[id(hint)] = (hint, hint.to_dict())
        data = cached[1]
        joins, alternatives = (
            [{**join, "column_pairs": [list(pair) for pair in join["column_pairs"]]} for join in data[part]]
            for part in ("joins", "alternatives")
        )
        hint_dict = {"tables": list(data["tables"]), "via": data["via"], "joins": joins, "alternatives": alternatives}
        return cast(HintMetadata, hint_dict)

    def _node(
        self,
        hit: PooledTable,
        units: Mapping[str, UnitInfo],
        hints: list[JoinHint],
        include_join_hints_in_text: bool,
        table_set: TableSet,
    ) -> TextNode:
        unit = units.get(hit.unit_id, UnitInfo(None, [], None))
        reason = table_set.reasons.get(hit.table_id)
        holder = table_set.holding(hit.table_id) or table_set
        route = table_set.route
        metadata: ResultMetadata = {
            "table_id": hit.table_id,
            "source": self._sources.get(hit.table_id),
            "matched_unit_id": hit.unit_id,
            "matched_kind": unit.kind,
            "matched_table_ids": list(unit.table_ids),
            "matched_question": unit.question,
            "cosine": hit.cosine,
            "in_set": reason is not None,
            "set_tier": holder.tiers[hit.table_id].value if hit.table_id in holder.tiers else None,
            "set_reason": holder.reasons[hit.table_id].value if hit.table_id in holder.reasons else None,
            "set_confidence": _rounded(table_set.confidence_of(hit.table_id)),
            "set_source": holder.route.source if holder.route is not None and hit.table_id in holder else None,
            "set_size": table_set.size,
            # None and []: the question was not routed
            "routed_source": None if route is None else route.source,
            "route_confidence": None if route is None else round(route.confidence, _DIGITS),
            "route_rivals": [] if route is None else list(route.rivals),
            "route_rival_confidences": [] if route is None else [round(p, _DIGITS) for p in route.rival_confidences],
            "route_twins": [] if route is None else list(route.twins),
            "join_hints": [self._hint_dict(h) for h in hints],
        }
        node_id, text = self._node_id(hit.table_id), self._table_text(hit.table_id)
        # in the text, a hint follows the later-ranked of its two tables, so a context that
        # concatenates the nodes (query/chat engines) reads each join once
        own = [h for h in hints if h.tables[-1] == hit.table_id]
        if include_join_hints_in_text and own:
            text = f"{text}\n{format_join_hints(own)}"
        # excluded keys given to the constructor: assigned afterwards, each is validated again (pydantic)
        return TextNode(
            id_=node_id,
            text=text,
            metadata=dict(metadata),
            excluded_llm_metadata_keys=[key for key in metadata if key != "table_id"],
            excluded_embed_metadata_keys=list(metadata),
        )
