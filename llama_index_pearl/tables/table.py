"""The table model every later pipeline step works on.

A :class:`Table` is an id, a pandas DataFrame with string column names, optional
human metadata (title, description) and the foreign keys its source declared.
Construction validates eagerly so that a bad table is reported by name before any
embedding or LLM call is spent on it.

Pipeline step: tables (docs/architecture.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import pandas as pd

__all__ = [
    "DEFAULT_MAX_ROWS_READ",
    "ForeignKey",
    "Table",
    "cell_text",
    "normalize_column_name",
    "same_source",
    "unique_column_names",
]

T = TypeVar("T")

# PEARL needs a sample of each table (value overlap, views of 10 rows); a warehouse
# table of 10^8 rows must not be pulled into memory or written to the index folder
DEFAULT_MAX_ROWS_READ = 10_000


@dataclass(frozen=True)
class ForeignKey:
    """A declared foreign key: ``table.column`` references ``ref_table.ref_column``."""

    column: str
    ref_table: str
    ref_column: str

    def to_dict(self) -> dict[str, str]:
        return {"column": self.column, "ref_table": self.ref_table, "ref_column": self.ref_column}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ForeignKey:
        return cls(str(data["column"]), str(data["ref_table"]), str(data["ref_column"]))


def normalize_column_name(name: str) -> str:
    """Key used to detect duplicate columns: case- and surrounding-space-insensitive."""
    return " ".join(str(name).split()).lower()


def unique_column_names(names: list[str]) -> list[str]:
    """``names`` with repeats renamed as pandas renames a repeated CSV header: ``Performance``, ``Performance.1``.

    A repeat is judged as :class:`Table` judges it (case- and space-insensitive), and a new name
    that is itself taken counts on (``a.1`` taken: ``a.1.1``), as pandas does.

    Args:
        names: Column names in order.
    """
    seen: dict[str, int] = {}
    renamed = []
    for name in names:
        key = normalize_column_name(name)
        while key in seen:
            count = seen[key]
            seen[key] = count + 1
            name = f"{name}.{count}"
            key = normalize_column_name(name)
        seen[key] = 1
        renamed.append(name)
    return renamed


def cell_text(value: Any) -> str:
    """Render one cell as text: missing values are empty, integral floats lose ``.0``."""
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return repr(float(value))  # numpy floats are floats, but repr() of one reads "np.float64(0.5)"
    if value is pd.NaT:
        return ""
    try:
        if pd.isna(value):
            return ""
    except (TypeError, ValueError):
        pass  # array-like cells: render as they print
    text = str(value)
    return " ".join(text.split()) if "\n" in text or "\t" in text else text


@dataclass
class Table:
    """One table of the corpus.

    Args:
        id: Unique table id (file stem, SQL table name, or dict key).
        df: The rows. Column names are stringified; cells may be any type. A named index
            (``set_index("customer_id")``, ``groupby(...).sum()``, ``pivot_table``) becomes the
            leading column(s), as ``to_csv`` and ``to_sql`` write it, unless a column of that
            name is already there; an unnamed index is not data and is dropped.
        title: Optional title embedded before the table name (e.g. a page title).
        description: Optional free-text description embedded with the table.
        foreign_keys: Foreign keys declared by the source (SQL); never required.
        name: Display name used in serialization; defaults to ``id``.
        source: Provenance: the database and schema (SQL), the sub-folder (folder
            sources), or any label the caller gives (``None``: unknown). Join
            discovery holds joins across two different sources to a stricter,
            value-based standard (:func:`~llama_index_pearl.joins.sources.cross_source_evidence`).
        total_rows: Rows in the source when ``df`` holds only the leading sample
            that was read (``None``: ``df`` is the whole table).
        column_descriptions: What some columns hold, in words (a SQL column comment, a data dictionary):
            column name -> description. A column's description is embedded with the column, so a question in
            business words ("revenue") finds a column named by a code (``amt_3``).

    Raises:
        ValueError: empty id, no columns, or duplicate column names after
            normalisation; the message names the table and the columns.
    """

    id: str
    df: pd.DataFrame
    title: str | None = None
    description: str | None = None
    foreign_keys: list[ForeignKey] = field(default_factory=list)
    name: str | None = None
    source: str | None = None
    total_rows: int | None = None
    column_descriptions: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id.strip():
            raise ValueError(f"Table id must be a non-empty string, got {self.id!r}")
        if not isinstance(self.df, pd.DataFrame):
            raise ValueError(f"Table {self.id!r}: expected a pandas DataFrame, got {type(self.df).__name__}")
        self.df = _index_as_columns(self.df)
        if len(self.df.columns) == 0:
            raise ValueError(f"Table {self.id!r} has no columns")
        columns = [str(c) for c in self.df.columns]
        if list(self.df.columns) != columns:
            self.df = self.df.set_axis(columns, axis=1)
        _check_unique_columns(self.id, columns)
        if self.name is None:
            self.name = self.id
        if self.total_rows is not None and (not isinstance(self.total_rows, int) or self.total_rows < len(self.df)):
            raise ValueError(f"Table {self.id!r}: total_rows {self.total_rows!r} is below the {len(self.df)} rows held")
        if self.source is not None and not isinstance(self.source, str):
            raise ValueError(f"Table {self.id!r}: source must be a string or None, got {type(self.source).__name__}")
        self.column_descriptions = _checked_descriptions(self.id, columns, self.column_descriptions)

    @property
    def columns(self) -> list[str]:
        return list(self.df.columns)

    @property
    def n_rows(self) -> int:
        return len(self.df)

    @property
    def row_count(self) -> int:
        """Rows of the table at its source (``total_rows``), not only those read."""
        return self.total_rows if self.total_rows is not None else len(self.df)

    def sample(self, max_rows: int | None) -> Table:
        """This table cut to its first ``max_rows`` rows, the full count kept in ``total_rows``."""
        if max_rows is None or len(self.df) <= max_rows:
            return self
        return replace(self, df=self.df.head(max_rows), total_rows=self.row_count)

    def derived(self, key: str, compute: Callable[[], T]) -> T:
        """A value computed from this table's rows, once while ``df`` is the same object.

        Later steps ask for the same facts once per path through a table (column
        profiles, join keys); the table keeps them. Return values are shared: treat
        them as read-only.

        Args:
            key: Names the value (the function that computes it).
            compute: Computes it from the table.
        """
        cache = self.__dict__.get("_derived")
        if cache is None or cache[0] is not self.df:
            cache = self.__dict__["_derived"] = (self.df, {})
        if key not in cache[1]:
            cache[1][key] = compute()
        return cache[1][key]

    def _position(self, column: str) -> int:
        try:
            return int(self.df.columns.get_loc(column))
        except KeyError:
            raise KeyError(f"Table {self.id!r} has no column {column!r}") from None

    def text_rows(self, rows: list[int] | None = None, columns: list[str] | None = None) -> list[list[str]]:
        """Cells as text for the given row positions and columns (default: all)."""
        frame = self.df
        if rows is not None:
            contiguous = bool(rows) and rows == list(range(rows[0], rows[0] + len(rows)))
            # a slice is a view; a row take (and a column take) copies every column, which on arrow-backed
            # string columns cost 2-3x the whole rendering (benchmarks/README.md, "Constants": Table.text_rows)
            frame = frame.iloc[rows[0] : rows[0] + len(rows)] if contiguous else frame.iloc[rows]
        positions = range(frame.shape[1]) if columns is None else [self._position(c) for c in columns]
        cells = [frame.iloc[:, p].tolist() for p in positions]
        return [[cell_text(v) for v in record] for record in zip(*cells)] if cells else [[] for _ in range(len(frame))]


def _checked_descriptions(table_id: str, columns: list[str], descriptions: Any) -> dict[str, str]:
    """The column descriptions of a table, each naming one of its columns; blank ones dropped."""
    if descriptions is None:
        return {}
    if not isinstance(descriptions, dict):
        raise ValueError(
            f"Table {table_id!r}: column_descriptions must map column names to texts, got {type(descriptions).__name__}"
        )
    known = set(columns)
    checked = {}
    for column, text in descriptions.items():
        if column not in known:
            raise ValueError(f"Table {table_id!r}: column_descriptions names no column of it: {column!r}")
        if text is not None and not isinstance(text, str):
            raise ValueError(f"Table {table_id!r}, column {column!r}: a description must be text, got {text!r:.60}")
        if text and text.strip():
            checked[str(column)] = " ".join(text.split())
    return checked


def same_source(a: str | None, b: str | None) -> bool:
    """Whether two tables' provenances allow in-source join rules: equal, or either unknown.

    An unknown source (``None``) is the paper's unified pool: nothing says the
    tables come from different places, so nothing is held against their joins.
    """
    return a is None or b is None or a == b


def _index_as_columns(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with its named index levels as its first columns, as ``to_csv`` and ``to_sql`` write them.

    ``set_index("customer_id")``, ``groupby(...).sum()`` and ``pivot_table`` leave a table's key in its
    index; dropping it lost the key. A level named like a column already there (``set_index(..., drop=False)``)
    is that column; unnamed levels (a ``RangeIndex``, a filter's row numbers) are no data.
    """
    names = [str(n) for n in df.index.names if n is not None]
    if not names:
        return df
    present = {normalize_column_name(c) for c in df.columns}
    levels = [i for i, n in enumerate(df.index.names) if n is not None and normalize_column_name(n) not in present]
    if not levels:
        return df.reset_index(drop=True)
    return df.reset_index(level=levels).reset_index(drop=True)


def _check_unique_columns(table_id: str, columns: list[str]) -> None:
    seen: dict[str, str] = {}
    for column in columns:
        key = normalize_column_name(column)
        if key in seen:
            raise ValueError(
                f"Table {table_id!r} has duplicate column names after normalisation: {seen[key]!r} and {column!r}"
            )
        seen[key] = column
