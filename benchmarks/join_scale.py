"""Scale benchmark for join discovery on synthetic data lakes.

Usage::

    python benchmarks/join_scale.py --sizes 1000,3000,10000 [--repeats 3] [--json OUT]

Each run is its own subprocess so that peak memory (``ru_maxrss``) is per size.
Each size runs ``--repeats`` times and the row reports the median discovery time
(and the median of each stage): on a shared 2-core machine single timings of the
same lake vary by +-25%, which is more than the growth target's margin.
Embedding uses :class:`benchmarks.datalake.HashingEmbedding` (hashed character
trigrams) so the encoder is not what is measured; its time is reported
separately and excluded from ``discover_s``. Recall is the share of planted
foreign keys found as explicit column-pair edges with f >= tau_2.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def run_one(n_tables: int, seed: int) -> dict[str, float]:
    """Generate a lake of ``n_tables`` tables and time discovery on it."""
    from benchmarks.datalake import HashingEmbedding, generate_datalake
    from llama_index_pearl.joins import TAU_2, discover_join_paths

    start = time.perf_counter()
    tables, planted = generate_datalake(n_tables, seed=seed)
    generate_s = time.perf_counter() - start
    start = time.perf_counter()
    result = discover_join_paths(tables, HashingEmbedding(embed_batch_size=2048))
    total_s = time.perf_counter() - start
    found = {
        frozenset(((e.left_table, e.left_column), (e.right_table, e.right_column)))
        for e in result.edges
        if e.explicit and e.passes(TAU_2)
    }
    gold = {frozenset(((p.table, p.column), (p.ref_table, p.ref_column))) for p in planted}
    hits = len(found & gold)
    embed_s = result.seconds["embed"]
    return {
        "tables": n_tables,
        "columns": sum(len(t.columns) for t in tables),
        "generate_s": round(generate_s, 2),
        "discover_s": round(total_s - embed_s, 2),
        "embed_s": round(embed_s, 2),
        "stages": result.seconds,
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "planted": len(gold),
        "recall": round(hits / len(gold), 4) if gold else 0.0,
        "precision": round(hits / len(found), 4) if found else 0.0,
        "paths": len(result.paths),
    }


def _run_subprocess(size: int, seed: int) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--one", str(size), "--seed", str(seed)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _median_row(runs: list[dict]) -> dict:
    """The run with the median discovery time, with every stage replaced by its median and all times kept."""
    row = dict(sorted(runs, key=lambda r: r["discover_s"])[len(runs) // 2])
    row["stages"] = {k: round(statistics.median(r["stages"][k] for r in runs), 4) for k in row["stages"]}
    row["embed_s"] = round(statistics.median(r["embed_s"] for r in runs), 2)
    row["peak_rss_mib"] = max(r["peak_rss_mib"] for r in runs)
    row["discover_runs_s"] = [r["discover_s"] for r in runs]
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,3000,10000", help="comma-separated table counts")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3, help="runs per size; the median is reported")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # internal: run one size in this process
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(run_one(args.one, args.seed)))
        return 0
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        runs = [_run_subprocess(size, args.seed) for _ in range(max(1, args.repeats))]
        rows.append(_median_row(runs))
        row = rows[-1]
        print(
            f"{row['tables']:>6} tables {row['columns']:>7} cols | discover {row['discover_s']:6.1f}s "
            f"(runs {'/'.join(f'{t:.1f}' for t in row['discover_runs_s'])}; embed {row['embed_s']:5.1f}s excluded) | "
            f"peak {row['peak_rss_mib']:7.0f} MiB | "
            f"recall {row['recall']:.3f} precision {row['precision']:.3f} | {row['paths']} paths",
            flush=True,
        )
    if len(rows) > 1:
        print(
            f"growth {rows[-1]['tables'] / rows[0]['tables']:.0f}x tables -> "
            f"{rows[-1]['discover_s'] / max(rows[0]['discover_s'], 1e-9):.1f}x median time"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
