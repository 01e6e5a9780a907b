"""``pearl eval``: build an index over a benchmark's tables and measure retrieval.

Pipeline step: cli (docs/architecture.md).
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from llama_index.core.schema import NodeWithScore

from llama_index_pearl.cli.commands import write_json
from llama_index_pearl.cli.options import BuildArguments, build_arguments, set_rule_of, source_filters
from llama_index_pearl.cli.sources import listed
from llama_index_pearl.cli.terminal import show
from llama_index_pearl.config import option_fields
from llama_index_pearl.corpus.build import serializer_for
from llama_index_pearl.corpus.units import TABLE_IDS, unit_meta
from llama_index_pearl.evaluation.ablations import Ablation, ablation_fields, build_ablated
from llama_index_pearl.evaluation.benchmark import (
    anchor_metrics,
    evaluate_rankings,
    evaluate_sets,
    evaluate_slot_rankings,
    format_beside,
    ranking_depth,
    slot_rankings,
    time_queries,
    unit_vectors,
)
from llama_index_pearl.evaluation.benchmark_folder import Benchmark, load_benchmark
from llama_index_pearl.evaluation.eval_result import EvalResult, GeneratorUse, MethodRun, RunFigures, SetAnswers
from llama_index_pearl.index import PearlTableIndex
from llama_index_pearl.retrieval.answer.result_nodes import result_metadata
from llama_index_pearl.retrieval.answer.table_sets import SetTier
from llama_index_pearl.retrieval.retriever import embed_query
from llama_index_pearl.text.models import resolve_embed_model

__all__ = ["METHODS", "cmd_eval", "parse_ks"]

METHODS = ("pearl", "whole-table", "bm25", "llamaindex")
LATENCY_SAMPLE = 200  # questions timed one at a time by pearl eval


def parse_ks(text: str) -> list[int]:
    """``"1,2,5"`` -> ``[1, 2, 5]``; every k must be a positive integer."""
    try:
        ks = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError as exc:
        raise ValueError(f"--ks must be comma-separated integers, got {text!r}") from exc
    if not ks or ks[0] < 1:
        raise ValueError(f"--ks must hold positive integers, got {text!r}")
    return ks


def cmd_eval(args: argparse.Namespace) -> int:
    ks = parse_ks(args.ks)
    built = build_arguments(args, provenance_in_tables=True)
    per_database = getattr(args, "per_database", False)
    if per_database and not args.provenance:
        raise ValueError("--per-database asks each question within its database: drop --no-provenance")
    bench = load_benchmark(
        args.bench_dir, titles=built.config.include_titles, provenance=args.provenance, strict=built.config.strict
    )
    if not bench.queries:  # a table of zeros would read as a measurement
        raise ValueError(f"{Path(args.bench_dir) / 'queries.jsonl'} holds no questions: nothing to measure")
    if per_database:
        _check_databases(bench)
    depth = ranking_depth(bench.queries, ks)
    if args.method == "bm25":
        run, index = _rank_bm25(bench, built, depth, per_database), None
    elif args.method == "llamaindex":
        run, index = _rank_object_index(bench, built, depth, per_database), None
    else:
        if args.method != "pearl":  # baselines: the same encoder and serialization, no augmentation
            built = BuildArguments(dataclasses.replace(built.config, augment=False), built.embed_model)
        run, index = _rank_with_index(bench, built, args, ks, depth)
    result = EvalResult(
        bench=bench.name,
        method=args.method,
        per_database=per_database,
        titles=built.config.include_titles,
        provenance=args.provenance,
        lexical_weight=args.lexical_weight if args.method in ("pearl", "whole-table") else None,
        table_set=args.method == "pearl" and args.table_set,
        n_tables=len(bench.tables),
        figures=run.figures,
        metrics=_merge_metrics(evaluate_rankings(bench.queries, run.rankings, ks), _set_metrics(bench, run, args)),
    )
    if args.method == "pearl" and index is not None:
        result.ablations, result.llm = _generation_report(index, run.ablation)
        if any(q.sql for q in bench.queries):
            from llama_index_pearl.evaluation.hint_recall import evaluate_join_hints

            result.join_hints = evaluate_join_hints(bench.queries, run.rankings, index.join_graph, bench.tables, ks)
    if getattr(args, "anchor", False) and args.method != "llamaindex":
        anchor = _rank_object_index(bench, built, depth, per_database)
        metrics = anchor_metrics(evaluate_rankings(bench.queries, anchor.rankings, ks))
        result.anchor = {"method": "llamaindex", "metrics": metrics}
    show(result.table())
    if result.anchor is not None:
        show(format_beside(result.metrics, result.anchor["metrics"]))
    if result.join_hints is not None:
        show(format_join_hint_metrics(result.join_hints))
    if args.json_out:
        write_json(args.json_out, result.to_json())
    return 0


def _set_metrics(bench: Benchmark, run: MethodRun, args: argparse.Namespace) -> dict[str, dict[str, float]]:
    """The run's slot R@k, and how its sets measure where it chose sets."""
    if run.sets is None:
        return run.slot_metrics
    table_sources = {t.id: t.source for t in bench.tables} if args.provenance else None
    sets = run.sets
    judged = evaluate_sets(
        bench.queries, sets.tables, sets.needed, sets.confidences, sources=table_sources, copies=run.copies
    )
    return _merge_metrics(judged, run.slot_metrics)


def _rank_bm25(bench: Benchmark, built: BuildArguments, top: int, per_database: bool) -> MethodRun:
    """BM25 over the tables serialized as the index would (no vectors: nothing is embedded)."""
    from llama_index_pearl.evaluation.baselines import BM25TableRanker

    started = time.perf_counter()
    ranker = BM25TableRanker(bench.tables, serializer_for(resolve_embed_model(built.embed_model), built.config))
    index_seconds = time.perf_counter() - started
    rankings, latency = _time_ranker(bench, ranker.rank, top, per_database)
    return MethodRun(rankings, RunFigures(len(bench.tables), round(index_seconds, 2), latency))


def _rank_object_index(bench: Benchmark, built: BuildArguments, top: int, per_database: bool) -> MethodRun:
    """LlamaIndex's ObjectIndex + SQLTableNodeMapping over a SQLite database of the tables, same encoder."""
    import tempfile

    from llama_index_pearl.evaluation.llamaindex_baseline import ObjectIndexRanker, sqlite_database

    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        ranker = ObjectIndexRanker(
            sqlite_database(bench.tables, Path(folder) / "pool.sqlite"), resolve_embed_model(built.embed_model)
        )
        index_seconds = time.perf_counter() - started
        rankings, latency = _time_ranker(bench, ranker.rank, top, per_database)
    return MethodRun(rankings, RunFigures(ranker.n_tables, round(index_seconds, 2), latency))


def _time_ranker(bench: Benchmark, rank: Any, top: int, per_database: bool) -> tuple[list[list[str]], dict[str, float]]:
    """A baseline's rankings (timed); per database, each question's ranking of every table kept to its db's tables.

    A baseline scores each table on its own, so its ranking within a database is its whole ranking restricted.
    """
    if not per_database:
        return time_queries(lambda q: rank(q, top), [q.question for q in bench.queries])
    in_db = _tables_by_database(bench)
    rankings, latency = time_queries(lambda q: rank(q, len(bench.tables)), [q.question for q in bench.queries])
    return [[t for t in ranked if t in in_db[q.db]][:top] for q, ranked in zip(bench.queries, rankings)], latency


def _check_databases(bench: Benchmark) -> None:
    """Each question names a database of the tables: a typo in ``db`` is an error, not a question scored 0."""
    if any(q.db is None for q in bench.queries):
        raise ValueError(f"--per-database: {bench.name}'s queries.jsonl gives some questions no db")
    known = {t.source for t in bench.tables if t.source}
    unknown = Counter(q.db for q in bench.queries if q.db not in known)
    if unknown:
        named = ", ".join(f"{db!r} ({n} question{'s' if n > 1 else ''})" for db, n in sorted(unknown.items()))
        raise ValueError(
            f"--per-database: {bench.name}'s queries.jsonl names databases no table has: {named}; "
            f"the tables' databases: {listed(known) or 'none (tables_meta.jsonl gives no db)'}"
        )


def _tables_by_database(bench: Benchmark) -> dict[str | None, set[str]]:
    databases: dict[str | None, set[str]] = {}
    for table in bench.tables:
        databases.setdefault(table.source, set()).add(table.id)
    return databases


def _rank_with_index(
    bench: Benchmark, built: BuildArguments, args: argparse.Namespace, ks: Sequence[int], depth: int
) -> tuple[MethodRun, PearlTableIndex]:
    """Build the index, rank every question in one batch, time single questions on a sample."""
    started = time.perf_counter()
    ablation = Ablation(**{f.name: getattr(args, f.name) for f in ablation_fields()})
    if args.method != "pearl":  # the baselines index whole tables: nothing to leave out
        ablation = Ablation()
    index = build_ablated(bench.tables, ablation, show_progress=args.verbose, **vars(built))
    index_seconds = time.perf_counter() - started
    # the baselines rank whole tables by score alone: the set is PEARL's
    set_rule = set_rule_of(args) if args.method == "pearl" else None
    per_database = getattr(args, "per_database", False)

    def retriever_of(db: str | None) -> Any:
        filters = source_filters([db]) if per_database and db is not None else None
        return index.as_retriever(
            similarity_top_k=depth, lexical_weight=args.lexical_weight, set_rule=set_rule, filters=filters
        )

    questions = [q.question for q in bench.queries]
    started = time.perf_counter()
    answers = [_Answer.of(nodes) for nodes in _retrieve_by_database(bench.queries, retriever_of, per_database)]
    batch_ms = 1000.0 * (time.perf_counter() - started) / max(1, len(questions))
    sample = bench.queries[:LATENCY_SAMPLE]
    retrievers = {q.db: retriever_of(q.db) for q in sample}
    asked = {q.question: q.db for q in sample}
    _, latency = time_queries(
        lambda q: [result_metadata(n)["table_id"] for n in retrievers[asked[q]].retrieve(q)],
        [q.question for q in sample],
    )
    figures = RunFigures(
        len(index.units),
        round(index_seconds, 2),
        latency,
        round(batch_ms, 2),
        index.report.units_by_kind,
        {k: round(v, 2) for k, v in index.report.seconds.items()},
    )
    sets = SetAnswers([a.chosen for a in answers], [a.needed for a in answers], [a.confidences for a in answers])
    run = MethodRun(
        [a.ranking for a in answers],
        figures,
        sets if set_rule is not None else None,
        [a.copies for a in answers],
        # slot R@k scores every unit of the index: the unified pool's measure only
        {} if per_database else _slot_metrics(index, bench.queries, ks, args.lexical_weight),
        ablation,
    )
    return run, index


class _Answer(NamedTuple):
    """What ``pearl eval`` reads of one question's result nodes."""

    ranking: list[str]
    chosen: list[str]  # the set
    needed: list[str]  # the set's own needed tier: a close rival database's needed tables are not the set's
    confidences: list[tuple[str, float]]
    copies: list[str | None]  # the copies of its database that the answer names

    @classmethod
    def of(cls, nodes: Sequence[NodeWithScore]) -> _Answer:
        metas = [result_metadata(hit) for hit in nodes]
        return cls(
            [meta["table_id"] for meta in metas],
            [meta["table_id"] for meta in metas if meta["in_set"]],
            [meta["table_id"] for meta in metas if meta["in_set"] and meta["set_tier"] == SetTier.NEEDED.value],
            [(meta["table_id"], meta["set_confidence"]) for meta in metas if meta["set_confidence"] is not None],
            list(metas[0]["route_twins"]) if metas else [],
        )


def _retrieve_by_database(queries: Sequence[Any], retriever_of: Any, per_database: bool) -> list[Any]:
    """Every question's result nodes, in order: one batch, or one batch per database (each within its tables)."""
    if not per_database:
        return retriever_of(None).retrieve_many([q.question for q in queries])
    results: list[Any] = [None] * len(queries)
    for db in dict.fromkeys(q.db for q in queries):
        positions = [i for i, q in enumerate(queries) if q.db == db]
        for i, nodes in zip(positions, retriever_of(db).retrieve_many([queries[i].question for i in positions])):
            results[i] = nodes
    return results


def format_join_hint_metrics(metrics: dict[str, dict[str, float]]) -> str:
    """One line per k: join-hint recall/precision against the gold SQL's join conditions."""
    lines = ["join hints vs gold SQL joins (questions with every gold table in the top k):"]
    for k, row in metrics.items():
        lines.append(
            f"  {k:<4} n={row['n']:>4}/{row['questions']:<4} recall {row['recall']:6.2f}  "
            f"precision {row['precision']:6.2f} (n={row['n_precision']})"
        )
    return "\n".join(lines)


def _generation_report(index: PearlTableIndex, ablation: Ablation) -> tuple[list[str], GeneratorUse]:
    """The parts of PEARL left out of the index, and what its question generator did."""
    generation = index.report.generation
    views = [f for f in option_fields() if f.metadata["group"] == "views" and f.type == "bool"]
    # the paper's ablations, and the views off their default (star units, single-table questions)
    ablations = [*ablation.names(), *(f.name for f in views if getattr(index.config, f.name) != f.default)]
    return ablations, {
        "model": index.generator_name,
        "paths": index.report.n_paths,
        "prompt_tokens": generation.get("prompt_tokens", 0),
        "completion_tokens": generation.get("completion_tokens", 0),
        "skipped": len(generation.get("skipped", [])),
        "cached": generation.get("cached", 0),
    }


def _slot_metrics(
    index: PearlTableIndex, queries: Sequence[Any], ks: Sequence[int], lexical_weight: float
) -> dict[str, dict[str, float]]:
    """Slot R@k of every question, scored over all stored unit vectors (default FAISS store only)."""
    units = index.units
    matrix = unit_vectors(index.vector_index.vector_store, [u.node_id for u in units])
    if matrix is None:
        return {}
    tables = [list(unit_meta(u)[TABLE_IDS]) for u in units]
    order = {u.node_id: i for i, u in enumerate(units)}
    slots = []
    lexical_scorer = None
    if lexical_weight > 0:
        with index.read_lock():
            lexical_scorer = index.revisions.state().lexical_scorer()
    for query in queries:
        scores = matrix @ np.asarray(embed_query(index.embed_model, query.question))
        if lexical_scorer is not None:
            for unit_id, lexical in lexical_scorer.scores(query.question).items():
                scores[order[unit_id]] += lexical_weight * lexical
        slots.append(slot_rankings(scores, tables, ks))
    return evaluate_slot_rankings(queries, slots, ks)


def _merge_metrics(metrics: dict[str, dict[str, float]], extra: dict[str, dict[str, float]]) -> dict[str, Any]:
    return {group: {**row, **extra.get(group, {})} for group, row in metrics.items()}
