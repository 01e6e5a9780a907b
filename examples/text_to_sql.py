"""Text-to-SQL over a SQLite database: PEARL picks the tables and join keys, an LLM writes the SQL.

    python examples/text_to_sql.py --question "Which venues hosted concerts by Velvet Harbor?"
    python examples/text_to_sql.py --db shop.sqlite --llm-base http://localhost:8000/v1 --llm-model NAME
    printf 'q1\\nq2\\n' | python examples/text_to_sql.py                # one question a line until EOF

Without ``--db`` the bundled music CSVs are loaded into a temporary SQLite file. Without
an LLM it prints the retrieved schema and the join keys (what a text-to-SQL prompt
needs); with ``--llm-base``/``--llm-model`` it asks the LLM for one SQLite query, runs
it and prints the rows. Only the retrieved tables reach the prompt, never the whole schema.
"""

from __future__ import annotations

import argparse
import re
import sqlite3
import sys
import tempfile
from pathlib import Path

import pandas as pd

import llama_index_pearl
from llama_index_pearl import PearlTableIndex
from llama_index_pearl.generation import HeuristicQueryGenerator
from llama_index_pearl.retrieval.join_hints import compute_join_hints

sys.path.insert(0, str(Path(__file__).resolve().parent))
from table_qa_chat import make_llm, questions  # examples share their small helpers

EXAMPLE_DATA = Path(llama_index_pearl.__file__).parent / "example_data"
MAX_ROWS_SHOWN = 20


def bundled_database(folder: Path = EXAMPLE_DATA) -> Path:
    """Load every CSV of ``folder`` into a new temporary SQLite file (table = file stem)."""
    path = Path(tempfile.mkdtemp(prefix="pearl-sql-")) / "music.sqlite"
    with sqlite3.connect(path) as connection:
        for csv in sorted(folder.glob("*.csv")):
            pd.read_csv(csv).to_sql(csv.stem, connection, index=False)
    return path


def schema_prompt(index: PearlTableIndex, nodes) -> str:
    """The retrieved tables (columns and sample rows) and the join keys between them."""
    tables = [n.node.metadata["table_id"] for n in nodes]
    parts = []
    for table_id in tables:
        table = index.tables[table_id]
        sample = table.df.head(3).to_csv(index=False).strip()
        parts.append(f"TABLE {table_id}({', '.join(table.columns)})\n-- sample rows:\n{sample}")
    hints = compute_join_hints(index.join_graph, tables)
    parts.append("JOIN KEYS:\n" + ("\n".join(h.text() for h in hints) if hints else "(none found)"))
    return "\n\n".join(parts)


def extract_sql(text: str) -> str:
    """The SQL of an LLM answer: a fenced block if any, else the text from the first SELECT/WITH."""
    fenced = re.search(r"```(?:sql)?\s*(.*?)```", text, flags=re.DOTALL | re.IGNORECASE)
    if fenced:
        return fenced.group(1).strip()
    start = re.search(r"\b(SELECT|WITH)\b", text, flags=re.IGNORECASE)
    return (text[start.start() :] if start else text).strip().rstrip(";")


def run_sql(db: Path, sql: str) -> str:
    """Run read-only SQL and render the first rows as a small table."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        frame = pd.read_sql_query(sql, connection)
    shown = frame.head(MAX_ROWS_SHOWN).to_string(index=False)
    more = f"\n... {len(frame) - MAX_ROWS_SHOWN} more rows" if len(frame) > MAX_ROWS_SHOWN else ""
    return shown + more


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Text-to-SQL with PEARL table retrieval.")
    parser.add_argument("--db", type=Path, help="SQLite file (default: the bundled CSVs in a temporary file)")
    parser.add_argument("--question", "-q", action="append", help="ask this and exit (repeatable)")
    parser.add_argument("-k", type=int, default=4, help="tables retrieved per question")
    parser.add_argument("--llm-base", help="OpenAI-compatible base URL, e.g. http://localhost:8000/v1")
    parser.add_argument("--llm-model", help="model name served there")
    parser.add_argument("--llm-api-key", default="not-needed")
    args = parser.parse_args(argv)

    if args.db is not None and not args.db.is_file():
        parser.error(f"--db {str(args.db)!r} does not exist")
    db = args.db or bundled_database()
    print(f"Indexing sqlite:///{db} ...", flush=True)
    index = PearlTableIndex.from_tables(f"sqlite:///{db}", generator=HeuristicQueryGenerator())
    llm = make_llm(args.llm_base, args.llm_model, args.llm_api_key)
    retriever = index.as_retriever(similarity_top_k=args.k)

    for question in questions(args.question):
        nodes = retriever.retrieve(question)
        schema = schema_prompt(index, nodes)
        print(f"\nQ: {question}\n{schema}")
        if llm is None:
            print("(no LLM configured: pass --llm-base and --llm-model to generate and run SQL)")
            continue
        prompt = (
            "Write one SQLite query that answers the question, using only these tables and join keys.\n\n"
            f"{schema}\n\nQuestion: {question}\nAnswer with the SQL in a ```sql block."
        )
        try:
            sql = extract_sql(llm.complete(prompt).text)
            print(f"SQL: {sql}")
            print(run_sql(db, sql))
        except Exception as exc:  # a bad query or a server error ends the turn, not the session
            print(f"Error: {exc}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
