"""Incremental join discovery (paper appendix C.3): add or remove tables without rediscovering everything.

Paths are built from pairwise edges, so updates stay local to edges:

* adding tables scores candidate edges only for column pairs that involve a new
  table; the existing edges are read back from the join graph unchanged, and
  only candidate paths through a new table compete for the budget left in each
  pool (the existing selected paths count as already covering their tables);
* removing a table drops its node, its incident edges and every selected path
  through it; nothing else changes.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Collection, Sequence

import networkx as nx
from llama_index.core.base.embeddings.base import BaseEmbedding

from llama_index_pearl.joins.discovery import TAU_2H, TAU_3H, JoinDiscovery, _candidate_edges, build_paths
from llama_index_pearl.joins.graph import build_join_graph, edges_from_graph, paths_from_graph
from llama_index_pearl.joins.paths import JoinKind, JoinPath
from llama_index_pearl.joins.profiles import embed_profiles, profile_tables
from llama_index_pearl.joins.selection import lazy_greedy
from llama_index_pearl.models import resolve_embed_model
from llama_index_pearl.table import Table

__all__ = ["drop_table", "extend_join_paths"]


def extend_join_paths(
    tables: Sequence[Table],
    graph: nx.Graph,
    new_ids: Collection[str],
    embed_model: BaseEmbedding | None = None,
    *,
    budget: int | None = None,
    lambda_div: float = 0.1,
    tau_2h: float = TAU_2H,
    tau_3h: float = TAU_3H,
    use_declared: bool = True,
    cross_source_joins: str = "evidence",
    show_progress: bool = False,
) -> JoinDiscovery:
    """Discover join paths that involve newly added tables, keeping the existing ones.

    Args:
        tables: The whole corpus after the insert (existing and new tables).
        graph: The existing join graph (from :func:`build_join_graph`), over the existing tables.
        new_ids: Ids of the added tables.
        embed_model: Encoder for column names and values; ``None`` resolves the default.
        budget: Paths per pool after the insert (K); ``None``: every candidate path.
            New paths fill what the existing paths of the pool leave.
        lambda_div: Weight of newly covered tables in the selection gain.
        tau_2h: Minimum f of a 2-hop path.
        tau_3h: Minimum f of each hop of a 3-hop path.
        use_declared: Add ``Table.foreign_keys`` as explicit edges.
        cross_source_joins: As in :func:`~llama_index_pearl.joins.discovery.discover_join_paths`.
        show_progress: Show embedding progress bars.

    Returns:
        A :class:`JoinDiscovery` whose ``paths`` are the *newly* selected paths,
        ``edges`` the new candidate edges, and ``graph`` the merged graph (all
        edges, existing and new selected paths).

    Raises:
        ValueError: A new id is not among ``tables``, or is already a node of ``graph``.
    """
    ids = {t.id for t in tables}
    new = set(new_ids)
    if missing := sorted(new - ids):
        raise ValueError(f"New table ids not in the corpus: {', '.join(missing)}")
    if present := sorted(t for t in new if t in graph):
        raise ValueError(f"Tables already in the join graph: {', '.join(present)}")
    seconds: dict[str, float] = {}
    gc_was_enabled = gc.isenabled()
    gc.disable()  # same reason as discover_join_paths: profiling allocates many long-lived objects
    try:
        t0 = time.perf_counter()
        profiles = profile_tables(tables)
        if len(tables) > 1:
            embed_profiles([p for p in profiles if p.joinable], resolve_embed_model(embed_model), show_progress)
        seconds["profile"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        new_edges, tau_sim = _candidate_edges(tables, profiles, use_declared, cross_source_joins, touching=new)
        seconds["candidates"] = time.perf_counter() - t0
    finally:
        if gc_was_enabled:
            gc.enable()

    t0 = time.perf_counter()
    old_edges = edges_from_graph(graph)
    edges = sorted(
        old_edges + new_edges, key=lambda e: (-e.score, e.left_table, e.left_column, e.right_table, e.right_column)
    )
    old_paths = paths_from_graph(graph)
    old_ids = {p.path_id for p in old_paths}
    pool = [p for p in build_paths(edges, tau_2h, tau_3h) if new & set(p.tables) and p.path_id not in old_ids]
    seconds["paths"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    selected: list[JoinPath] = []
    counts: dict[str, int] = {}
    for kind in (JoinKind.EXPLICIT, JoinKind.IMPLICIT):
        existing = [p for p in old_paths if p.kind is kind]
        candidates = [p for p in pool if p.kind is kind]
        counts[kind.value] = len(candidates)
        covered = {t for p in existing for t in p.tables}
        left = None if budget is None else max(0, budget - len(existing))
        selected += lazy_greedy(candidates, left, lambda_div, covered=covered)
    kept = [e for e in new_edges if e.score >= tau_2h or e.declared]
    merged = build_join_graph([t.id for t in tables], old_edges + kept, old_paths + selected)
    seconds["select"] = time.perf_counter() - t0
    return JoinDiscovery(
        paths=selected,
        edges=new_edges,
        graph=merged,
        seconds={k: round(v, 4) for k, v in seconds.items()},
        candidate_paths=counts,
        name_threshold=tau_sim,
    )


def drop_table(graph: nx.Graph, table_id: str) -> tuple[nx.Graph, list[JoinPath]]:
    """Remove a table, its incident edges and the selected paths through it.

    Args:
        graph: A join graph.
        table_id: The table to remove.

    Returns:
        The new graph (the input is left untouched) and the removed paths.

    Raises:
        ValueError: ``table_id`` is not a node of the graph.
    """
    if table_id not in graph:
        raise ValueError(f"Table {table_id!r} is not in the join graph")
    out = graph.copy()
    out.remove_node(table_id)
    paths = paths_from_graph(graph)
    removed = [p for p in paths if table_id in p.tables]
    out.graph["paths"] = [p.to_dict() for p in paths if table_id not in p.tables]
    # a table pair stays "selected" only while some remaining path still uses it
    used = {frozenset(pair) for p in paths if table_id not in p.tables for pair in zip(p.tables, p.tables[1:])}
    for u, v, data in out.edges(data=True):
        data["selected"] = frozenset((u, v)) in used
    return out, removed
