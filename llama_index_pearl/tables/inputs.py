"""Turn what users hold (DataFrames, files, folders, SQL databases) into :class:`Table` objects.

Every loader reports the culprit by name: the file that cannot be read, the table
whose id repeats, the column that appears twice. Files are what users collect by
the thousand, so one bad file does not stop the others: a repeated column name is
renamed as pandas renames it (``Performance.1``, one warning naming the file), and
a file that cannot be read is skipped with one warning naming it and why
(:func:`read_tables` lists them; ``strict=True`` raises at the first instead).

Pipeline step: tables (docs/architecture.md).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, Union

import pandas as pd

from llama_index_pearl.foundations.extras import require
from llama_index_pearl.tables.files import CsvOptions, read_csv_file, read_parquet_file
from llama_index_pearl.tables.sql import tables_from_sql
from llama_index_pearl.tables.table import DEFAULT_MAX_ROWS_READ, Table, unique_column_names

if TYPE_CHECKING:
    from llama_index.core import SQLDatabase
    from sqlalchemy.engine import Engine

__all__ = [
    "DEFAULT_MAX_ROWS_READ",
    "CsvOptions",
    "SkippedFile",
    "TablesInput",
    "TablesRead",
    "load_tables",
    "read_table_file",
    "read_tables",
    "tables_from_sql",
]

logger = logging.getLogger(__name__)

TABLE_FILE_SUFFIXES = (".csv", ".parquet", ".pq")
MAX_RENAMES_SHOWN = 3  # renamed columns a warning lists, skipped files an error lists
MAX_LINES_SHOWN = 10  # skipped lines a warning and a build report list
_SKIP_HINT = " (skip_bad_lines=True, pearl --skip-bad-lines, skips such rows and counts them)"
# What a build or an insert reads tables from (the word "source" is kept for provenance, ``Table.source``).
TablesInput: TypeAlias = Union[
    Mapping[str, Union[pd.DataFrame, Table]],  # table id -> its rows
    Iterable[Table],
    Iterable[Union[str, Path]],  # CSV/Parquet files
    str,  # a folder, a file, or a SQLAlchemy URL
    Path,
    "Engine",  # SQLAlchemy
    "SQLDatabase",  # LlamaIndex
]


@dataclass(frozen=True)
class SkippedFile:
    """A table file that could not be read, and why (the message a strict read would raise)."""

    path: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "reason": self.reason}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SkippedFile:
        """Inverse of :meth:`to_dict`."""
        return cls(str(data["path"]), str(data["reason"]))


@dataclass(frozen=True)
class BadLines:
    """The rows of a CSV file skipped for holding more fields than its header (``skip_bad_lines``).

    Args:
        path: The file.
        lines: The lines skipped among the rows read, 1-based (the header is line 1).
    """

    path: str
    lines: tuple[int, ...]

    def said(self) -> str:
        """``2 rows of 'orders.csv' with more fields than its header (lines 3, 5)``, the first lines listed."""
        n, shown = len(self.lines), ", ".join(map(str, self.lines[:MAX_LINES_SHOWN]))
        more = ", ..." if n > MAX_LINES_SHOWN else ""
        plural = "s" if n > 1 else ""
        return f"{n:,} row{plural} of {self.path!r} with more fields than its header (line{plural} {shown}{more})"

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "rows": len(self.lines), "lines": list(self.lines[:MAX_LINES_SHOWN])}


@dataclass
class TablesRead:
    """What :func:`read_tables` read: the tables, the files it skipped, and the rows it skipped."""

    tables: list[Table]
    skipped: list[SkippedFile] = field(default_factory=list)
    bad_lines: list[BadLines] = field(default_factory=list)


def read_tables(
    tables: TablesInput,
    *,
    max_rows_read: int | None = DEFAULT_MAX_ROWS_READ,
    csv_options: CsvOptions | Mapping[str, Any] | None = None,
    strict: bool = False,
    skip_bad_lines: bool = False,
) -> TablesRead:
    """Load tables from any supported input, skipping table files that cannot be read.

    Args:
        tables: a ``dict`` of id to DataFrame; an iterable of :class:`Table`; a
            folder of CSV/Parquet files or an iterable of such paths (id = file
            stem); a SQLAlchemy URL string (``sqlite:///db.sqlite``), ``Engine``,
            or LlamaIndex ``SQLDatabase`` (every table, with declared foreign keys).
        max_rows_read: Leading rows kept per table (SQL: ``LIMIT``, run by the
            server; CSV: ``nrows``; Parquet: leading row groups; DataFrames: cut);
            ``None`` keeps all. The exact count is kept in ``Table.total_rows``.
        csv_options: Encoding, delimiter and quote character for CSV files
            (detected per file where not given).
        strict: Raise at the first file that cannot be read instead of skipping it
            (each skip logs one warning naming the file and why).
        skip_bad_lines: Skip the CSV rows with more fields than their header instead of the whole file
            (each file's skip logs one warning naming it and how many rows).

    Returns:
        The tables, in a stable order, the files skipped and the rows skipped.

    Raises:
        ValueError: an unsupported input, duplicate table ids, an invalid table, every
            file unreadable, or (``strict``) one unreadable file; the message names the culprit.
    """
    _check_max_rows(max_rows_read)
    options = CsvOptions.of(csv_options)
    found = TablesRead([])
    read = [t.sample(max_rows_read) for t in _dispatch(tables, max_rows_read, options, strict, skip_bad_lines, found)]
    skipped = found.skipped
    if skipped and not read:
        more = f"; and {len(skipped) - MAX_RENAMES_SHOWN} more" if len(skipped) > MAX_RENAMES_SHOWN else ""
        reasons = "; ".join(f.reason for f in skipped[:MAX_RENAMES_SHOWN]) + more
        raise ValueError(f"No table could be read: {reasons}")
    _check_unique_ids(read)
    found.tables = read
    return found


def load_tables(
    tables: TablesInput,
    *,
    max_rows_read: int | None = DEFAULT_MAX_ROWS_READ,
    csv_options: CsvOptions | Mapping[str, Any] | None = None,
    strict: bool = False,
    skip_bad_lines: bool = False,
) -> list[Table]:
    """The tables of :func:`read_tables` (files that cannot be read are skipped, each with a warning).

    Args:
        tables: As in :func:`read_tables`.
        max_rows_read: As in :func:`read_tables`.
        csv_options: As in :func:`read_tables`.
        strict: As in :func:`read_tables`.
        skip_bad_lines: As in :func:`read_tables`.

    Examples:
        >>> frames = {"singer": pd.DataFrame({"singer_id": [1, 2], "name": ["Ann", "Bo"]})}
        >>> [(t.id, list(t.df.columns), len(t.df)) for t in load_tables(frames)]
        [('singer', ['singer_id', 'name'], 2)]
    """
    return read_tables(
        tables, max_rows_read=max_rows_read, csv_options=csv_options, strict=strict, skip_bad_lines=skip_bad_lines
    ).tables


def _dispatch(
    given: TablesInput,
    max_rows_read: int | None,
    options: CsvOptions,
    strict: bool,
    skip_bad_lines: bool,
    found: TablesRead,
) -> list[Table]:
    """The tables of ``given``; the files and rows skipped are added to ``found``."""

    def read(path: Path) -> Table | None:
        try:
            table, bad = _read_file(path, max_rows_read, options, skip_bad_lines)
        except ValueError as exc:
            if strict:
                raise
            logger.warning("Skipped %s (pass strict=True, or --strict, to stop instead): %s", path, exc)
            found.skipped.append(SkippedFile(str(path), str(exc)))
            return None
        if bad is not None:
            found.bad_lines.append(bad)
        return table

    if _is_sql_database(given):
        return tables_from_sql(given, max_rows_read=max_rows_read)
    if isinstance(given, (str, Path)):
        path = Path(given)
        if path.is_dir():
            return _tables_from_folder(path, read)
        if path.is_file():
            return _read_all([path], read)
        raise ValueError(f"Cannot read tables from {str(given)!r}: it is neither a folder, a file nor a SQLAlchemy URL")
    if isinstance(given, Mapping):
        return [_table_from_mapping_item(key, value) for key, value in given.items()]
    if isinstance(given, pd.DataFrame):
        raise ValueError("A single DataFrame has no id: pass {'my_table': df} instead")
    if isinstance(given, Iterable):
        items = list(given)
        if all(isinstance(item, Table) for item in items):
            return list(items)
        if all(isinstance(item, (str, Path)) for item in items):
            return _read_all([Path(item) for item in items], read)
        kinds = sorted({type(item).__name__ for item in items})
        raise ValueError(f"A table list must hold only Table objects or file paths, got {kinds}")
    raise ValueError(f"Cannot read tables from a {type(given).__name__}: see load_tables for what it reads")


def _read_all(paths: Iterable[Path], read: Callable[[Path], Table | None]) -> list[Table]:
    return [table for table in map(read, paths) if table is not None]


def _table_from_mapping_item(key: Any, value: Any) -> Table:
    if isinstance(value, Table):
        return value
    if not isinstance(value, pd.DataFrame):
        raise ValueError(f"Table {key!r}: expected a pandas DataFrame, got {type(value).__name__}")
    return Table(id=str(key), df=value)


def _check_unique_ids(tables: list[Table]) -> None:
    seen: set[str] = set()
    for table in tables:
        if table.id in seen:
            raise ValueError(f"Duplicate table id {table.id!r}")
        seen.add(table.id)


def _tables_from_folder(folder: Path, read: Callable[[Path], Table | None]) -> list[Table]:
    """Every table file under ``folder``, recursively.

    A file's id is its path relative to ``folder`` without the extension
    (``sales/orders``; ``orders`` at the top), and its source is the sub-folder
    (``sales``; ``None`` at the top): a folder per database or system is how
    data lakes and exports are laid out, and it is the provenance join discovery uses.
    """
    files = sorted(
        p
        for p in folder.rglob("*")
        if p.is_file() and p.suffix.lower() in TABLE_FILE_SUFFIXES and not _hidden(p, folder)
    )
    if not files:
        raise ValueError(f"Folder {str(folder)!r} holds no .csv or .parquet files")
    tables = []
    for path in files:
        relative = path.relative_to(folder)
        table = read(path)
        if table is None:
            continue
        table.id = _readable_name(relative.with_suffix("").as_posix())
        table.name = _readable_name(path.stem)
        table.source = _readable_name(relative.parent.as_posix()) if relative.parent != Path(".") else None
        tables.append(table)
    return tables


def _readable_name(name: str) -> str:
    """A file name as text: bytes that are not UTF-8 (Latin-1 names a Windows zip archive leaves) as ``\\xe9``.

    Python reads such a name with ``surrogateescape`` (``caf\\udce9``), which no encoder, tokenizer or
    UTF-8 file takes; the escape keeps the name readable and tells the files apart.

    >>> _readable_name("caf\\udce9")
    'caf\\\\xe9'
    """
    try:
        raw = name.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no file name decodes to
        return name.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")


def _hidden(path: Path, root: Path) -> bool:
    """Files under dot-folders (``.git``, ``.ipynb_checkpoints``) are tooling, not tables."""
    return any(part.startswith(".") for part in path.relative_to(root).parts)


def read_table_file(
    path: Path,
    *,
    max_rows_read: int | None = DEFAULT_MAX_ROWS_READ,
    csv_options: CsvOptions | Mapping[str, Any] | None = None,
    skip_bad_lines: bool = False,
) -> Table:
    """Read one CSV or Parquet file (at most ``max_rows_read`` rows); the table id is the file stem.

    CSV cells are read as text (missing cells become empty strings) so that ids
    like ``007`` keep their leading zeros, which matters for value overlap. The
    encoding and delimiter are detected (see :mod:`llama_index_pearl.tables.files`).
    A column name that repeats (case- and space-insensitive) is renamed as pandas
    renames it (``Performance``, ``Performance.1``), with one warning naming the file.

    Args:
        path: The file.
        max_rows_read: Leading rows read at most (``None``: all); the file's row
            count is kept in ``Table.total_rows``.
        csv_options: ``{"encoding": ..., "delimiter": ..., "quotechar": ...}`` for CSV files.
        skip_bad_lines: Skip a CSV row with more fields than the header, with one warning naming the file and
            how many (``False``: such a row is an error naming the file and the line).
    """
    return _read_file(Path(path), max_rows_read, CsvOptions.of(csv_options), skip_bad_lines)[0]


def _read_file(
    path: Path, max_rows_read: int | None, options: CsvOptions, skip_bad_lines: bool
) -> tuple[Table, BadLines | None]:
    """:func:`read_table_file`, and the lines it skipped (``None``: none)."""
    suffix = path.suffix.lower()
    if suffix not in TABLE_FILE_SUFFIXES:
        raise ValueError(f"Cannot read {str(path)!r}: expected a .csv or .parquet file")
    _check_max_rows(max_rows_read)

    def names_of(header: list[str]) -> list[str]:
        return _renamed(path, header)

    bad: list[int] = []
    try:
        if suffix == ".csv":
            df, total, bad = read_csv_file(
                path, names_of, max_rows=max_rows_read, options=options, skip_bad_lines=skip_bad_lines
            )
        else:
            require("pyarrow", "parquet", "reading Parquet files")
            df, total = read_parquet_file(path, max_rows=max_rows_read)
            df.columns = _renamed(path, [str(c) for c in df.columns])
    except pd.errors.ParserError as exc:  # a ValueError: a row that does not fit the header, said how to skip it
        raise ValueError(f"Cannot read table file {str(path)!r}: {str(exc).strip()}{_SKIP_HINT}") from exc
    except ValueError as exc:
        if str(path) in str(exc):
            raise
        raise ValueError(f"Cannot read table file {str(path)!r}: {str(exc).strip()}") from exc
    except (OSError, UnicodeError, ImportError, LookupError) as exc:
        raise ValueError(f"Cannot read table file {str(path)!r}: {str(exc).strip()}") from exc
    table_id = _readable_name(path.stem)
    if table_id != path.stem:
        logger.warning("The name of %s is not UTF-8; its table is read as %r", _readable_name(str(path)), table_id)
    skipped = BadLines(str(path), tuple(bad)) if bad else None
    if skipped is not None:
        logger.warning("Skipped %s", skipped.said())
    return Table(id=table_id, df=df, total_rows=total if total > len(df) else None), skipped


def _check_max_rows(max_rows_read: int | None) -> None:
    if max_rows_read is not None and (not isinstance(max_rows_read, int) or max_rows_read < 1):
        raise ValueError(f"max_rows_read must be a positive integer or None, got {max_rows_read!r}")


def _renamed(path: Path, names: list[str]) -> list[str]:
    """Column names of a file with repeats renamed (:func:`~llama_index_pearl.tables.table.unique_column_names`)."""
    unique = unique_column_names(names)
    changed = [f"{old!r} -> {new!r}" for old, new in zip(names, unique) if old != new]
    if changed:
        more = f" and {len(changed) - MAX_RENAMES_SHOWN} more" if len(changed) > MAX_RENAMES_SHOWN else ""
        shown = ", ".join(changed[:MAX_RENAMES_SHOWN])
        logger.warning("%s repeats column names; renamed as pandas does: %s%s", path, shown, more)
    return unique


def _is_sql_database(given: Any) -> bool:
    if isinstance(given, str) and "://" in given:
        return True
    module = type(given).__module__
    return module.startswith("sqlalchemy") or type(given).__name__ == "SQLDatabase"
