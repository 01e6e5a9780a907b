"""Bounded reads: index a 5-million-row SQLite table and a large CSV in bounded memory.

Writes (once, reused on later runs) a SQLite database whose ``events`` table has
``--sqlite-rows`` rows next to a small ``customers`` table, and a CSV of about
``--csv-mb`` megabytes. Each measurement runs in a fresh subprocess so that its
peak RSS is its own, and prints rows read, the exact row count kept, peak RSS
(MiB; the interpreter with pandas, SQLAlchemy and llama-index imported is the
``baseline``) and seconds:

- ``load``: ``load_tables(source, max_rows_read=N)``;
- ``index``: ``PearlTableIndex.from_tables(source, max_rows_read=N)`` plus
  ``persist`` (a hashing stand-in encoder, so embedding is not what is measured),
  with the index folder's size;
- ``unbounded`` (``--unbounded sqlite csv``): ``load_tables(source, max_rows_read=None)``,
  what every read did before bounded reads existed.

    python benchmarks/bounded_reads.py --sqlite-rows 5000000 --csv-mb 1024 --unbounded sqlite
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_KINDS = ["purchase", "refund", "view", "signup", "login", "logout", "share"]
_MEASURE = r"""
import json, resource, sys, time, tempfile
from pathlib import Path
sys.path.insert(0, {bench_dir!r})
import pandas, sqlalchemy, llama_index.core  # noqa: F401  (imports count in the baseline, not in the read)
from llama_index_pearl import PearlTableIndex, load_tables
baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
mode, source, limit = {mode!r}, {source!r}, {limit!r}
started = time.perf_counter()
extra = {{}}
if mode == "index":
    from datalake import HashingEmbedding
    index = PearlTableIndex.from_tables(source, embed_model=HashingEmbedding(), max_rows_read=limit)
    out = Path(tempfile.mkdtemp()) / "idx"
    index.persist(out)
    tables = list(index.tables.values())
    extra["index_mib"] = round(sum(p.stat().st_size for p in out.iterdir()) / 2**20, 2)
else:
    tables = load_tables(source, max_rows_read=limit)
seconds = time.perf_counter() - started
big = max(tables, key=lambda t: t.row_count)
print(json.dumps({{
    "rows_read": big.n_rows, "row_count": big.row_count, "baseline_mib": round(baseline, 1),
    "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    "seconds": round(seconds, 2), **extra,
}}))
"""


def write_sqlite(path: Path, n_rows: int) -> None:
    if path.exists():
        return
    partial = path.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    rng = random.Random(0)
    with sqlite3.connect(partial) as connection:
        connection.execute("CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, name TEXT, country TEXT)")
        connection.executemany(
            "INSERT INTO customers VALUES (?, ?, ?)",
            ((i, f"Customer {i}", rng.choice(["FR", "DE", "JP", "US"])) for i in range(1, 10_001)),
        )
        connection.execute(
            "CREATE TABLE events (event_id INTEGER PRIMARY KEY, "
            "customer_id INTEGER REFERENCES customers(customer_id), kind TEXT, amount REAL, note TEXT)"
        )
        chunk = 200_000
        for start in range(0, n_rows, chunk):
            connection.executemany(
                "INSERT INTO events VALUES (?, ?, ?, ?, ?)",
                (
                    (i, rng.randint(1, 10_000), _KINDS[i % 7], round(rng.random() * 500, 2), f"note {i % 9973}")
                    for i in range(start, min(start + chunk, n_rows))
                ),
            )
    partial.rename(path)


def write_csv(path: Path, megabytes: int) -> None:
    if path.exists():
        return
    partial = path.with_suffix(".partial")
    target = megabytes * 2**20
    rng = random.Random(0)
    with partial.open("w", encoding="utf-8", newline="") as handle:
        handle.write("order_id,customer_id,product,quantity,price,comment\n")
        written, i = 0, 0
        while written < target:
            lines = []
            for j in range(i, i + 50_000):
                comment = f'"Delivered, box {j % 97}"' if j % 5 == 0 else f"ok {j % 131}"
                lines.append(f"{j},{rng.randint(1, 10_000)},P-{j % 503},{j % 9 + 1},{(j % 1000) / 10:.2f},{comment}\n")
            block = "".join(lines)
            handle.write(block)
            written += len(block)
            i += 50_000
    partial.rename(path)


def measure(mode: str, source: str, limit: int | None) -> dict:
    bench_dir = str(Path(__file__).resolve().parent)
    code = _MEASURE.format(bench_dir=bench_dir, mode=mode, source=source, limit=limit)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{mode} on {source} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sqlite-rows", type=int, default=5_000_000)
    parser.add_argument("--csv-mb", type=int, default=1024)
    parser.add_argument("--max-rows-read", type=int, default=10_000)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "pearl-bounded-reads")
    parser.add_argument(
        "--unbounded",
        nargs="*",
        choices=["sqlite", "csv"],
        default=[],
        help="also read every row of these sources (the old behaviour; a 1 GB CSV needs several GB)",
    )
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    database = args.workdir / f"events_{args.sqlite_rows}.sqlite"
    csv_file = args.workdir / f"orders_{args.csv_mb}mb.csv"
    started = time.perf_counter()
    write_sqlite(database, args.sqlite_rows)
    write_csv(csv_file, args.csv_mb)
    print(f"data ready in {time.perf_counter() - started:.0f}s: {database} ", end="")
    print(f"({database.stat().st_size / 2**20:.0f} MiB), {csv_file} ({csv_file.stat().st_size / 2**20:.0f} MiB)")
    sources = {"sqlite": f"sqlite:///{database}", "csv": str(csv_file)}
    bounded = [("load", args.max_rows_read), ("index", args.max_rows_read)]
    print(
        f"{'source':<7} {'mode':<10} {'rows read':>10} {'row count':>11} {'baseline MiB':>13} {'peak MiB':>9} {'s':>7}"
    )
    for name, source in sources.items():
        for mode, limit in [*bounded, *([("unbounded", None)] if name in args.unbounded else [])]:
            result = measure(mode, source, limit)
            extra = f"  index folder {result['index_mib']} MiB" if "index_mib" in result else ""
            print(
                f"{name:<7} {mode:<10} {result['rows_read']:>10,} {result['row_count']:>11,} "
                f"{result['baseline_mib']:>13} {result['peak_rss_mib']:>9} {result['seconds']:>7}{extra}",
                flush=True,
            )


if __name__ == "__main__":
    main()
