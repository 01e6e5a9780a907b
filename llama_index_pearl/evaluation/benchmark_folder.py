"""Benchmark folders, read and checked: tables, their metadata and the questions (``pearl eval``).

The format is in ``docs/evaluation.md``: ``tables/<id>.csv``, ``tables_meta.jsonl``, ``queries.jsonl`` (and
``joins.jsonl``, which retrieval never reads). A folder may come from anyone: a line of a JSONL file that cannot be
used is an error naming the file and its line (blank lines counted, a UTF-8 BOM read), never a traceback or a
question scored on a misread field. A ``db`` written as a JSON number names the database of that name, as text.

Pipeline step: evaluation (docs/architecture.md).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llama_index_pearl.evaluation.bench_tables import declare_types, read_bench_tables
from llama_index_pearl.tables.table import Table

__all__ = ["BenchQuery", "Benchmark", "load_benchmark", "read_jsonl"]

logger = logging.getLogger(__name__)

NAMED_AT_MOST = 5  # unknown gold tables a message names before "and N more"
SHOWN_CHARS = 40  # of a string a message quotes
# a question's fields of one JSON type: (the Python types json gives, what the message says is meant)
FIELD_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "id": ((str, int), "a string or a whole number"),
    "question": ((str,), "a string"),
    "db": ((str, int, type(None)), "a database's name"),
    "sql": ((str, type(None)), "a string"),
}


@dataclass(frozen=True)
class BenchQuery:
    """One question of a benchmark.

    Args:
        id: Its id.
        question: The question.
        gold_tables: The tables that answer it.
        n_tables: How many tables it needs (the benchmark's ``hops`` field; default: its gold tables).
        db: Its database, where the benchmark says.
        sql: Its gold SQL (SQL benchmarks): join-hint scoring reads its join conditions.
        line: Its line in ``queries.jsonl`` (1-based), where it was read from one.
    """

    id: str
    question: str
    gold_tables: tuple[str, ...]
    n_tables: int
    db: str | None = None
    sql: str | None = None
    line: int | None = None


@dataclass
class Benchmark:
    """A benchmark folder, read.

    Args:
        name: The folder's name.
        tables: Its tables (``tables/*.csv``), their titles and provenance from ``tables_meta.jsonl``.
        queries: Its questions, in the order of ``queries.jsonl``.
    """

    name: str
    tables: list[Table]
    queries: list[BenchQuery]


def load_benchmark(
    bench_dir: str | Path, *, titles: bool = True, provenance: bool = True, strict: bool = False
) -> Benchmark:
    """Read a benchmark folder (tables, metadata, questions; never ``joins.jsonl``).

    Args:
        bench_dir: The folder.
        titles: Attach ``page_title``/``section_title`` from ``tables_meta.jsonl``
            (FeTaQA) as table titles.
        provenance: Set each table's ``source`` to its ``db`` field; ``False`` gives
            the paper's unified pool, where nothing tells the databases apart.
        strict: A gold table that is no table of the folder is an error (``False``: one warning names them, and
            each question counts them as missed).

    Raises:
        ValueError: The folder lacks ``tables`` or ``queries.jsonl``, a line of a JSONL file is no JSON object or
            a question's fields are not what the format says (the message names the file and the line), or
            (``strict``) a gold table is no table of the folder.
    """
    folder = Path(bench_dir)
    for needed in ("tables", "queries.jsonl"):
        if not (folder / needed).exists():
            raise ValueError(f"{str(folder)!r} is not a benchmark folder: {needed} is missing")
    meta_path = folder / "tables_meta.jsonl"
    meta = read_jsonl(meta_path) if meta_path.exists() else []
    meta_by_id = {str(m["id"]): m for _, m in meta if "id" in m}
    tables = [_table(table, meta_by_id, titles, provenance) for table in read_bench_tables(folder / "tables")]
    path = folder / "queries.jsonl"
    queries = [_question(fields, f"{path} line {line}", line) for line, fields in read_jsonl(path)]
    _check_gold_tables(path, queries, {t.id for t in tables}, strict)
    return Benchmark(folder.name, tables, queries)


def read_jsonl(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """Each JSON object of a JSONL file with its line (1-based; blank lines skipped but counted, a BOM read).

    Args:
        path: The file (``queries.jsonl``, ``tables_meta.jsonl``).

    Returns:
        ``(line, object)`` of each line that is not blank.

    Raises:
        ValueError: A line is not UTF-8, not JSON, or not an object; the message names the file and the line.
    """
    rows = []
    for number, raw in enumerate(path.read_bytes().removeprefix(b"\xef\xbb\xbf").splitlines(), start=1):
        where = f"{path} line {number}"
        try:
            text = raw.decode("utf-8")
            if not text.strip():
                continue
            value = json.loads(text)
        except UnicodeDecodeError as exc:
            raise ValueError(f"{where}: not UTF-8 (byte {exc.start + 1})") from None
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}: not JSON ({exc.msg} at column {exc.colno})") from None
        if not isinstance(value, dict):
            raise ValueError(f"{where}: not a JSON object ({{...}}), but {_json_kind(value)}")
        rows.append((number, value))
    return rows


def _table(table: Table, meta_by_id: dict[str, dict[str, Any]], titles: bool, provenance: bool) -> Table:
    info = meta_by_id.get(table.id, {})
    declare_types(table, info)  # a header-only table is typed by its schema, as a database's would be
    # the unified pool prefixes ids with the database; the table's own name reads better
    table.name = info.get("table") or table.id
    table.source = _database(info.get("db")) if provenance else None
    table.column_descriptions = _column_descriptions(info, table.columns)
    if titles:
        parts = [info.get("page_title"), info.get("section_title")]
        table.title = " - ".join(p for p in parts if p) or None
    return table


def _column_descriptions(info: dict[str, Any], columns: list[str]) -> dict[str, str]:
    """``column_descriptions`` of a table's metadata: a list beside ``columns``, or an object by column name."""
    given = info.get("column_descriptions")
    if isinstance(given, list):
        named = info.get("columns", columns)
        given = dict(zip(named, given))
    if not isinstance(given, dict):
        return {}
    return {str(c): str(d) for c, d in given.items() if c in columns and isinstance(d, str) and d.strip()}


def _database(value: Any) -> str | None:
    """A ``db`` field as the source it names: a number is the database of that name (``7`` is ``"7"``)."""
    return None if value is None or value == "" else str(value)


def _question(fields: dict[str, Any], where: str, line: int) -> BenchQuery:
    """One line of ``queries.jsonl`` as a question; ``where`` names the file and line in every error."""
    for needed in ("id", "question", "gold_tables"):
        if needed not in fields:
            raise ValueError(f'{where}: no "{needed}" (a question is {{"id", "question", "gold_tables": [...]}})')
    for name, (kinds, meant) in FIELD_TYPES.items():
        value = fields.get(name)
        if not isinstance(value, kinds) or isinstance(value, bool):  # JSON's true is no number
            raise ValueError(f'{where}: "{name}" must be {meant}, not {_json_kind(value)}')
    if not fields["question"].strip():
        raise ValueError(f'{where}: "question" is blank')
    gold = _gold_tables(fields["gold_tables"], where)
    n_tables = _table_count(fields.get("hops", len(gold)), where)
    db = _database(fields.get("db"))
    return BenchQuery(str(fields["id"]), fields["question"], gold, n_tables, db=db, sql=fields.get("sql"), line=line)


def _gold_tables(value: Any, where: str) -> tuple[str, ...]:
    """The ``gold_tables`` field: a non-empty list of table ids (the tables' file names without ``.csv``)."""
    if isinstance(value, str):
        raise ValueError(
            f'{where}: "gold_tables" must be a list of table ids, not a string: write {json.dumps([value])}'
        )
    if not isinstance(value, list):
        raise ValueError(f'{where}: "gold_tables" must be a list of table ids, not {_json_kind(value)}')
    if not value:
        raise ValueError(f'{where}: "gold_tables" is empty: a question needs at least one gold table')
    for table in value:
        if not isinstance(table, str) or not table:
            raise ValueError(f'{where}: "gold_tables" must hold table ids (strings), not {_json_kind(table)}')
    return tuple(value)


def _table_count(value: Any, where: str) -> int:
    """The ``hops`` field (how many tables the question needs): a whole number, at least 1."""
    try:
        count = int(value) if isinstance(value, (int, str)) and not isinstance(value, bool) else 0
    except ValueError:
        count = 0
    if count < 1:
        raise ValueError(f'{where}: "hops" must be a whole number of tables, at least 1, not {value!r}')
    return count


def _check_gold_tables(path: Path, queries: list[BenchQuery], table_ids: set[str], strict: bool) -> None:
    """Warn of (``strict``: refuse) each gold table no table file holds: no retriever can find it."""
    lines: dict[str, list[int]] = {}
    for query in queries:
        for table in query.gold_tables:
            if table not in table_ids:
                lines.setdefault(table, []).append(query.line or 0)
    if not lines:
        return
    named = ", ".join(f"{table!r} ({_lines(at)})" for table, at in list(lines.items())[:NAMED_AT_MOST])
    more = f" and {len(lines) - NAMED_AT_MOST} more" if len(lines) > NAMED_AT_MOST else ""
    one = len(lines) == 1
    said = (
        f"{path}: {'a gold table that is' if one else 'gold tables that are'} no table of the folder: {named}{more}; "
        "a table's id is its file's name in tables/ without .csv"
    )
    if strict:
        raise ValueError(said)
    logger.warning("%s; %s as missed (pass --strict to stop instead)", said, "it counts" if one else "they count")


def _lines(numbers: list[int]) -> str:
    shown = ", ".join(map(str, numbers[:3])) + (", ..." if len(numbers) > 3 else "")
    return f"line {shown}" if len(numbers) == 1 else f"lines {shown}"


def _json_kind(value: Any) -> str:
    """What a JSON value is, for a message: ``null``, ``a number (7)``, ``a list``..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):
        return f"a number ({value})"
    if isinstance(value, str):
        return f"a string ({json.dumps(value[:SHOWN_CHARS])}{'...' if len(value) > SHOWN_CHARS else ''})"
    return "a list" if isinstance(value, list) else "an object"
