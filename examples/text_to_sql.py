"""Text-to-SQL over a SQLite database with LlamaIndex's own engine; PEARL chooses the tables and join keys.

    python examples/text_to_sql.py --question "Which venues hosted concerts by Velvet Harbor?"
    python examples/text_to_sql.py --db shop.sqlite --llm-base http://localhost:8000/v1 --llm-model NAME
    printf 'q1\\nq2\\n' | python examples/text_to_sql.py                # one question a line until EOF

Without ``--db`` the bundled music CSVs are loaded into a temporary SQLite file, removed on exit. The engine is
LlamaIndex's ``SQLTableRetrieverQueryEngine`` (its prompt, its SQL parsing, its execution) with
``index.as_sql_table_retriever(...)`` as the table retriever: only the retrieved tables reach the
prompt, each with the join keys to the others. Without an LLM the example prints what that prompt's
schema part holds; with ``--llm-base``/``--llm-model`` it prints the LLM's SQL, the rows and the answer.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
from pathlib import Path

import pandas as pd
import sqlalchemy as sa
from llama_index.core import SQLDatabase

import llama_index_pearl
from llama_index_pearl import PearlTableIndex
from llama_index_pearl.generation import HeuristicQueryGenerator

sys.path.insert(0, str(Path(__file__).resolve().parent))
from table_qa_chat import make_llm, questions  # examples share their small helpers

EXAMPLE_DATA = llama_index_pearl.example_data()
MAX_ROWS_SHOWN = 20


def bundled_database(into: Path, folder: Path = EXAMPLE_DATA) -> Path:
    """Load every CSV of ``folder`` into a new SQLite file in the folder ``into`` (table = file stem)."""
    path = into / "music.sqlite"
    connection = sqlite3.connect(path)
    try:
        with connection:
            for csv in sorted(folder.glob("*.csv")):
                pd.read_csv(csv).to_sql(csv.stem, connection, index=False)
    finally:
        connection.close()  # sqlite3's context manager commits; it does not close
    return path


def show_schemas(index: PearlTableIndex, sql_database: SQLDatabase, question: str, k: int) -> None:
    """The retrieved tables as LlamaIndex describes them, and PEARL's join keys between them."""
    for schema in index.as_sql_table_retriever(sql_database, similarity_top_k=k).retrieve(question):
        print(sql_database.get_single_table_info(schema.table_name))
        if schema.context_str:
            print(f"  join keys: {schema.context_str}")


def show_answer(response) -> None:
    """The LLM's SQL, the first rows it returned (or the error), and the answer."""
    print(f"SQL: {response.metadata.get('sql_query', '')}")
    rows = response.metadata.get("result")
    if rows is None:  # LlamaIndex answers a failing query from its error message
        print("(the SQL did not run)")
    else:
        columns = response.metadata.get("col_keys") or None
        print(pd.DataFrame(rows[:MAX_ROWS_SHOWN], columns=columns).to_string(index=False))
        if len(rows) > MAX_ROWS_SHOWN:
            print(f"... {len(rows) - MAX_ROWS_SHOWN} more rows")
    print(f"Answer: {response}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Text-to-SQL with PEARL table retrieval in LlamaIndex's engine.")
    parser.add_argument("--db", type=Path, help="SQLite file (default: the bundled CSVs in a temporary file)")
    parser.add_argument("--question", "-q", action="append", help="ask this and exit (repeatable)")
    parser.add_argument("-k", type=int, default=4, help="tables retrieved per question")
    parser.add_argument("--llm-base", help="OpenAI-compatible base URL, e.g. http://localhost:8000/v1")
    parser.add_argument("--llm-model", help="model name served there")
    parser.add_argument("--llm-api-key", default="not-needed")
    args = parser.parse_args(argv)

    if args.db is not None and not args.db.is_file():
        parser.error(f"--db {str(args.db)!r} does not exist")
    with tempfile.TemporaryDirectory(prefix="pearl-sql-") as scratch:
        db = args.db or bundled_database(Path(scratch))
        engine = sa.create_engine(f"sqlite:///{db}")
        try:
            answer(engine, args, shown=str(args.db) if args.db else "the bundled music database (SQLite)")
        finally:
            engine.dispose()  # the file's connections closed before its folder is removed
    return 0


def answer(sql_engine: sa.Engine, args: argparse.Namespace, shown: str) -> None:
    """Index the database's tables, then answer each question (or show the schemas without an LLM)."""
    print(f"Indexing {shown} ...", flush=True)
    sql_database = SQLDatabase(sql_engine)
    index = PearlTableIndex.from_tables(sql_database, generator=HeuristicQueryGenerator())
    llm = make_llm(args.llm_base, args.llm_model, args.llm_api_key)
    engine = index.as_sql_query_engine(sql_database, llm=llm, similarity_top_k=args.k) if llm else None

    for question in questions(args.question):
        print(f"\nQ: {question}")
        if engine is None:
            show_schemas(index, sql_database, question, args.k)
            print("(no LLM configured: pass --llm-base and --llm-model to generate and run SQL)")
            continue
        try:
            show_answer(engine.query(question))
        except Exception as exc:  # a server error ends the turn, not the session
            print(f"Error: {exc}")


if __name__ == "__main__":
    raise SystemExit(main())
