"""What ``pearl`` prints for people: build summaries, cost estimates, ranked tables with their join keys.

Pure formatting over the library's results (``BuildReport``, the join graph,
retrieved nodes); JSON output stays with the commands.

Pipeline step: cli (docs/architecture.md).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import groupby
from typing import Any

import networkx as nx
from llama_index.core.schema import NodeWithScore

from llama_index_pearl.corpus.build import BuildReport
from llama_index_pearl.joins.graph import joins_between
from llama_index_pearl.retrieval.join_hints import JoinHint

__all__ = ["format_build_summary", "format_estimate", "format_join_edges", "format_ranked", "graph_counts"]

TIE_DECIMALS = 6


def graph_counts(graph: nx.Graph) -> dict[str, int]:
    """Join edges by kind (``explicit``/``implicit``), ``declared`` and ``selected`` counts."""
    kinds = Counter(str(d.get("kind", "implicit")) for _, _, d in graph.edges(data=True))
    return {
        "edges": graph.number_of_edges(),
        "explicit": kinds.get("explicit", 0),
        "implicit": kinds.get("implicit", 0),
        "declared": sum(bool(d.get("declared")) for _, _, d in graph.edges(data=True)),
        "selected": sum(bool(d.get("selected")) for _, _, d in graph.edges(data=True)),
    }


def _seconds(seconds: Mapping[str, float]) -> str:
    stages = ", ".join(f"{name} {value:.1f}" for name, value in seconds.items() if name != "total")
    return f"{seconds.get('total', sum(seconds.values())):.1f} s" + (f" ({stages})" if stages else "")


def format_build_summary(report: BuildReport, graph: nx.Graph, generator: str, n_paths_by_hops: Counter) -> str:
    """A few lines on what a build made and cost.

    Args:
        report: The index's build report.
        graph: The index's join graph.
        generator: The recorded generator name (``PearlConfig.generator``).
        n_paths_by_hops: Selected paths counted by number of tables.
    """
    edges = graph_counts(graph)
    hops = ", ".join(f"{n} with {size} tables" for size, n in sorted(n_paths_by_hops.items()))
    units = ", ".join(f"{n} {kind}" for kind, n in sorted(report.units_by_kind.items()))
    lines = [
        f"Indexed {report.n_tables} tables into {report.n_units} units in {_seconds(report.seconds)}",
        f"  join graph: {edges['edges']} edges ({edges['explicit']} explicit, {edges['implicit']} implicit, "
        f"{edges['declared']} declared), {edges['selected']} on selected paths",
        f"  join paths: {report.n_paths}" + (f" ({hops})" if hops else ""),
        f"  units: {units or 'none'}",
    ]
    generation = report.generation
    if generation:
        calls = generation.get("generated", 0) if not generator.startswith("heuristic") else 0
        lines.append(
            f"  query generation: {generator}; {generation.get('paths', 0)} requests, {calls} LLM calls, "
            f"{generation.get('cached', 0)} cached, {len(generation.get('skipped', []))} skipped, "
            f"{generation.get('prompt_tokens', 0):,} prompt tokens, {generation.get('fallback_paths', 0)} "
            "paths with heuristic questions beyond the budget"
        )
    return "\n".join(lines)


def format_estimate(estimate: Mapping[str, Any], generator: str) -> str:
    """``pearl index --estimate``: what a build would send to the generator."""
    return "\n".join(
        [
            f"Estimate for {estimate['tables']} tables with {generator} (nothing generated, nothing written):",
            f"  paths for the generator ({' and '.join(estimate.get('path_kinds', []))} paths): {estimate['paths']}; "
            f"other paths (free heuristic questions): {estimate['fallback_paths']}",
            f"  requests: {estimate['requests']}, already cached: {estimate['cached_requests']}",
            f"  prompt tokens: {estimate.get('prompt_tokens', 0):,} (per path {estimate.get('per_path_avg', 0):,.0f}, "
            f"largest {estimate.get('max_prompt_tokens', 0):,})",
        ]
    )


def _tie_note(group: list[NodeWithScore]) -> str:
    names = ", ".join(hit.node.metadata["table_id"] for hit in group)
    units = {hit.node.metadata.get("matched_unit_id") for hit in group}
    if len(units) == 1:
        return (
            f"  tie: {names} score {group[0].score:.4f} because one joined unit names them all; "
            "they are ordered by each table's next-best unit"
        )
    return (
        f"  tie: {names} score {group[0].score:.4f} from different units of equal score; "
        "they are ordered by each table's next-best unit"
    )


def format_ranked(question: str, nodes: Sequence[NodeWithScore], hints: Sequence[JoinHint]) -> str:
    """The ranked tables, the generated question each one matched, the join keys, and why ties are ties.

    Args:
        question: The user's question.
        nodes: ``PearlRetriever`` results, best first.
        hints: Join hints among the returned tables (each join once).
    """
    lines = [f"Q: {question}"]
    shown_questions: set[str] = set()
    for rank, hit in enumerate(nodes, start=1):
        meta = hit.node.metadata
        kind = meta.get("matched_kind") or "?"
        others = [t for t in meta.get("matched_table_ids", []) if t != meta["table_id"]]
        unit = f"{kind} unit" + (f" with {', '.join(others)}" if others else "")
        lines.append(f"  {rank}. {meta['table_id']:<20} {hit.score:.4f}  matched {unit}")
        matched = meta.get("matched_question")
        if matched and matched not in shown_questions:
            shown_questions.add(matched)
            lines.append(f'       generated question: "{matched}"')
    if hints:
        lines.append("  join keys:")
        lines.extend(f"    {hint.text()}" for hint in hints)
    elif len(nodes) > 1:
        lines.append("  join keys: none known between these tables")
    for _, tied in groupby(nodes, key=lambda hit: round(float(hit.score or 0.0), TIE_DECIMALS)):
        group = list(tied)
        if len(group) > 1:
            lines.append(_tie_note(group))
    return "\n".join(lines)


def format_join_edges(graph: nx.Graph) -> str:
    """Every join edge, strongest first: its joins (a composite key whole, alternatives on their own lines),
    kind and score f, and whether a path uses it."""
    counts = graph_counts(graph)
    lines = [
        f"Join graph: {graph.number_of_nodes()} tables, {counts['edges']} edges ({counts['explicit']} explicit, "
        f"{counts['implicit']} implicit, {counts['declared']} declared), {counts['selected']} on selected paths"
    ]
    edges = sorted(graph.edges(data=True), key=lambda e: (-float(e[2].get("score", 0.0)), e[0], e[1]))
    for u, v, data in edges:
        joins = joins_between(graph, u, v)
        label = str(data.get("kind", "implicit")) + (", declared" if data.get("declared") else "")
        used = "  selected" if data.get("selected") else ""
        first = joins[0].condition() if joins else f"{u} - {v}"
        lines.append(f"  {first}".ljust(60) + f" {label:<20} f={float(data.get('score', 0.0)):.2f}{used}")
        lines.extend(f"    or {join.condition()}" for join in joins[1:])
    return "\n".join(lines)
