"""Harder copies of a benchmark folder, for checking that a gain generalizes.

Usage::

    python benchmarks/variants.py ../shared/bench/spider runs/variants/spider_rows10 --rows 10
    python benchmarks/variants.py ../shared/bench/spider runs/variants/spider_rand10 --rows 10 --random
    python benchmarks/variants.py ../shared/bench/spider runs/variants/spider_fkfmt --rows 10 --random \\
        --float-keys --blank-keys 0.3

``--rows N`` keeps only the first N rows of every table: pools whose tables are
known from a few sample rows (a data catalogue's previews, an API's first page)
give join discovery and the encoder far less to go on. ``--random`` draws the N
rows at random instead (seed 0): the first rows of a child table mostly reference
the first rows of its parent, a random sample of a large table mostly does not.
``--float-keys`` writes every integer of a foreign-key column (the ``left`` side of
``joins.jsonl``) as a float (``13`` -> ``13.0``: a nullable integer column exported
through pandas); ``--blank-keys SHARE`` empties that share of the foreign-key
columns (chosen with seed 0), as exports whose sample rows hold no reference do.
Questions, metadata and ``joins.jsonl`` are copied unchanged, so the gold stays the same.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import shutil
import sys
from pathlib import Path


def _foreign_keys(source: Path) -> dict[str, set[str]]:
    """Table id -> its foreign-key columns, from ``joins.jsonl`` (empty when the file is absent)."""
    keys: dict[str, set[str]] = {}
    path = source / "joins.jsonl"
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                table, column = json.loads(line)["left"].split(".", 1)
                keys.setdefault(table, set()).add(column)
    return keys


def _rows(records: list[list[str]], rows: int, sample: random.Random | None) -> list[list[str]]:
    header, body = records[0], records[1:]
    if sample is not None and len(body) > rows:
        body = [body[i] for i in sorted(sample.sample(range(len(body)), rows))]
    return [header, *body[:rows]]


def _as_float(cell: str) -> str:
    text = cell.strip()
    return f"{text}.0" if text.lstrip("-").isdigit() else cell


def write_variant(
    source: Path,
    target: Path,
    rows: int,
    *,
    random_rows: bool = False,
    float_keys: bool = False,
    blank_keys: float = 0.0,
) -> None:
    """Copy ``source`` to ``target`` with every table cut to ``rows`` rows, foreign keys perturbed as asked."""
    (target / "tables").mkdir(parents=True, exist_ok=True)
    for name in ("tables_meta.jsonl", "queries.jsonl", "joins.jsonl"):
        if (source / name).is_file():
            shutil.copyfile(source / name, target / name)
    keys = _foreign_keys(source) if float_keys or blank_keys else {}
    blank_rng = random.Random(0)
    blanked = {
        (table, column)
        for table in sorted(keys)
        for column in sorted(keys[table])
        if blank_keys and blank_rng.random() < blank_keys
    }
    for path in sorted((source / "tables").glob("*.csv")):
        # csv, not lines: a few cells hold line breaks
        with path.open(encoding="utf-8", newline="") as handle:
            records = list(csv.reader(handle))
        if not records:
            continue
        records = _rows(records, rows, random.Random(path.stem) if random_rows else None)
        for i, column in enumerate(records[0]):
            if column not in keys.get(path.stem, ()):
                continue
            blank = (path.stem, column) in blanked
            for record in records[1:]:
                if i < len(record):
                    record[i] = "" if blank else _as_float(record[i]) if float_keys else record[i]
        with (target / "tables" / path.name).open("w", encoding="utf-8", newline="") as handle:
            csv.writer(handle).writerows(records)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("target", type=Path)
    parser.add_argument("--rows", type=int, default=10)
    parser.add_argument("--random", action="store_true", help="a random sample of rows (seed 0), not the first")
    parser.add_argument("--float-keys", action="store_true", help="write foreign-key integers as floats (13.0)")
    parser.add_argument("--blank-keys", type=float, default=0.0, help="share of foreign-key columns left empty")
    args = parser.parse_args(argv)
    write_variant(
        args.source,
        args.target,
        args.rows,
        random_rows=args.random,
        float_keys=args.float_keys,
        blank_keys=args.blank_keys,
    )
    print(f"wrote {args.target} ({args.rows} rows per table)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
