"""``pearl``: build, query, inspect and evaluate PEARL indexes from the shell.

pearl demo                                   # bundled music database, 3 multi-table questions explained
pearl index TABLES --out DIR [build options] # CSV/Parquet folder or file, or a SQLAlchemy URL
pearl index TABLES --estimate [--llm-base …] # dry run: paths, requests, prompt tokens, cached
pearl query DIR "question" -k 5              # ranked tables, matched questions, join keys
pearl joins TABLES                           # discovered joins (scored against joins.jsonl when present)
pearl graph DIR --html OUT.html [--png OUT.png]  # the join graph as a page that opens offline
pearl eval BENCH_DIR --method pearl|whole-table|bm25 [build options]

The build options (``--llm-base``, ``--embed-model``, ``--budget``, ``--cache-dir``,
``--no-provenance``, ``--cross-source-joins``...) are the same for ``index`` and ``eval``
and map onto ``PearlTableIndex.from_tables``; ``eval`` adds the paper's ablations.

Parsing happens in two steps so that ``pearl --help`` and ``pearl --version`` answer
without importing LlamaIndex or an encoder: the commands and their one-line help are
declared here; a command's own options (derived from ``PearlConfig``) and its code
are imported only once the command line names it.

Pipeline step: cli (docs/architecture.md).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Callable, Sequence
from importlib import import_module

from llama_index_pearl import __version__
from llama_index_pearl.cli.terminal import add_output_options, configure_output, show

__all__ = ["COMMANDS", "command_parser", "full_parser", "main"]

# name -> (one-line help, "module:function" under llama_index_pearl.cli that runs it)
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("index the bundled music database and explain 3 questions that need several tables", "commands:cmd_demo"),
    "index": ("build an index from tables and write it to a folder", "commands:cmd_index"),
    "query": ("retrieve tables for a question", "commands:cmd_query"),
    "joins": ("discover the joins between tables (scored against joins.jsonl when present)", "commands:cmd_joins"),
    "graph": ("write the join graph as a self-contained HTML page (and/or a PNG of it)", "commands:cmd_graph"),
    "eval": ("measure retrieval on a benchmark folder", "evaluate:cmd_eval"),
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``pearl``; returns the exit status.

    2 for a user error, printed as one line without a traceback; 130 for Ctrl-C, at any moment (the imports of
    the first second included), with one line; 141 when the reader of the output went away (``pearl query --json
    | head``), silently, as a Unix tool killed by SIGPIPE.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return _run_command(argv)
    except KeyboardInterrupt:
        show(f"pearl {_named_command(argv) or ''}".rstrip() + ": interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # what is still buffered for the closed pipe would fail again at exit: stdout goes to the null device
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def _run_command(argv: list[str]) -> int:
    if _named_command(argv) is None:
        command_parser().parse_args(argv)  # --version, --help, or a usage error: argparse exits
    from llama_index_pearl.generation import GenerationFailed

    args = full_parser().parse_args(argv)
    configure_output(args.verbose, args.quiet)
    module, function = COMMANDS[args.command][1].split(":")
    run = getattr(import_module(f"llama_index_pearl.cli.{module}"), function)
    # The ~200,000 objects the imports made live as long as this process; left in the collector's generations,
    # Python's first full collection rescans them all (most of what a pearl query then spent loading its index:
    # benchmarks/README.md, "Cold start"). This process is pearl's own: it sets them aside (collection goes on for
    # everything after).
    gc.freeze()
    try:
        status = int(run(args) or 0)
        sys.stdout.flush()  # a closed pipe fails here, inside main, rather than at exit
        return status
    except (ValueError, GenerationFailed, ImportError, FileNotFoundError, NotADirectoryError, PermissionError) as exc:
        show(f"pearl {args.command}: error: {exc}", file=sys.stderr)
        return 2


def _named_command(argv: Sequence[str]) -> str | None:
    """The command the arguments name: the first one not starting with ``-`` (top-level flags take no value)."""
    first = next((a for a in argv if not a.startswith("-")), None)
    return first if first in COMMANDS else None


def command_parser(
    add_arguments: Callable[[str, argparse.ArgumentParser], None] | None = None,
) -> argparse.ArgumentParser:
    """The ``pearl`` parser: every command with its help, and ``add_arguments(name, parser)`` for each.

    Args:
        add_arguments: Adds a command's own arguments; without it the parser knows the
            commands only (enough for ``--help``, ``--version`` and usage errors).
    """
    parser = argparse.ArgumentParser(
        prog="pearl", description="PEARL table retrieval: the tables a question needs, and how they join"
    )
    parser.add_argument("--version", action="version", version=f"pearl {__version__}")
    add_output_options(parser, top_level=True)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (help_text, _) in COMMANDS.items():
        child = sub.add_parser(name, help=help_text, description=help_text)
        add_output_options(child)
        if add_arguments is not None:
            add_arguments(name, child)
    return parser


def full_parser() -> argparse.ArgumentParser:
    """The ``pearl`` parser with every command's arguments (imports the configuration they derive from)."""
    from llama_index_pearl.cli.arguments import add_command_arguments

    return command_parser(add_command_arguments)


if __name__ == "__main__":
    sys.exit(main())
