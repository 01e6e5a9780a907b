"""A dev lake that looks like a company's: a benchmark's databases, with copies, a superset and another company.

A user points PEARL at a folder of databases that are not independent: a database exported twice under two naming
conventions, a newer database holding an older one's tables and more, two companies on one vendor's schema. This
script writes such a lake from a benchmark folder (``tables/<db>__<table>.csv``, ``tables_meta.jsonl``,
``queries.jsonl``), as a benchmark folder of its own, the source's questions and gold unchanged (a question means
its ``db``; a route to a copy that the answer names counts as right where ``benchmarks/routing.py`` counts twins):

- ``--copy DB``: ``DB_copy``, DB's tables and columns under the other naming convention (``film_actor`` <->
  ``FilmActor``, ``actor_id`` <-> ``actorId``), the same rows;
- ``--superset DB:OTHER``: ``DB_plus``, DB's tables under their names and OTHER's tables beside them;
- ``--organisation DB``: ``DB_other``, DB's schema with another company's rows: each column's values permuted
  (seed 0), so no row of DB stands as it was.

Every other database of the source stays as it is (unrelated databases). The rows are read from the source and
written to ``OUT``; nothing is copied into this repository.

    python benchmarks/lake/make_lake.py ../shared/bench/spider runs/lakes/spider_lake \\
        --copy concert_singer --copy pets_1 --superset world_1:car_1 --organisation employee_hire_evaluation
    python benchmarks/routing.py runs/lakes/* --learn --held-out NAME
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
from pathlib import Path

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def other_convention(name: str, table: bool) -> str:
    """``film_actor`` -> ``FilmActor`` (a table) or ``filmActor`` (a column); ``FilmActor`` -> ``film_actor``.

    >>> other_convention("film_actor", True), other_convention("actor_id", False), other_convention("FilmActor", True)
    ('FilmActor', 'actorId', 'film_actor')
    """
    if "_" in name or name.islower():
        words = [w for w in name.split("_") if w]
        joined = "".join(w[:1].upper() + w[1:] for w in words)
        return joined if table else joined[:1].lower() + joined[1:]
    return _CAMEL.sub("_", name).lower()


def _read(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.reader(handle))


def _write(path: Path, rows: list[list[str]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows(rows)


def _permuted(rows: list[list[str]], sample: random.Random) -> list[list[str]]:
    header, body = rows[0], rows[1:]
    columns = [list(c) for c in zip(*body)] if body else []
    for column in columns:
        sample.shuffle(column)
    return [header, *(list(r) for r in zip(*columns))]


class Lake:
    """The lake being written: its tables and their metadata."""

    def __init__(self, source: Path, out: Path) -> None:
        self.source, self.out = source, out
        (out / "tables").mkdir(parents=True, exist_ok=False)
        self.meta = [
            json.loads(line) for line in (source / "tables_meta.jsonl").read_text("utf-8").splitlines() if line
        ]
        self.written: list[dict] = []

    def tables_of(self, db: str) -> list[dict]:
        found = [m for m in self.meta if str(m.get("db")) == db]
        if not found:
            raise SystemExit(f"{self.source}: no table of database {db!r}")
        return found

    def add(self, db: str, table: str, rows: list[list[str]], info: dict) -> None:
        table_id = f"{db}__{table}"
        _write(self.out / "tables" / f"{table_id}.csv", rows)
        self.written.append({**info, "id": table_id, "db": db, "table": table, "columns": rows[0]})

    def rows(self, info: dict) -> list[list[str]]:
        return _read(self.source / "tables" / f"{info['id']}.csv")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", help="a benchmark folder with tables_meta.jsonl")
    parser.add_argument("out", help="the lake to write (must not exist)")
    parser.add_argument("--copy", action="append", default=[], metavar="DB")
    parser.add_argument("--superset", action="append", default=[], metavar="DB:OTHER")
    parser.add_argument("--organisation", action="append", default=[], metavar="DB")
    args = parser.parse_args(argv)
    lake, sample = Lake(Path(args.source), Path(args.out)), random.Random(0)
    for info in lake.meta:
        lake.add(
            str(info["db"]), str(info["table"]), lake.rows(info), {k: info[k] for k in ("column_types",) if k in info}
        )
    for db in args.copy:
        for info in lake.tables_of(db):
            rows = lake.rows(info)
            header = [other_convention(c, table=False) for c in rows[0]]
            lake.add(f"{db}_copy", other_convention(str(info["table"]), table=True), [header, *rows[1:]], {})
    for pair in args.superset:
        db, other = pair.split(":", 1)
        for info in [*lake.tables_of(db), *lake.tables_of(other)]:
            lake.add(f"{db}_plus", str(info["table"]), lake.rows(info), {})
    for db in args.organisation:
        for info in lake.tables_of(db):
            lake.add(f"{db}_other", str(info["table"]), _permuted(lake.rows(info), sample), {})
    with (lake.out / "tables_meta.jsonl").open("w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(m) + "\n" for m in lake.written)
    (lake.out / "queries.jsonl").write_text((lake.source / "queries.jsonl").read_text("utf-8"), encoding="utf-8")
    print(f"{lake.out}: {len(lake.written)} tables, {len({m['db'] for m in lake.written})} databases")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
