"""A benchmark folder's tables as a benchmark means them: typed by its schema, read through flattened links.

- A header-only table (a schema's DDL, no rows) gets the column types ``tables_meta.jsonl`` declares, as a
  database would give them: what makes a column a key is then read from its type, as the joins step reads a
  SQL database's.
- A table file that holds nothing but the relative path of another CSV file is a symbolic link that a copy or a
  checkout without symbolic links wrote as text (``business_words`` links ``real_schemas``' tables); it is read
  from the file it names.

Pipeline step: evaluation (docs/architecture.md).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from llama_index_pearl.tables.inputs import read_table_file
from llama_index_pearl.tables.table import Table

__all__ = ["declare_types", "linked_file", "read_bench_tables", "sql_type_dtype"]

MAX_LINK_BYTES = 1024  # a path, not a table: a link's text is a line


_SQL_INT = re.compile(r"^(big|small|tiny|medium)?(int|integer|serial)\d*$|^(number|numeric|decimal)(\(\d+(,\s*0)?\))?$")
_SQL_FLOAT = re.compile(r"^(float|real|double|money|smallmoney)|^(number|numeric|decimal)\(\d+,\s*[1-9]")
_SQL_DATE = re.compile(r"^(date|time|timestamp|datetime|smalldatetime)")
_SQL_TEXT = re.compile(r"^n?(var)?char|^n?text|^character|^uuid|^uniqueidentifier|^string|^clob|^citext")


def sql_type_dtype(declared: str) -> str | None:
    """The pandas dtype of a column a DDL declares as ``declared``; ``None`` for types no join reads.

    Args:
        declared: A SQL type as written, e.g. ``"INTEGER"``, ``"[nvarchar](3)"``, ``"NUMBER(6)"``.
    """
    text = re.sub(r"[\[\]\"]", "", declared).strip().lower()
    text = re.sub(r"\s+", " ", text).replace(" (", "(")
    if _SQL_INT.match(text):
        return "Int64"
    if _SQL_FLOAT.match(text):
        return "Float64"
    if _SQL_DATE.match(text):
        return "datetime64[ns]"
    return "string" if _SQL_TEXT.match(text) else None


def declare_types(table: Table, info: dict[str, Any]) -> None:
    """Give a header-only table the column types its metadata declares (its rows cannot say).

    Args:
        table: The table, typed in place.
        info: Its line of ``tables_meta.jsonl`` (``columns`` and ``column_types``).
    """
    names, types = info.get("columns") or [], info.get("column_types") or []
    if len(table.df) or len(names) != len(types):
        return
    declared = {name: sql_type_dtype(str(kind)) for name, kind in zip(names, types, strict=True)}
    dtypes = {c: declared[c] for c in table.columns if declared.get(c)}
    if dtypes:
        table.df = table.df.astype(dtypes)


def linked_file(path: Path) -> Path:
    """The file a table file stands for: itself, or the CSV file its only line names (a flattened link).

    Args:
        path: A file of the benchmark's ``tables/`` folder.
    """
    if path.stat().st_size > MAX_LINK_BYTES:
        return path
    try:
        text = path.read_text(encoding="utf-8").strip()
    except UnicodeDecodeError:
        return path
    if "\n" in text or "," in text or not text.endswith(".csv"):
        return path
    target = (path.parent / text).resolve()
    return target if target.is_file() and target != path.resolve() else path


def read_bench_tables(folder: Path) -> list[Table]:
    """The tables of a benchmark's ``tables/`` folder, one per ``*.csv`` file, by name (links followed).

    Args:
        folder: The ``tables/`` folder.
    """
    tables = []
    for path in sorted(folder.glob("*.csv")):
        target = linked_file(path)
        table = read_table_file(target)
        if target != path:
            table.id = path.stem
        tables.append(table)
    return tables
