"""Join hints: how the tables of one retrieval result join each other, read off the join graph.

For the returned tables, hints give the joins that connect them, each once:
directly (an edge of the join graph, with the other joins between the same two
tables as alternatives), or through one intermediate table (two edges; named in
``via``) for a pair no other hint connects, and whether each join is declared (SQL
foreign key), explicit (a key relation) or implicit (values/semantics only). A
composite key is one join of all its column pairs. Pure functions over a networkx
graph built by :func:`llama_index_pearl.joins.build_join_graph`; no retrieval state.

Pipeline step: answer (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import networkx as nx

from llama_index_pearl.joins.graph import Join, joins_between, strongest_middle

__all__ = ["Join", "JoinHint", "compute_join_hints", "format_join_hints", "hints_for_table", "hints_of_result"]


def _text(join: Join) -> str:
    """``concert.stadium_id = stadium.stadium_id (explicit)``."""
    label = f"{join.kind}, declared" if join.declared else join.kind
    return f"{join.condition()} ({label})"


@dataclass(frozen=True)
class JoinHint:
    """How two retrieved tables join: one join, or two joins through ``via``.

    Args:
        tables: The two retrieved tables, in result order.
        joins: The joins between the two tables: one join, written foreign key side first
            when known, or, for a hint through one table, two joins chained ``tables[0]`` ->
            ``via`` -> ``tables[1]``. A join of a composite key carries all its column pairs.
        via: The table a hint goes through (not among the retrieved ones), else ``None``.
        alternatives: Other joins between the same two tables (a second key, or a second
            reference: ``teamIDwinner`` and ``teamIDloser``); each is a join on its own, never
            ANDed with the first.
    """

    tables: tuple[str, str]
    joins: tuple[Join, ...]
    via: str | None = None
    alternatives: tuple[Join, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "tables": list(self.tables),
            "via": self.via,
            "joins": [j.to_dict() for j in self.joins],
            "alternatives": [a.to_dict() for a in self.alternatives],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JoinHint:
        """Inverse of :meth:`to_dict`: a hint as a result node's ``join_hints`` metadata holds it."""
        left, right = data["tables"]
        return cls(
            (str(left), str(right)),
            tuple(Join.from_dict(j) for j in data["joins"]),
            str(data["via"]) if data.get("via") else None,
            tuple(Join.from_dict(a) for a in data.get("alternatives", ())),
        )

    def text(self) -> str:
        """``JOIN a.x = m.x (explicit) JOIN m.y = b.y (implicit) [via m]``, alternatives after ``; or``."""
        line = " ".join(f"JOIN {_text(join)}" for join in self.joins)
        line = f"{line} [via {self.via}]" if self.via else line
        return "; or ".join([line, *(f"JOIN {_text(a)}" for a in self.alternatives)])


def _oriented(graph: nx.Graph, left: str, right: str) -> list[Join]:
    """The joins between two tables, each read from ``left`` to ``right``."""
    return [j if j.left_table == left else j.reversed() for j in joins_between(graph, left, right)]


def _via(graph: nx.Graph, a: str, b: str) -> str | None:
    """The best table to go through (:func:`~llama_index_pearl.joins.graph.strongest_middle`)."""
    best = strongest_middle(graph, a, b)
    return best[1] if best else None


def compute_join_hints(graph: nx.Graph, table_ids: Sequence[str]) -> list[JoinHint]:
    """The joins that connect ``table_ids``, each listed once.

    Every direct join between two of the tables is a hint. A hint through one
    other table (two joins) is added only for a pair the hints so far leave
    unconnected: a join through a retrieved middle table is already spelled out
    by that table's own hints, and repeating it would double every key.

    Args:
        graph: A join graph (tables as nodes; edges with ``column_pairs``, ``kind``, ``declared``).
        table_ids: Retrieved tables, in result order.

    Returns:
        Direct hints in result order of the pair, then hints through one table in result order.
    """
    present = [t for t in dict.fromkeys(table_ids) if t in graph]
    connected = nx.utils.UnionFind(present)
    hints = []
    for a, b in combinations(present, 2):
        joins = joins_between(graph, a, b)  # each read foreign key first: concert.stadium_id = stadium.stadium_id
        if joins:
            hints.append(JoinHint((a, b), (joins[0],), alternatives=tuple(joins[1:])))
            connected.union(a, b)
    for a, b in combinations(present, 2):
        if connected[a] != connected[b] and (middle := _via(graph, a, b)) is not None:
            joins = (_oriented(graph, a, middle)[0], _oriented(graph, middle, b)[0])
            hints.append(JoinHint((a, b), joins, via=middle))
            connected.union(a, b)
    return hints


def hints_of_result(metadata: Iterable[Mapping[str, Any]]) -> list[JoinHint]:
    """The join hints a result's nodes carry (their ``join_hints`` metadata), each once, direct ones first.

    Every node holds the hints that involve its table, so a hint stands in two nodes; read in result
    order, direct hints come in the order :func:`compute_join_hints` gave them, then those through a table.

    Args:
        metadata: The result nodes' metadata, in result order.
    """
    seen: dict[tuple[tuple[str, ...], str | None], JoinHint] = {}
    for data in metadata:
        for raw in data.get("join_hints", ()):
            hint = JoinHint.from_dict(raw)
            seen.setdefault((hint.tables, hint.via), hint)
    return sorted(seen.values(), key=lambda h: h.via is not None)


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
