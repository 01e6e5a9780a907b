"""Every code block of the README runs as written.

Code is a ``bash`` or ``python`` block; output samples (``text``), diagrams (``mermaid``) and unlabelled blocks are
not. The blocks run in the README's order, the Python ones in one namespace (as a reader runs them one after the
other), in a folder that holds what they read: ``my_csv_folder/`` and ``tables/`` (the bundled music CSVs) and
``music.sqlite`` (the same tables). A fake OpenAI-compatible LLM answers at ``http://127.0.0.1:8000/v1``, the
address the blocks use: SQL for text-to-SQL prompts, a valid generated question otherwise. A block that reads
``MILVUS_URI`` runs against the Milvus server of ``tests/test_milvus.py`` (``PEARL_TEST_MILVUS_URL``, else one
started here); without one it is left out, except where CI requires the server. A block this test
cannot run says why in a comment right above it: ``<!-- not run by tests/test_readme.py: REASON -->``.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
from fake_openai import FakeOpenAIServer, prompt_text, text, valid_answer
from milvus_server import start, stop

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_DATA = ROOT / "llama_index_pearl" / "example_data"
CODE = {"bash", "python"}
NOT_RUN = re.compile(r"<!-- not run by tests/test_readme\.py: (.+?) -->")
LLM_PORT = 8000


@dataclass(frozen=True)
class Block:
    number: int
    line: int
    language: str
    code: str
    not_run: str | None


def readme_blocks() -> list[Block]:
    """The README's fenced blocks, each with the reason it is not run (the comment on the line above it), if any."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    blocks, i = [], 0
    while i < len(lines):
        opening = re.fullmatch(r"```(\w*)", lines[i])
        if opening is None:
            i += 1
            continue
        end = lines.index("```", i + 1)
        reason = NOT_RUN.fullmatch(lines[i - 1]) if i else None
        code = "\n".join(lines[i + 1 : end]) + "\n"
        blocks.append(Block(len(blocks), i + 1, opening.group(1), code, reason.group(1) if reason else None))
        i = end + 1
    return blocks


def _llm_reply(body):
    if "SQLQuery" in prompt_text(body):  # LlamaIndex's text-to-SQL prompt: SQL over the music tables
        return text("SELECT venues.venue_name FROM venues JOIN concerts ON concerts.venue_id = venues.venue_id")
    return valid_answer()(body)


@pytest.fixture
def reader_folder(tmp_path, monkeypatch):
    """A folder with the files the README's blocks read, as the working directory."""
    for name in ("my_csv_folder", "tables"):
        shutil.copytree(EXAMPLE_DATA, tmp_path / name, ignore=shutil.ignore_patterns("__*"))
    with contextlib.closing(sqlite3.connect(tmp_path / "music.sqlite")) as connection, connection:
        for csv in sorted(EXAMPLE_DATA.glob("*.csv")):
            pd.read_csv(csv).to_sql(csv.stem, connection, index=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def llm_on_port_8000():
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", LLM_PORT)) == 0:
            pytest.skip(f"port {LLM_PORT}, where the README's LLM answers, is taken")
    server = FakeOpenAIServer(default=_llm_reply)
    server.port = LLM_PORT
    server.start()
    yield server
    server.stop()


@pytest.fixture
def milvus_uri(monkeypatch):
    """The Milvus server's URL as ``MILVUS_URI`` (the README's blocks read it), or ``None`` without one."""
    url, folder = os.environ.get("PEARL_TEST_MILVUS_URL"), None
    if not url:
        try:
            url, folder = start()
        except Exception as exc:
            if os.environ.get("CI") == "true" or os.environ.get("PEARL_REQUIRE_MILVUS"):
                pytest.fail(f"the README's Milvus blocks must run here, and no server could be started: {exc}")
    if url:
        monkeypatch.setenv("MILVUS_URI", url)
    yield url
    if folder is not None:
        stop(folder)


def test_every_code_block_runs_as_written(reader_folder, llm_on_port_8000, milvus_uri):
    from llama_index.core import Settings

    namespace: dict[str, object] = {"__name__": "__readme__"}
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    embed_model = Settings._embed_model  # a README block sets it (its text-to-SQL recipe says why): restored after
    ran = []
    try:
        for block in readme_blocks():
            if block.language not in CODE or block.not_run or ("MILVUS_URI" in block.code and not milvus_uri):
                continue
            if block.language == "bash":
                done = subprocess.run(
                    ["bash", "-euo", "pipefail", "-c", block.code], env=env, capture_output=True, text=True
                )
                assert done.returncode == 0, f"README.md line {block.line}:\n{done.stdout[-1500:]}{done.stderr[-1500:]}"
            else:
                exec(compile(block.code, f"README.md, block at line {block.line}", "exec"), namespace)
            ran.append(block.line)
    finally:
        Settings._embed_model = embed_model
    assert len(ran) >= 12
    assert llm_on_port_8000.request_count > 0  # the blocks that name an LLM reached it


def test_a_block_not_run_says_why_and_such_blocks_are_few():
    blocks = readme_blocks()
    code = [b for b in blocks if b.language in CODE]
    not_run = [b for b in code if b.not_run]
    assert all(len(b.not_run) > 20 for b in not_run)
    assert len(not_run) <= 5, [(b.line, b.not_run) for b in not_run]
    assert all(b.language in CODE | {"text", "mermaid", ""} for b in blocks)


def test_the_install_lines_name_the_constraints_file():
    installs = [line for b in readme_blocks() for line in b.code.splitlines() if line.startswith("pip install")]
    assert installs and all("-c constraints.txt" in line for line in installs)
