"""Incremental join discovery (paper appendix C.3): add or remove tables without rediscovering everything.

Paths are built from pairwise edges, so updates stay local to edges:

* adding tables runs the discovery pipeline with ``touching`` the new tables: it
  scores candidate edges only for column pairs that involve a new table; the
  existing edges are read back from the join graph unchanged, and only candidate
  paths through a new table compete for the budget left in each pool (the existing
  selected paths count as already covering their tables);
* removing a table drops its node, its incident edges and every selected path
  through it; nothing else changes.

Pipeline step: joins (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import networkx as nx
from llama_index.core.base.embeddings.base import BaseEmbedding

from llama_index_pearl.joins.discovery import JoinDiscovery, discover_join_paths
from llama_index_pearl.joins.graph import paths_from_graph, select_paths
from llama_index_pearl.joins.paths import JoinPath
from llama_index_pearl.tables.table import Table

__all__ = ["drop_table", "extend_join_paths"]


def extend_join_paths(
    tables: Sequence[Table],
    graph: nx.Graph,
    new_ids: Collection[str],
    embed_model: BaseEmbedding | None = None,
    **options: Any,
) -> JoinDiscovery:
    """Discover join paths that involve newly added tables, keeping the existing ones.

    Args:
        tables: The whole corpus after the insert (existing and new tables).
        graph: The existing join graph (from :func:`build_join_graph`), over the existing tables.
        new_ids: Ids of the added tables.
        embed_model: Encoder for column names and values; ``None`` resolves the default.
        **options: Keyword options of :func:`~llama_index_pearl.joins.discovery.discover_join_paths`
            (``budget`` counts the existing paths of each pool: new paths fill what they leave).

    Returns:
        A :class:`JoinDiscovery` whose ``paths`` are the *newly* selected paths,
        ``edges`` the new candidate edges, and ``graph`` the merged graph (all
        edges, existing and new selected paths).

    Raises:
        ValueError: A new id is not among ``tables``, or is already a node of ``graph``.
    """
    return discover_join_paths(tables, embed_model, touching=new_ids, previous=graph, **options)


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
    select_paths(out, [p for p in paths if table_id not in p.tables])  # a pair stays selected while a path uses it
    return out, removed
