"""Harder copies of a benchmark folder, for checking that a gain generalizes.

Usage::

    python benchmarks/variants.py ../shared/bench/spider runs/variants/spider_rows10 --rows 10

``--rows N`` keeps only the first N rows of every table: pools whose tables are
known from a few sample rows (a data catalogue's previews, an API's first page)
give join discovery and the encoder far less to go on. Questions, metadata and
``joins.jsonl`` are copied unchanged, so the gold stays the same.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import shutil
import sys
from pathlib import Path


def write_variant(source: Path, target: Path, rows: int) -> None:
    """Copy ``source`` to ``target`` with every table cut to its first ``rows`` rows."""
    (target / "tables").mkdir(parents=True, exist_ok=True)
    for name in ("tables_meta.jsonl", "queries.jsonl", "joins.jsonl"):
        if (source / name).is_file():
            shutil.copyfile(source / name, target / name)
    for path in sorted((source / "tables").glob("*.csv")):
        # csv, not lines: a few cells hold line breaks
        with path.open(encoding="utf-8", newline="") as handle:
            records = list(itertools.islice(csv.reader(handle), rows + 1))
        with (target / "tables" / path.name).open("w", encoding="utf-8", newline="") as handle:
            csv.writer(handle).writerows(records)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("target", type=Path)
    parser.add_argument("--rows", type=int, default=10)
    args = parser.parse_args(argv)
    write_variant(args.source, args.target, args.rows)
    print(f"wrote {args.target} ({args.rows} rows per table)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
