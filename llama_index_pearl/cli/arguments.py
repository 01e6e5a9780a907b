"""Each ``pearl`` command's own arguments; imported once the command line names a command.

Pipeline step: cli (docs/architecture.md).
"""

from __future__ import annotations

import argparse

from llama_index_pearl.cli.evaluate import METHODS
from llama_index_pearl.cli.options import (
    add_build_options,
    add_discovery_options,
    add_field_options,
    add_retrieval_options,
    positive_int,
)
from llama_index_pearl.evaluation.ablations import ABLATION_GROUP, ablation_fields
from llama_index_pearl.evaluation.benchmark import DEFAULT_KS

__all__ = ["add_command_arguments"]

EMBED_MODEL_HELP = "the encoder the index was built with (default: the one its manifest records)"
INDEX_DIR_HELP = "an index folder, as written by pearl index --out"


def _demo(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-k", type=positive_int, default=5, help="tables per question (each demo question needs at most 5)"
    )
    parser.add_argument(
        "--data-folder",
        action="store_true",
        help="print the folder of the bundled music database's CSV files and stop: pearl index \"$(pearl demo "
        '--data-folder)" --out idx',
    )


def _index(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("tables", help="folder of CSV/Parquet files, one file, or a SQLAlchemy URL")
    written = parser.add_mutually_exclusive_group(required=True)  # the usage shows that one of them is needed
    written.add_argument("--out", help="folder to write the index to")
    written.add_argument("--estimate", action="store_true", help="dry run: what a build would send to the LLM")
    parser.add_argument("--json", action="store_true", help="print the build report (or estimate) as JSON")
    add_build_options(parser)


def _query(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("index_dir", help=INDEX_DIR_HELP)
    parser.add_argument("question", help='the question, in quotes ("Which venues hosted Velvet Harbor?")')
    parser.add_argument("-k", type=positive_int, default=5, help="how many tables to show (default 5)")
    parser.add_argument("--json", action="store_true", help="print JSON for programs instead of text")
    parser.add_argument(
        "--source",
        action="append",
        metavar="NAME",
        help="ask within the tables of this source only: a database, schema or sub-folder (repeat for several)",
    )
    add_retrieval_options(parser)
    parser.add_argument("--embed-model", help=EMBED_MODEL_HELP)


def _joins(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "tables",
        help="an index folder (written by pearl index: lists the joins it holds), or tables to discover joins in: "
        "a folder of CSV/Parquet files, one file, a SQLAlchemy URL, or a benchmark folder",
    )
    parser.add_argument("--json", dest="json_out", help="also write the joins (and any scores) as JSON to this file")
    parser.add_argument("--embed-model", help="encoder for column names and values (default: bundled MiniLM)")
    add_discovery_options(parser)


def _graph(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("index_dir", help=INDEX_DIR_HELP)
    parser.add_argument("--html", help="the page to write (opens offline in any browser)")
    parser.add_argument("--png", help="also write a screenshot (needs Chromium)")
    parser.add_argument("--sample-rows", type=positive_int, default=5, help="rows shown per table (default 5)")
    parser.add_argument("--width", type=positive_int, default=1280, help="screenshot width in pixels (default 1280)")
    parser.add_argument("--height", type=positive_int, default=800, help="screenshot height in pixels (default 800)")


def _eval(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "bench_dir",
        help="a benchmark folder: tables/*.csv, queries.jsonl (questions, gold tables), optionally joins.jsonl",
    )
    parser.add_argument(
        "--method",
        choices=METHODS,
        default="pearl",
        help="what ranks the tables: PEARL (default), whole tables embedded, BM25, or LlamaIndex's ObjectIndex",
    )
    parser.add_argument("--ks", default=",".join(map(str, DEFAULT_KS)), help="comma-separated k values of R@k, C@k")
    parser.add_argument(
        "--per-database",
        action="store_true",
        help="ask each question within its own database's tables (its db field), as a user asks their database",
    )
    parser.add_argument(
        "--anchor",
        action="store_true",
        help="also rank with LlamaIndex's ObjectIndex and print its R@k, C@k and C@G+2 beside",
    )
    parser.add_argument("--json", dest="json_out", help="write the result as JSON here")
    add_build_options(parser)
    add_field_options(parser, ablation_fields(), (ABLATION_GROUP,))
    add_retrieval_options(parser)


_ARGUMENTS = {"demo": _demo, "index": _index, "query": _query, "joins": _joins, "graph": _graph, "eval": _eval}


def add_command_arguments(name: str, parser: argparse.ArgumentParser) -> None:
    """Add the arguments of command ``name`` to its subparser."""
    _ARGUMENTS[name](parser)
