"""``pearl``: build, query and evaluate PEARL indexes from the shell.

pearl demo                                  # example music database, 3 multi-hop questions
pearl index TABLES --out DIR                # CSV/Parquet folder or SQLAlchemy URL
pearl query DIR "question" -k 5
pearl eval BENCH_DIR --method pearl|whole-table|bm25 --ks 1,2,5,10 --json OUT
pearl joins BENCH_DIR --json OUT            # join discovery vs declared FKs
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from llama_index_pearl.baselines import BM25TableRanker
from llama_index_pearl.evaluation import (
    DEFAULT_KS,
    evaluate_rankings,
    evaluate_slot_rankings,
    format_metrics,
    load_benchmark,
    slot_rankings,
    time_queries,
    unit_vectors,
)
from llama_index_pearl.index import PearlTableIndex
from llama_index_pearl.joins.scoring import CROSS_SOURCE_POLICIES

__all__ = ["main"]

EXAMPLE_DATA = Path(__file__).parent / "example_data"
DEMO_QUESTIONS = (
    "In which city did Velvet Harbor play the Harbor Nights Tour?",
    "Which songs appear on albums released by artists signed to Northwind Records?",
    "How much did standing tickets cost at concerts held in Blue Lantern Hall?",
)
METHODS = ("pearl", "whole-table", "bm25")
LATENCY_SAMPLE = 200  # questions timed one at a time by pearl eval


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(message)s")
    try:
        return int(args.func(args) or 0)
    except ValueError as exc:
        print(f"pearl: error: {exc}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pearl", description="PEARL multi-hop table retrieval")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress")
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="index the bundled music database and answer 3 multi-hop questions")
    demo.add_argument("-k", type=int, default=4, help="tables per question")
    demo.set_defaults(func=_cmd_demo)

    index = sub.add_parser("index", help="build an index from tables")
    index.add_argument("tables", help="folder of CSV/Parquet files, a file, or a SQLAlchemy URL")
    index.add_argument("--out", required=True, help="folder to write the index to")
    index.add_argument("--no-titles", dest="titles", action="store_false", help="do not embed table titles")
    index.set_defaults(func=_cmd_index)

    query = sub.add_parser("query", help="retrieve tables for a question")
    query.add_argument("index_dir")
    query.add_argument("question")
    query.add_argument("-k", type=int, default=5)
    query.add_argument("--json", action="store_true", help="print JSON instead of text")
    query.set_defaults(func=_cmd_query)

    ev = sub.add_parser("eval", help="measure recall on a benchmark folder")
    ev.add_argument("bench_dir")
    ev.add_argument("--method", choices=METHODS, default="pearl")
    ev.add_argument("--ks", default=",".join(map(str, DEFAULT_KS)), help="comma-separated k values")
    ev.add_argument("--titles", dest="titles", action="store_true", default=True, help="use table titles (default)")
    ev.add_argument("--no-titles", dest="titles", action="store_false", help="ignore table titles")
    ev.add_argument("--json", dest="json_out", help="write the result as JSON here")
    _add_build_options(ev)
    ev.set_defaults(func=_cmd_eval)

    joins = sub.add_parser("joins", help="discover joins on a benchmark folder and score them against joins.jsonl")
    joins.add_argument("bench_dir")
    joins.add_argument("--json", dest="json_out", help="write the result as JSON here")
    _add_discovery_options(joins)
    joins.set_defaults(func=_cmd_joins)
    return parser


ABLATIONS = ("explicit_only", "implicit_only", "no_originals", "random_view", "random_query", "single_hop")


def _add_build_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--llm-base", help="OpenAI-compatible API base for query generation (default: heuristic)")
    parser.add_argument("--llm-model", default="local", help="model name at --llm-base")
    parser.add_argument("--llm-timeout", type=float, default=120.0, help="seconds per LLM call")
    parser.add_argument("--concurrency", type=int, default=4, help="LLM requests in flight")
    parser.add_argument("--cache-dir", help="generation cache folder")
    parser.add_argument(
        "--no-fallback",
        dest="fallback",
        action="store_false",
        help="with --llm-base: paths beyond the budget get no units (paper) instead of heuristic questions",
    )
    parser.add_argument(
        "--budget", type=int, help="paths per pool (default: every candidate path; tables/2 with an LLM)"
    )
    _add_discovery_options(parser)
    for flag in ABLATIONS:
        parser.add_argument(f"--{flag.replace('_', '-')}", dest=flag, action="store_true", help=f"ablation: {flag}")


def _add_discovery_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-provenance",
        dest="provenance",
        action="store_false",
        help="ignore the benchmark's db field: one unified pool, as in the PEARL paper",
    )
    parser.add_argument(
        "--cross-source-joins",
        choices=CROSS_SOURCE_POLICIES,
        default="evidence",
        help="joins between tables of different sources (default: only on value evidence)",
    )


def _llm_from_args(args: argparse.Namespace) -> Any:
    if not getattr(args, "llm_base", None):
        return None
    from llama_index.llms.openai_like import OpenAILike

    # retries happen once, in the generator; the client must not multiply them
    return OpenAILike(
        model=args.llm_model,
        api_base=args.llm_base,
        api_key="none",
        is_chat_model=True,
        max_retries=0,
        timeout=args.llm_timeout,
        temperature=0.2,
        max_tokens=400,
    )


def _build_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    kwargs: dict[str, Any] = {flag: getattr(args, flag) for flag in ABLATIONS}
    kwargs.update(
        llm=_llm_from_args(args),
        concurrency=args.concurrency,
        cache_dir=args.cache_dir,
        budget=args.budget,
        cross_source_joins=args.cross_source_joins,
    )
    if args.llm_base:
        from llama_index_pearl.generation import LLMQueryGenerator

        fallback = "heuristic" if args.fallback else None
        kwargs["generator"] = LLMQueryGenerator(kwargs["llm"], timeout=args.llm_timeout, fallback=fallback)
    return kwargs


def _print_ranked(question: str, nodes: list[Any]) -> None:
    print(f"\nQ: {question}")
    for rank, hit in enumerate(nodes, start=1):
        meta = hit.node.metadata
        via = meta.get("matched_kind")
        print(f"  {rank}. {meta['table_id']:<12} score={hit.score:.4f}  (matched {via} unit)")


def _cmd_demo(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    index = PearlTableIndex.from_tables(EXAMPLE_DATA)
    report = index.report
    print(
        f"Indexed {report.n_tables} tables from {EXAMPLE_DATA} into {report.n_units} units "
        f"in {time.perf_counter() - started:.1f}s; units by kind: {report.units_by_kind}"
    )
    retriever = index.as_retriever(similarity_top_k=args.k)
    for question in DEMO_QUESTIONS:
        _print_ranked(question, retriever.retrieve(question))
    return 0


def _cmd_index(args: argparse.Namespace) -> int:
    index = PearlTableIndex.from_tables(args.tables, include_titles=args.titles, show_progress=args.verbose)
    index.persist(args.out)
    print(json.dumps({"out": args.out, **index.report.to_dict()}, indent=2))
    return 0


def _cmd_query(args: argparse.Namespace) -> int:
    index = PearlTableIndex.load(args.index_dir)
    nodes = index.as_retriever(similarity_top_k=args.k).retrieve(args.question)
    if args.json:
        rows = [{"table_id": n.node.metadata["table_id"], "score": n.score, **n.node.metadata} for n in nodes]
        print(json.dumps(rows, indent=2))
    else:
        _print_ranked(args.question, nodes)
    return 0


def _parse_ks(text: str) -> list[int]:
    try:
        ks = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError as exc:
        raise ValueError(f"--ks must be comma-separated integers, got {text!r}") from exc
    if not ks or ks[0] < 1:
        raise ValueError(f"--ks must hold positive integers, got {text!r}")
    return ks


def _cmd_eval(args: argparse.Namespace) -> int:
    ks = _parse_ks(args.ks)
    bench = load_benchmark(args.bench_dir, titles=args.titles, provenance=args.provenance)
    started = time.perf_counter()
    build = _build_kwargs(args) if args.method == "pearl" else {}
    index = PearlTableIndex.from_tables(
        bench.tables,
        include_titles=args.titles,
        show_progress=args.verbose,
        augment=args.method == "pearl",
        **build,
    )
    index_seconds = time.perf_counter() - started
    questions = [q.question for q in bench.queries]
    top = max(ks)
    if args.method == "bm25":
        ranker = BM25TableRanker(list(index.tables.values()), index.serializer)
        rankings, latency = time_queries(lambda q: ranker.rank(q, top), questions)
        batch_ms = None
        n_units = len(index.tables)
        slot_metrics = {}
    else:
        retriever = index.as_retriever(similarity_top_k=top)

        def ranked_ids(question: str) -> list[str]:
            return [n.node.metadata["table_id"] for n in retriever.retrieve(question)]

        # rankings in one batch; single-question latency on a sample of them
        started = time.perf_counter()
        rankings = [[n.node.metadata["table_id"] for n in nodes] for nodes in retriever.retrieve_many(questions)]
        batch_ms: float | None = 1000.0 * (time.perf_counter() - started) / max(1, len(questions))
        _, latency = time_queries(ranked_ids, questions[:LATENCY_SAMPLE])
        n_units = len(index.units)
        slot_metrics = _slot_metrics(index, bench.queries, ks)
    result = {
        "bench": bench.name,
        "method": args.method,
        "titles": args.titles,
        "provenance": args.provenance,
        "n_tables": len(bench.tables),
        "n_units": n_units,
        "index_seconds": round(index_seconds, 2),
        "query_latency_ms": latency,
        "batch_ms_per_query": None if batch_ms is None else round(batch_ms, 2),
        "metrics": _merge_metrics(evaluate_rankings(bench.queries, rankings, ks), slot_metrics),
        "units_by_kind": index.report.units_by_kind,
        "build_seconds": {k: round(v, 2) for k, v in index.report.seconds.items()},
    }
    if args.method == "pearl":
        generation = index.report.generation
        result["ablations"] = [flag for flag in ABLATIONS if getattr(args, flag)]
        result["llm"] = {
            "model": index.config.generator,
            "paths": index.report.n_paths,
            "prompt_tokens": generation.get("prompt_tokens", 0),
            "completion_tokens": generation.get("completion_tokens", 0),
            "skipped": len(generation.get("skipped", [])),
            "cached": generation.get("cached", 0),
        }
    print(format_metrics(result))
    if args.json_out:
        Path(args.json_out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json_out).write_text(json.dumps(result, indent=2))
    return 0


def _slot_metrics(index: PearlTableIndex, queries: Sequence[Any], ks: Sequence[int]) -> dict[str, dict[str, float]]:
    """Slot R@k of every question, scored over all stored unit vectors (default FAISS store only)."""
    units = index.units
    matrix = unit_vectors(index.vector_index.vector_store, [u.node_id for u in units])
    if matrix is None:
        return {}
    tables = [list(u.metadata["table_ids"]) for u in units]
    slots = [slot_rankings(matrix @ np.asarray(index.embed_query(q.question)), tables, ks) for q in queries]
    return evaluate_slot_rankings(queries, slots, ks)


def _merge_metrics(metrics: dict[str, dict[str, float]], extra: dict[str, dict[str, float]]) -> dict[str, Any]:
    return {group: {**row, **extra.get(group, {})} for group, row in metrics.items()}


def _cmd_joins(args: argparse.Namespace) -> int:
    from llama_index_pearl.joins import evaluate_join_discovery, format_join_report

    # with provenance, the unified pool is scored too: the paper's setting stays comparable
    settings = [True, False] if args.provenance else [False]
    results = []
    for provenance in settings:
        result = evaluate_join_discovery(
            Path(args.bench_dir), provenance=provenance, cross_source_joins=args.cross_source_joins
        )
        print(format_join_report(result) + "\n")
        results.append(result)
    if args.json_out:
        Path(args.json_out).parent.mkdir(parents=True, exist_ok=True)
        # a list (provenance, then unified) when both ran, else the one result
        Path(args.json_out).write_text(json.dumps(results if len(results) > 1 else results[0], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
