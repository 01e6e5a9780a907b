"""``tables.jsonl``: one persisted table a line, and the tables of a loaded index read from it when first used.

A query reads no table's rows (each table's text is in the catalog), so a loaded index
holds :class:`LazyTables`: the table ids at once, the ``Table`` objects (and
their DataFrames) built from ``tables.jsonl`` the first time any table is asked for, every line
checked then as :func:`read_tables_file` checks it. The bytes come from the file held open since
load, their SHA-256 checked again (:mod:`~llama_index_pearl.storage.snapshot`), so what is read is
what ``persist`` wrote and ``load`` checked.

Pipeline step: storage (docs/architecture.md).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Iterator, MutableMapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from llama_index_pearl.storage.integrity import IndexFileError, reading
from llama_index_pearl.tables.table import ForeignKey, Table

__all__ = ["LazyTables", "read_tables_file", "write_tables_file"]


def write_tables_file(tables: Iterable[Table], path: Path) -> None:
    """One JSON object a line: id, name, title, description, source, columns, foreign keys, row count, column
    descriptions, cells as text."""
    with path.open("w", encoding="utf-8") as handle:
        for table in tables:
            record = {
                "id": table.id,
                "name": table.name,
                "title": table.title,
                "description": table.description,
                "source": table.source,
                "columns": table.columns,
                "foreign_keys": [fk.to_dict() for fk in table.foreign_keys],
                "total_rows": table.total_rows,
                "column_descriptions": table.column_descriptions,
                "rows": table.text_rows(),
            }
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def read_tables_file(path: Path, lines: Iterable[str], expected: int) -> list[Table]:
    """The tables of ``tables.jsonl``, each line checked (an :class:`IndexFileError` names the file and line).

    Args:
        path: The file (named in errors).
        lines: Its lines.
        expected: How many tables the manifest lists.
    """
    tables: dict[str, Table] = {}
    with reading(path):
        for line_no, line in enumerate(lines, start=1):
            with reading(path.with_name(f"{path.name}, line {line_no}")):
                table = _table(json.loads(line))
                if table.id in tables:
                    raise ValueError(f"table {table.id!r} appears twice")
                tables[table.id] = table
    if len(tables) != expected:
        raise IndexFileError(path, f"holds {len(tables)} tables, the manifest lists {expected}")
    return list(tables.values())


def _table(record: dict[str, Any]) -> Table:
    columns = [str(c) for c in record["columns"]]
    rows = record["rows"]
    if any(not isinstance(row, list) or len(row) != len(columns) for row in rows):
        raise ValueError(f"a row does not have the {len(columns)} columns of table {record['id']!r}")
    return Table(
        id=str(record["id"]),
        df=pd.DataFrame(rows, columns=columns, dtype=object),
        title=record.get("title"),
        description=record.get("description"),
        foreign_keys=[ForeignKey.from_dict(fk) for fk in record.get("foreign_keys", [])],
        name=record.get("name"),
        source=record.get("source"),
        total_rows=record.get("total_rows"),
        column_descriptions=record.get("column_descriptions") or {},
    )


class LazyTables(MutableMapping[str, Table]):
    """The tables of a loaded index by id: the ids at once, the tables read from ``tables.jsonl`` when first needed.

    Keys, ``len`` and ``in`` never read the file; the first value asked for reads every table
    (:func:`read_tables_file`), which must be exactly the tables the ids name. Updates (an insert,
    a delete) read the tables first and then change them like a ``dict``.

    Args:
        path: The ``tables.jsonl`` file (named in errors).
        table_ids: The index's table ids, in its order.
        parse_lines: Runs a parser over its lines, checked
            (:meth:`~llama_index_pearl.storage.snapshot.FolderSnapshot.parse_lines`).
    """

    def __init__(
        self,
        path: Path,
        table_ids: Sequence[str],
        parse_lines: Callable[[Callable[[Iterable[str]], list[Table]]], list[Table]],
    ) -> None:
        self._path = path
        self._parse_lines = parse_lines
        self._ids = list(table_ids)
        self._known = frozenset(self._ids)
        self._tables: dict[str, Table] | None = None
        self._reading = threading.Lock()

    def _read(self) -> dict[str, Table]:
        if self._tables is None:
            with self._reading:
                if self._tables is None:
                    read = self._parse_lines(lambda lines: read_tables_file(self._path, lines, len(self._ids)))
                    tables = {t.id: t for t in read}
                    if list(tables) != self._ids:
                        raise IndexFileError(self._path, "its tables are not those the catalog lists")
                    self._tables = tables
        return self._tables

    def __getitem__(self, table_id: str) -> Table:
        if self._tables is None and table_id not in self._known:
            raise KeyError(table_id)
        return self._read()[table_id]

    def __setitem__(self, table_id: str, table: Table) -> None:
        self._read()[table_id] = table

    def __delitem__(self, table_id: str) -> None:
        del self._read()[table_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids if self._tables is None else list(self._tables))

    def __len__(self) -> int:
        return len(self._ids) if self._tables is None else len(self._tables)

    def __contains__(self, table_id: object) -> bool:
        return table_id in (self._known if self._tables is None else self._tables)
