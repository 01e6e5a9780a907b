"""MkDocs hooks: the pages written from the code, so that an option, a flag or a public name is written once.

A page marks where generated text goes with two lines,

    <!-- generated: NAME -->
    ...what a reader of the Markdown file (on GitHub, in an editor) sees instead...
    <!-- end generated -->

and ``mkdocs build`` replaces what lies between them with NAME's text:

- ``config-reference``: one table per group of ``PearlConfig``'s fields, from their metadata (group, help, range,
  whether it is persisted and whether an insert may change it), their docstring and the ``pearl`` flag that
  argparse derived from each;
- ``cli-reference``: every ``pearl`` command, its usage and its arguments, read off the argparse parsers of
  ``llama_index_pearl.cli`` (``full_parser()``, the parser ``pearl`` itself runs);
- ``api-reference``: a summary of the public names of ``llama_index_pearl`` (``_PUBLIC``), then a mkdocstrings
  directive per name, ``PearlTableIndex``, ``PearlRetriever`` and ``PearlConfig`` first; ``PearlTableIndex``'s
  members (all its own: ``index.py`` defines every one) grouped by what a reader comes for (``MEMBER_GROUPS``)
  before the rest; other classes with the members they inherit from the package's classes that are no public
  name (the reports' ``to_dict`` and ``from_dict``, from their base ``StepsReport``);
- ``benchmarks``: ``benchmarks/README.md``, where every measurement is written once.

An unknown NAME, or a begin without its end, fails the build.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^<!-- generated: (?P<name>[\w-]+) -->\n(?P<shown>.*?)^<!-- end generated -->$", re.M | re.S)
BEGIN = re.compile(r"^<!-- generated: ", re.M)


def _cell(text: object) -> str:
    """Text in a Markdown table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _markdown(rst: str) -> str:
    """A docstring's reStructuredText bits as Markdown: ``x`` and :class:`~a.b.C` become `x` and `C`."""
    text = re.sub(
        r":\w+:`~?([^`]+)`", lambda m: f"`{m.group(1).rsplit('.', 1)[-1] if '~' in m.group(0) else m.group(1)}`", rst
    )
    return re.sub(r"``([^`]+)``", r"`\1`", text)


def _code(text: object) -> str:
    return f"`{text}`" if "`" not in str(text) else f"`` {text} ``"


def _docstring_args(doc: str) -> dict[str, str]:
    """The ``Args:`` entries of a Google-style docstring, each joined on one line."""
    entries: dict[str, str] = {}
    section, name = False, None
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped in ("Args:", "Attributes:"):
            section, name = True, None
            continue
        if section and stripped.endswith(":") and not line.startswith(" " * 8):
            section = False  # the next section (Raises:, Returns:)
        if not section or not stripped:
            continue
        found = re.match(r"\s{8}(\w+): (.*)", line)
        if found and not line.startswith(" " * 9):
            name = found.group(1)
            entries[name] = found.group(2)
        elif name is not None:
            entries[name] += " " + stripped
    return entries


@contextmanager
def _columns(width: int) -> Iterator[None]:
    """argparse wraps usage lines to ``$COLUMNS``: a fixed width, whatever terminal builds the site."""
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(width)
    try:
        yield
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _invocation(action: argparse.Action) -> str:
    """How an argument is written: ``--budget BUDGET``, ``--cross-source-joins {evidence,never,always}``, ``tables``."""
    if not action.option_strings:
        return action.metavar or action.dest
    if action.nargs == 0:
        return ", ".join(action.option_strings)
    choices = "{" + ",".join(map(str, action.choices)) + "}" if action.choices else None
    value = choices or action.metavar or action.dest.upper()
    return ", ".join(f"{flag} {value}" for flag in action.option_strings)


def _default(action: argparse.Action) -> str:
    if action.option_strings and action.nargs == 0:
        return ""  # a switch: its help says what it does
    if action.default in (None, argparse.SUPPRESS):
        return ""
    return _code(action.default)


def config_reference() -> str:
    """``PearlConfig``'s fields by group: default, range, flag, persisted, and what each does."""
    from llama_index_pearl.cli import full_parser
    from llama_index_pearl.config import GROUPS, PearlConfig, option_fields

    flags = {}
    for action in _subparsers(full_parser())["index"]._actions:
        flags.setdefault(action.dest, ", ".join(action.option_strings))
    described = _docstring_args(PearlConfig.__doc__ or "")
    out = []
    for group in GROUPS:
        out += [f"### {group.capitalize()}", ""]
        out += ["| option | default | values | `pearl` flag | what it does |", "|---|---|---|---|---|"]
        for option in option_fields():
            meta = option.metadata
            if meta["group"] != group:
                continue
            if option.default_factory is not dataclasses.MISSING:
                default = "detected per file"
            else:
                default = _code(repr(option.default))
            values = [str(option.type).replace(" | None", "")]
            if "min" in meta:
                values.append(f">= {meta['min']}")
            if "max" in meta:
                values.append(f"<= {meta['max']}")
            if "choices" in meta:
                values = [" / ".join(_code(repr(c)) for c in meta["choices"])]
            if "None" in str(option.type):
                values.append("or `None`")
            what = _markdown(described.get(option.name, meta["help"]))
            if not meta.get("persist", True):
                what += " *Not persisted: a setting of this machine or run.*"
            if meta.get("kept"):
                what += " *An insert may change it: the index keeps the insert's value.*"
            elif meta.get("update"):
                what += " *An insert may set its own.*"
            flag = _code(flags[option.name]) if option.name in flags else "Python only"
            out.append(
                f"| `{option.name}` | {_cell(default)} | {_cell(' '.join(values))} | {_cell(flag)} | {_cell(what)} |"
            )
        out.append("")
    return "\n".join(out)


def cli_reference() -> str:
    """Every command of ``pearl``: its help, usage and arguments, by argument group."""
    from llama_index_pearl.cli import full_parser

    with _columns(88):
        parser = full_parser()
        out = ["## `pearl`", "", parser.description or "", "", "```text", parser.format_usage().rstrip(), "```", ""]
        out += _arguments(parser)
        for name, child in _subparsers(parser).items():
            out += [f"## `pearl {name}`", "", child.description or "", ""]
            out += ["```text", child.format_usage().rstrip(), "```", ""]
            out += _arguments(child)
    return "\n".join(out)


def _arguments(parser: argparse.ArgumentParser) -> list[str]:
    out = []
    for group in parser._action_groups:
        actions = [
            a
            for a in group._group_actions
            if a.help != argparse.SUPPRESS and not isinstance(a, (argparse._SubParsersAction, argparse._HelpAction))
        ]
        if not actions:
            continue
        out += [f"**{group.title}**", "", "| argument | default | what it does |", "|---|---|---|"]
        out += [f"| {_cell(_code(_invocation(a)))} | {_cell(_default(a))} | {_cell(a.help or '')} |" for a in actions]
        out.append("")
    return out


# the public names a reader looks for first; the others follow in ``__all__``'s order
LEAD = ("PearlTableIndex", "PearlRetriever", "PearlConfig")
# a class's members by what a reader comes for, first; its other public members follow, under OTHER_MEMBERS
MEMBER_GROUPS = {
    "PearlTableIndex": {
        "Build, load and persist": ["from_tables", "afrom_tables", "estimate_cost", "load", "persist"],
        "Ask": ["as_retriever", "as_query_engine", "as_chat_engine", "as_sql_table_retriever", "as_sql_query_engine"],
        "Update": ["insert_tables", "ainsert_tables", "delete_table", "adelete_table"],
        "What it holds": [
            "tables",
            "join_graph",
            "join_paths",
            "units",
            "catalog",
            "config",
            "report",
            "embed_model",
            "vector_store",
            "table_text",
        ],
        "Thread safety": ["lock_timeout", "read_lock", "revisions"],
    },
}
OTHER_MEMBERS = "Other members"


def _public_names() -> list[str]:
    import llama_index_pearl

    return [*LEAD, *(n for n in llama_index_pearl.__all__ if n not in LEAD)]


def _summary(obj: object) -> str:
    doc = (getattr(obj, "__doc__", None) or "").strip()
    return _markdown(doc.split("\n\n", 1)[0]) if doc else ""


def api_reference() -> str:
    """A summary of the public names, then a mkdocstrings directive per name: the index, the retriever and the
    config first, each class's members grouped by what a reader comes for (:data:`MEMBER_GROUPS`)."""
    import importlib

    import llama_index_pearl

    names = _public_names()
    objects = {n: getattr(importlib.import_module(llama_index_pearl._PUBLIC[n]), n) for n in names}
    out = ["| name | what it is |", "|---|---|"]
    out += [f"| [`{n}`](#{llama_index_pearl._PUBLIC[n]}.{n}) | {_cell(_summary(objects[n]))} |" for n in names]
    out += ["", "The command line: [Command line](cli.md), every `pearl` command and flag.", ""]
    for name in names:
        path = f"{llama_index_pearl._PUBLIC[name]}.{name}"
        groups = MEMBER_GROUPS.get(name)
        if groups is None:
            out.append(f"::: {path}")
            inherited = _inherited(objects[name])
            if inherited:
                out += ["    options:", f"      inherited_members: [{', '.join(inherited)}]"]
            out.append("")
            continue
        out += [f"::: {path}", "    options:", "      members: false", ""]
        grouped = [m for members in groups.values() for m in members]
        rest = [m for m in _public_members(objects[name]) if m not in grouped]
        for title, members in [*groups.items(), (OTHER_MEMBERS, rest)]:
            out += [f"### {title}", ""]
            for member in members:
                out += [f"::: {path}.{member}", "    options:", "      heading_level: 4", ""]
    return "\n".join(out)


def _public_members(cls: type) -> list[str]:
    """A class's own public members, in source order."""
    return [n for n in vars(cls) if not n.startswith("_")]


def _inherited(obj: object) -> list[str]:
    """The public members a class inherits from the package's classes that are no public name (its mixins)."""
    import llama_index_pearl

    if not isinstance(obj, type):
        return []
    names: list[str] = []
    for base in obj.__mro__[1:]:
        if base.__module__.startswith("llama_index_pearl.") and base.__name__ not in llama_index_pearl._PUBLIC:
            names += [n for n in vars(base) if not n.startswith("_") and n not in vars(obj) and n not in names]
    return names


def benchmarks() -> str:
    """``benchmarks/README.md`` without its title (the page has its own)."""
    text = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")
    return text.split("\n", 1)[1] if text.startswith("# ") else text


GENERATED: dict[str, Callable[[], str]] = {
    "config-reference": config_reference,
    "cli-reference": cli_reference,
    "api-reference": api_reference,
    "benchmarks": benchmarks,
}


def generate(markdown: str, where: str = "the page") -> str:
    """``markdown`` with each generated block filled in."""
    if len(BEGIN.findall(markdown)) != len(BLOCK.findall(markdown)):
        raise ValueError(f"{where}: a '<!-- generated: NAME -->' line without its '<!-- end generated -->'")

    def fill(found: re.Match) -> str:
        name = found.group("name")
        if name not in GENERATED:
            raise ValueError(f"{where}: unknown generated block {name!r}; known: {', '.join(GENERATED)}")
        return GENERATED[name]().rstrip("\n")

    return BLOCK.sub(fill, markdown)


def on_page_markdown(markdown: str, page, config, files) -> str:
    """MkDocs hook: fill in the page's generated blocks."""
    from mkdocs.exceptions import PluginError

    try:
        return generate(markdown, page.file.src_uri)
    except ValueError as exc:
        raise PluginError(str(exc)) from exc
