"""``pearl``: build, query, inspect and evaluate PEARL indexes from the shell.

pearl demo                                   # bundled music database, 3 multi-hop questions explained
pearl index TABLES --out DIR [build options] # CSV/Parquet folder or file, or a SQLAlchemy URL
pearl index TABLES --estimate [--llm-base …] # dry run: paths, requests, prompt tokens, cached
pearl query DIR "question" -k 5              # ranked tables, matched questions, join keys
pearl joins TABLES                           # discovered joins (scored against joins.jsonl when present)
pearl graph DIR --html OUT.html [--png OUT.png]  # the join graph as a page that opens offline
pearl eval BENCH_DIR --method pearl|whole-table|bm25 [build options]

The build options (``--llm-base``, ``--embed-model``, ``--budget``, ``--cache-dir``,
``--no-provenance``, ``--cross-source-joins``, ablations) are the same for ``index``
and ``eval`` and map onto ``PearlTableIndex.from_tables``.

Pipeline step: cli (docs/architecture.md).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from llama_index_pearl import __version__
from llama_index_pearl.cli.commands import cmd_demo, cmd_graph, cmd_index, cmd_joins, cmd_query
from llama_index_pearl.cli.evaluate import METHODS, cmd_eval
from llama_index_pearl.cli.options import (
    add_build_options,
    add_discovery_options,
    add_output_options,
    add_retrieval_options,
    configure_output,
    positive_int,
)
from llama_index_pearl.cli.output import show
from llama_index_pearl.evaluation.benchmark import DEFAULT_KS
from llama_index_pearl.generation import GenerationFailed

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``pearl``; returns the exit status (2 for a user error, printed without a traceback)."""
    args = _parser().parse_args(argv)
    configure_output(args.verbose, args.quiet)
    try:
        return int(args.func(args) or 0)
    except (ValueError, GenerationFailed, ImportError, FileNotFoundError, NotADirectoryError, PermissionError) as exc:
        show(f"pearl {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        show(f"pearl {args.command}: interrupted", file=sys.stderr)
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pearl", description="PEARL multi-hop table retrieval")
    parser.add_argument("--version", action="version", version=f"pearl {__version__}")
    add_output_options(parser, top_level=True)
    sub = parser.add_subparsers(dest="command", required=True)

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        child = sub.add_parser(name, help=help_text, description=help_text)
        add_output_options(child)
        return child

    demo = command("demo", "index the bundled music database and explain 3 multi-hop questions")
    demo.add_argument("-k", type=positive_int, default=4, help="tables per question")
    demo.set_defaults(func=cmd_demo)

    index = command("index", "build an index from tables and write it to a folder")
    index.add_argument("tables", help="folder of CSV/Parquet files, one file, or a SQLAlchemy URL")
    index.add_argument("--out", help="folder to write the index to")
    index.add_argument("--estimate", action="store_true", help="dry run: what a build would send to the LLM")
    index.add_argument("--json", action="store_true", help="print the build report (or estimate) as JSON")
    add_build_options(index)
    index.set_defaults(func=cmd_index)

    query = command("query", "retrieve tables for a question")
    query.add_argument("index_dir")
    query.add_argument("question")
    query.add_argument("-k", type=positive_int, default=5, help="tables to return")
    query.add_argument("--json", action="store_true", help="print JSON instead of text")
    add_retrieval_options(query)
    query.add_argument("--embed-model", help="the encoder the index was built with (default: the recorded one)")
    query.set_defaults(func=cmd_query)

    joins = command("joins", "discover the joins between tables (scored against joins.jsonl when present)")
    joins.add_argument("tables", help="folder of CSV/Parquet files, one file, a SQLAlchemy URL, or a benchmark")
    joins.add_argument("--json", dest="json_out", help="write the result as JSON here")
    joins.add_argument("--embed-model", help="encoder for column names and values (default: bundled MiniLM)")
    add_discovery_options(joins)
    joins.set_defaults(func=cmd_joins)

    graph = command("graph", "write the join graph as a self-contained HTML page (and/or a PNG of it)")
    graph.add_argument("index_dir")
    graph.add_argument("--html", help="the page to write (opens offline in any browser)")
    graph.add_argument("--png", help="also write a screenshot (needs Chromium)")
    graph.add_argument("--sample-rows", type=positive_int, default=5, help="rows shown per table (default 5)")
    graph.add_argument("--width", type=positive_int, default=1280, help="screenshot width")
    graph.add_argument("--height", type=positive_int, default=800, help="screenshot height")
    graph.add_argument("--embed-model", help="the encoder the index was built with (default: the recorded one)")
    graph.set_defaults(func=cmd_graph)

    ev = command("eval", "measure retrieval on a benchmark folder")
    ev.add_argument("bench_dir")
    ev.add_argument("--method", choices=METHODS, default="pearl")
    ev.add_argument("--ks", default=",".join(map(str, DEFAULT_KS)), help="comma-separated k values")
    ev.add_argument("--json", dest="json_out", help="write the result as JSON here")
    add_build_options(ev)
    add_retrieval_options(ev)
    ev.set_defaults(func=cmd_eval)
    return parser


if __name__ == "__main__":
    sys.exit(main())
