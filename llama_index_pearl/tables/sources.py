"""Turn what users hold (DataFrames, files, folders, SQL databases) into :class:`Table` objects.

Every loader reports the culprit by name: the file that cannot be read, the table
whose id repeats, the column that appears twice.

Pipeline step: tables (docs/architecture.md).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Union

import pandas as pd

from llama_index_pearl.foundations.extras import require
from llama_index_pearl.tables.files import CsvOptions, read_csv_file, read_parquet_file
from llama_index_pearl.tables.sql import tables_from_sql
from llama_index_pearl.tables.table import DEFAULT_MAX_ROWS_READ, Table, normalize_column_name

__all__ = ["DEFAULT_MAX_ROWS_READ", "CsvOptions", "TableSource", "load_tables", "read_table_file", "tables_from_sql"]

logger = logging.getLogger(__name__)

TABLE_FILE_SUFFIXES = (".csv", ".parquet", ".pq")
TableSource = Union[
    Mapping[str, pd.DataFrame],
    Iterable[Table],
    Iterable[str | Path],
    str,
    Path,
    Any,  # SQLAlchemy Engine or llama_index SQLDatabase
]


def load_tables(
    source: TableSource,
    *,
    max_rows_read: int | None = DEFAULT_MAX_ROWS_READ,
    csv_options: CsvOptions | Mapping[str, Any] | None = None,
) -> list[Table]:
    """Load tables from any supported source.

    Args:
        source: a ``dict`` of id to DataFrame; an iterable of :class:`Table`; a
            folder of CSV/Parquet files or an iterable of such paths (id = file
            stem); a SQLAlchemy URL string (``sqlite:///db.sqlite``), ``Engine``,
            or LlamaIndex ``SQLDatabase`` (every table, with declared foreign keys).
        max_rows_read: Leading rows kept per table (SQL: ``LIMIT``, run by the
            server; CSV: ``nrows``; Parquet: leading row groups; DataFrames: cut);
            ``None`` keeps all. The exact count is kept in ``Table.total_rows``.
        csv_options: Encoding, delimiter and quote character for CSV files
            (detected per file where not given).

    Returns:
        The tables, in a stable order.

    Raises:
        ValueError: unsupported source, duplicate table ids, unreadable files, or
            an invalid table; the message names the culprit.
    """
    _check_max_rows(max_rows_read)
    options = CsvOptions.of(csv_options)
    tables = [t.sample(max_rows_read) for t in _dispatch(source, max_rows_read, options)]
    _check_unique_ids(tables)
    return tables


def _dispatch(source: TableSource, max_rows_read: int | None, options: CsvOptions) -> list[Table]:
    def read(path: Path) -> Table:
        return read_table_file(path, max_rows_read=max_rows_read, csv_options=options)

    if _is_sql_source(source):
        return tables_from_sql(source, max_rows_read=max_rows_read)
    if isinstance(source, (str, Path)):
        path = Path(source)
        if path.is_dir():
            return _tables_from_folder(path, read)
        if path.is_file():
            return [read(path)]
        raise ValueError(f"Table source {str(source)!r} is neither a folder, a file nor a SQLAlchemy URL")
    if isinstance(source, Mapping):
        return [_table_from_mapping_item(key, value) for key, value in source.items()]
    if isinstance(source, pd.DataFrame):
        raise ValueError("A single DataFrame has no id: pass {'my_table': df} instead")
    if isinstance(source, Iterable):
        items = list(source)
        if all(isinstance(item, Table) for item in items):
            return list(items)
        if all(isinstance(item, (str, Path)) for item in items):
            return [read(Path(item)) for item in items]
        kinds = sorted({type(item).__name__ for item in items})
        raise ValueError(f"A table list must hold only Table objects or file paths, got {kinds}")
    raise ValueError(f"Unsupported table source of type {type(source).__name__}")


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


def _tables_from_folder(folder: Path, read: Any) -> list[Table]:
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
        table.id = relative.with_suffix("").as_posix()
        table.name = path.stem
        table.source = relative.parent.as_posix() if relative.parent != Path(".") else None
        tables.append(table)
    return tables


def _hidden(path: Path, root: Path) -> bool:
    """Files under dot-folders (``.git``, ``.ipynb_checkpoints``) are tooling, not tables."""
    return any(part.startswith(".") for part in path.relative_to(root).parts)


def read_table_file(
    path: Path,
    *,
    dedupe_columns: bool = False,
    max_rows_read: int | None = DEFAULT_MAX_ROWS_READ,
    csv_options: CsvOptions | Mapping[str, Any] | None = None,
) -> Table:
    """Read one CSV or Parquet file (at most ``max_rows_read`` rows); the table id is the file stem.

    CSV cells are read as text (missing cells become empty strings) so that ids
    like ``007`` keep their leading zeros, which matters for value overlap. The
    encoding and delimiter are detected (see :mod:`llama_index_pearl.tables.files`).

    Args:
        path: The file.
        dedupe_columns: Rename repeated CSV headers to ``name (2)``, ``name (3)``
            instead of raising (benchmark tables scraped from the web repeat them).
        max_rows_read: Leading rows read at most (``None``: all); the file's row
            count is kept in ``Table.total_rows``.
        csv_options: ``{"encoding": ..., "delimiter": ..., "quotechar": ...}`` for CSV files.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in TABLE_FILE_SUFFIXES:
        raise ValueError(f"Cannot read {str(path)!r}: expected a .csv or .parquet file")
    options = CsvOptions.of(csv_options)
    _check_max_rows(max_rows_read)

    def names_of(header: list[str]) -> list[str]:
        names = _unique_names(header) if dedupe_columns else header
        Table(id=path.stem, df=pd.DataFrame(columns=names))  # reports repeated headers by name
        return names

    try:
        if suffix == ".csv":
            df, total = read_csv_file(path, names_of, max_rows=max_rows_read, options=options)
        else:
            require("pyarrow", "parquet", "reading Parquet files")
            df, total = read_parquet_file(path, max_rows=max_rows_read)
    except ValueError as exc:
        if str(path) in str(exc):
            raise
        raise ValueError(f"Cannot read table file {str(path)!r}: {str(exc).strip()}") from exc
    except (OSError, pd.errors.ParserError, UnicodeError, ImportError, LookupError) as exc:
        raise ValueError(f"Cannot read table file {str(path)!r}: {str(exc).strip()}") from exc
    return Table(id=path.stem, df=df, total_rows=total if total > len(df) else None)


def _check_max_rows(max_rows_read: int | None) -> None:
    if max_rows_read is not None and (not isinstance(max_rows_read, int) or max_rows_read < 1):
        raise ValueError(f"max_rows_read must be a positive integer or None, got {max_rows_read!r}")


def _unique_names(header: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    names = []
    for name in header:
        key = normalize_column_name(name)
        seen[key] = seen.get(key, 0) + 1
        names.append(name if seen[key] == 1 else f"{name} ({seen[key]})")
    return names


def _is_sql_source(source: Any) -> bool:
    if isinstance(source, str) and "://" in source:
        return True
    module = type(source).__module__
    return module.startswith("sqlalchemy") or type(source).__name__ == "SQLDatabase"
