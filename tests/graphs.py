"""Join graphs written by hand for tests: each edge as ``build_join_graph`` stores it."""

from __future__ import annotations

import networkx as nx

from llama_index_pearl.joins.edges import CandidateEdge


def add_join(graph: nx.Graph, left: str, lcol: str, right: str, rcol: str, **attrs) -> None:
    """Add (or extend) the edge ``left.lcol = right.rcol``; ``kind``, ``declared`` and ``score`` as given."""
    kind, declared = attrs.get("kind", "explicit"), bool(attrs.get("declared", False))
    edge = CandidateEdge(left, lcol, right, rcol, (), None, 0.0, 0.0, 0.0, 0.0, 0.0, kind == "explicit", declared)
    if graph.has_edge(left, right):
        graph.edges[left, right]["column_pairs"].append([left, lcol, right, rcol])
        graph.edges[left, right]["edges"].append(edge.to_dict())
        return
    graph.add_edge(
        left,
        right,
        column_pairs=[[left, lcol, right, rcol]],
        edges=[edge.to_dict()],
        kind=kind,
        declared=declared,
        score=attrs.get("score", 1.5),
    )
