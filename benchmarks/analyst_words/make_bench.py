"""Build an ``analyst_words`` benchmark folder: analyst questions in business words, one of two sets.

- ``--set schemas`` (the default): the questions of ``queries.jsonl`` beside this script, over the header-only
  CSVs of ``real_schemas`` for ``northwind``, ``mimic3``, ``identityserver`` and ``danbooru``, schemas the
  ``business_words`` set does not use.
- ``--set spider2``: the questions of ``spider2_queries.jsonl`` beside this script, over the tables (with their
  sample rows) of ``spider2_lite``; the databases are those its questions name.

This script copies every table of those databases with their lines of ``tables_meta.jsonl`` and ``joins.jsonl``
(unchanged) into a folder in the layout of ``business_words``, which ``pearl eval`` and ``load_benchmark`` read.

Before writing, every question is checked: its gold tables exist, ``hops`` is their number, and its gold tables
are connected through the declared foreign keys of ``joins.jsonl``. A question whose tables are connected only
through an undeclared key (a shared column of the same name ending in ``id``, ``code`` or ``key``, such as
``ClientId`` or ``ICD9_CODE``, or else two columns its ``sql`` equates, such as ``orders.customer_id =
customers.id``; ``spider2_lite`` declares no keys at all) is printed, and must say why in its ``note``; a question
whose tables are not connected at all fails the build. Reading a question's ``sql`` needs ``sqlglot``.

    python benchmarks/analyst_words/make_bench.py --out DIR [--set {schemas,spider2}] [--source FOLDER]

``--source`` defaults to ``../shared/bench/real_schemas`` or ``../shared/bench/spider2_lite`` from the current
directory; ``--real-schemas`` is another name for it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import networkx as nx

HERE = Path(__file__).resolve().parent
BENCH = Path("../shared/bench")
# set: (its questions beside this script, its default source, its databases; None: those its questions name)
SETS: dict[str, tuple[str, Path, tuple[str, ...] | None]] = {
    "schemas": ("queries.jsonl", BENCH / "real_schemas", ("northwind", "mimic3", "identityserver", "danbooru")),
    "spider2": ("spider2_queries.jsonl", BENCH / "spider2_lite", None),
}
GENERIC_KEYS = {"id", "row_id"}  # shared by nearly every table of a schema: no evidence of a join
KEY_ENDINGS = ("id", "code", "key")  # how a key column's name ends


def main(argv: list[str] | None = None) -> int:
    """Check the questions and write the benchmark folder; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path, help="the folder to write (must be new or empty)")
    parser.add_argument("--set", choices=sorted(SETS), default="schemas", help="which questions (default: schemas)")
    parser.add_argument(
        "--source",
        "--real-schemas",
        type=Path,
        help="the source benchmark folder (default: ../shared/bench/real_schemas for schemas, "
        "../shared/bench/spider2_lite for spider2, from the current directory)",
    )
    args = parser.parse_args(argv)
    questions_file, default_source, fixed_dbs = SETS[args.set]
    source: Path = args.source or default_source
    for needed in ("tables_meta.jsonl", "joins.jsonl", "tables"):
        if not (source / needed).exists():
            parser.error(f"{source / needed} is missing: point --source at the {default_source.name} benchmark folder")
    out: Path = args.out
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        parser.error(f"{out} exists and is not an empty folder: choose a new --out")

    queries_path = HERE / questions_file
    queries = [json.loads(line) for line in queries_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    dbs = set(fixed_dbs or (query.get("db") for query in queries))
    meta_lines = _lines_of(source / "tables_meta.jsonl", dbs, lambda row: row["db"])
    join_lines = _lines_of(source / "joins.jsonl", dbs, lambda row: row["left"].split("__", 1)[0])
    meta = {json.loads(line)["id"]: json.loads(line) for line in meta_lines}
    joins = [json.loads(line) for line in join_lines]

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
        print("connected only through an undeclared key (same-named, or equated in its sql): " + ", ".join(undeclared))
    return 0


def _lines_of(path: Path, dbs: set[str], db_of: Any) -> list[str]:
    """The lines of a JSONL file whose row belongs to one of the databases, unchanged (newline kept)."""
    kept = []
    for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
        if line.strip() and db_of(json.loads(line)) in dbs:
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
        if _connected(gold, declared):
            continue
        linked = declared | {frozenset((a, b)) for a in gold for b in gold if _same_named_key(meta[a], meta[b])}
        if not _connected(gold, linked):
            linked |= _equated(query.get("sql", ""), gold)
        if not _connected(gold, linked):
            errors.append(f"{qid}: its gold tables {gold} are not connected")
            continue
        undeclared.append(qid)
        if not query.get("note"):
            errors.append(f"{qid}: its gold tables join on an undeclared key, but it has no note saying why")
    return errors, undeclared


def _equated(sql: str, gold: list[str]) -> set[frozenset[str]]:
    """The pairs of gold tables whose columns ``sql`` sets equal (``a.x = b.y``, by table name or alias)."""
    import sqlglot  # the optional "bench" dependency, needed only here
    from sqlglot import exp

    by_name = {tid.split("__", 1)[1].lower(): tid for tid in gold}
    tree = sqlglot.parse_one(sql, read="sqlite")
    alias = {t.alias_or_name.lower(): by_name.get(t.name.lower()) for t in tree.find_all(exp.Table)}
    pairs = set()
    for eq in tree.find_all(exp.EQ):
        if isinstance(eq.left, exp.Column) and isinstance(eq.right, exp.Column):
            a, b = alias.get(eq.left.table.lower()), alias.get(eq.right.table.lower())
            if a and b and a != b:
                pairs.add(frozenset((a, b)))
    return pairs


def _same_named_key(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two tables share a key-like column name (ending in ``id``, ``code`` or ``key``; not ``id``), case aside."""
    shared = {c.lower() for c in a["columns"]} & {c.lower() for c in b["columns"]}
    return any(name.endswith(KEY_ENDINGS) and name not in GENERIC_KEYS for name in shared)


def _connected(tables: list[str], linked: set[frozenset[str]]) -> bool:
    """Whether the tables form one component when ``linked`` holds the pairs that join."""
    graph = nx.Graph()
    graph.add_nodes_from(tables)
    graph.add_edges_from((a, b) for i, a in enumerate(tables) for b in tables[i + 1 :] if frozenset((a, b)) in linked)
    return nx.is_connected(graph)


if __name__ == "__main__":
    sys.exit(main())
