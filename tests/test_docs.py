"""The README and every page of docs/ run as written, and the documentation site builds.

**Code blocks.** A ``bash`` or ``python`` block is code; ``text`` (output samples and messages) and ``mermaid``
(pictures) blocks are not; no other kind is allowed. Each page's blocks run in the page's order, its Python blocks
in one namespace (as a reader runs them one after the other), in a folder that holds what they read:
``llama_index_pearl/example_data/``, ``tables/`` and ``my_csv_folder/`` (the bundled music CSVs), ``music.sqlite``
(the same tables) and ``examples/``. A fake OpenAI-compatible LLM answers at ``http://127.0.0.1:8000/v1``, the
address the blocks use: SQL for text-to-SQL prompts, a valid generated question otherwise. A block that reads
``MILVUS_URI`` runs against the Milvus server of ``tests/test_milvus.py`` (``PEARL_TEST_MILVUS_URL``, else one
started here); without one it is left out, except where CI requires the server.

**Output.** A ``text`` block right after a code block (nothing but blank lines between) is what that block
prints, compared line by line (trailing spaces aside): an output sample cannot go stale.

**Not run.** A code block this test cannot run says so, visibly, on its first line: ``# not run: REASON``.

**Included files.** A block made only of ``--8<-- "PATH"`` lines shows a file of the repository (the snippets
extension includes it when the site is built); it counts as run when a ``bash`` block of the same page runs
``python PATH``.
"""

from __future__ import annotations

import contextlib
import io
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
import yaml
from fake_openai import FakeOpenAIServer, prompt_text, text, valid_answer
from milvus_server import close_clients, start, stop

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
EXAMPLE_DATA = ROOT / "llama_index_pearl" / "example_data"
CODE = {"bash", "python"}
NOT_CODE = {"text", "mermaid"}
NOT_RUN = re.compile(r"# not run: (.+)")
SNIPPET = re.compile(r'--8<-- "([^"]+)"')
LLM_URL = "http://127.0.0.1:8000/v1"
LLM_PORT = 8000
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
MAX_NOT_RUN = 8  # a page of blocks nobody runs is a page nobody checks


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    language: str
    code: str
    not_run: str | None
    output: str | None  # the text block right after it: what it prints
    includes: tuple[str, ...]  # the files a snippet-only block shows


def page_blocks(page: Path) -> list[Block]:
    """A page's fenced blocks (fences at the start of a line), each with its reason not to run and its output."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[tuple[int, str, list[str]]] = []
    i = 0
    while i < len(lines):
        opening = re.fullmatch(r"```(\S*)", lines[i])
        if opening is None:
            i += 1
            continue
        end = lines.index("```", i + 1)
        found.append((i, opening.group(1), lines[i + 1 : end]))
        i = end + 1
    blocks, outputs = [], set()
    for n, (opened, language, body) in enumerate(found):
        if n in outputs:
            continue
        output = None
        if language in CODE and n + 1 < len(found):
            after_end = opened + len(body) + 2
            next_start, next_language, next_body = found[n + 1]
            if next_language == "text" and all(not line.strip() for line in lines[after_end:next_start]):
                output, _ = "\n".join(next_body), outputs.add(n + 1)
        reason = NOT_RUN.fullmatch(body[0]) if body else None
        includes = tuple(m.group(1) for line in body if (m := SNIPPET.fullmatch(line.strip())))
        if len(includes) != len(body):
            includes = ()
        name = str(page.relative_to(ROOT))
        blocks.append(
            Block(name, opened + 1, language, "\n".join(body) + "\n", reason and reason.group(1), output, includes)
        )
    return blocks


def _llm_reply(body):
    if "SQLQuery" in prompt_text(body):  # LlamaIndex's text-to-SQL prompt: SQL over the music tables
        return text("SELECT venues.venue_name FROM venues JOIN concerts ON concerts.venue_id = venues.venue_id")
    return valid_answer()(body)


@pytest.fixture
def reader_folder(tmp_path, monkeypatch):
    """A folder with the files the blocks read, as the working directory."""
    for name in ("my_csv_folder", "tables", "llama_index_pearl/example_data"):
        shutil.copytree(EXAMPLE_DATA, tmp_path / name, ignore=shutil.ignore_patterns("__*"))
    shutil.copytree(ROOT / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns("__*"))
    with contextlib.closing(sqlite3.connect(tmp_path / "music.sqlite")) as connection, connection:
        for csv in sorted(EXAMPLE_DATA.glob("*.csv")):
            pd.read_csv(csv).to_sql(csv.stem, connection, index=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def llm_on_port_8000():
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", LLM_PORT)) == 0:
            pytest.skip(f"port {LLM_PORT}, where the documentation's LLM answers, is taken")
    server = FakeOpenAIServer(default=_llm_reply)
    server.port = LLM_PORT
    server.start()
    yield server
    server.stop()


@pytest.fixture
def milvus_uri(monkeypatch):
    """The Milvus server's URL as ``MILVUS_URI`` (the blocks read it), or ``None`` without one."""
    url, folder = os.environ.get("PEARL_TEST_MILVUS_URL"), None
    if not url:
        try:
            url, folder = start()
        except Exception as exc:
            if os.environ.get("CI") == "true" or os.environ.get("PEARL_REQUIRE_MILVUS"):
                pytest.fail(f"the documentation's Milvus blocks must run here, and no server could be started: {exc}")
    if url:
        monkeypatch.setenv("MILVUS_URI", url)
    yield url
    close_clients()
    if folder is not None:
        stop(folder)


def _same_output(block: Block, printed: str) -> None:
    def lines(text: str) -> list[str]:
        return [line.rstrip() for line in text.rstrip("\n").splitlines()]

    if os.environ.get("PEARL_DOCS_REWRITE") and lines(printed) != lines(block.output):
        _rewrite_output(block, printed)  # a maintainer's refresh after a change of output: review the diff
        return
    assert lines(printed) == lines(block.output), (
        f"{block.page} line {block.line} printed something else than the text block after it shows; "
        f"it printed:\n{printed}"
    )


def _rewrite_output(block: Block, printed: str) -> None:
    """Write what a block printed into the text block after it (``PEARL_DOCS_REWRITE=1``; never in CI)."""
    path = ROOT / block.page
    text = path.read_text(encoding="utf-8")
    old = "```text\n" + block.output + "\n```"
    at = text.index(old, sum(len(line) + 1 for line in text.splitlines()[: block.line]))
    new = "```text\n" + "\n".join(line.rstrip() for line in printed.rstrip("\n").splitlines()) + "\n```"
    path.write_text(text[:at] + new + text[at + len(old) :], encoding="utf-8")


def _run(block: Block, namespace: dict[str, object], env: dict[str, str]) -> None:
    where = f"{block.page}, block at line {block.line}"
    if block.language == "bash":
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", block.code], env=env, capture_output=True, text=True)
        assert done.returncode == 0, f"{where}:\n{done.stdout[-1500:]}{done.stderr[-1500:]}"
        printed = done.stdout
    else:
        captured = io.StringIO()
        with contextlib.redirect_stdout(captured):
            exec(compile(block.code, where, "exec"), namespace)
        printed = captured.getvalue()
    if block.output is not None:
        _same_output(block, printed)


CODE_PAGES = [p for p in PAGES if any(b.language in CODE and not b.includes for b in page_blocks(p))]


@pytest.mark.parametrize("page", CODE_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_code_block_of_the_page_runs_as_written(page, reader_folder, llm_on_port_8000, request):
    from llama_index.core import Settings

    blocks = page_blocks(page)
    needs_milvus = any("MILVUS_URI" in b.code for b in blocks if not b.not_run)
    milvus = request.getfixturevalue("milvus_uri") if needs_milvus else None
    namespace: dict[str, object] = {"__name__": "__docs__"}
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    embed_model = Settings._embed_model  # a block sets it (the text-to-SQL recipe says why): restored after
    ran = []
    try:
        for block in blocks:
            if block.language not in CODE or block.not_run or block.includes:
                continue
            if "MILVUS_URI" in block.code and not milvus:
                continue
            _run(block, namespace, env)
            ran.append(block.line)
    finally:
        Settings._embed_model = embed_model
    assert ran
    if LLM_URL in page.read_text(encoding="utf-8"):
        assert llm_on_port_8000.request_count > 0  # the blocks that name an LLM reached it


def _all_blocks() -> list[Block]:
    return [b for page in PAGES for b in page_blocks(page)]


def test_every_block_is_code_or_says_what_it_is():
    assert all(b.language in CODE | NOT_CODE for b in _all_blocks()), [
        (b.page, b.line, b.language) for b in _all_blocks() if b.language not in CODE | NOT_CODE
    ]


def test_a_block_not_run_says_why_and_such_blocks_are_few():
    not_run = [b for b in _all_blocks() if b.language in CODE and b.not_run]
    assert all(len(b.not_run) > 20 for b in not_run)
    assert len(not_run) <= MAX_NOT_RUN, [(b.page, b.line, b.not_run) for b in not_run]


def test_an_included_file_is_run_by_its_page():
    for page in PAGES:
        blocks = page_blocks(page)
        commands = " ".join(b.code for b in blocks if b.language == "bash" and not b.not_run)
        for block in blocks:
            for path in block.includes:
                assert (ROOT / path).is_file(), f"{block.page} line {block.line} includes {path}, which is missing"
                assert f"python {path}" in commands, f"{block.page} shows {path} but runs no 'python {path}'"


def test_every_example_is_shown_with_its_output():
    blocks = page_blocks(DOCS / "examples.md")
    for example in sorted((ROOT / "examples").glob("*.py")):
        name = f"examples/{example.name}"
        assert any(name in b.includes for b in blocks), f"docs/examples.md does not show {name}"
        assert any(f"python {name}" in b.code and b.output for b in blocks), f"no output of {name} is shown"


def test_the_install_lines_name_the_constraints_file():
    installs = [line for b in _all_blocks() for line in b.code.splitlines() if line.startswith("pip install")]
    assert installs and all("-c constraints.txt" in line for line in installs)


def test_the_readme_is_read_in_five_minutes():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    first_screen = "\n".join(readme.splitlines()[:30])
    assert "make demo" in first_screen and "make test" in first_screen and "pip install" in first_screen


def test_no_page_names_a_path_of_one_machine():
    machine = re.compile(r"/(work|home|Users|root|tmp)/|[A-Z]:\\\\")
    found = [
        f"{page.relative_to(ROOT)}:{n}"
        for page in PAGES
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if machine.search(line)
    ]
    assert found == []


def _nav_pages(entries) -> list[str]:
    pages = []
    for entry in entries:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        pages += _nav_pages(value) if isinstance(value, list) else [value]
    return pages


def test_every_page_is_in_the_site_and_there_are_enough():
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    nav = _nav_pages(config["nav"])
    on_disk = sorted(p.name for p in DOCS.glob("*.md"))
    assert sorted(nav) == on_disk
    assert len(set(on_disk) - {"api.md"}) >= 8


def test_the_figures_are_drawn_from_the_code_as_it_is():
    done = subprocess.run(
        [sys.executable, str(DOCS / "figures.py"), "--check"], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_site_builds_strict_and_reads_offline(tmp_path):
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    fetched = re.compile(r"""<(script|link|img)[^>]+(src|href)=["']https?://""")
    remote = [str(p.relative_to(site)) for p in site.rglob("*.html") if fetched.search(p.read_text(encoding="utf-8"))]
    assert remote == [], f"pages that load something from the network: {remote[:5]}"
    # the generated parts are there: every option, every command, every public name
    import llama_index_pearl
    from llama_index_pearl.cli import COMMANDS
    from llama_index_pearl.config import option_fields

    configuration = (site / "configuration" / "index.html").read_text(encoding="utf-8")
    assert all(f"<code>{f.name}</code>" in configuration for f in option_fields())
    cli = (site / "cli" / "index.html").read_text(encoding="utf-8")
    assert all(f"pearl {name}" in cli for name in COMMANDS) and "--lexical-weight" in cli
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    assert all(name in api for name in llama_index_pearl.__all__)
