"""Turn what users hold (DataFrames, files, folders, SQL databases) into :class:`Table` objects.

Every loader reports the culprit by name: the file that cannot be read, the table
whose id repeats, the column that appears twice.
"""

from __future__ import annotations

import csv
import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Union

import pandas as pd

from llama_index_pearl.extras import require
from llama_index_pearl.table import ForeignKey, Table, normalize_column_name

__all__ = ["TableSource", "load_tables", "read_table_file", "tables_from_sql"]

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


def load_tables(source: TableSource) -> list[Table]:
    """Load tables from any supported source.

    Args:
        source: a ``dict`` of id to DataFrame; an iterable of :class:`Table`; a
            folder of CSV/Parquet files or an iterable of such paths (id = file
            stem); a SQLAlchemy URL string (``sqlite:///db.sqlite``), ``Engine``,
            or LlamaIndex ``SQLDatabase`` (every table, with declared foreign keys).

    Returns:
        The tables, in a stable order.

    Raises:
        ValueError: unsupported source, duplicate table ids, unreadable files, or
            an invalid table; the message names the culprit.
    """
    tables = _dispatch(source)
    _check_unique_ids(tables)
    return tables


def _dispatch(source: TableSource) -> list[Table]:
    if _is_sql_source(source):
        return tables_from_sql(source)
    if isinstance(source, (str, Path)):
        path = Path(source)
        if path.is_dir():
            return _tables_from_folder(path)
        if path.is_file():
            return [read_table_file(path)]
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
            return [read_table_file(Path(item)) for item in items]
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


def _tables_from_folder(folder: Path) -> list[Table]:
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
        table = read_table_file(path)
        table.id = relative.with_suffix("").as_posix()
        table.name = path.stem
        table.source = relative.parent.as_posix() if relative.parent != Path(".") else None
        tables.append(table)
    return tables


def _hidden(path: Path, root: Path) -> bool:
    """Files under dot-folders (``.git``, ``.ipynb_checkpoints``) are tooling, not tables."""
    return any(part.startswith(".") for part in path.relative_to(root).parts)


def read_table_file(path: Path, *, dedupe_columns: bool = False) -> Table:
    """Read one CSV or Parquet file; the table id is the file stem.

    CSV cells are read as text (missing cells become empty strings) so that ids
    like ``007`` keep their leading zeros, which matters for value overlap.

    Args:
        path: The file.
        dedupe_columns: Rename repeated CSV headers to ``name (2)``, ``name (3)``
            instead of raising (benchmark tables scraped from the web repeat them).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in TABLE_FILE_SUFFIXES:
        raise ValueError(f"Cannot read {str(path)!r}: expected a .csv or .parquet file")
    try:
        if suffix == ".csv":
            header = _csv_header(path)
            names = _unique_names(header) if dedupe_columns else header
            Table(id=path.stem, df=pd.DataFrame(columns=names))  # reports repeated headers by name
            df = pd.read_csv(path, dtype=str, keep_default_na=False, encoding_errors="replace", header=0, names=names)
        else:
            require("pyarrow", "parquet", "reading Parquet files")
            df = pd.read_parquet(path)
    except ValueError as exc:
        if str(path) in str(exc):
            raise
        raise ValueError(f"Cannot read table file {str(path)!r}: {exc}") from exc
    except (OSError, pd.errors.ParserError, UnicodeDecodeError, ImportError) as exc:
        raise ValueError(f"Cannot read table file {str(path)!r}: {exc}") from exc
    return Table(id=path.stem, df=df)


def _csv_header(path: Path) -> list[str]:
    """The header row; read here because pandas silently renames a repeated header to ``name.1``."""
    with path.open(newline="", encoding="utf-8", errors="replace") as handle:
        header = next(csv.reader(handle), None)
    if not header or all(not h.strip() for h in header):
        raise ValueError(f"Table {path.stem!r} (file {str(path)!r}) has no columns")
    return [h.strip() for h in header]


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


def tables_from_sql(source: Any) -> list[Table]:
    """Every table of a SQL database, with the foreign keys its schema declares.

    Args:
        source: SQLAlchemy URL, ``Engine``, or LlamaIndex ``SQLDatabase``.
    """
    import sqlalchemy as sa

    engine = _engine_of(source, sa)
    inspector = sa.inspect(engine)
    provenance = _sql_provenance(engine, inspector)
    tables = []
    for name in sorted(inspector.get_table_names()):
        try:
            with engine.connect() as connection:
                df = pd.read_sql_table(name, connection)
        except Exception as exc:
            raise ValueError(f"Cannot read SQL table {name!r}: {exc}") from exc
        keys = [
            ForeignKey(column=str(col), ref_table=str(fk["referred_table"]), ref_column=str(ref))
            for fk in inspector.get_foreign_keys(name)
            for col, ref in zip(fk["constrained_columns"], fk["referred_columns"])
        ]
        tables.append(Table(id=name, df=df, foreign_keys=keys, source=provenance))
    if not tables:
        logger.warning("SQL source %s has no tables", engine.url)
    return tables


def _sql_provenance(engine: Any, inspector: Any) -> str:
    """``database.schema`` of a SQL source (SQLite: the file's stem and ``main``)."""
    database = engine.url.database or engine.url.host or engine.dialect.name
    if engine.dialect.name == "sqlite":
        database = Path(database).stem if database not in ("", ":memory:") else "memory"
    schema = inspector.default_schema_name or "default"
    return f"{database}.{schema}"


def _engine_of(source: Any, sa: Any) -> Any:
    if isinstance(source, str):
        try:
            return sa.create_engine(source)
        except Exception as exc:
            raise ValueError(f"Cannot open SQL database {source!r}: {exc}") from exc
    if type(source).__name__ == "SQLDatabase":
        return source.engine
    return source
