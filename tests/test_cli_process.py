"""``pearl`` as a process: a closed pipe, Ctrl-C at any moment, and what its usage says is required."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from llama_index_pearl.cli import full_parser, main


@pytest.fixture(scope="module")
def index_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("process")
    (folder / "tables").mkdir()
    (folder / "tables" / "singer.csv").write_text("singer_id,name\n1,Joe Sharp\n2,Ann Lee\n")
    (folder / "tables" / "concert.csv").write_text("concert_id,singer_id,year\n10,1,2014\n11,2,2015\n")
    assert main(["index", str(folder / "tables"), "--out", str(folder / "idx"), "-q"]) == 0
    return folder / "idx"


def test_query_into_a_pipe_its_reader_closed_ends_without_a_traceback(index_folder):
    read, write = os.pipe()
    os.close(read)  # the reader is gone before pearl writes: `pearl query --json | head -0`
    try:
        done = subprocess.run(
            [sys.executable, "-m", "llama_index_pearl.cli", "query", str(index_folder), "Who sang?", "--json"],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
        )
    finally:
        os.close(write)
    assert done.stderr == ""
    assert done.returncode == 141  # as a Unix tool killed by SIGPIPE


def test_ctrl_c_while_pearl_imports_is_one_line_and_status_130(tmp_path):
    # the process sends itself SIGINT when it starts importing LlamaIndex: within the first second of pearl index
    script = textwrap.dedent(
        f"""
        import os, signal, sys

        # as in a terminal: a process started in the background (make test under nohup) inherits SIGINT ignored
        signal.signal(signal.SIGINT, signal.default_int_handler)

        class CtrlC:
            def find_spec(self, name, path=None, target=None):
                if name == "llama_index.core":
                    os.kill(os.getpid(), signal.SIGINT)
                return None

        sys.meta_path.insert(0, CtrlC())
        from llama_index_pearl.cli import main
        sys.exit(main(["index", {str(tmp_path)!r}, "--out", {str(tmp_path / "idx")!r}]))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert (done.returncode, done.stderr) == (130, "pearl index: interrupted\n")
    assert done.returncode != -signal.SIGINT


def test_index_usage_shows_that_out_or_estimate_is_required(capsys):
    index = next(a for a in full_parser()._actions if a.dest == "command").choices["index"]
    assert "(--out OUT | --estimate)" in index.format_usage()
    with pytest.raises(SystemExit):
        main(["index", "tables/"])
    assert "one of the arguments --out --estimate is required" in capsys.readouterr().err
