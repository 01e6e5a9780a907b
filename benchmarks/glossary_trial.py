"""Does an LLM-written glossary tie analysts' business words to tables? A trial on a benchmark's databases.

The paper front-loads the LLM's work to the build. Here an LLM writes, once per table, the business words an
analyst uses for the table and each of its columns ("payroll", "pay" for ``salaries.salary``); the glossary is
written into a copy of the benchmark as each column's description (``tables_meta.jsonl``'s
``column_descriptions``), which the column vectors and the units read like any column text. Both folders are then
measured per database with ``pearl eval``:

    python benchmarks/glossary_trial.py ../shared/bench/business_words runs/bench/bw_glossary \\
        --dbs employees,pubs,oracle_co --llm-base http://127.0.0.1:8011/v1
    pearl eval runs/bench/bw_glossary --per-database --anchor          # with the glossary
    pearl eval runs/bench/bw_glossary_plain --per-database --anchor    # the same tables and questions without

The copy holds only the named databases' tables (their header rows are read from the source, links followed) and
questions; ``OUT_plain`` beside it the same without the glossary. Each answer is cached in ``OUT/glossary.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

from llama_index.core.llms import LLM, ChatMessage

from llama_index_pearl.evaluation.bench_tables import linked_file
from llama_index_pearl.generation.parsing import extract_json
from llama_index_pearl.text.models import openai_compatible_llm

SYSTEM = "You write a short glossary of a database table in the words a business analyst, a manager or a clerk uses."
ASK = (
    "Table: {table} (database: {db})\nColumns: {columns}\n\n"
    "For the table, and for each column, give the everyday business words for what it holds: what a manager "
    "would call it, synonyms, the measure or category it stands for (for example: revenue, spend, headcount, "
    "customers, premium members). A few words each. Answer JSON only: "
    '{{"table": "...", "columns": {{"<column>": "...", ...}}}}'
)


def glossary(llm: LLM, db: str, info: dict) -> dict:
    names = info["columns"]
    kinds = info.get("column_types") or [""] * len(names)
    columns = ", ".join(f"{n} ({k})" if k else n for n, k in zip(names, kinds))
    messages = [
        ChatMessage(role="system", content=SYSTEM),
        ChatMessage(role="user", content=ASK.format(table=info["table"], db=db, columns=columns)),
    ]
    reply = llm.chat(messages).message.content or ""
    try:
        found = extract_json(reply)
    except Exception:  # a reply that is no JSON: no glossary for this table
        return {}
    return found if isinstance(found, dict) else {}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source")
    parser.add_argument("out")
    parser.add_argument("--dbs", required=True, help="comma-separated databases")
    parser.add_argument("--llm-base", required=True)
    args = parser.parse_args(argv)
    source, out = Path(args.source), Path(args.out)
    plain = out.parent / f"{out.name}_plain"
    dbs = set(args.dbs.split(","))
    json_mode = {"response_format": {"type": "json_object"}}
    llm = openai_compatible_llm(args.llm_base, "local", 300, 0.0, 400, additional_kwargs=json_mode)
    meta = [json.loads(x) for x in (source / "tables_meta.jsonl").read_text("utf-8").splitlines() if x.strip()]
    meta = [m for m in meta if str(m.get("db")) in dbs]
    cache_path = out / "glossary.jsonl"
    for folder in (out, plain):
        (folder / "tables").mkdir(parents=True, exist_ok=True)
    cached = {}
    if cache_path.is_file():
        cached = {r["id"]: r["glossary"] for r in map(json.loads, cache_path.read_text("utf-8").splitlines())}
    lines, plain_lines = [], []
    for info in meta:
        for folder in (out, plain):
            shutil.copyfile(
                linked_file(source / "tables" / f"{info['id']}.csv"), folder / "tables" / f"{info['id']}.csv"
            )
        if info["id"] not in cached:
            started = time.perf_counter()
            cached[info["id"]] = glossary(llm, str(info["db"]), info)
            with cache_path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps({"id": info["id"], "glossary": cached[info["id"]]}) + "\n")
            print(f"{info['id']}: {time.perf_counter() - started:.0f} s {cached[info['id']]}", flush=True)
        words = cached[info["id"]]
        described = {c: str(d) for c, d in (words.get("columns") or {}).items() if c in info["columns"] and d}
        if words.get("table"):  # the table's own words go with its first column, which every unit shows
            first = info["columns"][0]
            described[first] = f"{words['table']}; {described.get(first, '')}".strip("; ")
        lines.append(json.dumps({**info, "column_descriptions": described}))
        plain_lines.append(json.dumps(info))
    questions = [q for q in (source / "queries.jsonl").read_text("utf-8").splitlines() if q.strip()]
    kept = "\n".join(q for q in questions if str(json.loads(q).get("db")) in dbs) + "\n"
    for folder, rows in ((out, lines), (plain, plain_lines)):
        (folder / "tables_meta.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
        (folder / "queries.jsonl").write_text(kept, encoding="utf-8")
    print(f"{out} and {plain}: {len(meta)} tables, {kept.count(chr(10))} questions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
