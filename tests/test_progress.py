"""A build's progress: a bar per stage, named after it, in a terminal or when asked for; nothing otherwise."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time

import pandas as pd
import pytest

from llama_index_pearl import PearlTableIndex

STAGES = ("load", "encoder", "tables", "discovery", "generation", "embed", "columns")
ONNX_NOTICE = "Exporting the bundled encoder to ONNX on its first use"


def _bars(text: str) -> dict[str, str]:
    """Each stage's bar as last drawn (a bar redraws itself after a carriage return)."""
    drawn = [piece.strip() for piece in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    return {line.split(":")[0].strip(): line for line in drawn if ":" in line and "%|" in line}


def test_a_build_asked_to_show_progress_draws_a_finished_bar_per_stage(music_tables, hashing_embedding, capsys):
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding, show_progress=True)
    bars = _bars(capsys.readouterr().err)
    assert set(STAGES) <= set(bars)
    assert all("100%" in bars[name] for name in STAGES)
    units = index.report.n_units
    assert f"{units}/{units}" in bars["embed"]  # it counts the units it embeds


def test_a_build_prints_nothing_unless_asked(music_tables, hashing_embedding, capsys):
    PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)
    assert capsys.readouterr() == ("", "")


def test_an_insert_asked_to_show_progress_counts_the_units_it_embeds(music_tables, hashing_embedding, capsys):
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)
    capsys.readouterr()
    index.insert_tables({"city": pd.DataFrame({"city_id": [1, 2], "city": ["London", "Rio"]})}, show_progress=True)
    assert "100%" in _bars(capsys.readouterr().err)["embed"]


def _pearl_in_a_terminal(args: list[str], env: dict[str, str], timeout: float = 300) -> tuple[int, str]:
    """``pearl ARGS`` with a 100-column pseudo-terminal as its stdin, stdout and stderr: its status and output."""
    main_fd, child_fd = pty.openpty()
    fcntl.ioctl(child_fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a new pty has no width
    command = [sys.executable, "-m", "llama_index_pearl.cli", *args]
    process = subprocess.Popen(command, stdin=child_fd, stdout=child_fd, stderr=child_fd, env=env)
    os.close(child_fd)
    chunks, deadline = [], time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if not select.select([main_fd], [], [], 1)[0]:
                continue
            try:
                data = os.read(main_fd, 1 << 16)
            except OSError:  # EIO: the process closed the terminal
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(main_fd)
    return process.wait(timeout=30), b"".join(chunks).decode("utf-8", "replace")


@pytest.fixture(scope="module")
def tables_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("progress") / "tables"
    folder.mkdir()
    (folder / "singer.csv").write_text("singer_id,name\n1,Joe Sharp\n2,Ann Lee\n")
    (folder / "concert.csv").write_text("concert_id,singer_id,year\n10,1,2014\n11,2,2015\n")
    return folder


@pytest.fixture(scope="module")
def fresh_cache(tmp_path_factory):
    """A cache of its own, where the bundled encoder was never exported: the processes' first use."""
    return {**os.environ, "LLAMA_INDEX_PEARL_CACHE": str(tmp_path_factory.mktemp("cache")), "COLUMNS": "100"}


def test_pearl_index_in_a_terminal_says_once_that_the_encoder_is_exported_and_shows_each_stage(
    tables_folder, fresh_cache, tmp_path
):
    first_status, first = _pearl_in_a_terminal(["index", str(tables_folder), "--out", str(tmp_path / "a")], fresh_cache)
    again_status, again = _pearl_in_a_terminal(["index", str(tables_folder), "--out", str(tmp_path / "b")], fresh_cache)
    assert (first_status, again_status) == (0, 0)
    assert first.count(ONNX_NOTICE) == 1 and ONNX_NOTICE not in again
    for output in (first, again):
        bars = _bars(output)
        assert set(STAGES) <= set(bars) and all("100%" in bars[name] for name in STAGES)
        assert "Wrote" in output


def test_pearl_index_quiet_in_a_terminal_shows_no_bar(tables_folder, fresh_cache, tmp_path):
    status, output = _pearl_in_a_terminal(
        ["index", str(tables_folder), "--out", str(tmp_path / "idx"), "-q"], fresh_cache
    )
    assert (status, output) == (0, "")


def test_pearl_index_into_a_pipe_prints_nothing_on_stderr(tables_folder, fresh_cache, tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "llama_index_pearl.cli", "index", str(tables_folder), "--out", str(tmp_path / "idx")],
        capture_output=True,
        text=True,
        env=fresh_cache,
        timeout=300,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert "Wrote" in done.stdout
