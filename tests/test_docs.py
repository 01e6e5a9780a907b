"""The README and every page of docs/ run as written, from any folder, and the documentation site works from disk.

**Code blocks.** A ``bash`` or ``python`` block is code; ``text`` (output samples and messages) and ``mermaid``
(pictures) blocks are not; no other kind is allowed. Each page's blocks run in the page's order, its Python blocks
in one namespace (as a reader runs them one after the other), in an empty folder, as a reader's own: the bundled
data is ``llama_index_pearl.example_data()``, and whatever else a block reads an earlier block of its page writes.
Only the Examples page runs from a checkout's root (its ``examples/`` folder is there). A fake OpenAI-compatible
LLM answers at ``http://127.0.0.1:8000/v1``, the address the blocks use: SQL for text-to-SQL prompts, a valid
generated question otherwise. A block that reads ``MILVUS_URI`` runs against the Milvus server of
``tests/test_milvus.py`` (``PEARL_TEST_MILVUS_URL``, else one started here); without one it is left out, except
where CI requires the server.

**Output.** A ``text`` block right after a code block (nothing but blank lines between) is what that block
prints, compared line by line (trailing spaces aside): an output sample cannot go stale.

**What the reader does not see.** HTML comments, invisible on GitHub and on the site, carry what the test needs:

- ``<!-- not run: REASON -->`` on the line before a block: this test cannot run it, and why;
- ``<!-- raises: NAME -->`` on the line before a block: the block raises the exception ``NAME``, and the ``text``
  block after it shows ``NAME: message``, as Python's last traceback line does;
- ``<!-- check: EXPRESSION -->`` in the prose: a sentence that describes an output is true, checked by a Python
  expression read in the page's namespace after the blocks above it ran (``printed``: what the last block printed).

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
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import networkx as nx
import pytest
import yaml
from fake_openai import FakeOpenAIServer, prompt_text, text, valid_answer
from milvus_server import close_clients, start, stop

from llama_index_pearl.presentation.headless import FLAGS, find_chromium

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
CODE = {"bash", "python"}
NOT_CODE = {"text", "mermaid"}
NOT_RUN = re.compile(r"<!-- not run: (.+) -->")
RAISES = re.compile(r"<!-- raises: (\w+) -->")
CHECK = re.compile(r"<!-- check: (.+) -->")
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
    raises: str | None = None  # the exception it raises


@dataclass(frozen=True)
class Check:
    """A hidden ``<!-- check: EXPRESSION -->`` of a page's prose."""

    page: str
    line: int
    expression: str


def page_blocks(page: Path) -> list[Block]:
    """A page's fenced blocks (fences at the start of a line), each with its markers and its output."""
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
        before = lines[opened - 1] if opened else ""
        reason, raises = NOT_RUN.fullmatch(before), RAISES.fullmatch(before)
        includes = tuple(m.group(1) for line in body if (m := SNIPPET.fullmatch(line.strip())))
        if len(includes) != len(body):
            includes = ()
        name = str(page.relative_to(ROOT))
        code = "\n".join(body) + "\n"
        blocks.append(
            Block(name, opened + 1, language, code, reason and reason.group(1), output, includes, raises and raises[1])
        )
    return blocks


def page_checks(page: Path) -> list[Check]:
    """A page's hidden checks of its prose, in page order."""
    name = str(page.relative_to(ROOT))
    lines = page.read_text(encoding="utf-8").splitlines()
    return [Check(name, n, m.group(1)) for n, line in enumerate(lines, 1) if (m := CHECK.search(line))]


def _llm_reply(body):
    if "SQLQuery" in prompt_text(body):  # LlamaIndex's text-to-SQL prompt: SQL over the music tables
        return text("SELECT venues.venue_name FROM venues JOIN concerts ON concerts.venue_id = venues.venue_id")
    return valid_answer()(body)


@pytest.fixture
def reader_folder(tmp_path, monkeypatch):
    """An empty folder, a reader's own, as the working directory."""
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
            try:
                exec(compile(block.code, where, "exec"), namespace)
            except Exception as error:
                if type(error).__name__ != block.raises:
                    raise
                print(f"{type(error).__name__}: {error}")
            else:
                assert block.raises is None, f"{where} should raise {block.raises}, and did not"
        printed = captured.getvalue()
    namespace["printed"] = printed
    if block.output is not None:
        _same_output(block, printed)


def _check(check: Check, namespace: dict[str, object]) -> None:
    assert eval(check.expression, namespace), (
        f"{check.page} line {check.line}: the prose's check is false: {check.expression}"
    )


def _steps(page: Path) -> list[Block | Check]:
    """The page's blocks and checks, in page order."""
    return sorted([*page_blocks(page), *page_checks(page)], key=lambda step: step.line)


CODE_PAGES = [p for p in PAGES if any(b.language in CODE and not b.includes for b in page_blocks(p))]


@pytest.mark.parametrize("page", CODE_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_code_block_of_the_page_runs_as_written(page, reader_folder, llm_on_port_8000, request):
    from llama_index.core import Settings

    if page.name == "examples.md":  # complete programs of the checkout: run from its root, as the page says
        shutil.copytree(ROOT / "examples", reader_folder / "examples", ignore=shutil.ignore_patterns("__*"))
    blocks = page_blocks(page)
    needs_milvus = any("MILVUS_URI" in b.code for b in blocks if not b.not_run)
    milvus = request.getfixturevalue("milvus_uri") if needs_milvus else None
    namespace: dict[str, object] = {"__name__": "__docs__"}
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    embed_model = Settings._embed_model  # a block sets it (the text-to-SQL recipe says why): restored after
    ran = []
    try:
        for step in _steps(page):
            if isinstance(step, Check):
                _check(step, namespace)
                continue
            if step.language not in CODE or step.not_run or step.includes:
                continue
            if "MILVUS_URI" in step.code and not milvus:
                continue
            _run(step, namespace, env)
            ran.append(step.line)
    finally:
        Settings._embed_model = embed_model
    assert ran
    if LLM_URL in page.read_text(encoding="utf-8"):
        assert llm_on_port_8000.request_count > 0  # the blocks that name an LLM reached it


def test_the_readme_quick_start_runs_in_an_empty_folder_outside_the_checkout(tmp_path):
    quick_start = next(b for b in page_blocks(ROOT / "README.md") if b.language == "python" and not b.not_run)
    outside = tmp_path / "my_project"
    outside.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-c", quick_start.code], cwd=outside, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert [line.rstrip() for line in done.stdout.splitlines()] == quick_start.output.splitlines()
    assert sorted(p.name for p in outside.iterdir()) == []  # it wrote nothing there, and read nothing from there


def test_a_false_sentence_fails_its_check_and_a_block_that_should_raise_must_raise():
    with pytest.raises(AssertionError, match="the prose's check is false"):
        _check(Check("page.md", 3, "1 + 1 == 3"), {})
    block = Block("page.md", 5, "python", "x = 1\n", None, None, (), raises="ValueError")
    with pytest.raises(AssertionError, match="should raise ValueError"):
        _run(block, {}, dict(os.environ))


def test_the_pages_that_describe_an_output_check_what_they_say():
    for name in ("README.md", "docs/getting-started.md"):
        assert page_checks(ROOT / name), f"{name} describes outputs: its sentences need their checks"


def test_no_block_shows_the_reader_a_test_marker():
    shown = [(b.page, b.line) for b in _all_blocks() if b.code.lstrip().startswith("# not run")]
    assert shown == []
    prose = [
        f"{page.relative_to(ROOT)}:{n}"
        for page in PAGES
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if "(in the tests" in line or "a fake one" in line
    ]
    assert prose == []


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


def _install_lines(blocks: list[Block]) -> list[str]:
    return [line for b in blocks for line in b.code.splitlines() if line.startswith("pip install")]


def test_torch_is_installed_from_its_cpu_index_before_the_package():
    installs = _install_lines(_all_blocks())
    torch = [line for line in installs if re.search(r"\btorch==", line)]
    assert torch and all("--index-url https://download.pytorch.org/whl/cpu" in line for line in torch)


def test_the_readme_install_works_outside_the_checkout():
    # PyPI's torch==2.13.0 is the CUDA build, and a user's folder has no constraints.txt: the README's own install
    # takes the CPU build, then the package by path, reading no other file of the checkout
    installs = _install_lines(page_blocks(ROOT / "README.md"))
    assert installs and not [line for line in installs if "constraints.txt" in line]
    assert "download.pytorch.org/whl/cpu" in installs[0]


def test_inside_the_checkout_the_install_lines_pin_the_tested_versions():
    installs = [line for line in _install_lines(_all_blocks()) if line.split("#")[0].split()[-1] == "."]
    assert installs and all("-c constraints.txt" in line for line in installs)


def test_the_readme_is_read_in_five_minutes():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    first_screen = "\n".join(readme.splitlines()[:30])
    assert "make demo" in first_screen and "make test" in first_screen and "pip install" in first_screen


def test_the_readme_says_why_not_objectindex_with_figures_measured_in_the_benchmarks_and_their_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Why not LlamaIndex's ObjectIndex?")[1].split("\n## ")[0].strip()
    assert len(section.splitlines()) <= 8 and "`pearl eval " in section
    measured = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")
    figures = re.findall(r"\d+\.\d+", section)
    assert figures and all(figure in measured for figure in figures), figures
    assert "(docs/evaluation.md#where-the-benchmark-data-comes-from)" in readme
    assert "## Where the benchmark data comes from" in (DOCS / "evaluation.md").read_text(encoding="utf-8")


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


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The documentation site, built strict as ``make docs`` builds it."""
    folder = tmp_path_factory.mktemp("docs") / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(folder)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return folder


def test_the_site_builds_strict_and_reads_offline(site):
    fetched = re.compile(r"""<(script|link|img)[^>]+(src|href)=["']https?://""")
    remote = [str(p.relative_to(site)) for p in site.rglob("*.html") if fetched.search(p.read_text(encoding="utf-8"))]
    assert remote == [], f"pages that load something from the network: {remote[:5]}"


def _pages(site: Path) -> list[Path]:
    """The site's pages a reader opens (404.html is a server's answer to a missing URL, its links from the root)."""
    return [p for p in sorted(site.rglob("*.html")) if p.name != "404.html"]


LINK = re.compile(r"""(?:href|src)=["']([^"']+)["']""")
ANCHOR = re.compile(r"""\bid=["']([^"']+)["']""")


def test_every_internal_link_of_the_site_leads_to_a_file_opened_from_disk(site):
    """As a browser reads ``file://``: a link to a folder shows a listing, not a page; a missing anchor goes nowhere."""
    anchors: dict[Path, set[str]] = {}
    broken = []
    for page in _pages(site):
        for link in LINK.findall(page.read_text(encoding="utf-8")):
            if re.match(r"[a-z][a-z0-9+.-]*:", link) or link.startswith("//"):
                continue  # another site (the theme's credit), mailto:, data:
            path, _, fragment = link.partition("#")
            target = (page.parent / path.split("?")[0]).resolve() if path else page
            if not target.is_file():
                broken.append(f"{page.relative_to(site)} -> {link}")
            elif fragment and target.suffix == ".html":
                if target not in anchors:
                    anchors[target] = set(ANCHOR.findall(target.read_text(encoding="utf-8")))
                if fragment not in anchors[target]:
                    broken.append(f"{page.relative_to(site)} -> {link} (no such anchor)")
    assert broken == [], broken[:10]


def test_search_reads_its_index_from_a_script_of_the_site(site):
    """From ``file://`` a browser fetches nothing: the index is a script, the search worker runs in an iframe."""
    index = (site / "search" / "search_index.js").read_text(encoding="utf-8")
    assert index.startswith("var __index = ") and '"location":"getting-started.html' in index
    for page in _pages(site):
        assert 'src="assets/javascripts/iframe-worker-shim.js"' in page.read_text(encoding="utf-8"), page.name


@pytest.mark.skipif(
    find_chromium() is None and not os.environ.get("PEARL_REQUIRE_CHROMIUM"),
    reason="Chromium is not installed (.ci/run installs it and sets PEARL_REQUIRE_CHROMIUM)",
)
def test_search_finds_pages_in_the_site_opened_from_disk(site, tmp_path):
    url = (site / "index.html").as_uri() + "?q=retriever"  # Material opens its search with ?q=
    command = [find_chromium(), *FLAGS, f"--user-data-dir={tmp_path}", "--virtual-time-budget=8000", "--dump-dom", url]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count('class="md-search-result__item"') >= 3


def test_the_generated_references_hold_every_option_command_and_public_name(site):
    import llama_index_pearl
    from llama_index_pearl.cli import COMMANDS
    from llama_index_pearl.config import option_fields

    configuration = (site / "configuration.html").read_text(encoding="utf-8")
    assert all(f"<code>{f.name}</code>" in configuration for f in option_fields())
    cli = (site / "cli.html").read_text(encoding="utf-8")
    assert all(f"pearl {name}" in cli for name in COMMANDS) and "--lexical-weight" in cli
    api = (site / "api.html").read_text(encoding="utf-8")
    assert all(name in api for name in llama_index_pearl.__all__)


def test_the_api_reference_leads_with_the_index_the_retriever_and_the_config_and_shows_no_rest_role(site):
    api = (site / "api.html").read_text(encoding="utf-8")
    headings = re.findall(r'<h2 id="([^"]+)"', api)
    assert headings[:3] == [
        "llama_index_pearl.index.PearlTableIndex",
        "llama_index_pearl.retrieval.retriever.PearlRetriever",
        "llama_index_pearl.config.PearlConfig",
    ]
    assert api.index('id="llama_index_pearl.index.PearlTableIndex.from_tables"') < api.index(
        'id="llama_index_pearl.index.PearlTableIndex.read_lock"'
    )
    from llama_index_pearl import PearlTableIndex

    assert PearlTableIndex.__bases__ == (object,)  # every member is the index's own, defined in index.py
    members = [n for n in vars(PearlTableIndex) if not n.startswith("_")]
    assert all(f'id="llama_index_pearl.index.PearlTableIndex.{m}"' in api for m in members)
    assert re.search(r":(class|func|meth|mod|attr|data):`", api) is None
    assert 'href="#llama_index_pearl.config.PearlConfig"' in api  # a role became a link


def test_the_command_a_page_says_make_demo_runs_is_the_one_it_runs():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\ndemo:")[1].split("\n\n")[0]
    runs = [line.strip().replace("$(BIN)/", "") for line in recipe.splitlines()[1:]]
    said = [
        line.split("#")[0].strip()
        for page in PAGES
        for line in page.read_text(encoding="utf-8").splitlines()
        if "what make demo runs" in line
    ]
    assert said and all(command in runs for command in said), (said, runs)


_MERMAID = re.compile(r"```mermaid\n(.*?)```", re.S)
_EDGE = re.compile(r"^\s*(\w+)(?:\[.*?\])?(?::::\w+)?\s*(?:-->|---|-\.->|==>)\s*(\|.*?\|\s*)?(\w+)")


def _widest_row(diagram: str) -> int:
    """The most boxes a Mermaid flowchart lays side by side: its longest chain along a left-to-right direction, an
    edge's label counted as a box (it takes as much room)."""
    lines = diagram.splitlines()
    directions = [lines[0].split()[1]]
    row = nx.DiGraph()
    for line in lines[1:]:
        words = line.split()
        if words[:1] == ["subgraph"]:
            directions.append(directions[-1])
        elif words[:1] == ["end"]:
            directions.pop()
        elif words[:1] == ["direction"]:
            directions[-1] = words[1]
        elif (edge := _EDGE.match(line)) and directions[-1] == "LR":
            row.add_edge(edge.group(1), edge.group(3), weight=2 if edge.group(2) else 1)
    return nx.dag_longest_path_length(row) + 1 if row.number_of_edges() else 1


def test_no_diagram_lays_more_than_four_boxes_side_by_side():
    """A row of five boxes, or four with three labels between them, drew its text at about 7 px on the page."""
    for page in PAGES:
        for diagram in _MERMAID.findall(page.read_text(encoding="utf-8")):
            if diagram.startswith("flowchart"):
                assert _widest_row(diagram) <= 4, f"{page.name}: a diagram lays {_widest_row(diagram)} boxes in a row"
