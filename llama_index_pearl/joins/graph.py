"""The join graph: tables as nodes, one edge per joinable table pair, and its JSON/GraphML forms.

Its attributes are read here only: :func:`join_edge`/:func:`join_edges` (an edge as a :class:`JoinEdge`),
:func:`joins_between` (its :class:`Join`s), :func:`paths_from_graph`/:func:`stored_paths` (the selected
paths) and written by :func:`build_join_graph` and :func:`select_paths`.

Every attribute is JSON-native (str, float, bool, list of str/list), so
node-link JSON round-trips exactly. GraphML only takes scalars, so lists are
written as JSON strings there and decoded again by :func:`read_graphml`.

Pipeline step: joins (docs/architecture.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import networkx as nx

from llama_index_pearl.joins.edges import CandidateEdge, group_joins, strongest_first
from llama_index_pearl.joins.paths import JoinPath

__all__ = [
    "Join",
    "JoinEdge",
    "build_join_graph",
    "edges_from_graph",
    "graph_from_json",
    "graph_to_json",
    "join_edge",
    "join_edges",
    "joins_between",
    "key_references",
    "paths_from_graph",
    "read_graphml",
    "select_paths",
    "stored_paths",
    "strongest_middle",
    "write_graphml",
]

_LIST_ATTRS = ("column_pairs", "signals", "paths", "edges")


@dataclass(frozen=True)
class Join:
    """One join between two tables: ``left.columns[i] = right.columns[i]`` for every pair, ANDed.

    A composite key is one join of several pairs; two keys between the same tables are two
    joins (alternatives), never one.

    Args:
        left_table: Table on the left of every pair (the referencing side when known).
        right_table: Table on the right of every pair.
        column_pairs: ``(left_column, right_column)`` pairs.
        kind: ``"explicit"`` (a key relation) or ``"implicit"`` (values/semantics only).
        declared: Backed by a declared foreign key.
    """

    left_table: str
    right_table: str
    column_pairs: tuple[tuple[str, str], ...]
    kind: str
    declared: bool

    def reversed(self) -> Join:
        """The same join read from the other table."""
        pairs = tuple((r, lc) for lc, r in self.column_pairs)
        return Join(self.right_table, self.left_table, pairs, self.kind, self.declared)

    def condition(self, name: Callable[[str], str] = str) -> str:
        """``a.x = b.y AND a.z = b.w``; ``name`` maps a table id to the name SQL uses.

        >>> join = Join("flights", "weather", (("origin", "origin"), ("hour", "hour")), "explicit", False)
        >>> join.condition()
        'flights.origin = weather.origin AND flights.hour = weather.hour'
        >>> join.reversed().condition(str.upper)
        'WEATHER.origin = FLIGHTS.origin AND WEATHER.hour = FLIGHTS.hour'

        Args:
            name: Table id -> the name to write.
        """
        left, right = name(self.left_table), name(self.right_table)
        return " AND ".join(f"{left}.{lc} = {right}.{rc}" for lc, rc in self.column_pairs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "left_table": self.left_table,
            "right_table": self.right_table,
            "column_pairs": [list(p) for p in self.column_pairs],
            "kind": self.kind,
            "declared": self.declared,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Join:
        """Inverse of :meth:`to_dict` (a join hint's joins in a result node's metadata)."""
        pairs = tuple((str(a), str(b)) for a, b in data["column_pairs"])
        return cls(str(data["left_table"]), str(data["right_table"]), pairs, str(data["kind"]), bool(data["declared"]))


@dataclass(frozen=True)
class JoinEdge:
    """One edge of a join graph, typed: how strongly two tables join and whether a selected path uses it.

    Its joins are :func:`joins_between`'s; :func:`build_join_graph` documents the attributes read here.

    Args:
        left_table: One table (as the graph lists the edge).
        right_table: The other.
        kind: ``"explicit"`` if any of its column pairs is a key relation, else ``"implicit"``.
        declared: Some column pair is backed by a declared foreign key.
        selected: A selected join path uses it.
        score: The best column pair's score f.
    """

    left_table: str
    right_table: str
    kind: str
    declared: bool
    selected: bool
    score: float

    @property
    def explicit(self) -> bool:
        return self.kind == "explicit"


def join_edge(graph: nx.Graph, a: str, b: str) -> JoinEdge:
    """The edge between two joined tables of a join graph.

    Args:
        graph: A graph from :func:`build_join_graph`.
        a: One table.
        b: The other.

    Raises:
        KeyError: The tables are not joined.
    """
    return _join_edge(a, b, graph.edges[a, b])


def strongest_middle(graph: nx.Graph, a: str, b: str) -> tuple[float, str] | None:
    """The table two tables join best through, and how strongly: its weaker join's score, highest first
    (ties: the first by name, so every run picks the same); ``None`` when they share no neighbour.

    Args:
        graph: A graph from :func:`build_join_graph`.
        a: One table.
        b: The other.
    """
    best: tuple[float, str] | None = None
    for middle in sorted(set(graph.neighbors(a)) & set(graph.neighbors(b))):
        strength = min(join_edge(graph, a, middle).score, join_edge(graph, middle, b).score)
        if best is None or strength > best[0]:
            best = (strength, middle)
    return best


def join_edges(graph: nx.Graph) -> list[JoinEdge]:
    """Every edge of a join graph, in the graph's order.

    >>> graph = nx.Graph()
    >>> graph.add_edge("orders", "customers", kind="explicit", score=0.9)
    >>> join_edges(graph)
    [JoinEdge(left_table='orders', right_table='customers', kind='explicit', declared=False, selected=False, score=0.9)]

    Args:
        graph: A graph from :func:`build_join_graph`.
    """
    return [_join_edge(a, b, data) for a, b, data in graph.edges(data=True)]


def _join_edge(a: str, b: str, data: dict[str, Any]) -> JoinEdge:
    return JoinEdge(
        a,
        b,
        kind=str(data.get("kind", "implicit")),
        declared=bool(data.get("declared", False)),
        selected=bool(data.get("selected", False)),
        score=float(data.get("score", 0.0)),
    )


def stored_paths(graph: nx.Graph) -> Any:
    """The selected paths as stored (JSON, unparsed: what a load checks; :func:`paths_from_graph` parses them)."""
    return graph.graph.get("paths", [])


def select_paths(graph: nx.Graph, paths: Sequence[JoinPath]) -> None:
    """Store ``paths`` as the graph's selected paths; an edge is ``selected`` while one of them uses it.

    Args:
        graph: A graph from :func:`build_join_graph`, changed in place.
        paths: The selected paths.
    """
    used = {frozenset(pair) for p in paths for pair in zip(p.tables, p.tables[1:])}
    for u, v, data in graph.edges(data=True):
        data["selected"] = frozenset((u, v)) in used
    graph.graph["paths"] = [p.to_dict() for p in paths]


def joins_between(graph: nx.Graph, a: str, b: str) -> list[Join]:
    """The joins between two tables of a join graph, strongest first, each read from its referencing side.

    Only joins of the edge's own kind: an explicit edge may also carry weaker value-only
    pairs, which are no alternative to its key. Empty when the tables are not joined.

    Args:
        graph: A graph from :func:`build_join_graph`.
        a: One table.
        b: The other.
    """
    if not graph.has_edge(a, b):
        return []
    data = graph.edges[a, b]
    kind = str(data.get("kind", "implicit"))
    edges = [CandidateEdge.from_dict(e) for e in data["edges"]]
    same_kind = [e for e in edges if e.explicit == (kind == "explicit")] or edges
    joins = []
    for group in group_joins(strongest_first(same_kind)):
        left, right = group[0].left_table, group[0].right_table
        pairs = tuple(
            (e.left_column, e.right_column) if e.left_table == left else (e.right_column, e.left_column) for e in group
        )
        joins.append(Join(left, right, pairs, kind, any(e.declared for e in group)))
    return joins


def key_references(graph: nx.Graph, table: str) -> Iterator[Join]:
    """The strongest key join from ``table`` to each table it references, strongest edge first.

    ``table`` references another when their edge is explicit (a key relation) and one of its joins reads from
    ``table``'s side (:func:`joins_between`): a fact references its dimensions, a coded table its dictionary.

    Args:
        graph: A graph from :func:`build_join_graph`.
        table: A table of it.
    """
    neighbours = sorted(graph.neighbors(table), key=lambda n: (-join_edge(graph, table, n).score, n))
    for other in neighbours:
        if not join_edge(graph, table, other).explicit:
            continue
        referencing = [j for j in joins_between(graph, table, other) if j.left_table == table]
        if referencing:
            yield referencing[0]


def build_join_graph(table_ids: Iterable[str], edges: Sequence[CandidateEdge], paths: Sequence[JoinPath]) -> nx.Graph:
    """Aggregate column-pair edges per table pair into a table graph.

    Args:
        table_ids: All tables (isolated tables stay as nodes).
        edges: The column-pair edges that passed a pool threshold, strongest first.
        paths: Selected paths; their joins mark graph edges ``selected``.

    Returns:
        An undirected graph. Edge attributes: ``column_pairs`` (list of
        ``[left_table, left_column, right_table, right_column]``), ``signals``,
        ``score`` (best f), ``s_str``/``s_sem``/``s_ovlp``/``jaccard``/``containment``
        of the best pair, ``kind`` (explicit if any pair is), ``declared``, ``selected``,
        and ``edges`` (every column-pair edge as a dict, so incremental indexing can
        rebuild paths through existing tables without rescoring them).
        Graph attribute ``paths`` holds the selected paths as dicts.
    """
    graph = nx.Graph()
    graph.add_nodes_from(table_ids)
    for e in edges:
        u, v = e.left_table, e.right_table
        pair = [e.left_table, e.left_column, e.right_table, e.right_column]
        if graph.has_edge(u, v):
            data = graph.edges[u, v]
            data["column_pairs"].append(pair)
            data["edges"].append(e.to_dict())
            data["signals"] = sorted(set(data["signals"]) | set(e.signals))
            data["declared"] = data["declared"] or e.declared
            if e.explicit:
                data["kind"] = "explicit"
            continue
        graph.add_edge(
            u,
            v,
            column_pairs=[pair],
            signals=list(e.signals),
            score=float(e.score),
            s_str=float(e.s_str),
            s_sem=float(e.s_sem),
            s_ovlp=float(e.s_ovlp),
            jaccard=float(e.jaccard),
            containment=float(e.containment),
            kind="explicit" if e.explicit else "implicit",
            declared=bool(e.declared),
            selected=False,
            edges=[e.to_dict()],
        )
    select_paths(graph, paths)
    return graph


def edges_from_graph(graph: nx.Graph) -> list[CandidateEdge]:
    """The column-pair edges stored on a graph, strongest first (graphs without ``edges`` give none).

    Args:
        graph: A graph from :func:`build_join_graph`.
    """
    return strongest_first(
        CandidateEdge.from_dict(e) for _, _, data in graph.edges(data=True) for e in data.get("edges", [])
    )


def graph_to_json(graph: nx.Graph) -> dict[str, Any]:
    """Node-link JSON of a join graph.

    Args:
        graph: A graph from :func:`build_join_graph`.
    """
    return nx.node_link_data(graph, edges="links")


def graph_from_json(data: dict[str, Any]) -> nx.Graph:
    """Inverse of :func:`graph_to_json`.

    Args:
        data: Node-link JSON.
    """
    return nx.node_link_graph(data, edges="links")


def paths_from_graph(graph: nx.Graph) -> list[JoinPath]:
    """The selected paths stored on a graph."""
    return [JoinPath.from_dict(p) for p in stored_paths(graph)]


def write_graphml(graph: nx.Graph, path: str | Path) -> None:
    """Write GraphML, encoding list attributes as JSON strings (GraphML holds scalars only).

    Args:
        graph: A graph from :func:`build_join_graph`.
        path: Output file.
    """
    out = nx.Graph()
    out.graph.update({k: json.dumps(v) if k in _LIST_ATTRS else v for k, v in graph.graph.items()})
    out.add_nodes_from(graph.nodes(data=True))
    for u, v, data in graph.edges(data=True):
        out.add_edge(u, v, **{k: json.dumps(val) if k in _LIST_ATTRS else val for k, val in data.items()})
    nx.write_graphml(out, str(path))


def read_graphml(path: str | Path) -> nx.Graph:
    """Inverse of :func:`write_graphml`.

    Args:
        path: A file written by :func:`write_graphml`.
    """
    graph = nx.read_graphml(str(path))
    for k in _LIST_ATTRS:
        if k in graph.graph:
            graph.graph[k] = json.loads(graph.graph[k])
    for _, _, data in graph.edges(data=True):
        for k in _LIST_ATTRS:
            if k in data:
                data[k] = json.loads(data[k])
    return nx.Graph(graph)
