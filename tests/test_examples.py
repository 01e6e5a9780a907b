"""Every example runs offline in a subprocess (bundled MiniLM, no LLM) and prints what it promises."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from fake_openai import FakeOpenAIServer, prompt_text, text

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _run(script: str, *args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_from_dataframes_ranks_the_three_tables():
    out = _run("from_dataframes.py")
    assert {"singer", "concert", "stadium"} <= set(out.split())


def test_table_qa_chat_reads_questions_from_stdin_and_shows_tables_and_join_keys():
    out = _run("table_qa_chat.py", stdin="Which venues hosted concerts by Velvet Harbor?\nWhat do tickets cost?\n")
    assert out.count("Q: ") == 2
    assert "tables: " in out and "concerts" in out
    assert "JOIN " in out
    assert "no LLM configured" in out


def test_text_to_sql_without_llm_prints_the_retrieved_schema_and_join_keys_and_leaves_no_file(tmp_path):
    import os

    env = {**os.environ, "TMPDIR": str(tmp_path)}
    out = _run("text_to_sql.py", "--question", "Which venues hosted concerts by Velvet Harbor?", env=env)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("pearl-sql-")]  # its SQLite folder is gone
    assert "Table 'concerts' has columns: concert_id" in out
    assert "join keys: JOIN " in out and " ON concerts." in out
    assert "no LLM configured" in out


def test_text_to_sql_with_an_llm_runs_the_generated_sql_in_llamaindexs_engine():
    sql = "```sql\nSELECT artist_name FROM artists WHERE country = 'Ireland'\n```"
    with FakeOpenAIServer(behaviours=[text(sql), text("The Irish artist is Velvet Harbor.")]) as server:
        out = _run(
            "text_to_sql.py",
            "--question",
            "Which artists come from Ireland?",
            "--llm-base",
            server.base_url,
            "--llm-model",
            "fake",
        )
        prompt = prompt_text(server.requests[0])
    assert "Table 'artists' has columns" in prompt
    assert "SQL: SELECT artist_name FROM artists WHERE country = 'Ireland'" in out
    assert "artist_name\nVelvet Harbor" in out
    assert "Answer: The Irish artist is Velvet Harbor." in out
