"""Tolerant parsing of LLM answers into validated :class:`GeneratedQuery` objects.

Local models wrap JSON in code fences, add prose, leave trailing commas, return a
bare object instead of ``{"questions": [...]}``, and invent or misplace column
names. :func:`parse_answer` accepts all of that, validates every column against
the tables' schemas and raises only :class:`ParseRejection` -- on any input -- so
the caller can retry once with a corrective message and otherwise skip the path.

Pipeline step: generation (docs/architecture.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from llama_index_pearl.generation.requests import GeneratedQuery
from llama_index_pearl.tables.table import Table, normalize_column_name

__all__ = ["ParseRejection", "extract_json", "parse_answer", "validate_columns"]

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_TABLE_KEY = re.compile(r"^(?:relevant_)?columns?_?t(?:able)?_?(\d+)$")
_QUESTION_KEYS = ("question", "query", "q")
_RESERVED_KEYS = frozenset({*_QUESTION_KEYS, "thought", "reason", "columns", "relevant_columns", "questions"})
_MAX_CANDIDATES = 50


class ParseRejection(ValueError):
    """An answer that cannot be used; ``reason`` says why in a few words."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _decode(text: str) -> Any:
    for candidate in (text, _TRAILING_COMMA.sub(r"\1", text)):
        try:
            return json.loads(candidate)
        except (ValueError, RecursionError):
            continue
    raise ValueError("not JSON")


def _embedded(text: str) -> Any:
    """The first decodable JSON object or array inside surrounding prose."""
    decoder = json.JSONDecoder()
    starts = [m.start() for m in re.finditer(r"[{\[]", text)][:_MAX_CANDIDATES]
    for start in starts:
        for candidate in (text[start:], _TRAILING_COMMA.sub(r"\1", text[start:])):
            try:
                value, _ = decoder.raw_decode(candidate)
            except (ValueError, RecursionError):
                continue
            if isinstance(value, (dict, list)):
                return value
    raise ValueError("no JSON object found")


def extract_json(text: str) -> Any:
    """Decode the JSON value in an LLM reply (fences, prose and trailing commas tolerated).

    Args:
        text: The raw reply.

    Returns:
        The decoded object or list.

    Raises:
        ParseRejection: no JSON object or array could be found.
    """
    if not isinstance(text, str) or not text.strip():
        raise ParseRejection("empty answer")
    pieces = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for piece in pieces:
        try:
            value = _decode(piece.strip())
        except ValueError:
            try:
                value = _embedded(piece)
            except ValueError:
                continue
        if isinstance(value, (dict, list)):
            return value
    raise ParseRejection("no JSON object in the answer")


def _items(value: Any) -> list[Mapping[str, Any]]:
    if isinstance(value, Mapping):
        nested = value.get("questions", value.get("queries"))
        if isinstance(nested, list):
            return [v for v in nested if isinstance(v, Mapping)]
        if isinstance(nested, Mapping):
            return [nested]
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, Mapping)]
    return []


def _names(value: Any) -> list[str]:
    if isinstance(value, str):
        return [part for part in (p.strip() for p in value.split(",")) if part]
    if isinstance(value, (list, tuple)):
        return [str(v).strip() for v in value if isinstance(v, (str, int, float)) and str(v).strip()]
    return []


def _table_index(key: str, tables: Sequence[Table]) -> int | None:
    norm = normalize_column_name(str(key))
    match = _TABLE_KEY.match(norm.replace(" ", "_"))
    if match:
        i = int(match.group(1)) - 1
        return i if 0 <= i < len(tables) else None
    if re.fullmatch(r"t\d+", norm):
        i = int(norm[1:]) - 1
        return i if 0 <= i < len(tables) else None
    for i, table in enumerate(tables):
        if norm in {normalize_column_name(table.id), normalize_column_name(table.name or "")}:
            return i
    return None


def _raw_columns(item: Mapping[str, Any], tables: Sequence[Table]) -> tuple[dict[int, list[str]], list[str]]:
    """Column names per table index as the answer put them, plus names with no table given."""
    per_table: dict[int, list[str]] = {}
    loose: list[str] = []
    for key, value in item.items():
        if str(key).strip().lower() in _RESERVED_KEYS:
            continue
        index = _table_index(str(key), tables)
        if index is not None:
            per_table.setdefault(index, []).extend(_names(value))
    for key in ("columns", "relevant_columns"):
        value = item.get(key)
        if isinstance(value, Mapping):
            for table_key, names in value.items():
                index = _table_index(str(table_key), tables)
                if index is None:
                    loose.extend(_names(names))
                else:
                    per_table.setdefault(index, []).extend(_names(names))
        elif value is not None:
            names = _names(value)
            if len(tables) == 1:
                per_table.setdefault(0, []).extend(names)
            else:
                loose.extend(names)
    return per_table, loose


def _lookup(tables: Sequence[Table]) -> list[dict[str, str]]:
    return [{normalize_column_name(c): c for c in t.columns} for t in tables]


def _split_qualified(name: str, tables: Sequence[Table]) -> tuple[int | None, str]:
    """``"T2.name"`` or ``"singer.name"`` -> (table index, column); else (None, name)."""
    if "." in name:
        prefix, _, rest = name.partition(".")
        index = _table_index(prefix.strip(), tables)
        if index is not None:
            return index, rest.strip()
    return None, name


def validate_columns(
    per_table: Mapping[int, Sequence[str]], tables: Sequence[Table], loose: Sequence[str] = ()
) -> dict[str, list[str]]:
    """Map named columns onto the tables' real column names.

    Matching is case/space-insensitive. A column named under the wrong table but
    present in another table of the path is moved there; unknown names are dropped.

    Args:
        per_table: Column names per table index, as the answer gave them.
        tables: The tables in path order.
        loose: Names given without a table; placed where they exist.

    Returns:
        Real column names per table id, in table order, deduplicated.
    """
    lookup = _lookup(tables)
    found: dict[int, list[str]] = {i: [] for i in range(len(tables))}

    def add(index: int, real: str) -> None:
        if real not in found[index]:
            found[index].append(real)

    # names matching their own table first, so moved names never push them back
    misplaced: list[str] = []
    for index in sorted(per_table):
        for name in per_table[index]:
            qualified, bare = _split_qualified(name, tables)
            own = qualified if qualified is not None else index
            real = lookup[own].get(normalize_column_name(bare))
            if real is None:
                misplaced.append(bare)
            else:
                add(own, real)
    for name in [*misplaced, *loose]:
        qualified, bare = _split_qualified(name, tables)
        order = ([qualified] if qualified is not None else []) + list(range(len(tables)))
        for i in order:
            real = lookup[i].get(normalize_column_name(bare))
            if real is not None:
                add(i, real)
                break
    return {tables[i].id: cols for i, cols in found.items()}


def _question(item: Mapping[str, Any]) -> str | None:
    for key in _QUESTION_KEYS:
        value = item.get(key)
        if isinstance(value, str) and value.strip() and value.strip().lower() not in {"null", "none"}:
            return " ".join(value.split())
    return None


def _parse_item(
    item: Mapping[str, Any], tables: Sequence[Table], fallback: Mapping[str, Sequence[str]]
) -> GeneratedQuery:
    question = _question(item)
    if question is None:
        raise ParseRejection("the question is null or missing")
    per_table, loose = _raw_columns(item, tables)
    columns = validate_columns(per_table, tables, loose)
    for table_id, cols in columns.items():
        if not cols:
            cols.extend(fallback.get(table_id, ()))
    empty = [t for t, cols in columns.items() if not cols]
    if empty:
        raise ParseRejection(f"no valid column for table(s) {', '.join(empty)}")
    return GeneratedQuery(question, columns)


def parse_answer(
    text: str,
    tables: Sequence[Table],
    *,
    expected: int = 1,
    fallback_columns: Mapping[str, Sequence[str]] | None = None,
) -> list[GeneratedQuery]:
    """Parse and validate an LLM answer.

    Args:
        text: The raw reply.
        tables: The request's tables in path order (one table for single-hop).
        expected: Questions wanted; extra valid ones are dropped. For a path
            (``expected == 1``) the first item must be valid; for single-hop
            invalid items are dropped as long as one remains.
        fallback_columns: Columns per table id used for a table the answer
            names no valid column for (a path's join columns), instead of
            rejecting an otherwise good question.

    Returns:
        One to ``expected`` validated queries.

    Raises:
        ParseRejection: unparsable answer, null question, or a table left without
            valid columns. Never any other exception.
    """
    fallback = fallback_columns or {}
    try:
        items = _items(extract_json(text))
        if not items:
            raise ParseRejection("the JSON holds no question object")
        if expected == 1:
            return [_parse_item(items[0], tables, fallback)]
        accepted: list[GeneratedQuery] = []
        first_reason = ""
        for item in items:
            try:
                accepted.append(_parse_item(item, tables, fallback))
            except ParseRejection as rejection:
                first_reason = first_reason or rejection.reason
        if not accepted:
            raise ParseRejection(first_reason or "no usable question")
        return accepted[:expected]
    except ParseRejection:
        raise
    except Exception as exc:  # the contract is: one exception type, whatever the model sends
        raise ParseRejection(f"unreadable answer ({type(exc).__name__})") from exc
