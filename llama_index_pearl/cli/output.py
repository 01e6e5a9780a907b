"""What ``pearl`` prints for people: build summaries, cost estimates, the join graph, ranked tables.

Written for a data analyst: which tables, why (the question PEARL generated that matched, said
as such), how strongly (what the score is, and its parts), and how the tables shown join, with
only the joins needed to connect them. Pure formatting over the library's results
(``BuildReport``, the join graph, retrieved nodes); JSON for machines stays with the commands.

Pipeline step: cli (docs/architecture.md).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import networkx as nx
from llama_index.core.schema import NodeWithScore

from llama_index_pearl.corpus.build import BuildReport
from llama_index_pearl.joins.graph import Join, join_edges, joins_between
from llama_index_pearl.retrieval.answer.join_hints import JoinHint
from llama_index_pearl.retrieval.answer.result_nodes import ResultMetadata, result_metadata
from llama_index_pearl.retrieval.answer.table_sets import SetReason, SetTier
from llama_index_pearl.retrieval.search.lexical import DEFAULT_LEXICAL_WEIGHT

__all__ = [
    "connecting_hints",
    "format_build_summary",
    "format_estimate",
    "format_join_edges",
    "format_ranked",
    "format_table_names",
    "graph_counts",
    "join_graph_records",
]

# build stages in the words the summary uses, in the order a build runs them
STAGES = {
    "load": "reading tables",
    "encoder": "encoder",
    "glossary": "glossary",
    "tables": "table units",
    "discovery": "join discovery",
    "generation": "questions",
    "embed": "embedding",
    "persist": "writing the index",
}
# how a table came to match, by the kind of the unit that matched
MATCHED = {
    "original": "matched the table itself (its header and first rows)",
    "schema": "matched the table's name, columns and first row",
    "random_view": "matched some of its columns",
}
QUESTION_KINDS = {"explicit", "implicit", "single_hop"}
# What a set's table is there for, where its reason is more than that the question's evidence chose it
REASONS = {
    SetReason.BRIDGE.value: "a bridge: the question names none of it, it joins the tables that match",
    SetReason.UNJOINED.value: "no join to the other tables is known: how it joins them is for you to say",
    SetReason.LOOKUP.value: "a lookup: it names what the needed tables hold only codes of",
    SetReason.ROLE.value: "a role: a needed table's key calls it by the role the question asks for",
    SetReason.DATE.value: "a date: the question names a period, and this table holds a needed table's date",
}
JOINS_LEGEND = "the fewest joins that connect them; explicit: on a key, implicit: on values"


def graph_counts(graph: nx.Graph) -> dict[str, int]:
    """Join edges by kind (``explicit``/``implicit``), ``declared`` and ``selected`` counts."""
    edges = join_edges(graph)
    kinds = Counter(e.kind for e in edges)
    return {
        "edges": len(edges),
        "explicit": kinds.get("explicit", 0),
        "implicit": kinds.get("implicit", 0),
        "declared": sum(e.declared for e in edges),
        "selected": sum(e.selected for e in edges),
    }


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def _graph_line(graph: nx.Graph) -> str:
    counts = graph_counts(graph)
    declared = f"; {counts['declared']:,} declared by the database" if counts["declared"] else ""
    return (
        f"{_plural(counts['edges'], 'joined table pair')} ({counts['explicit']:,} explicit: a key; "
        f"{counts['implicit']:,} implicit: shared values only{declared}), {counts['selected']:,} on the join paths"
    )


def _seconds(seconds: Mapping[str, float]) -> str:
    stages = ", ".join(f"{STAGES.get(name, name)} {seconds[name]:.1f}" for name in STAGES if name in seconds)
    return f"{seconds.get('total', sum(seconds.values())):.1f} s" + (f" ({stages})" if stages else "")


def format_build_summary(report: BuildReport, graph: nx.Graph, generator: str, n_paths_by_tables: Counter) -> str:
    """A few lines on what a build made, skipped and cost; nothing that did not happen.

    Args:
        report: The index's build report (``seconds["total"]`` is the whole build; the caller adds
            ``persist`` to both when it writes the index).
        graph: The index's join graph.
        generator: The recorded generator name (``PearlConfig.generator``).
        n_paths_by_tables: Selected paths counted by number of tables.
    """
    lines = [f"Indexed {_plural(report.n_tables, 'table')} into {report.n_units:,} units in {_seconds(report.seconds)}"]
    if report.skipped:
        names = ", ".join(s["path"] for s in report.skipped[:3]) + (", ..." if len(report.skipped) > 3 else "")
        lines.append(f"  skipped {_plural(len(report.skipped), 'file')} that could not be read (warned above): {names}")
    if report.bad_lines:
        lines.append("  " + _bad_lines(report.bad_lines))
    if graph.number_of_edges():
        lines.append("  join graph: " + _graph_line(graph))
    if report.n_paths:
        sizes = ", ".join(f"{n:,} of {size} tables" for size, n in sorted(n_paths_by_tables.items()))
        lines.append(f"  join paths: {report.n_paths:,}" + (f" ({sizes})" if sizes else ""))
    units = ", ".join(f"{n:,} {kind}" for kind, n in sorted(report.units_by_kind.items()))
    lines.append(f"  units: {units or 'none'}")
    if report.generation:
        lines.append("  questions: " + _generation(report.generation, generator))
    if report.glossary:
        lines.append("  glossary: " + _glossary(report.glossary))
    return "\n".join(lines)


def _glossary(glossary: Mapping[str, Any]) -> str:
    """What the glossary's LLM was sent and cost; counts of zero are left out."""
    parts = [
        (glossary.get("written", 0), "table", " written by the LLM"),
        (glossary.get("cached", 0), "table", " from the cache"),
        (len(glossary.get("skipped", [])), "table", " left as it was (warned above)"),
        (glossary.get("prompt_tokens", 0), "prompt token", ""),
    ]
    return ", ".join(_plural(n, word) + rest for n, word, rest in parts if n) or "nothing sent"


def _bad_lines(bad_lines: Sequence[Mapping[str, Any]]) -> str:
    """The rows ``--skip-bad-lines`` skipped, and in which files."""
    rows = sum(int(b["rows"]) for b in bad_lines)
    names = ", ".join(f"{b['path']} ({b['rows']:,})" for b in bad_lines[:3]) + (", ..." if len(bad_lines) > 3 else "")
    return f"skipped {_plural(rows, 'row')} with more fields than the header (--skip-bad-lines): {names}"


def _generation(generation: Mapping[str, Any], generator: str) -> str:
    """Who wrote the questions and what it cost; counts of zero are left out."""
    if generator.startswith("heuristic"):
        return f"{generation.get('generated', 0):,} written by the heuristic generator (free, no LLM)"
    parts = [
        (generation.get("requests", 0), "request"),
        (generation.get("generated", 0), "LLM call"),
        (generation.get("cached", 0), "cached answer"),
        (len(generation.get("skipped", [])), "skipped request"),
        (generation.get("prompt_tokens", 0), "prompt token"),
    ]
    said = ", ".join(_plural(n, word) for n, word in parts if n)
    fallback = generation.get("fallback_paths", 0)
    beyond = f"; {_plural(fallback, 'path')} beyond the budget got heuristic questions" if fallback else ""
    return f"{generator}: {said or 'nothing sent'}{beyond}"


def format_estimate(estimate: Mapping[str, Any], generator: str) -> str:
    """``pearl index --estimate``: what a build would send to the generator, and to the glossary's LLM."""
    lines = [
        f"Estimate for {estimate['tables']} tables with {generator} (nothing generated, nothing written):",
        f"  paths for the generator ({' and '.join(estimate.get('path_kinds', []))} paths): {estimate['paths']}; "
        f"other paths (free heuristic questions): {estimate['fallback_paths']}",
        f"  requests: {estimate['requests']}, already cached: {estimate['cached_requests']}",
        f"  prompt tokens: {estimate.get('prompt_tokens', 0):,} (per path {estimate.get('per_path_avg', 0):,.0f}, "
        f"largest {estimate.get('max_prompt_tokens', 0):,})",
    ]
    if estimate.get("glossary_tables") or estimate.get("glossary_cached"):
        lines.append(
            f"  glossary: {_plural(estimate['glossary_tables'], 'table')} to send, "
            f"{estimate['glossary_cached']:,} cached, about {estimate['glossary_prompt_tokens']:,} prompt tokens"
        )
    return "\n".join(lines)


def _score(hit: NodeWithScore) -> str:
    score = float(hit.score or 0.0)
    cosine = result_metadata(hit)["cosine"]
    if cosine is None or abs(score - float(cosine)) < 5e-4:
        return f"{score:.2f}"
    return f"{score:.2f} = similarity {float(cosine):.2f} + shared words {score - float(cosine):.2f}"


def _why(hit: NodeWithScore, first_seen: Mapping[str, str]) -> list[str]:
    """Why a table matched: the unit's kind in words, and the generated question, said to be one."""
    meta = result_metadata(hit)
    unit = meta["matched_unit_id"]
    if unit in first_seen and first_seen[unit] != meta["table_id"]:
        return [f"matched the same text as {first_seen[unit]}"]
    kind = meta["matched_kind"]
    if kind not in QUESTION_KINDS or not meta["matched_question"]:
        return [MATCHED.get(str(kind), "matched a unit of this table")]
    others = [t for t in meta["matched_table_ids"] if t != meta["table_id"]]
    about = f"joining it with {', '.join(others)}" if others else "about this table"
    return [f"matched a question PEARL generated {about}:", f'  "{meta["matched_question"]}"']


def format_ranked(
    question: str,
    nodes: Sequence[NodeWithScore],
    hints: Sequence[JoinHint],
    lexical_weight: float = DEFAULT_LEXICAL_WEIGHT,
) -> str:
    """The ranked tables, why each matched and how strongly, and the joins that connect them.

    Args:
        question: The user's question.
        nodes: ``PearlRetriever`` results, best first.
        hints: Join hints among the returned tables (:func:`connecting_hints` keeps those needed).
        lexical_weight: The retriever's, to say what a score can add for shared words.
    """
    words = f", plus up to {lexical_weight:g} when they share words" if lexical_weight > 0 else ""
    lines = [
        f"Q: {question}",
        "Tables, best match first. Score: cosine similarity in meaning between the question and the best text",
        f"indexed for the table (up to 1){words}.",
    ]
    lines.extend(_route_lines(nodes))
    first_seen: dict[str, str] = {}
    width = max((len(result_metadata(hit)["table_id"]) for hit in nodes), default=0)
    chosen = [hit for hit in nodes if result_metadata(hit)["in_set"]]
    if not chosen:
        _table_lines(lines, nodes, 1, width, first_seen)
        kept = connecting_hints(hints)
        if kept:
            lines.append(f"How these tables join ({JOINS_LEGEND}):")
            lines.extend(f"  {line}" for hint in kept for line in _hint_lines(hint))
        elif len(nodes) > 1:
            lines.append("No known join connects these tables.")
        return "\n".join(lines)
    members = {result_metadata(hit)["table_id"] for hit in chosen}
    needed = [hit for hit in chosen if result_metadata(hit)["set_tier"] != SetTier.MAYBE.value]
    rivals = dict(_rival_sets(nodes))
    # the API's order: a close rival database's needed tables among the may-be-needed ones, by confidence
    maybe = [hit for hit in nodes if _may_be_needed(result_metadata(hit), rivals)]
    lines.append(_tier_heading("Needed", needed, "the question needs"))
    _table_lines(lines, needed, 1, width, first_seen)
    if maybe:
        lines.append(_tier_heading("May be needed", maybe, "the question may need"))
        _table_lines(lines, maybe, len(needed) + 1, width, first_seen, rivals)
    lines.extend(_left_out_line(chosen))
    kept = connecting_hints([h for h in hints if set(h.tables) <= members])
    if kept:
        lines.append(f"How they join ({JOINS_LEGEND}):")
        lines.extend(f"  {line}" for hint in kept for line in _hint_lines(hint))
    shown = {result_metadata(hit)["table_id"] for hit in (*needed, *maybe)}
    others = [hit for hit in nodes if result_metadata(hit)["table_id"] not in shown]
    if others:
        lines.append("Other candidates:")
        _table_lines(lines, others, len(needed) + len(maybe) + 1, width, first_seen)
        more = [h for h in connecting_hints([*kept, *hints]) if h not in kept]
        if more:
            lines.append("How they join the set and each other:")
            lines.extend(f"  {line}" for hint in more for line in _hint_lines(hint))
    return "\n".join(lines)


def _left_out_line(chosen: Sequence[NodeWithScore]) -> list[str]:
    """A line when ``-k`` cut the set: how many of its tables were left out, and the ``-k`` that shows them all
    (the retriever returns ``k`` tables: a larger set loses the tables that came into it last)."""
    size = result_metadata(chosen[0])["set_size"]
    if size <= len(chosen):
        return []
    left = size - len(chosen)
    which = "the table that came into it last is" if left == 1 else f"the {left} that came into it last are"
    return [f"The set holds {size} tables: {which} left out here (-k {size} shows the whole set)."]


def _may_be_needed(meta: ResultMetadata, rivals: Mapping[str, float]) -> bool:
    """A table of the set's second tier, or a needed table of a close rival database's set."""
    if meta["in_set"]:
        return meta["set_tier"] == SetTier.MAYBE.value
    return meta["set_source"] in rivals


def _rival_sets(nodes: Sequence[NodeWithScore]) -> list[tuple[str, float]]:
    """Each close rival database whose set was returned, and how surely the question means it."""
    if not nodes:
        return []
    meta = result_metadata(nodes[0])
    return [(str(source), float(sure)) for source, sure in zip(meta["route_rivals"], meta["route_rival_confidences"])]


def _route_lines(nodes: Sequence[NodeWithScore]) -> list[str]:
    """The source the question was routed to, how surely, and the close or twin sources (none: not routed)."""
    meta = result_metadata(nodes[0]) if nodes else None
    if meta is None or meta["routed_source"] is None:
        return []
    sure = meta["route_confidence"]
    lines = [f"Database: {meta['routed_source']} (how surely: {sure:.2f}; each table's confidence counts it)"]
    rivals = [str(r) for r in meta["route_rivals"] if r not in meta["route_twins"]]
    if rivals:
        lines.append(f"  also close: {', '.join(rivals)}")
    if meta["route_twins"]:
        lines.append(f"  a copy of its schema fits as well: {', '.join(str(t) for t in meta['route_twins'])}")
    return lines


def _tier_heading(name: str, hits: Sequence[NodeWithScore], needs: str) -> str:
    if len(hits) == 1:
        return f"{name}: the table {needs} (confidence: how surely)"
    return f"{name}: {len(hits)} tables {needs} (confidence: how surely)"


def format_table_names(nodes: Sequence[NodeWithScore]) -> str:
    """``pearl query -q``: the tables alone, one per line, in the order retrieved (the set first).

    Args:
        nodes: ``PearlRetriever`` results, best first.
    """
    return "\n".join(result_metadata(hit)["table_id"] for hit in nodes)


def _table_lines(
    lines: list[str],
    hits: Sequence[NodeWithScore],
    first: int,
    width: int,
    first_seen: dict[str, str],
    rivals: Mapping[str, float] | None = None,
) -> None:
    """Each table's line (rank, id, score) and why it is there, appended to ``lines``; a close rival database's
    table (``rivals``: each one's probability) says which database it answers in."""
    for rank, hit in enumerate(hits, start=first):
        meta = result_metadata(hit)
        table_id, confidence = meta["table_id"], meta["set_confidence"]
        sure = f"  confidence {confidence:.2f}" if confidence is not None else ""
        lines.append(f"  {rank}. {table_id:<{width}}  {_score(hit)}{sure}")
        source = meta["set_source"]
        if rivals and not meta["in_set"] and source is not None and source in rivals:
            lines.append(f"       needed if the question means {source} (how surely: {rivals[source]:.2f})")
        if meta["set_reason"] in REASONS:
            lines.append(f"       {REASONS[meta['set_reason']]}")
        lines.extend(f"       {line}" for line in _why(hit, first_seen))
        first_seen.setdefault(meta["matched_unit_id"], table_id)


def connecting_hints(hints: Sequence[JoinHint]) -> list[JoinHint]:
    """The hints needed to connect the tables they name: each kept hint joins two groups not yet joined.

    Args:
        hints: Join hints in result order (direct ones first, as ``compute_join_hints`` gives them).
    """
    group: dict[str, str] = {}

    def root(table: str) -> str:
        while group.get(table, table) != table:
            table = group[table]
        return table

    kept = []
    for hint in hints:
        a, b = root(hint.tables[0]), root(hint.tables[1])
        if a != b:
            group[b] = a
            kept.append(hint)
    return kept


def _hint_lines(hint: JoinHint) -> list[str]:
    """A hint as join conditions: a composite key whole, each alternative on its own ``or`` line."""
    line = " and ".join(join.condition() for join in hint.joins)
    if hint.via:
        line += f"  (through {hint.via}, not among the tables shown)"
    return [
        f"{line}  [{_label(hint.joins[0])}]",
        *(f"  or {alt.condition()}  [{_label(alt)}]" for alt in hint.alternatives),
    ]


def _label(join: Join) -> str:
    return f"{join.kind}, declared" if join.declared else join.kind


def format_join_edges(graph: nx.Graph, title: str = "Join graph") -> str:
    """Every joined table pair, strongest first: its joins (a composite key whole, alternatives on
    their own ``or`` lines), kind, score f, and whether a selected join path uses it.

    Args:
        graph: A join graph.
        title: What the graph is of (``Join graph of idx/``).
    """
    lines = [f"{title}: {_plural(graph.number_of_nodes(), 'table')}, {_graph_line(graph)}."]
    if graph.number_of_edges():
        lines.append("Score f: the pair's best join evidence (names, values, meaning); 'on a path': PEARL indexed it.")
    for edge in sorted(join_edges(graph), key=lambda e: (-e.score, e.left_table, e.right_table)):
        u, v = edge.left_table, edge.right_table
        joins = joins_between(graph, u, v)
        label = edge.kind + (", declared" if edge.declared else "")
        used = "  on a path" if edge.selected else ""
        first = joins[0].condition() if joins else f"{u} - {v}"
        lines.append(f"  {first}".ljust(60) + f" {label:<20} f={edge.score:.2f}{used}")
        lines.extend(f"    or {join.condition()}" for join in joins[1:])
    return "\n".join(lines)


def join_graph_records(graph: nx.Graph) -> list[dict[str, Any]]:
    """The join graph as JSON records, one per joined table pair: its joins, kind, declared, score, selected.

    Args:
        graph: A join graph.
    """
    return [
        {
            "tables": [e.left_table, e.right_table],
            "joins": [join.to_dict() for join in joins_between(graph, e.left_table, e.right_table)],
            "kind": e.kind,
            "declared": e.declared,
            "score": round(e.score, 4),
            "selected": e.selected,
        }
        for e in sorted(join_edges(graph), key=lambda e: (-e.score, e.left_table, e.right_table))
    ]
