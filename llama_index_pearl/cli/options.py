"""Options shared by ``pearl`` subcommands: one set of build options for ``index`` and ``eval``.

The build flags are derived from :class:`~llama_index_pearl.config.PearlConfig`'s
fields (name, type, default, help and range come from the field), and
:func:`build_arguments` turns parsed arguments back into a config, so the command
line builds exactly what the library builds and declares no option of its own.

Pipeline step: cli (docs/architecture.md).
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from llama_index.core.vector_stores.types import FilterOperator, MetadataFilter, MetadataFilters

from llama_index_pearl.config import GROUPS, PearlConfig, option_fields
from llama_index_pearl.retrieval.answer.table_sets import SetRule
from llama_index_pearl.retrieval.search.lexical import DEFAULT_LEXICAL_WEIGHT

# how `pearl index`/`pearl eval` sample an LLM's questions (benchmarks/unit_texts.py samples the same way)
GENERATION_SAMPLING: dict[str, Any] = {"temperature": 0.2, "max_tokens": 400}

__all__ = [
    "BuildArguments",
    "add_build_options",
    "add_config_options",
    "add_discovery_options",
    "add_field_options",
    "add_provenance_option",
    "build_arguments",
    "config_from_args",
    "embed_model_from_args",
    "int_at_least",
    "positive_int",
    "set_rule_of",
]

# a mapping of CSV reading options: set in Python (PearlConfig(csv_options=...)), not on the command line
NOT_ON_COMMAND_LINE = frozenset({"csv_options"})
GROUP_TITLES = {
    "views": "views (which units a build makes)",
    "ablations": "ablations (paper section 4.3: leave out a part of PEARL; pearl eval only)",
}


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
    parser.add_argument(
        "--no-table-set",
        dest="table_set",
        action="store_false",
        help="rank tables by their pooled score alone, without the connected set of tables first",
    )


def source_filters(sources: Iterable[str] | None) -> MetadataFilters | None:
    """LlamaIndex filters keeping the tables of these sources (``pearl query --source``, ``pearl eval
    --per-database``); ``None`` for no source: every table."""
    wanted = list(sources or [])
    if not wanted:
        return None
    operator = FilterOperator.EQ if len(wanted) == 1 else FilterOperator.IN
    value: str | list[str] = wanted[0] if len(wanted) == 1 else wanted
    return MetadataFilters(filters=[MetadataFilter(key="source", value=value, operator=operator)])


def set_rule_of(args: argparse.Namespace) -> SetRule | Literal["index"] | None:
    """The retriever's ``set_rule`` of the parsed retrieval options."""
    return "index" if getattr(args, "table_set", True) else None


def add_config_options(parser: argparse.ArgumentParser, groups: tuple[str, ...] = GROUPS) -> None:
    """One flag per :class:`PearlConfig` field of ``groups``, derived from the field.

    ``bool`` fields default ``False`` become ``--name``, those default ``True`` become
    ``--no-name`` (or the field's ``flag``) with the field's ``off`` help (what turning it off
    does); numbers take their ``min``; strings their ``choices``.
    """
    add_field_options(parser, option_fields(), groups)


def add_field_options(
    parser: argparse.ArgumentParser, declared: Iterable[dataclasses.Field], groups: tuple[str, ...]
) -> None:
    """One flag per field of ``groups`` (fields declared with :func:`~llama_index_pearl.config.option`)."""
    sections = {g: parser.add_argument_group(GROUP_TITLES.get(g, g)) for g in groups}
    for option in declared:
        group = option.metadata["group"]
        if group not in sections or option.name in NOT_ON_COMMAND_LINE:
            continue
        flag = option.metadata.get("flag", f"--{'no-' if option.default is True else ''}{option.name}")
        flag = flag.replace("_", "-")
        meta = option.metadata
        kwargs: dict[str, Any] = {"dest": option.name, "help": meta["help"], "default": option.default}
        kind = str(option.type)
        if kind == "bool":
            kwargs["action"] = "store_false" if option.default else "store_true"
            kwargs["help"] = meta["off"] if option.default else meta["help"]
        elif kind.startswith("int"):
            kwargs["type"] = int_at_least(meta.get("min", -(2**31)))
        elif kind.startswith("float"):
            kwargs["type"] = float
        elif "choices" in meta:
            kwargs["choices"] = meta["choices"]
        sections[group].add_argument(flag, **kwargs)


def add_provenance_option(parser: argparse.ArgumentParser) -> None:
    """``--no-provenance``: how benchmarks and folders are pooled, not a build setting."""
    parser.add_argument(
        "--no-provenance",
        dest="provenance",
        action="store_false",
        help="ignore where tables come from (sub-folder, database, benchmark db): one corpus, the paper's unified pool",
    )


def add_discovery_options(parser: argparse.ArgumentParser) -> None:
    """Provenance, and the reading and discovery fields of the config (``pearl joins``)."""
    add_provenance_option(parser)
    add_config_options(parser, groups=("reading", "discovery"))


def add_build_options(parser: argparse.ArgumentParser) -> None:
    """Every build option of ``PearlTableIndex.from_tables`` (``pearl index`` and ``pearl eval``)."""
    llm = parser.add_argument_group("LLM query generation")
    llm.add_argument("--llm-base", help="OpenAI-compatible API base URL (default: the free heuristic generator)")
    llm.add_argument("--llm-model", default="local", help="model name at --llm-base")
    llm.add_argument("--llm-timeout", type=float, default=120.0, help="seconds per LLM call")
    llm.add_argument(
        "--no-fallback",
        dest="fallback",
        action="store_false",
        help="with --llm-base: the LLM writes every path kind and paths beyond the budget get no units (paper), "
        "instead of heuristic questions for those and for implicit paths",
    )
    llm.add_argument(
        "--no-llm-questions",
        dest="llm_questions",
        action="store_false",
        help="with --llm-base: the free heuristic writes the questions, and the LLM nothing but the glossary "
        "(--glossary)",
    )
    parser.add_argument(
        "--embed-model", help="sentence-transformers model name or local folder (default: bundled all-MiniLM-L6-v2)"
    )
    add_provenance_option(parser)
    add_config_options(parser)


def config_from_args(args: argparse.Namespace, *, provenance_in_tables: bool = False) -> PearlConfig:
    """The :class:`PearlConfig` of the parsed flags.

    Args:
        args: Parsed arguments of a parser given :func:`add_config_options`.
        provenance_in_tables: The caller already dropped the tables' sources for
            ``--no-provenance`` (benchmarks); otherwise provenance is ignored through
            ``cross_source_joins="always"``.
    """
    values = {f.name: getattr(args, f.name) for f in option_fields() if hasattr(args, f.name)}
    if not getattr(args, "provenance", True) and not provenance_in_tables:
        values["cross_source_joins"] = "always"
    return PearlConfig(**values)


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
    from llama_index_pearl.text.models import openai_compatible_llm

    return openai_compatible_llm(args.llm_base, args.llm_model, args.llm_timeout, **GENERATION_SAMPLING)


@dataclass
class BuildArguments:
    """What ``PearlTableIndex.from_tables`` is given for the parsed flags (``vars()`` of it are its keywords)."""

    config: PearlConfig
    embed_model: Any = None
    llm: Any = None
    generator: Any = None


def build_arguments(args: argparse.Namespace, *, provenance_in_tables: bool = False) -> BuildArguments:
    """The config, encoder, LLM and generator of the parsed build options.

    Args:
        args: Parsed arguments of a parser given :func:`add_build_options`.
        provenance_in_tables: As in :func:`config_from_args`.
    """
    built = BuildArguments(config_from_args(args, provenance_in_tables=provenance_in_tables))
    built.embed_model = embed_model_from_args(args)
    built.llm = _llm_from_args(args)
    if built.llm is not None and not getattr(args, "llm_questions", True):
        from llama_index_pearl.generation import HeuristicQueryGenerator

        built.generator = HeuristicQueryGenerator()
    elif built.llm is not None:
        from llama_index_pearl.generation import LLMQueryGenerator
        from llama_index_pearl.generation.llm import DEFAULT_LLM_PATH_KINDS

        # --no-fallback is the paper's behaviour: the LLM writes every path kind, and nothing else writes any
        fallback, kinds = ("heuristic", DEFAULT_LLM_PATH_KINDS) if args.fallback else (None, None)
        built.generator = LLMQueryGenerator(built.llm, timeout=args.llm_timeout, fallback=fallback, path_kinds=kinds)
    return built
