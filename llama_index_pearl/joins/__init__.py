"""Join-path discovery (PEARL section 3.1.1): profiles, candidate edges, scoring, selection, join graph.

Pipeline step: joins (docs/architecture.md).
"""

from llama_index_pearl.joins.discovery import TAU_2, TAU_3, JoinDiscovery, build_paths, discover_join_paths
from llama_index_pearl.joins.edges import CandidateEdge
from llama_index_pearl.joins.graph import (
    build_join_graph,
    edges_from_graph,
    graph_from_json,
    graph_to_json,
    paths_from_graph,
    read_graphml,
    write_graphml,
)
from llama_index_pearl.joins.incremental import drop_table, extend_join_paths
from llama_index_pearl.joins.paths import ColumnPair, JoinKind, JoinPath
from llama_index_pearl.joins.profiles import ColumnProfile, profile_tables
from llama_index_pearl.joins.selection import default_budget, lazy_greedy, resolve_budget, split_by_budget

__all__ = [
    "TAU_2",
    "TAU_3",
    "CandidateEdge",
    "ColumnPair",
    "ColumnProfile",
    "JoinDiscovery",
    "JoinKind",
    "JoinPath",
    "build_join_graph",
    "build_paths",
    "default_budget",
    "discover_join_paths",
    "drop_table",
    "edges_from_graph",
    "extend_join_paths",
    "graph_from_json",
    "graph_to_json",
    "lazy_greedy",
    "paths_from_graph",
    "profile_tables",
    "read_graphml",
    "resolve_budget",
    "split_by_budget",
    "write_graphml",
]
