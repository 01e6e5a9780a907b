"""Every example runs offline in a subprocess (bundled MiniLM, no LLM) and prints what it promises."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
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


def _executed(notebook: Path, folder: Path) -> Any:
    """The notebook run by nbclient in ``folder``, on a kernel of this interpreter (no kernel installed elsewhere)."""
    import nbclient  # the test extra's: the notebook runs in make test, never skipped
    import nbformat

    kernels = folder / "jupyter" / "kernels" / "pearl-tests"
    kernels.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (kernels / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "pearl", "language": "python"}))
    env = {"JUPYTER_PATH": str(folder / "jupyter"), "IPYTHONDIR": str(folder / "ipython"), "JUPYTER_PLATFORM_DIRS": "1"}
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        book = nbformat.read(notebook, as_version=4)
        client = nbclient.NotebookClient(
            book, kernel_name="pearl-tests", timeout=600, resources={"metadata": {"path": str(folder)}}
        )
        client.execute()
    return book


def _printed(cell: Any) -> str:
    return "".join(out.get("text", "") for out in cell.outputs if out.output_type == "stream" and out.name == "stdout")


def test_the_notebook_is_committed_without_outputs():
    book = json.loads((EXAMPLES / "quickstart.ipynb").read_text(encoding="utf-8"))
    code = [cell for cell in book["cells"] if cell["cell_type"] == "code"]
    assert code and all(cell["outputs"] == [] and cell["execution_count"] is None for cell in code)


def test_the_notebook_indexes_a_folder_and_shows_the_set_and_the_join_graph(tmp_path):
    book = _executed(EXAMPLES / "quickstart.ipynb", tmp_path)
    code = [cell for cell in book.cells if cell.cell_type == "code"]
    built, asked, set_joins, graph = (_printed(cell) for cell in code)
    assert built.startswith("8 tables,")
    tiers = {line.split()[0]: line.split()[1] for line in asked.splitlines()}
    assert {table for table, tier in tiers.items() if tier == "needed"} == {
        "labels",
        "albums",
        "artists",
        "concerts",
        "venues",
    }
    assert "albums.label_id = labels.label_id [explicit]" in set_joins.splitlines()
    assert "venues.city_id = cities.city_id" in graph and (tmp_path / "join_graph.html").is_file()
