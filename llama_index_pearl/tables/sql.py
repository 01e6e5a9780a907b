"""Tables of a SQL database: a bounded sample of each, its exact row count, declared foreign keys.

PEARL only ever uses a sample, so each table is read with ``LIMIT max_rows``
(run by the server) and counted with ``COUNT(*)`` only when the sample is full.
PostgreSQL tables are read from every non-system schema; a schema is a
provenance (``database.schema``), and tables outside the default schema get the
id ``schema.table``. Every failure is a ``ValueError`` naming the table, with the
URL's password masked; a missing SQLite file is reported, never created.

Pipeline step: tables (docs/architecture.md).
"""

from __future__ import annotations

import decimal
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from llama_index_pearl.tables.table import DEFAULT_MAX_ROWS_READ, ForeignKey, Table

__all__ = ["masked_url", "tables_from_sql"]

logger = logging.getLogger(__name__)

_SYSTEM_SCHEMAS = frozenset({"information_schema", "pg_catalog"})


def masked_url(database: Any) -> str:
    """A URL (string or engine) with its password replaced by ``***``."""
    import sqlalchemy as sa

    url = database.url if hasattr(database, "url") else database
    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except Exception:  # not parseable: hide whatever sits between "user:" and "@"
        text = str(url)
        scheme, sep, rest = text.partition("://")
        user_info, at, host = rest.rpartition("@")
        if not at or ":" not in user_info:
            return text
        return f"{scheme}{sep}{user_info.split(':', 1)[0]}:***@{host}"


def _scrub(message: object, database: Any) -> str:
    """``message`` with the database URL's password (if any) replaced by ``***``."""
    text = str(message)
    password = getattr(getattr(database, "url", None), "password", None)
    if password is None and isinstance(database, str):
        try:
            import sqlalchemy as sa

            password = sa.engine.make_url(database).password
        except Exception:
            password = None
    return text.replace(str(password), "***") if password else text


def tables_from_sql(
    database: Any, *, max_rows_read: int | None = DEFAULT_MAX_ROWS_READ, schemas: Sequence[str] | None = None
) -> list[Table]:
    """Every table of a SQL database (a leading sample of its rows), with declared foreign keys.

    Args:
        database: SQLAlchemy URL, ``Engine``, or LlamaIndex ``SQLDatabase``.
        max_rows_read: Rows read per table at most (``LIMIT``, run by the server);
            ``None`` reads everything. The exact count is kept in ``Table.total_rows``.
        schemas: Schemas to read. Default: PostgreSQL's non-system schemas, the
            default schema elsewhere.

    Raises:
        ValueError: the database cannot be opened or a table cannot be read; the
            message names it (password masked). A missing SQLite file is not created.
    """
    import sqlalchemy as sa

    engine = _engine_of(database, sa)
    try:
        inspector = sa.inspect(engine)
        default = inspector.default_schema_name
        chosen = list(schemas) if schemas is not None else _schemas(engine, inspector, default)
        names = [(schema, name) for schema in chosen for name in sorted(inspector.get_table_names(schema=schema))]
    except Exception as exc:
        raise ValueError(f"Cannot read the tables of SQL database {masked_url(engine)}: {_scrub(exc, engine)}") from exc

    def table_id(schema: str | None, name: str) -> str:
        return name if schema == default else f"{schema}.{name}"

    database = _database_name(engine)
    tables = []
    for schema, name in names:
        label = table_id(schema, name)
        try:
            df, total = _read_sample(engine, sa, schema, name, max_rows_read)
            keys = _foreign_keys(inspector, schema, name, table_id)
            comments = _column_comments(inspector, schema, name, df.columns)
        except Exception as exc:
            raise ValueError(f"Cannot read SQL table {label!r} of {masked_url(engine)}: {_scrub(exc, engine)}") from exc
        source_label = f"{database}.{schema or 'default'}"
        cut = total if total > len(df) else None
        tables.append(
            Table(
                id=label,
                df=df,
                foreign_keys=keys,
                name=name,
                source=source_label,
                total_rows=cut,
                column_descriptions=comments,
            )
        )
    if not tables:
        logger.warning("SQL database %s has no tables", masked_url(engine))
    return tables


def _schemas(engine: Any, inspector: Any, default: str | None) -> list[str | None]:
    if engine.dialect.name != "postgresql":
        return [default]
    others = [
        s for s in inspector.get_schema_names() if s != default and s not in _SYSTEM_SCHEMAS and not s.startswith("pg_")
    ]
    return [default, *sorted(others)]


def _read_sample(engine: Any, sa: Any, schema: str | None, name: str, limit: int | None) -> tuple[pd.DataFrame, int]:
    with engine.connect() as connection:
        # reflected column types convert values as pd.read_sql_table did (dates, decimals)
        table = sa.Table(name, sa.MetaData(), schema=schema, autoload_with=connection)
        query = sa.select(table) if limit is None else sa.select(table).limit(limit)
        try:
            df = pd.read_sql(query, connection)
        except (ValueError, TypeError, ArithmeticError):  # a value its declared type cannot convert
            df = _read_as_stored(connection, sa, table, limit)
        if limit is None or len(df) < limit:
            return df, len(df)
        total = connection.execute(sa.select(sa.func.count()).select_from(table)).scalar_one()
    return df, int(total)


def _read_as_stored(connection: Any, sa: Any, table: Any, limit: int | None) -> pd.DataFrame:
    """The sample with each column converted by its declared type where every value fits it, else as stored.

    SQLite keeps whatever a row holds whatever the column declares (``DATETIME`` holding ``03/04/2021``,
    ``NUMERIC`` holding ``n/a``, ``JSON`` holding free text), and one such value made SQLAlchemy's conversion
    fail the whole table. Such a column is read as the database stores it (text, or the numbers it holds).
    """
    stored = [sa.type_coerce(column, sa.types.NullType()).label(column.name) for column in table.columns]
    query = sa.select(*stored) if limit is None else sa.select(*stored).limit(limit)
    df = pd.read_sql(query, connection)
    as_stored = []
    for column in table.columns:
        convert = column.type.dialect_impl(connection.dialect).result_processor(connection.dialect, None)
        if convert is None:
            continue
        try:
            values = [convert(v) for v in df[column.name]]
        except (ValueError, TypeError, ArithmeticError):
            as_stored.append(column.name)
            continue
        # decimals as floats, as read_sql's coerce_float makes them on a table that converts whole
        floats = [float(v) if isinstance(v, decimal.Decimal) else v for v in values]
        df[column.name] = pd.Series(floats, index=df.index, dtype=object).infer_objects()
    if as_stored:
        logger.warning(
            "SQL table %r: column(s) %s hold values their declared type does not fit; read as stored",
            table.name,
            ", ".join(repr(c) for c in as_stored),
        )
    return df


def _column_comments(inspector: Any, schema: str | None, name: str, columns: Any) -> dict[str, str]:
    """The database's comment on each column that has one (``COMMENT ON COLUMN``; SQLite keeps none)."""
    read = {str(c) for c in columns}
    return {
        str(c["name"]): str(c["comment"])
        for c in inspector.get_columns(name, schema=schema)
        if c.get("comment") and str(c["name"]) in read
    }


def _foreign_keys(inspector: Any, schema: str | None, name: str, table_id: Any) -> list[ForeignKey]:
    """Declared keys; a referenced table in another schema (read or not) gets its ``schema.table`` id."""
    keys = []
    for fk in inspector.get_foreign_keys(name, schema=schema):
        ref_id = table_id(fk.get("referred_schema") or schema, fk["referred_table"])
        for column, ref_column in zip(fk["constrained_columns"], fk["referred_columns"]):
            keys.append(ForeignKey(column=str(column), ref_table=str(ref_id), ref_column=str(ref_column)))
    return keys


def _database_name(engine: Any) -> str:
    """The ``database`` part of provenance (SQLite: the file's stem)."""
    database = engine.url.database or engine.url.host or engine.dialect.name
    if engine.dialect.name == "sqlite":
        database = Path(database).stem if database not in ("", ":memory:") else "memory"
    return database


def _engine_of(database: Any, sa: Any) -> Any:
    if type(database).__name__ == "SQLDatabase":
        return database.engine
    if not isinstance(database, str):
        return database
    try:
        url = sa.engine.make_url(database)
    except Exception as exc:
        raise ValueError(f"Not a SQLAlchemy URL: {masked_url(database)}: {_scrub(exc, database)}") from exc
    if url.get_backend_name() == "sqlite":
        _check_sqlite_file(url)
    try:
        return sa.create_engine(url)
    except Exception as exc:
        raise ValueError(f"Cannot open SQL database {masked_url(database)}: {_scrub(exc, database)}") from exc


def _check_sqlite_file(url: Any) -> None:
    """SQLite creates a missing file on connect; a typo must be an error, not an empty database."""
    database = url.database
    if not database or database == ":memory:" or database.startswith("file:"):
        return
    path = Path(database)
    if not path.is_file():
        where = "its folder does not exist" if not path.parent.is_dir() else "no such file"
        raise ValueError(f"SQLite database {str(path)!r} not found ({where}); check the path in {url}")
