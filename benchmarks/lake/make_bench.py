"""A lake of four sample databases as a benchmark folder: the CSV exports of ``shared/lakes``, our own questions.

``shared/lakes`` holds chinook, sakila, northwind and classicmodels as a user exports them, with no gold on
purpose. ``questions.jsonl`` beside this script holds 64 questions we wrote for them (business words, one to six
tables, each with the database it means): they measure how a question finds its database in a lake of
look-alike databases (``pearl eval --per-database`` and the whole lake), not a dev set to tune on. This script
writes the benchmark format (``tables/<db>__<table>.csv``, ``tables_meta.jsonl``, ``queries.jsonl``) into a folder
of your choosing; the rows stay out of this repository.

    python benchmarks/lake/make_bench.py ../shared/lakes runs/bench/lake
    pearl eval runs/bench/lake --anchor                  # the whole lake at once
    pearl eval runs/bench/lake --per-database --anchor   # each question within its database
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
from pathlib import Path

HERE = Path(__file__).parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lakes", help="the shared/lakes folder")
    parser.add_argument("out", help="the benchmark folder to write (must not exist)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=False)
    (out / "tables").mkdir()
    with (out / "tables_meta.jsonl").open("w", encoding="utf-8") as meta:
        for path in sorted(Path(args.lakes).glob("*/tables/*.csv")):
            db, table = path.stem.split("__", 1)
            shutil.copyfile(path, out / "tables" / path.name)
            with path.open(encoding="utf-8", newline="") as handle:
                columns = next(csv.reader(handle))
            meta.write(json.dumps({"id": path.stem, "db": db, "table": table, "columns": columns}) + "\n")
    shutil.copyfile(HERE / "questions.jsonl", out / "queries.jsonl")
    print(f"{out}: {len(list((out / 'tables').iterdir()))} tables")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
