"""Join hints measured against the join conditions of gold SQL (``pearl eval`` on SQL benchmarks).

A text-to-SQL step needs the right tables *and* the keys that join them. For a
question whose gold SQL is known, the gold join pairs are its equality
predicates between columns of two different tables (``JOIN ... ON a.x = b.y``,
``WHERE a.x = b.y``), its semi- and anti-joins (``a.x IN (SELECT b.y FROM b)``,
``a.x = (SELECT b.y ...)``, ``SELECT a.x ... EXCEPT|INTERSECT SELECT b.y ...``), parsed
with sqlglot (aliases resolved per SELECT scope; an unqualified column is given
to the one table of its scope that has it). Among the questions whose gold
tables are all in the top k:

- join-hint recall: the share of gold join pairs that the hints over the top-k
  tables contain (both joins of a hint through one table count);
- join-hint precision: the share of hinted pairs between two gold tables that
  are gold (a hint towards a non-gold table is not judged: the gold SQL says
  nothing about it).

Both are macro averages over questions, in percent. Column names compare
case- and space-insensitively.

Pipeline step: evaluation (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import networkx as nx

from llama_index_pearl.evaluation.benchmark import BenchQuery
from llama_index_pearl.foundations.extras import require
from llama_index_pearl.retrieval.answer.join_hints import JoinHint, compute_join_hints
from llama_index_pearl.tables.table import Table, normalize_column_name

__all__ = ["SqlSchema", "evaluate_join_hints", "gold_join_pairs", "hint_pairs"]

Pair = frozenset[str]


class SqlSchema:
    """Resolves the table names of one database's SQL to table ids, and knows each table's columns.

    Args:
        tables: The benchmark's tables; ids are ``<db>__<table>``.
    """

    def __init__(self, tables: Sequence[Table]) -> None:
        self._ids: dict[tuple[str, str], str] = {}
        self.columns: dict[str, set[str]] = {}
        for table in tables:
            db, _, name = table.id.partition("__")
            self._ids[(db, name.lower())] = table.id
            self.columns[table.id] = {normalize_column_name(str(c)) for c in table.df.columns}

    def table_id(self, db: str, name: str) -> str | None:
        return self._ids.get((db, name.lower()))


def _column_key(table_id: str, column: str) -> str:
    return f"{table_id}.{normalize_column_name(column)}"


def _scope_tables(select: Any, exp: Any) -> dict[str, str]:
    """Alias (and bare name) -> SQL table name for the tables of this SELECT's own FROM/JOINs."""
    found: dict[str, str] = {}
    # sqlglot names the FROM clause "from_" since version 26, "from" before
    from_clause = select.args.get("from_") or select.args.get("from")
    clauses = [from_clause, *(select.args.get("joins") or [])]
    for clause in clauses:
        if clause is None:
            continue
        table = clause.this if not isinstance(clause, exp.Table) else clause
        if isinstance(table, exp.Table):
            found[table.name.lower()] = table.name
            if table.alias:
                found[table.alias.lower()] = table.name
    return found


def _resolve(column: Any, tables: Mapping[str, str], db: str, schema: SqlSchema) -> str | None:
    """``table_id.column`` for a column of this scope, or ``None`` when it cannot be placed."""
    if column.table:
        name = tables.get(column.table.lower())
        candidates = [name] if name else []
    else:
        wanted = normalize_column_name(column.name)
        candidates = [
            name
            for name in dict.fromkeys(tables.values())
            if wanted in schema.columns.get(schema.table_id(db, name) or "", set())
        ]
    if len(candidates) != 1:
        return None
    table_id = schema.table_id(db, candidates[0])
    return _column_key(table_id, column.name) if table_id else None


def _pair(left: str | None, right: str | None) -> Pair | None:
    if left is None or right is None or left.split(".", 1)[0] == right.split(".", 1)[0]:
        return None
    return frozenset((left, right))


def gold_join_pairs(sql: str, db: str, schema: SqlSchema) -> set[Pair]:
    """The join column pairs of one gold SQL query.

    Args:
        sql: The query (SQLite dialect).
        db: Its database (the ``<db>`` of the table ids).
        schema: The benchmark's tables.

    Returns:
        Unordered ``{"table_id.column", "table_id.column"}`` pairs; empty when the SQL
        does not parse or joins nothing.
    """
    sqlglot = require("sqlglot", "bench", "join-hint scoring")
    exp = sqlglot.exp
    try:
        tree = sqlglot.parse_one(sql, read="sqlite")
    except sqlglot.errors.SqlglotError:
        return set()
    pairs: set[Pair] = set()
    for select in tree.find_all(exp.Select):
        tables = _scope_tables(select, exp)
        for node in select.find_all(exp.EQ, exp.In):
            if node.parent_select is not select:
                continue  # a nested SELECT is its own scope
            pair = _condition_pair(node, tables, db, schema, exp)
            if pair is not None:
                pairs.add(pair)
    for node in tree.find_all(exp.Except, exp.Intersect):  # anti/semi-join on one projected key each
        left, right = _projected(node.left, exp), _projected(node.right, exp)
        if left is not None and right is not None:
            pair = _pair(_resolve(left[0], left[1], db, schema), _resolve(right[0], right[1], db, schema))
            if pair is not None:
                pairs.add(pair)
    return pairs


def _projected(query: Any, exp: Any) -> tuple[Any, dict[str, str]] | None:
    """The one projected column of a single-column SELECT (unwrapping a subquery), with its scope's tables."""
    query = query.this if isinstance(query, exp.Subquery) else query
    if not isinstance(query, exp.Select) or len(query.expressions) != 1:
        return None
    column = query.expressions[0]
    return (column, _scope_tables(query, exp)) if isinstance(column, exp.Column) else None


def _condition_pair(node: Any, tables: Mapping[str, str], db: str, schema: SqlSchema, exp: Any) -> Pair | None:
    """``a.x = b.y``, ``a.x IN (SELECT b.y ...)`` and ``a.x = (SELECT b.y ...)``: the pair (a.x, b.y)."""
    if isinstance(node, exp.In):
        column, other = node.this, node.args.get("query")
    else:
        column, other = (node.left, node.right) if isinstance(node.left, exp.Column) else (node.right, node.left)
    if not isinstance(column, exp.Column) or other is None:
        return None
    if isinstance(other, exp.Column):
        return _pair(_resolve(column, tables, db, schema), _resolve(other, tables, db, schema))
    inner = _projected(other, exp)
    if inner is None:
        return None
    return _pair(_resolve(column, tables, db, schema), _resolve(inner[0], inner[1], db, schema))


def hint_pairs(hints: Sequence[JoinHint]) -> set[Pair]:
    """Every column pair of every join of the hints (alternatives included), as unordered ``table_id.column`` pairs."""
    return {
        frozenset((_column_key(join.left_table, left), _column_key(join.right_table, right)))
        for hint in hints
        for join in (*hint.joins, *hint.alternatives)
        for left, right in join.column_pairs
    }


def evaluate_join_hints(
    queries: Sequence[BenchQuery],
    rankings: Sequence[Sequence[str]],
    graph: nx.Graph,
    tables: Sequence[Table],
    ks: Sequence[int],
) -> dict[str, dict[str, float]]:
    """Join-hint recall and precision at each k (see the module docstring).

    Args:
        queries: Benchmark questions (those without ``sql`` or without a gold join are skipped).
        rankings: Ranked table ids per question.
        graph: The index's join graph.
        tables: The benchmark's tables.
        ks: The k values.

    Returns:
        ``{"@k": {"questions", "n", "recall", "precision", "n_precision"}}``: ``questions`` have gold
        joins, ``n`` of them have every gold table in the top k; ``n_precision`` of those got a hint
        between two gold tables.
    """
    schema = SqlSchema(tables)
    gold = [gold_join_pairs(q.sql, q.db, schema) if q.sql and q.db else set() for q in queries]
    result = {}
    for k in ks:
        recalls, precisions = [], []
        for query, ranked, pairs in zip(queries, rankings, gold):
            if not pairs or not set(query.gold_tables) <= set(ranked[:k]):
                continue
            gold_tables = set(query.gold_tables)
            hinted = hint_pairs(compute_join_hints(graph, ranked[:k]))
            recalls.append(len(pairs & hinted) / len(pairs))
            judged = {p for p in hinted if {c.split(".", 1)[0] for c in p} <= gold_tables}
            if judged:
                precisions.append(len(judged & pairs) / len(judged))
        result[f"@{k}"] = {
            "questions": sum(bool(p) for p in gold),
            "n": len(recalls),
            "recall": round(100.0 * sum(recalls) / len(recalls), 2) if recalls else 0.0,
            "precision": round(100.0 * sum(precisions) / len(precisions), 2) if precisions else 0.0,
            "n_precision": len(precisions),
        }
    return result
