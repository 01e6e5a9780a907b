"""Build the ``analyst_words`` benchmark folder: analyst questions in business words over four real schemas.

The questions (``queries.jsonl`` beside this script) ask about ``northwind``, ``mimic3``, ``identityserver`` and
``danbooru``, schemas the ``business_words`` set does not use. The tables are the header-only CSVs of
``real_schemas``; this script copies them with the schemas' lines of ``tables_meta.jsonl`` and ``joins.jsonl``
(unchanged) into a folder in the layout of ``business_words``, which ``pearl eval`` and ``load_benchmark`` read.

Before writing, every question is checked: its gold tables exist, ``hops`` is their number, and its gold tables
are connected through the declared foreign keys of ``joins.jsonl``. A question whose tables are connected only
through an undeclared key of the same name (a shared column ending in ``id``, ``code`` or ``key``, such as
``ClientId`` or ``ICD9_CODE``) is printed, not failed; a question whose tables are not connected at all fails the
build.

    python benchmarks/analyst_words/make_bench.py --out DIR [--real-schemas ../shared/bench/real_schemas]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import networkx as nx

DBS = ("northwind", "mimic3", "identityserver", "danbooru")
HERE = Path(__file__).resolve().parent
GENERIC_KEYS = {"id", "row_id"}  # shared by nearly every table of a schema: no evidence of a join
KEY_ENDINGS = ("id", "code", "key")  # how a key column's name ends


def main(argv: list[str] | None = None) -> int:
    """Check the questions and write the benchmark folder; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path, help="the folder to write (must be new or empty)")
    parser.add_argument(
        "--real-schemas",
        type=Path,
        default=Path("../shared/bench/real_schemas"),
        help="the real_schemas set (default: ../shared/bench/real_schemas, from the current directory)",
    )
    args = parser.parse_args(argv)
    source: Path = args.real_schemas
    for needed in ("tables_meta.jsonl", "joins.jsonl", "tables"):
        if not (source / needed).exists():
            parser.error(f"{source / needed} is missing: point --real-schemas at the real_schemas benchmark folder")
    out: Path = args.out
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        parser.error(f"{out} exists and is not an empty folder: choose a new --out")

    meta_lines = _lines_of(source / "tables_meta.jsonl", lambda row: row["db"])
    join_lines = _lines_of(source / "joins.jsonl", lambda row: row["left"].split("__", 1)[0])
    meta = {json.loads(line)["id"]: json.loads(line) for line in meta_lines}
    joins = [json.loads(line) for line in join_lines]
    queries_path = HERE / "queries.jsonl"
    queries = [json.loads(line) for line in queries_path.read_text(encoding="utf-8").splitlines() if line.strip()]

    errors, undeclared = _check(queries, meta, joins)
    if errors:
        for error in errors:
            print(f"error: {error}", file=sys.stderr)
        return 1
    missing = [tid for tid in meta if not (source / "tables" / f"{tid}.csv").exists()]
    if missing:
        print(f"error: no CSV in {source / 'tables'} for {', '.join(missing)}", file=sys.stderr)
        return 1

    (out / "tables").mkdir(parents=True, exist_ok=True)
    for tid in meta:
        shutil.copyfile(source / "tables" / f"{tid}.csv", out / "tables" / f"{tid}.csv")
    (out / "tables_meta.jsonl").write_text("".join(meta_lines), encoding="utf-8")
    (out / "joins.jsonl").write_text("".join(join_lines), encoding="utf-8")
    shutil.copyfile(queries_path, out / "queries.jsonl")

    print(f"wrote {out}: {len(meta)} tables, {len(joins)} declared key pairs, {len(queries)} questions")
    if undeclared:
        print("connected only through an undeclared same-named key: " + ", ".join(undeclared))
    return 0


def _lines_of(path: Path, db_of: Any) -> list[str]:
    """The lines of a JSONL file whose row belongs to one of the four schemas, unchanged (newline kept)."""
    kept = []
    for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
        if line.strip() and db_of(json.loads(line)) in DBS:
            kept.append(line if line.endswith("\n") else line + "\n")
    return kept


def _check(
    queries: list[dict[str, Any]], meta: dict[str, dict[str, Any]], joins: list[dict[str, str]]
) -> tuple[list[str], list[str]]:
    """Errors of the questions, and the ids of those connected only through an undeclared same-named key."""
    declared: set[frozenset[str]] = set()
    for pair in joins:
        left, right = (pair[side].split(".", 1)[0] for side in ("left", "right"))
        if left != right:
            declared.add(frozenset((left, right)))
    errors: list[str] = []
    undeclared: list[str] = []
    seen: set[str] = set()
    for query in queries:
        qid = query.get("id", "?")
        gold = query.get("gold_tables", [])
        if qid in seen:
            errors.append(f"{qid}: id used twice")
        seen.add(qid)
        unknown = [tid for tid in gold if tid not in meta]
        if not gold or unknown:
            errors.append(f"{qid}: unknown or no gold tables {unknown}")
            continue
        if query.get("hops") != len(gold):
            errors.append(f"{qid}: hops is {query.get('hops')}, but it has {len(gold)} gold tables")
        if any(meta[tid]["db"] != query.get("db") for tid in gold):
            errors.append(f"{qid}: a gold table is not of its db {query.get('db')!r}")
        if _connected(gold, lambda a, b: frozenset((a, b)) in declared):
            continue
        if _connected(gold, lambda a, b: frozenset((a, b)) in declared or _same_named_key(meta[a], meta[b])):
            undeclared.append(qid)
        else:
            errors.append(f"{qid}: its gold tables {gold} are not connected")
    return errors, undeclared


def _same_named_key(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two tables share a key-like column name (ending in ``id``, ``code`` or ``key``; not ``id``), case aside."""
    shared = {c.lower() for c in a["columns"]} & {c.lower() for c in b["columns"]}
    return any(name.endswith(KEY_ENDINGS) and name not in GENERIC_KEYS for name in shared)


def _connected(tables: list[str], linked: Any) -> bool:
    """Whether the tables form one component when ``linked(a, b)`` says which pairs join."""
    graph = nx.Graph()
    graph.add_nodes_from(tables)
    graph.add_edges_from((a, b) for i, a in enumerate(tables) for b in tables[i + 1 :] if linked(a, b))
    return nx.is_connected(graph)


if __name__ == "__main__":
    sys.exit(main())
