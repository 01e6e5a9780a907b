"""Harder copies of a benchmark folder, for checking that a gain generalizes.

Usage::

    python benchmarks/variants.py ../shared/bench/spider runs/variants/spider_rows10 --rows 10
    python benchmarks/variants.py ../shared/bench/spider runs/variants/spider_rand10 --rows 10 --random
    python benchmarks/variants.py ../shared/bench/spider runs/variants/spider_fkfmt --rows 10 --random \\
        --float-keys --blank-keys 0.3
    python benchmarks/variants.py ../shared/bench/tpch runs/variants/tpch_pooled \\
        --pool ../shared/bench/spider --pool ../shared/bench/fetaqa_dev:300

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
``--pool DIR[:N]`` adds the tables of another benchmark (its first N by id; all without
``:N``), ids and metadata kept, but none of its questions or joins: the source's questions
must then find their tables among many others (a warehouse in a lake), while a pool of the
source's own 8 tables makes any k >= 8 complete. Without ``--rows`` every row is kept.
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
    rows: int | None,
    *,
    random_rows: bool = False,
    float_keys: bool = False,
    blank_keys: float = 0.0,
    pools: tuple[str, ...] = (),
) -> None:
    """Copy ``source`` to ``target`` with every table cut to ``rows`` rows, foreign keys perturbed as asked,
    beside the tables of the ``pools`` (``DIR`` or ``DIR:N``)."""
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
        if rows is not None:
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
    for pool in pools:
        _add_pool(pool, target)


def _add_pool(pool: str, target: Path) -> None:
    """Copy the tables of ``DIR`` (its first N by id with ``DIR:N``) and their metadata lines into ``target``."""
    folder, _, count = pool.partition(":")
    paths = sorted((Path(folder) / "tables").glob("*.csv"))
    paths = paths[: int(count)] if count else paths
    for path in paths:
        shutil.copyfile(path, target / "tables" / path.name)
    ids = {p.stem for p in paths}
    meta = Path(folder) / "tables_meta.jsonl"
    if meta.is_file():
        lines = [line for line in meta.read_text(encoding="utf-8").splitlines() if line.strip()]
        kept = [line for line in lines if json.loads(line)["id"] in ids]
        with (target / "tables_meta.jsonl").open("a", encoding="utf-8") as handle:
            handle.write("".join(line + "\n" for line in kept))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("target", type=Path)
    parser.add_argument("--rows", type=int, default=None, help="rows kept per table (default: all)")
    parser.add_argument("--random", action="store_true", help="a random sample of rows (seed 0), not the first")
    parser.add_argument("--float-keys", action="store_true", help="write foreign-key integers as floats (13.0)")
    parser.add_argument("--blank-keys", type=float, default=0.0, help="share of foreign-key columns left empty")
    parser.add_argument("--pool", action="append", default=[], help="DIR or DIR:N, tables added beside (repeatable)")
    args = parser.parse_args(argv)
    write_variant(
        args.source,
        args.target,
        args.rows,
        random_rows=args.random,
        float_keys=args.float_keys,
        blank_keys=args.blank_keys,
        pools=tuple(args.pool),
    )
    rows = "every row" if args.rows is None else f"{args.rows} rows per table"
    print(f"wrote {args.target} ({rows}, {len(list((args.target / 'tables').glob('*.csv')))} tables)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
