"""Scale benchmark for join discovery on synthetic data lakes.

Usage::

    python benchmarks/join_scale.py --sizes 1000,3000,10000 [--json OUT]

Each size runs in its own subprocess so that peak memory (``ru_maxrss``) is per
size. Embedding uses :class:`benchmarks.datalake.HashingEmbedding` (hashed
character trigrams) so the encoder is not what is measured; its time is
reported separately and excluded from ``discover_s``. Recall is the share of
planted foreign keys found as explicit column-pair edges with f >= tau_2h.
"""

from __future__ import annotations

import argparse
import json
import resource
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
    from llama_index_pearl.joins import TAU_2H, discover_join_paths

    start = time.perf_counter()
    tables, planted = generate_datalake(n_tables, seed=seed)
    generate_s = time.perf_counter() - start
    start = time.perf_counter()
    result = discover_join_paths(tables, HashingEmbedding(embed_batch_size=2048))
    total_s = time.perf_counter() - start
    found = {
        frozenset(((e.left_table, e.left_column), (e.right_table, e.right_column)))
        for e in result.edges
        if e.explicit and e.score >= TAU_2H
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,3000,10000", help="comma-separated table counts")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # internal: run one size in this process
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(run_one(args.one, args.seed)))
        return 0
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        out = subprocess.run(
            [sys.executable, __file__, "--one", str(size), "--seed", str(args.seed)],
            check=True,
            capture_output=True,
            text=True,
        )
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        row = rows[-1]
        print(
            f"{row['tables']:>6} tables {row['columns']:>7} cols | discover {row['discover_s']:6.1f}s "
            f"(embed {row['embed_s']:5.1f}s excluded) | peak {row['peak_rss_mib']:7.0f} MiB | "
            f"recall {row['recall']:.3f} precision {row['precision']:.3f} | {row['paths']} paths",
            flush=True,
        )
    if len(rows) > 1:
        print(
            f"growth {rows[-1]['tables'] / rows[0]['tables']:.0f}x tables -> "
            f"{rows[-1]['discover_s'] / max(rows[0]['discover_s'], 1e-9):.1f}x time"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
