"""The one place where table views become the text that is embedded or prompted.

A :class:`TableView` is a table with chosen columns and chosen rows (PEARL's
vertical partition, paper section 3.1.3). :func:`serialize_views` renders one or
more views after an optional prefix (a generated question), then fills rows
round-robin across the views until the token budget is spent. Rows are always
whole: a row that does not fit is left out, never cut mid-way, so the encoder's
own truncation never silently drops half a row.

Format (one block per view, blank line between blocks)::

    Title: <title>            (when titles are on and the table has one)
    Description: <text>       (when the table has one)
    Table: <name> (database <source>)   (the source when the table has one)
    Columns: a | b | c
    1 | Joe | USA

Pipeline step: text (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from llama_index_pearl.tables.table import Table, cell_text

__all__ = [
    "DEFAULT_EMBEDDED_ROWS",
    "DEFAULT_INCLUDE_TITLES",
    "DEFAULT_MAX_ROWS",
    "DEFAULT_TABLE_TEXT_CHARS",
    "MAX_CELL_CHARS",
    "Serializer",
    "TableView",
    "TokenCounter",
    "approximate_token_count",
    "serialize_views",
    "table_name_in_text",
]

DEFAULT_MAX_ROWS = 10
# Rows per view in the dense text of schema and generated units; the view's other rows (up to max_rows) reach BM25
# only (originals embed all of theirs): MiniLM's 256-token window is better spent on names than on cells
# (benchmarks/README.md, "Constants": text.serialization.DEFAULT_EMBEDDED_ROWS).
DEFAULT_EMBEDDED_ROWS = 1
DEFAULT_INCLUDE_TITLES = True  # titles and descriptions carry much of a table's signal (same section)
MAX_CELL_CHARS = 120
# A table's text for an LLM (a result node's text): every table of the dev sets fits whole, while five tables stay
# within ~5,000 tokens of context (benchmarks/README.md, "Constants": text.serialization.DEFAULT_TABLE_TEXT_CHARS).
DEFAULT_TABLE_TEXT_CHARS = 4000
# [CLS]/[SEP] or their equivalents take room inside the encoder's window.
SPECIAL_TOKEN_RESERVE = 2

TokenCounter = Callable[[Sequence[str]], list[int]]
"""Counts tokens for a batch of text lines, as the embedding model's tokenizer would."""


def approximate_token_count(lines: Sequence[str]) -> list[int]:
    """Fallback counter (~4 characters a token) for models without a local tokenizer."""
    return [max(1, (len(line) + 3) // 4) for line in lines]


@dataclass
class TableView:
    """A table projected onto some columns and some rows.

    Args:
        table: The source table.
        columns: Columns to keep, in order; ``None`` keeps all.
        rows: Row positions in the order to show them; ``None`` means the first
            ``max_rows`` rows.
        max_rows: Most rows ever shown for this view.
    """

    table: Table
    columns: list[str] | None = None
    rows: list[int] | None = None
    max_rows: int = DEFAULT_MAX_ROWS
    _resolved_columns: list[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.max_rows < 0:
            raise ValueError(f"max_rows must be >= 0, got {self.max_rows}")
        if self.columns is None:
            self._resolved_columns = self.table.columns
        else:
            if not self.columns:
                raise ValueError(f"A view of table {self.table.id!r} needs at least one column")
            missing = [c for c in self.columns if c not in self.table.df.columns]
            if missing:
                raise ValueError(f"Table {self.table.id!r} has no column(s) {missing}")
            self._resolved_columns = list(self.columns)

    @property
    def column_names(self) -> list[str]:
        return self._resolved_columns

    def row_positions(self) -> list[int]:
        n = self.table.n_rows
        chosen = range(n) if self.rows is None else [r for r in self.rows if 0 <= r < n]
        return list(chosen)[: self.max_rows]


def _header_lines(view: TableView, include_title: bool) -> list[str]:
    table = view.table
    lines = []
    if include_title and table.title:
        lines.append(f"Title: {_clip(table.title)}")
    if table.description:
        lines.append(f"Description: {table.description.strip()}")
    # the source (database, schema or sub-folder) tells apart tables that share a name, and its words say what a
    # table is about (benchmarks/README.md, "Constants": the header line)
    lines.append(f"Table: {table.name}" + (f" (database {table.source})" if table.source else ""))
    lines.append("Columns: " + " | ".join(view.column_names))
    return lines


def table_name_in_text(text: str) -> str | None:
    """The table's name, read back from the ``Table: name (database source)`` line of a text this module wrote.

    Args:
        text: A table's text (:meth:`Serializer.table_text`) or a unit's.
    """
    for line in text.splitlines():
        if line.startswith("Columns: "):
            break
        if line.startswith("Table: "):
            return line[len("Table: ") :].split(" (database ")[0]
    return None


def _row_lines(view: TableView) -> list[str]:
    records = view.table.text_rows(view.row_positions(), view.column_names)
    return [" | ".join(_clip(cell_text(v)) for v in record) for record in records]


def _clip(text: str, limit: int = MAX_CELL_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _more_rows(n: int) -> str:
    return f"… ({n:,} more row{'s' if n > 1 else ''})"


def _columns_within(columns: Sequence[str], budget: int) -> list[str]:
    """The leading columns whose ``Columns:`` line, with its ``… (N more columns)`` marker, fits ``budget``."""
    total = len("Columns: ") + sum(len(c) + 3 for c in columns) - 3
    if total <= budget:
        return list(columns)
    kept: list[str] = []
    used = len("Columns: ") + len(f" | … ({len(columns):,} more columns)")
    for column in columns:
        cost = len(column) + (3 if kept else 0)
        if kept and used + cost > budget:
            break
        kept.append(column)
        used += cost
    return kept


def serialize_views(
    views: Sequence[TableView],
    *,
    prefix: str | None = None,
    max_tokens: int | None = None,
    count_tokens: TokenCounter = approximate_token_count,
    include_titles: bool = DEFAULT_INCLUDE_TITLES,
    rows: int | None = None,
) -> str:
    """Render views (and an optional leading question) within a token budget.

    Args:
        views: One view for an original or implicit unit, several for an explicit unit.
        prefix: Text placed first, e.g. the generated question.
        max_tokens: Encoder window; ``None`` means no limit. Headers and the
            prefix are always kept; rows are added round-robin across views
            while whole rows still fit.
        count_tokens: Batch token counter of the embedding model.
        include_titles: Whether table titles are rendered.
        rows: Most rows per view (``None``: all of each view's rows).

    Returns:
        The text to embed.
    """
    return _render(views, prefix, max_tokens, count_tokens, include_titles, rows)[0]


def _render(
    views: Sequence[TableView],
    prefix: str | None,
    max_tokens: int | None,
    count_tokens: TokenCounter,
    include_titles: bool,
    rows: int | None,
) -> tuple[str, list[str]]:
    """The text, and the row lines of the views that it left out (by ``rows`` or by the budget)."""
    headers = [_header_lines(v, include_titles) for v in views]
    all_rows = [_row_lines(v) for v in views]
    offered = [r if rows is None else r[:rows] for r in all_rows]
    fixed = ([prefix] if prefix else []) + [line for block in headers for line in block]
    if max_tokens is None:
        kept = [len(r) for r in offered]
    else:
        kept = _rows_within_budget(fixed, offered, max_tokens - SPECIAL_TOKEN_RESERVE, count_tokens)
    blocks = ["\n".join(h + r[:k]) for h, r, k in zip(headers, offered, kept)]
    body = "\n\n".join(blocks)
    left_out = [line for r, k in zip(all_rows, kept) for line in r[k:]]
    return (f"{prefix}\n{body}" if prefix else body), left_out


def _rows_within_budget(fixed: list[str], rows: list[list[str]], budget: int, count_tokens: TokenCounter) -> list[int]:
    """How many leading rows of each view fit, filling views round-robin."""
    flat = [line for view_rows in rows for line in view_rows]
    counts = count_tokens(fixed + flat) if (fixed or flat) else []
    # each line also costs one separator token at most (a newline is whitespace for
    # WordPiece/BPE tokenizers, so the count is additive over lines)
    used = sum(counts[: len(fixed)])
    row_costs, offset = [], len(fixed)
    for view_rows in rows:
        row_costs.append(counts[offset : offset + len(view_rows)])
        offset += len(view_rows)
    kept = [0] * len(rows)
    open_views = [i for i, costs in enumerate(row_costs) if costs]
    while open_views:
        still_open = []
        for i in open_views:
            cost = row_costs[i][kept[i]]
            if used + cost > budget:
                continue  # this view is full; others may still fit a shorter row
            used += cost
            kept[i] += 1
            if kept[i] < len(row_costs[i]):
                still_open.append(i)
        open_views = still_open
    return kept


@dataclass(frozen=True)
class Serializer:
    """Serialization settings shared by every unit of one index.

    Args:
        max_tokens: Encoder window in tokens (``None``: unlimited).
        count_tokens: Batch token counter of the embedding model.
        include_titles: Render table titles.
        max_rows: Most rows per table view (what a generator is shown, and what the lexical index reads).
        embedded_rows: Most rows per view in the embedded text (``None``: every row of the view that fits).
    """

    max_tokens: int | None = None
    count_tokens: TokenCounter = approximate_token_count
    include_titles: bool = DEFAULT_INCLUDE_TITLES
    max_rows: int = DEFAULT_MAX_ROWS
    embedded_rows: int | None = None

    def __call__(self, views: Sequence[TableView], prefix: str | None = None) -> str:
        """The text the encoder embeds: headers and at most ``embedded_rows`` rows per view, within the window."""
        return self.texts(views, prefix)[0]

    def texts(self, views: Sequence[TableView], prefix: str | None = None) -> tuple[str, str]:
        """The embedded text, and the views' other rows (one per line): text that only the lexical index reads."""
        text, left_out = _render(
            views, prefix, self.max_tokens, self.count_tokens, self.include_titles, self.embedded_rows
        )
        return text, "\n".join(left_out)

    def view(self, table: Table, columns: list[str] | None = None, rows: list[int] | None = None) -> TableView:
        return TableView(table, columns=columns, rows=rows, max_rows=self.max_rows)

    def table_text(self, table: Table, max_chars: int = DEFAULT_TABLE_TEXT_CHARS) -> str:
        """The table as an LLM reads it: its header lines and up to ``max_rows`` rows, in ``max_chars`` characters.

        Where the budget cuts, the text says so, as the encoder's window is filled with whole rows:
        ``Columns: a | b | … (1,998 more columns)`` (columns get at most half of what the header
        lines leave, and the rows show the same columns) and a last line ``… (7 more rows)``.
        The title, description and table name are kept (clipped to a quarter of the budget each).

        Args:
            table: The table.
            max_chars: The most characters of the text (the name and one column are always kept).
        """
        head = _header_lines(TableView(table, max_rows=0), self.include_titles)[:-1]  # the lines before Columns:
        head = [_clip(line, max(max_chars // 4, 1)) for line in head]
        room = max_chars - sum(len(line) + 1 for line in head)
        columns = _columns_within(table.columns, room // 2)
        columns_line = "Columns: " + " | ".join(columns)
        if len(columns) < len(table.columns):
            columns_line += f" | … ({len(table.columns) - len(columns):,} more columns)"
        lines = [*head, columns_line]
        rows = _row_lines(TableView(table, columns=columns, max_rows=self.max_rows))
        used = sum(len(line) + 1 for line in lines)
        for shown, row in enumerate(rows):
            left = len(rows) - shown
            marker = len(_more_rows(left)) + 1 if left > 1 else 0
            if used + len(row) + 1 + marker > max_chars:
                lines.append(_more_rows(left))
                break
            lines.append(row)
            used += len(row) + 1
        return "\n".join(lines)
