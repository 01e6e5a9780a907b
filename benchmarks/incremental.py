"""Incremental indexing vs a full rebuild (paper appendix C.3, Table "incremental").

Usage::

    python benchmarks/incremental.py [/work/shared/bench/spider] [--fraction 0.2] [--seed 0] [--json OUT]

Builds a PEARL index over 80% of the benchmark's tables (a seeded random split),
inserts the other 20% with ``PearlTableIndex.insert_tables``, and compares with a
full rebuild over all tables: generation requests (the heuristic generator makes
no LLM call, so requests stand for LLM calls), units, wall time, and R@2/R@5 on
all questions and on the *affected* ones (a gold table among the inserted).
The encoder is the bundled all-MiniLM-L6-v2 unless ``--hashing`` is given.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from llama_index_pearl import PearlTableIndex  # noqa: E402
from llama_index_pearl.evaluation.benchmark import BenchQuery, evaluate_rankings, load_benchmark  # noqa: E402
from llama_index_pearl.generation import HeuristicQueryGenerator  # noqa: E402
from llama_index_pearl.text.models import resolve_embed_model  # noqa: E402

KS = (2, 5)


def _rankings(index: PearlTableIndex, queries: list[BenchQuery]) -> list[list[str]]:
    retriever = index.as_retriever(similarity_top_k=max(KS))
    return [[n.node.metadata["table_id"] for n in retriever.retrieve(q.question)] for q in queries]


def _recall(queries: list[BenchQuery], rankings: list[list[str]]) -> dict[str, float]:
    if not queries:
        return {}
    metrics = evaluate_rankings(queries, rankings, KS)["all"]
    return {"n": metrics["n"], **{f"R@{k}": metrics[f"R@{k}"] for k in KS}}


def run(bench_dir: Path, fraction: float, seed: int, hashing: bool) -> dict[str, Any]:
    """Split, build, insert, rebuild, evaluate; returns the report as a dict."""
    bench = load_benchmark(bench_dir)
    if hashing:
        sys.path.insert(0, str(ROOT / "tests"))
        from embeddings import HashingEmbedding

        model = HashingEmbedding()
    else:
        model = resolve_embed_model(None)
    ids = sorted(t.id for t in bench.tables)
    added = set(random.Random(seed).sample(ids, round(fraction * len(ids))))
    initial = [t for t in bench.tables if t.id not in added]
    inserted = [t for t in bench.tables if t.id in added]

    def build(tables: list) -> tuple[PearlTableIndex, float]:
        started = time.perf_counter()
        index = PearlTableIndex.from_tables(tables, embed_model=model, generator=HeuristicQueryGenerator())
        return index, time.perf_counter() - started

    incremental, initial_s = build(initial)
    initial_requests = incremental.report.generation.get("requests", 0)
    started = time.perf_counter()
    update = incremental.insert_tables(inserted)
    insert_s = time.perf_counter() - started
    full, full_s = build(bench.tables)

    affected = [q for q in bench.queries if added & set(q.gold_tables)]
    ranked_full, ranked_inc = _rankings(full, bench.queries), _rankings(incremental, bench.queries)
    by_id = {q.id: i for i, q in enumerate(bench.queries)}
    same = sum(ranked_full[i][:5] == ranked_inc[i][:5] for i in range(len(bench.queries)))
    full_requests = full.report.generation.get("requests", 0)
    return {
        "bench": bench.name,
        "encoder": "hashing" if hashing else "all-MiniLM-L6-v2",
        "generator": "heuristic",
        "tables": {"initial": len(initial), "inserted": len(inserted), "total": len(bench.tables)},
        "generation_requests": {
            "full_rebuild": full_requests,
            "initial_build": initial_requests,
            "insert": update.requests,
            "insert_share_of_rebuild": round(update.requests / full_requests, 3) if full_requests else None,
        },
        "paths": {
            "full_rebuild": len(full.join_paths),
            "incremental_total": len(incremental.join_paths),
            "inserted": len(update.new_paths),
        },
        "units": {"full_rebuild": len(full.units), "incremental": len(incremental.units), "embedded": update.new_units},
        "seconds": {
            "initial_build": round(initial_s, 1),
            "insert": round(insert_s, 1),
            "full_rebuild": round(full_s, 1),
        },
        "recall": {
            "all": {
                "full_rebuild": _recall(bench.queries, ranked_full),
                "incremental": _recall(bench.queries, ranked_inc),
            },
            "affected": {
                "full_rebuild": _recall(affected, [ranked_full[by_id[q.id]] for q in affected]),
                "incremental": _recall(affected, [ranked_inc[by_id[q.id]] for q in affected]),
            },
        },
        "same_top5": f"{same}/{len(bench.queries)}",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bench", nargs="?", default="/work/shared/bench/spider", type=Path)
    parser.add_argument("--fraction", type=float, default=0.2, help="share of tables inserted afterwards")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hashing", action="store_true", help="fast hashing encoder instead of MiniLM")
    parser.add_argument("--json", type=Path, help="also write the report here")
    args = parser.parse_args(argv)
    if not 0 < args.fraction < 1:
        parser.error(f"--fraction must be in (0, 1), got {args.fraction}")
    report = run(args.bench, args.fraction, args.seed, args.hashing)
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
