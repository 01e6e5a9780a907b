"""``pearl demo``, ``index``, ``query`` and ``joins``: each a thin layer over the library.

Pipeline step: cli (docs/architecture.md).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import tempfile
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal

from llama_index.core.vector_stores.types import MetadataFilters

from llama_index_pearl.cli.options import (
    build_arguments,
    config_from_args,
    embed_model_from_args,
    set_rule_of,
    source_filters,
)
from llama_index_pearl.cli.output import (
    format_build_summary,
    format_estimate,
    format_join_edges,
    format_ranked,
    format_table_names,
    join_graph_records,
)
from llama_index_pearl.cli.sources import (
    resolve_sources,
    short_table_names,
    source_labels,
    sources_named,
    tables_named,
    with_short_names,
)
from llama_index_pearl.cli.terminal import show, shows_progress
from llama_index_pearl.index import PearlTableIndex
from llama_index_pearl.joins import paths_from_graph
from llama_index_pearl.retrieval.answer.join_hints import hints_of_result
from llama_index_pearl.retrieval.answer.result_nodes import result_metadata
from llama_index_pearl.retrieval.answer.table_sets import SetRule
from llama_index_pearl.retrieval.search.lexical import DEFAULT_LEXICAL_WEIGHT
from llama_index_pearl.storage.persistence import is_index_folder, load_graph_and_tables, load_join_graph
from llama_index_pearl.tables.bundled import example_data

__all__ = ["EXAMPLE_DATA", "cmd_demo", "cmd_graph", "cmd_index", "cmd_joins", "cmd_query", "load_index", "write_json"]

EXAMPLE_DATA = example_data()
DEMO_QUESTIONS = (
    "Which cities did artists from Finland play in?",
    "Which songs appear on albums released by artists signed to Northwind Records?",
    "How much did standing tickets cost at concerts held in Blue Lantern Hall?",
)


def write_json(path: str, data: Any) -> None:
    """Write ``data`` as JSON, creating parent folders."""
    target = Path(path)
    if target.is_dir():
        raise ValueError(f"--json {path!r} is a folder; give a file name")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(data, indent=2), encoding="utf-8")


def _summary(index: PearlTableIndex, persist_seconds: float | None = None) -> str:
    sizes = Counter(len(path.tables) for path in index.join_paths)
    report = index.report
    if persist_seconds is not None:  # the whole build, the folder written included
        seconds = dict(report.seconds)
        seconds["persist"] = persist_seconds
        seconds["total"] = seconds.get("total", 0.0) + persist_seconds
        report = dataclasses.replace(report, seconds=seconds)
    return format_build_summary(report, index.join_graph, index.generator_name, sizes)


def _ranked(
    index: PearlTableIndex,
    question: str,
    k: int,
    lexical_weight: float = DEFAULT_LEXICAL_WEIGHT,
    set_rule: SetRule | Literal["index"] | None = "index",
    filters: MetadataFilters | None = None,
    quiet: bool = False,
) -> str:
    retriever = index.as_retriever(
        similarity_top_k=k, lexical_weight=lexical_weight, set_rule=set_rule, filters=filters
    )
    nodes = retriever.retrieve(question)
    hints = hints_of_result(result_metadata(n) for n in nodes)
    every_source = {s for s in index.catalog.sources.values() if s}  # one pass over the tables, read by both
    names = short_table_names(tables_named(nodes, hints), index.catalog.sources, every_source)
    labels = source_labels(sources_named(nodes), every_source)
    nodes, hints = with_short_names(nodes, hints, names, labels)
    if quiet:
        return format_table_names(nodes)
    return format_ranked(question, nodes, hints, lexical_weight)


def cmd_demo(args: argparse.Namespace) -> int:
    if args.data_folder:
        show(str(EXAMPLE_DATA))
        return 0
    index = PearlTableIndex.from_tables(EXAMPLE_DATA, show_progress=shows_progress(args))
    if not args.quiet:
        show(f"The bundled music database ({len(index.tables)} CSV files), default settings.")
        show(_summary(index))
        show(
            "\nFor each question: the ranked tables, why each matched (a question PEARL generated, or the table"
            " itself), and how the tables shown join."
        )
    for question in DEMO_QUESTIONS:
        show("\n" + _ranked(index, question, args.k))
    if not args.quiet:
        show('\nYour own tables: pearl index FOLDER --out idx && pearl query idx "question"')
    return 0


def _check_out(out: str) -> Path:
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"--out {out!r} is a file; give a folder for the index")
    return folder


def cmd_index(args: argparse.Namespace) -> int:
    built = build_arguments(args)
    if args.estimate:
        estimate = PearlTableIndex.estimate_cost(args.tables, **vars(built))
        generator = built.generator.model_name if built.generator else "the heuristic generator (free)"
        show(json.dumps(estimate, indent=2) if args.json else format_estimate(estimate, generator))
        return 0
    out = _check_out(args.out)
    index = PearlTableIndex.from_tables(args.tables, show_progress=shows_progress(args), **vars(built))
    started = time.perf_counter()
    index.persist(out)
    persist_seconds = time.perf_counter() - started
    if args.json:
        show(json.dumps({"out": str(out), **index.report.to_dict(), "persist_seconds": persist_seconds}, indent=2))
    elif not args.quiet:
        show(_summary(index, persist_seconds))
        show(f'Wrote {out}/; ask it: pearl query {out} "your question"')
    return 0


def load_index(index_dir: str, args: argparse.Namespace) -> PearlTableIndex:
    """Load a persisted index with ``--embed-model``, else the encoder recorded in its manifest."""
    return PearlTableIndex.load(index_dir, embed_model=embed_model_from_args(args))


def cmd_query(args: argparse.Namespace) -> int:
    index = load_index(args.index_dir, args)
    wanted = resolve_sources(args.source or [], {s for s in index.catalog.sources.values() if s})
    filters = source_filters(wanted)
    if args.json:
        retriever = index.as_retriever(
            similarity_top_k=args.k, lexical_weight=args.lexical_weight, set_rule=set_rule_of(args), filters=filters
        )
        nodes = retriever.retrieve(args.question)
        rows = [{"table_id": result_metadata(n)["table_id"], "score": n.score, **result_metadata(n)} for n in nodes]
        show(json.dumps(rows, indent=2))
    else:
        show(_ranked(index, args.question, args.k, args.lexical_weight, set_rule_of(args), filters, args.quiet))
    return 0


def _is_benchmark(path: Path) -> bool:
    return (path / "tables").is_dir() and (path / "joins.jsonl").is_file()


def cmd_joins(args: argparse.Namespace) -> int:
    given = Path(args.tables)
    if is_index_folder(given):
        graph = load_join_graph(given)
        show(format_join_edges(graph, f"Join graph of {given}"))
        if args.json_out:
            write_json(
                args.json_out,
                {"index": str(given), "n_tables": graph.number_of_nodes(), "joins": join_graph_records(graph)},
            )
        return 0
    results = _benchmark_joins(given, args) if _is_benchmark(given) else [_folder_joins(given, args)]
    if args.json_out:
        # a list (provenance, then unified) when both ran, else the one result
        write_json(args.json_out, results if len(results) > 1 else results[0])
    return 0


def _benchmark_joins(given: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    from llama_index_pearl.evaluation.join_discovery import evaluate_join_discovery, format_join_report

    results = []
    # with provenance, the unified pool is scored too: the paper's setting stays comparable
    for provenance in [True, False] if args.provenance else [False]:
        result = evaluate_join_discovery(
            given, embed_model_from_args(args), provenance=provenance, cross_source_joins=args.cross_source_joins
        )
        show(format_join_report(result) + "\n")
        results.append(result)
    return results


def _folder_joins(given: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Discovery on a folder, file or database: the joins found, scored against a ``joins.jsonl`` beside it."""
    from llama_index_pearl.evaluation.join_discovery import format_join_report, score_discovery
    from llama_index_pearl.joins import discover_join_paths
    from llama_index_pearl.tables.inputs import load_tables

    started = time.perf_counter()
    config = config_from_args(args)
    tables = load_tables(
        args.tables, max_rows_read=config.max_rows_read, strict=config.strict, skip_bad_lines=config.skip_bad_lines
    )
    policy = config.cross_source_joins
    discovery = discover_join_paths(
        tables,
        embed_model_from_args(args),
        budget=config.budget,
        lambda_div=config.lambda_div,
        use_declared=config.use_declared_joins,
        cross_source_joins=policy,
    )
    show(format_join_edges(discovery.graph))
    result: dict[str, Any] = {"tables": args.tables, "n_tables": len(tables), "provenance": args.provenance}
    result["joins"] = join_graph_records(discovery.graph)
    gold = given / "joins.jsonl" if given.is_dir() else given.parent / "joins.jsonl"
    if gold.is_file():
        result.update(score_discovery(discovery, gold), bench=given.name, cross_source_joins=policy)
        result["seconds"] = round(time.perf_counter() - started, 3)
        show("\nScored against " + gold.name + ":\n" + format_join_report(result))
    return result


def cmd_graph(args: argparse.Namespace) -> int:
    from llama_index_pearl.presentation.graph_page import write_graph_page

    if not args.html and not args.png:
        raise ValueError("give --html OUT.html (the page) and/or --png OUT.png (a screenshot of it)")
    graph, tables = load_graph_and_tables(Path(args.index_dir))  # drawing needs no encoder: none is loaded
    drawing = SimpleNamespace(join_graph=graph, tables={t.id: t for t in tables}, join_paths=paths_from_graph(graph))
    if args.html:
        write_graph_page(drawing, Path(args.html), sample_rows=args.sample_rows)
    if args.png:
        _screenshot(drawing, args)
    if not args.quiet:
        written = ", ".join(str(p) for p in (args.html, args.png) if p)
        show(f"Join graph of {len(tables)} tables, {graph.number_of_edges()} edges: {written}")
    return 0


def _screenshot(drawing: SimpleNamespace, args: argparse.Namespace) -> None:
    """``--png``: a screenshot of the page; without ``--html`` the page lives in a temporary folder, never beside the
    PNG, where it would replace a file of the user's."""
    from llama_index_pearl.presentation.graph_page import write_graph_page
    from llama_index_pearl.presentation.headless import screenshot

    with tempfile.TemporaryDirectory(prefix="pearl-graph-") as folder:
        page = (
            Path(args.html)
            if args.html
            else write_graph_page(drawing, Path(folder) / "graph.html", sample_rows=args.sample_rows)
        )
        try:
            screenshot(page, args.png, window=(args.width, args.height))
        except (RuntimeError, OSError) as exc:  # no browser, or it failed: say so in CLI terms
            raise ValueError(f"--png: {exc}") from exc
