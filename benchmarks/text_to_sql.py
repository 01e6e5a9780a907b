"""Text-to-SQL answers measured end to end: LlamaIndex's NLSQLRetriever with four table retrievers.

On a fixed, seeded sample of a SQL benchmark folder's questions (every question of 3+ tables, the
rest stratified by table count, proportionally), the same LLM writes SQL through LlamaIndex's
``NLSQLRetriever`` (its default text-to-SQL prompt and SQL parser), with the same encoder and k,
given the tables of one of these conditions:

- ``objectindex``: LlamaIndex's ``ObjectIndex`` + ``SQLTableNodeMapping`` (one vector per table);
- ``pearl``: ``index.as_sql_table_retriever(..., join_keys=False)``, PEARL's tables only;
- ``pearl-joins``: the same with the join keys in each schema's ``context_str`` (the shipped default: the
  connected set of tables and two more candidates, at most k unless the set is larger);
- ``pearl-five`` (optional): k tables by pooled score alone, with join keys (``set_rule=None``: before the set);
- ``gold``: exactly the gold tables, no join keys (k = the number of gold tables: padding with other
  tables would mix retrieval into the ceiling of "the right tables");
- ``gold-joins`` (optional): the gold tables with PEARL's join keys between them.

The predicted SQL runs on the pooled SQLite database the retrievers see (every table, named by its id
``<db>__<table>``: :func:`llama_index_pearl.evaluation.llamaindex_baseline.sqlite_database`), the gold SQL
on a per-``db`` SQLite database of the original table names written the same way from the same CSVs.
Execution accuracy: result sets equal as multisets of rows (numbers compared as floats, strings as is,
columns in any order), in order only when the gold SQL's outermost query has ORDER BY. Each query may run
for ``--sql-timeout`` seconds. A failure is, first that applies: ``llm error`` (no answer in time),
``gold missing`` (a gold table was not in the prompt), ``wrong tables`` (the SQL reads another set of
tables), ``join wrong`` (its join column pairs are not the gold SQL's, read as
:mod:`llama_index_pearl.evaluation.hint_recall` reads them), ``sql error``, ``wrong result``.

LLM answers are cached on disk, keyed by model, generation settings and the full prompt: a rerun of an
unchanged prompt costs nothing (and reports the seconds the answer first took).

    python benchmarks/text_to_sql.py --bench ../shared/bench/spider --conditions objectindex,gold --limit 10
    python benchmarks/text_to_sql.py --bench ../shared/bench/spider_realistic --json runs/t2s_realistic.json
    python benchmarks/text_to_sql.py --bench ../shared/bench/spider --cached-only   # a run so far, no LLM call
    python benchmarks/text_to_sql.py --bench ../shared/bench/spider2_lite --per-database \\
        --conditions objectindex,pearl-five,pearl-joins,gold   # each question within its own database
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import random
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from llama_index.core import SQLDatabase, VectorStoreIndex
from llama_index.core.base.llms.types import CompletionResponse, CompletionResponseGen, LLMMetadata
from llama_index.core.bridge.pydantic import Field
from llama_index.core.llms import CustomLLM
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.objects import ObjectIndex, SQLTableNodeMapping, SQLTableSchema
from llama_index.core.retrievers import NLSQLRetriever
from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.evaluation.benchmark import Benchmark, BenchQuery, load_benchmark
from llama_index_pearl.evaluation.hint_recall import SqlSchema, gold_join_pairs
from llama_index_pearl.evaluation.llamaindex_baseline import sqlite_database
from llama_index_pearl.retrieval.answer.join_hints import compute_join_hints
from llama_index_pearl.retrieval.sql_tables import join_keys_text
from llama_index_pearl.tables.table import Table
from llama_index_pearl.text.models import default_embed_model, openai_compatible_llm

CONDITIONS = ("objectindex", "pearl", "pearl-joins", "pearl-five", "gold", "gold-joins")
DEFAULT_CONDITIONS = "objectindex,pearl,pearl-joins,gold"
FAILURES = ("llm error", "gold missing", "wrong tables", "join wrong", "sql error", "wrong result")
MAX_ROWS = 100_000  # a result beyond this is not compared (a runaway cross join)
MAX_PERMUTED_COLUMNS = 5


# ---------------------------------------------------------------- sample
def sample_questions(queries: Sequence[BenchQuery], n: int, seed: int) -> list[BenchQuery]:
    """Every question of 3+ tables, the rest of ``n`` drawn per table count in proportion; shuffled (seeded)."""
    rng = random.Random(seed)
    with_sql = [q for q in queries if q.sql and q.db]
    chosen = [q for q in with_sql if q.n_tables >= 3]
    strata: dict[int, list[BenchQuery]] = {}
    for q in with_sql:
        if q.n_tables < 3:
            strata.setdefault(q.n_tables, []).append(q)
    rest, total = max(0, n - len(chosen)), sum(len(s) for s in strata.values())
    quotas = {h: rest * len(s) / total for h, s in strata.items()} if total else {}
    counts = {h: int(v) for h, v in quotas.items()}
    for h in sorted(quotas, key=lambda h: quotas[h] - counts[h], reverse=True)[: rest - sum(counts.values())]:
        counts[h] += 1  # largest remainders
    for h, members in sorted(strata.items()):
        chosen += rng.sample(members, min(counts[h], len(members)))
    rng.shuffle(chosen)  # --limit N takes a mix of table counts
    return chosen


# ------------------------------------------------------------------ LLM
class NotCached(Exception):
    """``--cached-only``: the answer to this prompt is not in the cache."""


class CachedLLM(CustomLLM):
    """An LLM whose answers are kept on disk by (model, settings, prompt); records tokens and seconds."""

    inner: Any = Field(exclude=True)
    model: str
    settings: dict[str, Any]
    cache_dir: str
    cached_only: bool = False
    last: dict[str, Any] = Field(default_factory=dict)  # the latest answer, and whether it came from the cache

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name=self.model, is_chat_model=False)

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        key = json.dumps({"model": self.model, "settings": self.settings, "prompt": prompt}, sort_keys=True)
        path = Path(self.cache_dir) / f"{hashlib.sha256(key.encode()).hexdigest()}.json"
        cached = path.exists()
        if cached:
            record = json.loads(path.read_text(encoding="utf-8"))
        elif self.cached_only:
            raise NotCached(path.name)
        else:
            started = time.perf_counter()
            response = self.inner.complete(prompt)
            usage = getattr(response.raw, "usage", None)
            record = {
                "prompt": prompt,
                "text": response.text,
                "prompt_tokens": getattr(usage, "prompt_tokens", None),
                "completion_tokens": getattr(usage, "completion_tokens", None),
                "seconds": round(time.perf_counter() - started, 2),
            }
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary = path.with_suffix(".tmp")
            temporary.write_text(json.dumps(record), encoding="utf-8")
            temporary.replace(path)
        self.last = {**record, "cached": cached}
        return CompletionResponse(text=record["text"])

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        raise NotImplementedError("the benchmark does not stream")


def make_llm(args: argparse.Namespace) -> CachedLLM:
    # stop at "SQLResult:": the parser drops everything after it, so the model need not invent a result
    settings = {"temperature": 0.0, "max_tokens": args.max_tokens, "stop": ["SQLResult:"]}
    inner = openai_compatible_llm(
        args.llm_base,
        args.llm_model,
        args.llm_timeout,
        temperature=settings["temperature"],
        max_tokens=args.max_tokens,
        additional_kwargs={"stop": settings["stop"]},
    )
    return CachedLLM(
        inner=inner, model=args.llm_model, settings=settings, cache_dir=str(args.cache), cached_only=args.cached_only
    )


# ------------------------------------------------------------- retrievers
class GoldTables:
    """A table retriever that returns the current question's gold tables (with PEARL's join keys if asked).

    The run sets ``gold`` before each question.
    """

    def __init__(self, join_graph: Any = None) -> None:
        self.gold: Sequence[str] = ()
        self._graph = join_graph

    def retrieve(self, question: str) -> list[SQLTableSchema]:
        hints = [h.to_dict() for h in compute_join_hints(self._graph, self.gold)] if self._graph is not None else []
        return [SQLTableSchema(table_name=t, context_str=join_keys_text(t, hints) or None) for t in self.gold]


class ByDatabase:
    """A table retriever per database (``--per-database``): the run sets ``db`` before each question."""

    def __init__(self, of_database: Callable[[str], Any]) -> None:
        self.db: str | None = None
        self._of_database = of_database
        self._made: dict[str, Any] = {}

    def retrieve(self, question: str) -> list[SQLTableSchema]:
        assert self.db is not None, "ByDatabase needs the question's db"
        if self.db not in self._made:
            self._made[self.db] = self._of_database(self.db)
        return self._made[self.db].retrieve(question)


class Recorded:
    """A table retriever as ``NLSQLRetriever`` calls it, remembering the tables that reached the prompt."""

    def __init__(self, retriever: Any) -> None:
        self.retriever = retriever
        self.tables: list[str] = []

    def retrieve(self, question: str) -> list[SQLTableSchema]:
        schemas = self.retriever.retrieve(question)
        self.tables = [s.table_name for s in schemas]
        return schemas


def table_retrievers(
    conditions: Sequence[str],
    bench: Benchmark,
    database: SQLDatabase,
    k: int,
    embed_model: Any,
    per_database: bool = False,
) -> dict[str, Any]:
    """Each condition's table retriever (PEARL's index is built only when a condition needs it); per database,
    ObjectIndex indexes each database's tables alone and PEARL scopes its one index with ``filters``."""
    retrievers: dict[str, Any] = {"gold": GoldTables()}
    if "objectindex" in conditions:
        names = sorted(database.get_usable_table_names())

        def object_index(tables: Sequence[str]) -> Any:
            schemas = [SQLTableSchema(table_name=name) for name in tables]
            mapping = SQLTableNodeMapping(database)
            objects = ObjectIndex.from_objects(schemas, mapping, index_cls=VectorStoreIndex, embed_model=embed_model)
            return objects.as_retriever(similarity_top_k=k)

        sources = {t.id: t.source for t in bench.tables}
        retrievers["objectindex"] = (
            ByDatabase(lambda db: object_index([n for n in names if sources.get(n) == db]))
            if per_database
            else object_index(names)
        )
    if {"pearl", "pearl-joins", "pearl-five", "gold-joins"} & set(conditions):
        started = time.perf_counter()
        index = PearlTableIndex.from_tables(bench.tables, embed_model=embed_model)
        print(f"PEARL index: {len(index.units)} units in {time.perf_counter() - started:.0f} s", flush=True)

        def pearl(db: str | None, **kwargs: Any) -> Any:
            scope = MetadataFilters(filters=[MetadataFilter(key="source", value=db)]) if db is not None else None
            return index.as_sql_table_retriever(database, k, filters=scope, **kwargs)

        variants = {
            "pearl": {"join_keys": False},
            "pearl-joins": {"join_keys": True},
            "pearl-five": {"set_margin": None, "set_rule": None},
        }
        for name, kwargs in variants.items():
            retrievers[name] = (
                ByDatabase(lambda db, kwargs=kwargs: pearl(db, **kwargs)) if per_database else pearl(None, **kwargs)
            )
        retrievers["gold-joins"] = GoldTables(index.join_graph)
    return retrievers


# -------------------------------------------------------------- execution
def run_sql(path: Path, sql: str, timeout: float) -> tuple[list[tuple[Any, ...]] | None, str | None]:
    """Rows of a read-only query, or ``None`` and the error (a query past ``timeout`` seconds is interrupted)."""
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    deadline = time.monotonic() + timeout
    connection.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
    try:
        rows = connection.execute(sql).fetchmany(MAX_ROWS + 1)
    except Exception as exc:  # any failure of the LLM's SQL is a result of the run
        return None, f"{type(exc).__name__}: {exc}"
    finally:
        connection.close()
    return (None, f"more than {MAX_ROWS} rows") if len(rows) > MAX_ROWS else (rows, None)


def _value(value: Any) -> Any:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return round(float(value), 6)
    return value


def same_result(predicted: list[tuple[Any, ...]], gold: list[tuple[Any, ...]], ordered: bool) -> bool:
    """Equal as multisets of rows (as lists when ``ordered``), values normalised, columns in any order."""
    if len(predicted) != len(gold):
        return False
    gold_rows = [tuple(map(_value, r)) for r in gold]
    width = len(gold_rows[0]) if gold_rows else 0
    rows = [tuple(map(_value, r)) for r in predicted]
    if rows and len(rows[0]) != width:
        return False
    key = (lambda rs: rs) if ordered else (lambda rs: sorted(rs, key=repr))
    wanted = key(gold_rows)
    orders = itertools.permutations(range(width)) if width <= MAX_PERMUTED_COLUMNS else [tuple(range(width))]
    return any(key([tuple(r[i] for i in order) for r in rows]) == wanted for order in orders)


def has_order_by(sql: str) -> bool:
    import sqlglot

    try:
        return sqlglot.parse_one(sql, read="sqlite").args.get("order") is not None
    except sqlglot.errors.SqlglotError:
        return "order by" in " ".join(sql.lower().split())


class PooledSchema(SqlSchema):
    """``SqlSchema`` for SQL over the pooled database, whose tables are named by their ids."""

    def __init__(self, tables: Sequence[Table]) -> None:
        super().__init__(tables)
        self._pooled = {t.id.lower(): t.id for t in tables}

    def table_id(self, db: str, name: str) -> str | None:
        return self._pooled.get(name.lower())


def tables_of(sql: str) -> set[str] | None:
    import sqlglot

    try:
        return {t.name.lower() for t in sqlglot.parse_one(sql, read="sqlite").find_all(sqlglot.exp.Table)}
    except sqlglot.errors.SqlglotError:
        return None


# -------------------------------------------------------------- the run
class Judge:
    """Runs gold and predicted SQL and names the failure."""

    def __init__(self, bench: Benchmark, folder: Path, timeout: float) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.pool = folder / "pool.sqlite"
        self.database = sqlite_database(bench.tables, self.pool)
        self.gold_dbs: dict[str, Path] = {}
        for db in sorted({t.id.split("__", 1)[0] for t in bench.tables}):
            members = [t for t in bench.tables if t.id.startswith(f"{db}__")]
            self.gold_dbs[db] = folder / "gold" / f"{db}.sqlite"
            self.gold_dbs[db].parent.mkdir(parents=True, exist_ok=True)
            # SQLite reserves sqlite_* names (a copied sqlite_sequence); no gold SQL reads one
            renamed = [Table(id=t.name or t.id, df=t.df) for t in members if not str(t.name).startswith("sqlite_")]
            sqlite_database(renamed, self.gold_dbs[db]).engine.dispose()
        self.schema, self.pooled = SqlSchema(bench.tables), PooledSchema(bench.tables)
        self.timeout = timeout

    def judge(self, query: BenchQuery, prompt_tables: Sequence[str], sql: str | None) -> dict[str, Any]:
        assert query.sql and query.db
        gold_rows, gold_error = run_sql(self.gold_dbs[query.db], query.sql, self.timeout)
        if gold_error or gold_rows is None:
            return {"kind": "gold sql error", "error": gold_error}
        if sql is None:
            return {"kind": "llm error"}
        rows, error = run_sql(self.pool, sql, self.timeout)
        if rows is not None and same_result(rows, gold_rows, has_order_by(query.sql)):
            return {"kind": "ok"}
        gold = {t.lower() for t in query.gold_tables}
        if not gold <= {t.lower() for t in prompt_tables}:
            return {"kind": "gold missing", "error": error}
        used = tables_of(sql)
        if used is not None and used != gold:
            return {"kind": "wrong tables", "error": error}
        if used is not None and gold_join_pairs(sql, query.db, self.pooled) != gold_join_pairs(
            query.sql, query.db, self.schema
        ):
            return {"kind": "join wrong", "error": error}
        return {"kind": "sql error" if error else "wrong result", "error": error}


class Condition:
    """One condition's ``NLSQLRetriever`` (LlamaIndex's prompt and parser, ``sql_only``) and its records."""

    def __init__(self, name: str, retriever: Any, judge: Judge, llm: CachedLLM, embed_model: Any) -> None:
        self.name, self.retriever, self.judge, self.llm = name, retriever, judge, llm
        self.recorded = Recorded(retriever)
        self.nl_sql = NLSQLRetriever(
            judge.database, table_retriever=self.recorded, llm=llm, embed_model=embed_model, sql_only=True
        )
        self.records: list[dict[str, Any]] = []

    def ask(self, query: BenchQuery) -> None:
        """Ask the question, run and judge the SQL, keep the record (prompt tables, verdict, tokens, seconds)."""
        if isinstance(self.retriever, GoldTables):
            self.retriever.gold = query.gold_tables
        if isinstance(self.retriever, ByDatabase):
            self.retriever.db = query.db
        started = time.perf_counter()
        self.llm.last, self.recorded.tables = {}, []
        record: dict[str, Any] = {"id": query.id, "n_tables": query.n_tables, "condition": self.name}
        try:
            sql: str | None = self.nl_sql.retrieve_with_metadata(query.question)[1]["sql_query"]
        except NotCached:
            self.records.append({**record, "kind": "not run"})
            return
        except Exception as exc:  # a timeout or a server error: counted, not cached, retried on a rerun
            sql = None
            print(f"[{self.name}] {query.id}: LLM error {type(exc).__name__}: {exc}", flush=True)
        # a cached answer took no time now: count the seconds it took when it was first computed
        seconds = time.perf_counter() - started + (self.llm.last["seconds"] if self.llm.last.get("cached") else 0.0)
        gold = {t.lower() for t in query.gold_tables}
        record.update(
            prompt_tables=self.recorded.tables,
            all_gold_in_prompt=gold <= {t.lower() for t in self.recorded.tables},
            sql=sql,
            **self.judge.judge(query, self.recorded.tables, sql),
            prompt_tokens=self.llm.last.get("prompt_tokens"),
            seconds=round(seconds, 2),
        )
        self.records.append(record)

    def progress(self) -> str:
        judged = [r for r in self.records if r["kind"] != "not run"]
        correct = sum(r["kind"] == "ok" for r in judged)
        return f"{self.name} {100 * correct / max(1, len(judged)):.1f}% of {len(judged)}"


def summarise(records: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    groups: dict[str, Callable[[dict[str, Any]], bool]] = {
        "single": lambda r: r["n_tables"] == 1,
        "multi": lambda r: r["n_tables"] >= 2,
        "all": lambda r: True,
    }
    result = {}
    for group, member in groups.items():
        rows = [r for r in records if member(r) and r["kind"] not in ("gold sql error", "not run")]
        if not rows:
            continue
        tokens = [r["prompt_tokens"] for r in rows if r["prompt_tokens"] is not None]
        result[group] = {
            "n": len(rows),
            "EX": round(100 * sum(r["kind"] == "ok" for r in rows) / len(rows), 2),
            "all_gold_in_prompt": round(100 * sum(r["all_gold_in_prompt"] for r in rows) / len(rows), 2),
            "prompt_tokens": round(sum(tokens) / len(tokens), 1) if tokens else None,
            "s_per_question": round(sum(r["seconds"] for r in rows) / len(rows), 2),
            "failures": dict(Counter(r["kind"] for r in rows if r["kind"] != "ok")),
        }
    return result


def markdown(summary: dict[str, dict[str, dict[str, Any]]]) -> str:
    lines = [
        "| condition | group | n | EX % | all gold in prompt % | prompt tokens | s/question | "
        + " | ".join(FAILURES)
        + " |",
        "|---|---|---|---|---|---|---|" + "---|" * len(FAILURES),
    ]
    for condition, groups in summary.items():
        for group, row in groups.items():
            failures = " | ".join(str(row["failures"].get(kind, 0)) for kind in FAILURES)
            lines.append(
                f"| {condition} | {group} | {row['n']} | {row['EX']:.1f} | {row['all_gold_in_prompt']:.1f} | "
                f"{row['prompt_tokens']} | {row['s_per_question']:.1f} | {failures} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", type=Path, required=True, help="a SQL benchmark folder (spider, spider_realistic)")
    parser.add_argument("--conditions", default=DEFAULT_CONDITIONS, help=f"comma-separated, of {', '.join(CONDITIONS)}")
    parser.add_argument("-n", type=int, default=150, help="questions in the sample (every 3+-table one included)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=int, help="the first N questions of the sample only (a quick run)")
    parser.add_argument("-k", type=int, default=5, help="tables per prompt (objectindex, pearl, pearl-joins)")
    parser.add_argument("--llm-base", default="http://127.0.0.1:8011/v1")
    parser.add_argument("--llm-model", default="local")
    parser.add_argument("--llm-timeout", type=float, default=600.0, help="seconds, the server's queue included")
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--sql-timeout", type=float, default=10.0, help="seconds one query may run")
    parser.add_argument("--work", type=Path, default=Path("runs/text_to_sql"), help="databases and the LLM cache")
    parser.add_argument("--cache", type=Path, help="LLM answer cache (default: WORK/llm_cache)")
    parser.add_argument("--json", type=Path, help="write every record and the summary here")
    parser.add_argument(
        "--cached-only", action="store_true", help="call no LLM: questions not answered yet are left out"
    )
    parser.add_argument(
        "--per-database", action="store_true", help="each question within its db's tables (ObjectIndex and PEARL)"
    )
    args = parser.parse_args()
    conditions = [c.strip() for c in args.conditions.split(",") if c.strip()]
    unknown = sorted(set(conditions) - set(CONDITIONS))
    if unknown:
        parser.error(f"unknown conditions {unknown}; choose from {', '.join(CONDITIONS)}")
    args.cache = args.cache or args.work / "llm_cache"

    bench = load_benchmark(args.bench)
    questions = sample_questions(bench.queries, args.n, args.seed)[: args.limit]
    sizes = Counter(min(q.n_tables, 3) for q in questions)
    print(f"{bench.name}: {len(questions)} questions (tables 1/2/3+: {sizes[1]}/{sizes[2]}/{sizes[3]})", flush=True)
    judge = Judge(bench, args.work / bench.name, args.sql_timeout)
    embed_model = default_embed_model()
    retrievers = table_retrievers(conditions, bench, judge.database, args.k, embed_model, args.per_database)
    llm = make_llm(args)
    runs = [Condition(name, retrievers[name], judge, llm, embed_model) for name in conditions]
    for i, query in enumerate(questions, 1):  # question by question: a partial run compares like with like
        for run in runs:
            run.ask(query)
        print(f"{i}/{len(questions)} EX: " + ", ".join(run.progress() for run in runs), flush=True)
    summary = {run.name: summarise(run.records) for run in runs}
    records = [r for run in runs for r in run.records]
    print(f"\n{bench.name}, k={args.k}, LLM {args.llm_model}\n{markdown(summary)}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        meta = {"bench": bench.name, "k": args.k, "n": len(questions), "seed": args.seed, "model": args.llm_model}
        meta["per_database"] = args.per_database
        args.json.write_text(json.dumps({**meta, "summary": summary, "records": records}, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
