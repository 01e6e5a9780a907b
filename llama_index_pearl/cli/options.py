"""Options shared by ``pearl`` subcommands: one set of build options for ``index`` and ``eval``.

Each flag maps onto a keyword of :meth:`PearlTableIndex.from_tables`; :func:`build_kwargs`
turns parsed arguments into those keywords, so the command line builds exactly what
the library builds.
"""

from __future__ import annotations

import argparse
import logging
import os
import warnings
from collections.abc import Callable
from typing import Any

from llama_index_pearl.joins.scoring import CROSS_SOURCE_POLICIES
from llama_index_pearl.lexical import DEFAULT_LEXICAL_WEIGHT

__all__ = [
    "ABLATIONS",
    "add_build_options",
    "add_discovery_options",
    "add_output_options",
    "build_kwargs",
    "configure_output",
    "embed_model_from_args",
    "int_at_least",
    "positive_int",
]

ABLATIONS = ("explicit_only", "implicit_only", "no_originals", "random_view", "random_query", "single_hop")


def int_at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: an integer >= ``minimum`` (``-k 0`` is a usage error, not a traceback)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    return parse


positive_int = int_at_least(1)


def add_retrieval_options(parser: argparse.ArgumentParser) -> None:
    """Options of ``PearlRetriever`` (``pearl query`` and ``pearl eval``)."""
    parser.add_argument(
        "--lexical-weight",
        type=float,
        default=DEFAULT_LEXICAL_WEIGHT,
        help=f"cosine added for BM25 evidence (default {DEFAULT_LEXICAL_WEIGHT}; 0 = encoder only, as in the paper)",
    )


def add_output_options(parser: argparse.ArgumentParser, *, top_level: bool = False) -> None:
    """``-v`` / ``-q``, accepted before or after the subcommand.

    Args:
        parser: The top-level parser or a subcommand's.
        top_level: Set the defaults here; subcommands leave them unset so a flag
            given before the subcommand is not reset by the subparser.
    """
    default: Any = False if top_level else argparse.SUPPRESS
    group = parser.add_mutually_exclusive_group()
    group.add_argument("-v", "--verbose", action="store_true", default=default, help="log progress")
    group.add_argument("-q", "--quiet", action="store_true", default=default, help="print results only, no summary")


def configure_output(verbose: bool, quiet: bool) -> None:
    """Logging level, and silence for the encoder's loading bars and warnings unless ``verbose``."""
    level = logging.INFO if verbose else logging.ERROR if quiet else logging.WARNING
    logging.basicConfig(level=level, format="%(levelname)s %(message)s")
    if verbose:
        return
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=UserWarning, module="transformers|sentence_transformers|torch")
    for name in ("sentence_transformers", "transformers", "httpx", "faiss"):
        logging.getLogger(name).setLevel(logging.ERROR)
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
    except ImportError:  # the encoder is not a transformers model
        pass


def add_discovery_options(parser: argparse.ArgumentParser) -> None:
    """Provenance and cross-source join policy (join discovery)."""
    parser.add_argument(
        "--no-provenance",
        dest="provenance",
        action="store_false",
        help="ignore where tables come from (sub-folder, database, benchmark db): one pool, as in the PEARL paper",
    )
    parser.add_argument(
        "--cross-source-joins",
        choices=CROSS_SOURCE_POLICIES,
        default="evidence",
        help="joins between tables of different sources (default: only on value evidence)",
    )


def add_build_options(parser: argparse.ArgumentParser) -> None:
    """Every build option of ``PearlTableIndex.from_tables`` (``pearl index`` and ``pearl eval``)."""
    llm = parser.add_argument_group("query generation")
    llm.add_argument("--llm-base", help="OpenAI-compatible API base URL (default: the free heuristic generator)")
    llm.add_argument("--llm-model", default="local", help="model name at --llm-base")
    llm.add_argument("--llm-timeout", type=float, default=120.0, help="seconds per LLM call")
    llm.add_argument("--concurrency", type=positive_int, default=4, help="LLM requests in flight")
    llm.add_argument("--cache-dir", help="generation cache folder (LLM default: ~/.cache/llama-index-pearl)")
    llm.add_argument(
        "--no-fallback",
        dest="fallback",
        action="store_false",
        help="with --llm-base: paths beyond the budget get no units (paper) instead of heuristic questions",
    )
    llm.add_argument(
        "--budget", type=int_at_least(0), help="paths per pool (default: every path; tables/2 with an LLM)"
    )
    build = parser.add_argument_group("index")
    build.add_argument(
        "--embed-model", help="sentence-transformers model name or local folder (default: bundled all-MiniLM-L6-v2)"
    )
    build.add_argument("--titles", dest="titles", action="store_true", default=True, help="render titles (default)")
    build.add_argument("--no-titles", dest="titles", action="store_false", help="do not render table titles")
    build.add_argument("--max-rows", type=positive_int, default=10, help="rows per table view (default 10)")
    add_discovery_options(build)
    ablations = parser.add_argument_group("ablations (paper section 4.3)")
    for flag in ABLATIONS:
        ablations.add_argument(f"--{flag.replace('_', '-')}", dest=flag, action="store_true")


def embed_model_from_args(args: argparse.Namespace) -> Any:
    """The encoder named by ``--embed-model``, or ``None`` for the library's default."""
    name = getattr(args, "embed_model", None)
    if not name:
        return None
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    return HuggingFaceEmbedding(model_name=name, normalize=True)


def _llm_from_args(args: argparse.Namespace) -> Any:
    if not getattr(args, "llm_base", None):
        return None
    from llama_index.llms.openai_like import OpenAILike

    # retries happen once, in the generator; the client must not multiply them
    return OpenAILike(
        model=args.llm_model,
        api_base=args.llm_base,
        api_key="none",
        is_chat_model=True,
        max_retries=0,
        timeout=args.llm_timeout,
        temperature=0.2,
        max_tokens=400,
    )


def build_kwargs(args: argparse.Namespace, *, provenance_in_tables: bool = False) -> dict[str, Any]:
    """Keyword arguments of ``PearlTableIndex.from_tables`` for the parsed build options.

    Args:
        args: Parsed arguments of a parser given :func:`add_build_options`.
        provenance_in_tables: The caller already dropped the tables' sources for
            ``--no-provenance`` (benchmarks); otherwise provenance is ignored through
            ``cross_source_joins="always"``.
    """
    kwargs: dict[str, Any] = {flag: getattr(args, flag) for flag in ABLATIONS}
    cross_source = args.cross_source_joins
    if not args.provenance and not provenance_in_tables:
        cross_source = "always"
    kwargs.update(
        embed_model=embed_model_from_args(args),
        llm=_llm_from_args(args),
        concurrency=args.concurrency,
        cache_dir=args.cache_dir,
        budget=args.budget,
        cross_source_joins=cross_source,
        include_titles=args.titles,
        max_rows=args.max_rows,
    )
    if kwargs["llm"] is not None:
        from llama_index_pearl.generation import LLMQueryGenerator

        fallback = "heuristic" if args.fallback else None
        kwargs["generator"] = LLMQueryGenerator(kwargs["llm"], timeout=args.llm_timeout, fallback=fallback)
    return kwargs


def estimate_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The subset of :func:`build_kwargs` that ``PearlTableIndex.estimate_cost`` takes."""
    dropped = {"concurrency", "include_titles", "max_rows", "no_originals"}
    return {k: v for k, v in kwargs.items() if k not in dropped}
