"""Join hints: how the tables of one retrieval result join each other, read off the join graph.

For the returned tables, hints give the column pairs that join them, each join
once: directly (an edge of the join graph), or through one intermediate table
(two edges; named in ``via``) for a pair no other hint connects, and
whether each join is declared (SQL foreign key), explicit (schema-level) or
implicit (values/semantics only). Pure functions over a networkx graph built by
:func:`llama_index_pearl.joins.build_join_graph`; no retrieval state.

Pipeline step: retrieval (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import networkx as nx

__all__ = ["JoinHint", "JoinHop", "compute_join_hints", "format_join_hints", "hints_for_table"]

MAX_PAIRS_PER_HOP = 2  # a composite key, or a second foreign key between the same tables


@dataclass(frozen=True)
class JoinHop:
    """One join between two tables: ``left.columns[i] = right.columns[i]`` for each pair.

    Args:
        left_table: Table on the left of every pair.
        right_table: Table on the right of every pair.
        column_pairs: ``(left_column, right_column)`` pairs, strongest first.
        kind: ``"explicit"`` (schema-level) or ``"implicit"`` (values/semantics only).
        declared: Backed by a declared foreign key.
    """

    left_table: str
    right_table: str
    column_pairs: tuple[tuple[str, str], ...]
    kind: str
    declared: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "left_table": self.left_table,
            "right_table": self.right_table,
            "column_pairs": [list(p) for p in self.column_pairs],
            "kind": self.kind,
            "declared": self.declared,
        }

    def text(self) -> str:
        """``concert.stadium_id = stadium.stadium_id (explicit)``."""
        label = f"{self.kind}, declared" if self.declared else self.kind
        condition = " AND ".join(f"{self.left_table}.{lc} = {self.right_table}.{rc}" for lc, rc in self.column_pairs)
        return f"{condition} ({label})"


@dataclass(frozen=True)
class JoinHint:
    """How two retrieved tables join: one hop, or two hops through ``via``.

    Args:
        tables: The two retrieved tables, in result order.
        hops: The joins between the two tables: one hop, written foreign key side
            first when known, or two hops chained ``tables[0]`` -> ``via`` -> ``tables[1]``.
        via: The intermediate table of a two-hop hint, else ``None``.
    """

    tables: tuple[str, str]
    hops: tuple[JoinHop, ...]
    via: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"tables": list(self.tables), "via": self.via, "hops": [h.to_dict() for h in self.hops]}

    def text(self) -> str:
        """``JOIN a.x = m.x (explicit) JOIN m.y = b.y (implicit) [via m]``."""
        line = " ".join(f"JOIN {hop.text()}" for hop in self.hops)
        return f"{line} [via {self.via}]" if self.via else line


def _hop(graph: nx.Graph, left: str, right: str) -> JoinHop:
    data = graph.edges[left, right]
    kind = str(data.get("kind", "implicit"))
    pairs = [p for p in data.get("column_pairs", []) if len(p) == 4]
    # Prefer the pairs of the edge's own kind: an explicit edge may also carry weaker value-only pairs.
    by_kind = {
        (e["left_table"], e["left_column"], e["right_table"], e["right_column"]): e for e in data.get("edges", [])
    }
    same_kind = [
        p for p in pairs if by_kind.get(tuple(p), {}).get("explicit", kind == "explicit") == (kind == "explicit")
    ]
    oriented = []
    for lt, lc, rt, rc in (same_kind or pairs)[:MAX_PAIRS_PER_HOP]:
        oriented.append((lc, rc) if (lt, rt) == (left, right) else (rc, lc))
    return JoinHop(left, right, tuple(oriented), kind, bool(data.get("declared", False)))


def _via(graph: nx.Graph, a: str, b: str) -> str | None:
    """The best intermediate table: strongest weaker hop, then name (deterministic)."""
    best: tuple[float, str] | None = None
    for middle in sorted(set(graph.neighbors(a)) & set(graph.neighbors(b))):
        strength = min(float(graph.edges[a, middle].get("score", 0.0)), float(graph.edges[middle, b].get("score", 0.0)))
        if best is None or strength > best[0]:
            best = (strength, middle)
    return best[1] if best else None


def _referencing_first(graph: nx.Graph, a: str, b: str) -> tuple[str, str]:
    """A direct join reads best foreign key first (``concert.stadium_id = stadium.stadium_id``)."""
    pairs = graph.edges[a, b].get("column_pairs") or [[a, "", b, ""]]
    return (a, b) if pairs[0][0] == a else (b, a)


def compute_join_hints(graph: nx.Graph, table_ids: Sequence[str]) -> list[JoinHint]:
    """The joins that connect ``table_ids``, each listed once.

    Every direct join between two of the tables is a hint. A two-hop hint through
    an intermediate table is added only for a pair the hints so far leave
    unconnected: a join through a retrieved middle table is already spelled out
    by that table's own hints, and repeating it would double every key.

    Args:
        graph: A join graph (tables as nodes; edges with ``column_pairs``, ``kind``, ``declared``).
        table_ids: Retrieved tables, in result order.

    Returns:
        Direct hints in result order of the pair, then two-hop hints in result order.
    """
    present = [t for t in dict.fromkeys(table_ids) if t in graph]
    connected = nx.utils.UnionFind(present)
    hints = []
    for a, b in combinations(present, 2):
        if graph.has_edge(a, b):
            hints.append(JoinHint((a, b), (_hop(graph, *_referencing_first(graph, a, b)),)))
            connected.union(a, b)
    for a, b in combinations(present, 2):
        if connected[a] != connected[b] and (middle := _via(graph, a, b)) is not None:
            hints.append(JoinHint((a, b), (_hop(graph, a, middle), _hop(graph, middle, b)), via=middle))
            connected.union(a, b)
    return hints


def hints_for_table(hints: Sequence[JoinHint], table_id: str) -> list[JoinHint]:
    """The hints that involve ``table_id``.

    Args:
        hints: From :func:`compute_join_hints`.
        table_id: A retrieved table.
    """
    return [h for h in hints if table_id in h.tables]


def format_join_hints(hints: Sequence[JoinHint]) -> str:
    """One ``JOIN ...`` line per hint, for an LLM prompt.

    Args:
        hints: From :func:`compute_join_hints`.
    """
    return "\n".join(h.text() for h in hints)
