"""Query generation without an LLM: templated questions and profiled column choices.

The default when no LLM is configured. It follows the same recipe the prompts ask
of an LLM: anchor on a distinctive value of the first table (taken from rows that
actually join, when any do: a key join whose samples share no value, a dimension
read in part, still gets its question from the names), name the middle table's
entity for a 3-table path, and ask for descriptive attributes of the far table, in
plain words without the table's column prefix (``stadium_id`` -> "stadium",
``c_mktsegment`` -> "mktsegment"). Columns are the join keys plus the most distinctive descriptive
columns, 3 to 5 per table. Output depends only on the tables, the path and the
seed, so a rebuild reproduces it exactly.

Pipeline step: generation (docs/architecture.md).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from llama_index_pearl.generation.base import QueryGenerator, register_generator
from llama_index_pearl.generation.requests import GeneratedQuery, GenerationRequest, GenerationResult, PathRequest
from llama_index_pearl.generation.rows import join_values, resolve_column, shown_rows
from llama_index_pearl.joins.naming import bare_name, column_prefix
from llama_index_pearl.joins.paths import JoinKind, JoinPath
from llama_index_pearl.tables.table import Table, cell_text
from llama_index_pearl.text.serialization import DEFAULT_MAX_ROWS
from llama_index_pearl.text.words import identifier_words, singular, split_identifiers

__all__ = [
    "HEURISTIC_VERSION",
    "ColumnSalience",
    "HeuristicQueryGenerator",
    "column_salience",
    "humanize",
    "star_question",
]

HEURISTIC_VERSION = "heuristic-4"
PROFILE_ROWS = 500
PROSE_WORDS = 5  # a cell of this many words is prose (a comment), which says nothing of what a table is about
_NAME_HINTS = {
    "name", "title", "label", "city", "country", "nation", "nationality", "place", "location", "state",
    "type", "category", "genre", "description", "song", "album", "team", "brand", "model", "language",
    "airline", "airport", "school", "company", "address", "street", "district", "region", "role", "theme",
}  # fmt: skip
_NUMBER = re.compile(r"^[-+]?[\d,]*\.?\d+(?:[eE][-+]?\d+)?%?$")


def humanize(name: str) -> str:
    """Plain words for a column or table name: ``Stadium_ID`` -> "stadium", ``db__singer`` -> "singer"."""
    name = str(name).split("__")[-1]
    words = split_identifiers(name).replace("-", " ").lower().split()
    if len(words) > 1 and words[-1] in {"id", "ids", "key", "fk", "code", "no", "num"}:
        words = words[:-1]
    return " ".join(words) or str(name)


@dataclass(frozen=True)
class ColumnSalience:
    """Why a column is (not) a good anchor or target."""

    name: str
    text_ratio: float  # non-numeric share of non-empty cells
    distinct_ratio: float
    proper_ratio: float  # share of cells that look like proper nouns
    hinted: bool  # the name says name/title/city/...
    id_like: bool
    prose_ratio: float = 0.0  # share of cells of PROSE_WORDS words or more: comments, notes, descriptions

    @property
    def score(self) -> float:
        base = self.text_ratio + 0.8 * self.distinct_ratio + 0.5 * self.proper_ratio + (1.0 if self.hinted else 0.0)
        return base - (1.5 if self.id_like else 0.0)


def _proper(value: str) -> bool:
    return 1 < len(value) <= 60 and any(c.isalpha() for c in value) and value[0].isupper()


def column_salience(table: Table) -> tuple[ColumnSalience, ...]:
    """Profile every column of ``table`` on its first rows (once per table: every path through it asks)."""
    return table.derived("column_salience", lambda: _profile_columns(table))


def _profile_columns(table: Table) -> tuple[ColumnSalience, ...]:
    profiles = []
    for column in table.columns:
        cells = [cell_text(v).strip() for v in table.df[column].head(PROFILE_ROWS).tolist()]
        cells = [c for c in cells if c]
        n = len(cells) or 1
        numeric = sum(1 for c in cells if _NUMBER.match(c))
        words = set(_words(table, column).split()) | set(identifier_words(column))
        id_like = column.lower() == "id" or (column.lower().endswith(("_id", "id")) and numeric == len(cells))
        profiles.append(
            ColumnSalience(
                name=column,
                text_ratio=1 - numeric / n if cells else 0.0,
                distinct_ratio=len(set(cells)) / n if cells else 0.0,
                proper_ratio=sum(1 for c in cells if _proper(c)) / n,
                hinted=bool(words & _NAME_HINTS),
                id_like=id_like,
                prose_ratio=sum(1 for c in cells if len(c.split()) >= PROSE_WORDS) / n,
            )
        )
    return tuple(profiles)


def _ranked(table: Table, exclude: Sequence[str] = ()) -> list[ColumnSalience]:
    return sorted((p for p in column_salience(table) if p.name not in exclude), key=lambda p: -p.score)


def choose_columns(
    table: Table, join_keys: Sequence[str], low: int = 3, high: int = 5, prose: bool = True
) -> list[str]:
    """Join keys first, then the most distinctive columns, ``low``..``high`` in all (fewer if the table is narrow).

    Args:
        table: The table.
        join_keys: Its join columns, always first.
        low: Fewest columns.
        high: Most columns.
        prose: Whether columns of mostly prose cells (comments) may be chosen.
    """
    chosen = [c for c in join_keys if c in table.columns][:high]
    want = min(len(table.columns), max(low, min(high, len(chosen) + 2)))
    for profile in _ranked(table, chosen):
        if not prose and profile.prose_ratio >= 0.5:
            continue
        if len(chosen) >= want:
            break
        chosen.append(profile.name)
    return chosen


def _value(table: Table, row: int, column: str) -> str:
    return cell_text(table.df[column].iloc[row]).strip()


def _anchor(table: Table, rows: list[int], exclude: Sequence[str], rng: random.Random) -> tuple[str, str, int] | None:
    """(column, value, row) of a distinctive proper-noun-like cell among ``rows``, overlapping rows first."""
    ranked = [p for p in _ranked(table, exclude) if p.text_ratio > 0.5] or _ranked(table, exclude)
    for profile in ranked[:2]:
        candidates = [(r, _value(table, r, profile.name)) for r in rows]
        good = [(r, v) for r, v in candidates if len(v) > 1 and not _NUMBER.match(v)][:3]
        if good:
            row, value = good[rng.randrange(len(good))] if len(good) > 1 else good[0]
            return profile.name, value, row
    return None


def _words(table: Table, column: str) -> str:
    """A column's name in plain words, without its table's column prefix: ``c_mktsegment`` -> "mktsegment"."""
    prefix = table.derived("column_prefix", lambda: column_prefix(table.id, table.columns))
    return humanize(bare_name(column, prefix))


def _anchor_phrase(entity: str, col: str, value: str) -> str:
    if col in {"name", "title"} or col.endswith((" name", " title")) or col == entity:
        return f'{entity} "{value}"'
    return f'{entity} whose {col} is "{value}"'


def _join(words: list[str]) -> str:
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


@register_generator("heuristic")
class HeuristicQueryGenerator(QueryGenerator):
    """LLM-free generator: deterministic templated questions and column subsets.

    Args:
        n_single: Questions per table for single-hop requests (at most the
            request's ``n_questions``); templates beyond a few add near-duplicates.
        seed: Varies which of the first matching rows anchors a question.
        max_rows: Rows considered per table (join-overlapping rows first).
    """

    prompt_version = HEURISTIC_VERSION
    cost_per_path = 0.0  # no LLM call: every candidate path is worth indexing
    caches_by_default = False  # regenerating is cheaper than reading a cache

    def __init__(self, n_single: int = 2, seed: int = 0, max_rows: int = DEFAULT_MAX_ROWS) -> None:
        if n_single < 1:
            raise ValueError(f"n_single must be >= 1, got {n_single}")
        self.n_single = n_single
        self.seed = seed
        self.max_rows = max_rows
        self.model_name = f"heuristic(n_single={n_single},seed={seed})"
        # templated questions beyond a few are near-duplicates: ask for no more than it writes
        self.questions_per_table = n_single

    def spec_params(self) -> dict[str, Any]:
        return {"n_single": self.n_single, "seed": self.seed, "max_rows": self.max_rows}

    async def agenerate(self, request: GenerationRequest) -> GenerationResult:
        """Generate for one request (no I/O; async only to share the interface)."""
        return self.generate(request)

    def generate(self, request: GenerationRequest) -> GenerationResult:
        """Generate for one request, in the calling thread (no event loop: nothing waits).

        Args:
            request: A path or single-table request.

        Returns:
            One query for a path, up to ``n_single`` for a table.
        """
        rng = random.Random(f"{self.seed}:{request.request_id}")
        rows = shown_rows(request, self.max_rows)
        if isinstance(request, PathRequest):
            query = self._path_query(request, rows, rng)
            if query is None:
                return GenerationResult(request.request_id, skipped_reason="no shared join value", attempts=1)
            queries = [query]
        else:
            queries = self._single_queries(request.table, rows[request.table.id], request.n_questions, rng)
        if not queries:
            return GenerationResult(request.request_id, skipped_reason="no usable rows", attempts=1)
        return GenerationResult(request.request_id, queries=queries, attempts=1)

    def _path_query(
        self, request: PathRequest, rows: dict[str, list[int]], rng: random.Random
    ) -> GeneratedQuery | None:
        path, tables = request.path, request.table_list
        if path.kind is JoinKind.IMPLICIT and not _grounded(path, request.tables):
            return None  # a join by values alone whose samples share none: no question can need every table
        columns: dict[str, list[str]] = {}
        for table in tables:
            keys = [k for k in (resolve_column(table, c) for c in path.join_columns(table.id)) if k]
            columns[table.id] = choose_columns(table, keys, prose=False)
        first = tables[0]
        anchor = _anchor(first, rows[first.id], path.join_columns(first.id), rng)
        if anchor is not None and anchor[0] not in columns[first.id]:
            columns[first.id] = [*columns[first.id][:4], anchor[0]]
        if path.kind is JoinKind.IMPLICIT:
            return GeneratedQuery(_implicit_question(path, tables, columns), columns)
        return GeneratedQuery(_explicit_question(path, tables, columns, anchor), columns)

    def _single_queries(self, table: Table, rows: list[int], n: int, rng: random.Random) -> list[GeneratedQuery]:
        entity = _entity(table)
        ranked = _ranked(table)
        numeric = [p.name for p in ranked if p.text_ratio < 0.2 and not p.id_like]
        queries: list[GeneratedQuery] = []
        order = list(rows)
        rng.shuffle(order)
        used_rows: set[int] = set()
        for k in range(min(n, self.n_single)):
            anchor = _anchor(table, [r for r in order if r not in used_rows] or order, (), rng)
            if anchor is None:
                if k == 0:  # no text to anchor on (all-numeric table): still describe what it holds
                    cols = [p.name for p in ranked[:3]]
                    wanted = _join([_words(table, c) for c in cols])
                    queries.append(GeneratedQuery(f"What are the {wanted} of each {entity}?", {table.id: cols}))
                break
            column, value, row = anchor
            used_rows.add(row)
            others = [p.name for p in ranked if p.name != column]
            targets = others[k % max(1, len(others)) :][:2] or others[:2]
            cols = [column, *targets]
            if k % 2 == 1 and numeric and numeric[0] != column:
                highest, what = _words(table, numeric[0]), _words(table, column)
                question = f"Which {entity} has the highest {highest}, and what is its {what}?"
                cols = [column, numeric[0], *targets]
            elif targets:
                question = (
                    f"{_what([_attribute(entity, _words(table, t)) for t in targets])} "
                    f"of the {_anchor_phrase(entity, _words(table, column), value)}?"
                )
            else:
                question = f"Which {entity} is {value}?"
            for p in ranked:
                if len(cols) >= min(3, len(table.columns)):
                    break
                if p.name not in cols:
                    cols.append(p.name)
            queries.append(GeneratedQuery(question, {table.id: list(dict.fromkeys(cols))[:5]}))
        return queries


def _singular_phrase(text: str) -> str:
    """The phrase with its last (head) word in the singular: "music festivals" -> "music festival"."""
    words = text.split()
    return " ".join([*words[:-1], singular(words[-1])]) if words else text


def _entity(table: Table) -> str:
    """The table's entity in plain singular words: ``races`` -> "race", ``singer_in_concert`` -> "singer in concert"."""
    return _singular_phrase(humanize(table.name or table.id))


def _descriptive(path: JoinPath, table: Table, columns: dict[str, list[str]], n: int) -> list[str]:
    """Plain names of the chosen non-key columns of ``table``, at most ``n``; never the entity's own name."""
    keys = set(path.join_columns(table.id))
    entity = _entity(table)
    names = [_attribute(entity, _words(table, c)) for c in columns[table.id] if c not in keys]
    return [name for name in dict.fromkeys(names) if _singular_phrase(name) != entity][:n]


def _attribute(entity: str, name: str) -> str:
    """A column's words as an attribute of its entity: "concert name" of a concert is its "name"."""
    return name[len(entity) + 1 :] if name.startswith(entity + " ") else name


def _what(targets: list[str]) -> str:
    """``What is the capacity`` / ``What are the location and name``: the verb agrees with the targets."""
    plural = len(targets) > 1 or _singular_phrase(targets[0]) != targets[0]
    return f"What {'are' if plural else 'is'} the {_join(targets)}"


def _grounded(path: JoinPath, tables: Mapping[str, Table]) -> bool:
    """Whether every join of ``path`` has at least one join value present on both sides."""
    for i, pairs in enumerate(path.joins):
        left, right = tables[path.tables[i]], tables[path.tables[i + 1]]
        if not any(
            (set(join_values(left, p.left_column)) & set(join_values(right, p.right_column))) - {""} for p in pairs
        ):
            return False
    return True


def _explicit_question(
    path: JoinPath, tables: list[Table], columns: dict[str, list[str]], anchor: tuple[str, str, int] | None
) -> str:
    """Walk the FK chain back from the far table: ``What is the X of the far of the middle for the anchor?``."""
    first, far = tables[0], tables[-1]
    subject = (
        f"each {_entity(first)}"
        if anchor is None
        else f"the {_anchor_phrase(_entity(first), _words(first, anchor[0]), anchor[1])}"
    )
    chain = "".join(f" of the {_entity(t)}" for t in tables[1:-1])
    targets = _descriptive(path, far, columns, 2)
    question = (
        f"{_what(targets)} of the {_entity(far)}{chain} for {subject}"
        if targets
        else f"Which {_entity(far)}{chain} is linked to {subject}"
    )
    for middle in tables[1:-1]:
        described = _descriptive(path, middle, columns, 1)
        if described:
            question += f", and what is the {described[0]} of that {_entity(middle)}"
    return question + "?"


def star_question(tables: Sequence[Table], keys: Mapping[str, Sequence[str]], columns: Mapping[str, list[str]]) -> str:
    """A fact table's question over its dimensions: ``What are the quantity and price of the lineitem by the date
    of the orders, the name of the part and the region?``.

    Args:
        tables: The fact, then its dimensions.
        keys: Each table's join columns (never named as what describes it).
        columns: Each table's chosen columns.
    """
    fact, dims = tables[0], tables[1:]

    def described(table: Table, n: int) -> list[str]:
        entity = _entity(table)
        names = [_attribute(entity, _words(table, c)) for c in columns[table.id] if c not in keys[table.id]]
        return [name for name in dict.fromkeys(names) if _singular_phrase(name) != entity][:n]

    facts = described(fact, 2)
    head = f"{_what(facts)} of the {_entity(fact)}" if facts else f"What is each {_entity(fact)}"
    parts = [f"the {d[0]} of the {_entity(t)}" if (d := described(t, 1)) else f"the {_entity(t)}" for t in dims]
    return f"{head} by {_join(parts)}?"


def _implicit_question(path: JoinPath, tables: list[Table], columns: dict[str, list[str]]) -> str:
    """Each table tells one thing about the shared value: name every table's entity and attributes."""
    keys = path.join_columns(tables[0].id)
    shared = _words(tables[0], keys[0]) if keys else "value"
    parts = []
    for table in tables:
        described = _descriptive(path, table, columns, 2)
        parts.append(f"the {_join(described)} of the {_entity(table)}" if described else f"the {_entity(table)}")
    return f"For the same {shared}, what are {_join(parts)}?"
