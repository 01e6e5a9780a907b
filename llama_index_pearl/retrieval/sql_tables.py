"""PEARL as the ``table_retriever`` of LlamaIndex's text-to-SQL engines, with the joins in the schema.

LlamaIndex's ``SQLTableRetrieverQueryEngine`` and ``NLSQLRetriever`` choose tables with
``table_retriever.retrieve(question)``, a list of ``SQLTableSchema``; for each one the
text-to-SQL prompt shows ``sql_database.get_single_table_info(table_name)`` (columns,
types, the table's declared foreign keys) and then ``" The table description is: "`` and
the schema's ``context_str``. The usual retriever is an ``ObjectIndex`` over
``SQLTableNodeMapping``: one vector per table, nothing about how the tables join.

:func:`sql_table_retriever` is LlamaIndex's own ``ObjectRetriever`` (sync ``retrieve``,
async ``aretrieve``, node postprocessors) over a
:class:`~llama_index_pearl.retrieval.retriever.PearlRetriever`, with
:class:`PearlSQLTableMapping` turning each retrieved table into a ``SQLTableSchema``:

- ``table_name`` is the name the ``SQLDatabase`` gives the table (:class:`SQLTableNames`):
  a PostgreSQL table ``sales.orders`` of the index is ``orders`` of
  ``SQLDatabase(engine, schema="sales")``, which qualifies it when it runs the SQL;
- ``context_str`` holds the caller's description of the table, if any, and how the table
  joins every other retrieved table it joins, as SQL an engine runs
  (``JOIN stadium ON concert.stadium_id = stadium.stadium_id``): every retrieved table lists
  its own joins, identifiers are quoted where the database's dialect needs it (SQLAlchemy's
  identifier preparer: ``"team.key"`` in SQLite and PostgreSQL, ```team.key``` in MySQL), a
  composite key is one ``ON`` with its pairs ANDed, another join between the same tables
  follows as ``or JOIN ...``, and a join through a table that was not retrieved names it and
  says its schema is not shown; no labels, no scores.

Sample rows are LlamaIndex's business: ``NLSQLRetriever(rows_retrievers=...)`` looks the
rows up by ``table_name``, which is the database's own.

Pipeline step: retrieval (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from llama_index.core.objects import ObjectRetriever, SQLTableNodeMapping, SQLTableSchema
from llama_index.core.schema import BaseNode

from llama_index_pearl.corpus.state import IndexState
from llama_index_pearl.joins.graph import Join
from llama_index_pearl.retrieval.answer.join_hints import JoinHint
from llama_index_pearl.retrieval.retriever import PearlRetriever
from llama_index_pearl.tables.sql import masked_url
from llama_index_pearl.tables.table import Table

__all__ = ["SQL_SET_MARGIN", "PearlSQLTableMapping", "SQLTableNames", "join_keys_text", "sql_table_retriever"]

# A text-to-SQL engine reads the connected set and two more candidates: C@G+2, the set's gold and two to spare,
# is what pearl eval counts as complete (benchmarks/README.md, "Table sets")
SQL_SET_MARGIN = 2

MAX_NAMED = 5  # unknown tables an error message lists


class SQLTableNames:
    """The name a LlamaIndex ``SQLDatabase`` gives each table of an index.

    A ``SQLDatabase`` describes and runs the tables of one schema (its ``schema=``, else the
    connection's default) under their bare names. An index built from a SQL database names a
    table of the default schema by its name and any other one ``schema.table``; an index
    built from files or DataFrames names it by its id, which must then be the database's name.

    Args:
        index: The index (its tables are read at each call: tables inserted later map too).
        sql_database: The ``SQLDatabase`` the engine runs the SQL on.
    """

    def __init__(self, index: IndexState, sql_database: Any) -> None:
        import sqlalchemy as sa

        self._index = index
        self._known = frozenset(sql_database.get_usable_table_names())
        default = sa.inspect(sql_database.engine).default_schema_name
        self.schema: str | None = _schema_of(sql_database, self._known) or default
        self._default = default
        self._where = f"SQLDatabase {masked_url(sql_database.engine)} (schema {self.schema!r})"
        self._names: dict[str, str] = {}

    def __call__(self, table_id: str) -> str:
        """The database's name for ``table_id``.

        Raises:
            ValueError: The database does not hold the table; the message names both.
        """
        name = self._names.get(table_id)
        if name is None:
            name = self._resolve(table_id)
            if name is None:
                raise ValueError(self._unknown([table_id]))
            self._names[table_id] = name
        return name

    def check(self) -> None:
        """Every table of the index is one of the database's.

        Raises:
            ValueError: Some are not; the message names them (the first few) and the database.
        """
        missing = [t for t in self._index.tables if t not in self._names and self._resolve(t) is None]
        if missing:
            raise ValueError(self._unknown(missing))

    def known(self, name: str) -> bool:
        return name in self._known

    def _resolve(self, table_id: str) -> str | None:
        table = self._index.tables.get(table_id)
        for schema, name in _candidates(table_id, table):
            if (schema or self._default) == self.schema and name in self._known:
                return name
        return None

    def _unknown(self, table_ids: Sequence[str]) -> str:
        named = ", ".join(repr(t) for t in table_ids[:MAX_NAMED])
        more = f" and {len(table_ids) - MAX_NAMED} more" if len(table_ids) > MAX_NAMED else ""
        one = len(table_ids) == 1
        what = (
            f"Table {named} of the PEARL index is not a table"
            if one
            else f"Tables {named}{more} of the PEARL index are not tables"
        )
        held = ", ".join(sorted(self._known)[:MAX_NAMED]) + (", ..." if len(self._known) > MAX_NAMED else "")
        return (
            f"{what} of {self._where}, which holds: "
            f"{held or 'no tables'}. Pass the SQLDatabase of that schema, or build the index from this one's "
            f"tables: PearlTableIndex.from_tables(tables_from_sql(engine, schemas=[{self.schema!r}]))"
        )


def _schema_of(sql_database: Any, names: frozenset[str]) -> str | None:
    """The schema a ``SQLDatabase`` was given, as its reflected tables carry it; ``None``: the default.

    Reflection also brings in the tables that foreign keys refer to, from any schema: only
    the database's own tables (by name) count.
    """
    schemas = {table.schema for table in sql_database.metadata_obj.tables.values() if table.name in names}
    return next(iter(schemas)) if len(schemas) == 1 else None


def _candidates(table_id: str, table: Table | None) -> list[tuple[str | None, str]]:
    """(schema, name) readings of an id: ``schema.table`` when the table's name says so, else the id itself."""
    name = table.name if table is not None and table.name else table_id
    found: list[tuple[str | None, str]] = []
    if name != table_id and table_id.endswith(f".{name}"):
        found.append((table_id[: -len(name) - 1], name))
    found.append((None, table_id))
    return found


def join_keys_text(
    table_id: str,
    join_hints: Sequence[Mapping[str, Any]],
    name: Callable[[str], str] = str,
    quote: Callable[[str], str] = str,
) -> str:
    """How ``table_id`` joins the other retrieved tables, as SQL: one clause per table it joins, ``; `` between.

    ``JOIN stadium ON concert.stadium_id = stadium.stadium_id``, read from ``table_id``; a composite
    key ANDs its pairs in one ``ON``; another join between the same two tables follows as
    ``or JOIN ...`` (each a join of its own, never ANDed with the first); a join through a table
    that was not retrieved reads ``JOIN m ON a.x = m.x JOIN b ON m.y = b.y (m is not among the
    tables shown)``.

    Args:
        table_id: The table.
        join_hints: Its node's ``join_hints`` metadata (see ``PearlRetriever``): the hints of the
            result that involve it.
        name: Maps an index table id to the name the SQL must use.
        quote: Quotes an identifier where the database's dialect needs it.
    """
    clauses = []
    for hint in map(JoinHint.from_dict, join_hints):
        if table_id not in hint.tables:
            continue
        joins = list(hint.joins)
        if not hint.via:
            joins = [_read_from(table_id, join) for join in joins]
        elif joins[0].left_table != table_id:  # a chain to this table: walked backwards, each join reversed
            joins = [join.reversed() for join in reversed(joins)]
        clause = " ".join(_clause(join, name, quote) for join in joins)
        if hint.via:
            clause += f" ({quote(name(hint.via))} is not among the tables shown)"
        alternatives = [_read_from(table_id, alt) for alt in hint.alternatives]
        clauses.append(" or ".join([clause, *(_clause(alt, name, quote) for alt in alternatives)]))
    return "; ".join(clauses)


def _read_from(table_id: str, join: Join) -> Join:
    return join if join.left_table == table_id else join.reversed()


def _clause(join: Join, name: Callable[[str], str], quote: Callable[[str], str]) -> str:
    """``JOIN right ON left.x = right.y AND ...`` of a join read from its left table."""
    left, right = quote(name(join.left_table)), quote(name(join.right_table))
    condition = " AND ".join(f"{left}.{quote(a)} = {right}.{quote(b)}" for a, b in join.column_pairs)
    return f"JOIN {right} ON {condition}"


class PearlSQLTableMapping(SQLTableNodeMapping):
    """A retrieved PEARL table node -> the ``SQLTableSchema`` LlamaIndex's text-to-SQL prompt reads.

    Args:
        index: The index whose retriever produces the nodes.
        sql_database: The database the engine runs SQL on; every table of the index must be one of its tables.
        join_keys: Put the join keys to the other retrieved tables in ``context_str``.
        context_strs: Descriptions by database table name (what ``SQLTableSchema(context_str=...)``
            held in an ``ObjectIndex``); they come first in ``context_str``.

    Raises:
        ValueError: A table of the index, or a key of ``context_strs``, that the database does not hold.
    """

    def __init__(
        self,
        index: IndexState,
        sql_database: Any,
        join_keys: bool = True,
        context_strs: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(sql_database)
        self._names = SQLTableNames(index, sql_database)
        self._names.check()
        self._context = dict(context_strs or {})
        strangers = [name for name in self._context if not self._names.known(name)]
        if strangers:
            raise ValueError(
                f"context_strs names {', '.join(map(repr, strangers))}, not tables of the SQLDatabase "
                f"(schema {self._names.schema!r}); key them by the database's table names"
            )
        self._join_keys = join_keys
        self._quote = sql_database.engine.dialect.identifier_preparer.quote

    def _from_node(self, node: BaseNode) -> SQLTableSchema:
        table_id = node.metadata["table_id"]
        name = self._names(table_id)
        parts = [self._context.get(name)]
        if self._join_keys:
            parts.append(join_keys_text(table_id, node.metadata.get("join_hints", []), self._names, self._quote))
        context = " ".join(p for p in parts if p)
        return SQLTableSchema(table_name=name, context_str=context or None)


def sql_table_retriever(
    index: IndexState,
    sql_database: Any,
    retriever: PearlRetriever,
    join_keys: bool = True,
    context_strs: Mapping[str, str] | None = None,
) -> ObjectRetriever[SQLTableSchema]:
    """LlamaIndex's ``ObjectRetriever[SQLTableSchema]`` over PEARL (see ``PearlTableIndex.as_sql_table_retriever``).

    Args:
        index: The index.
        sql_database: The ``SQLDatabase`` the text-to-SQL engine runs on.
        retriever: The index's table retriever (its ``similarity_top_k`` is the number of schemas).
        join_keys: Put the join keys between the retrieved tables in each schema's ``context_str``.
        context_strs: Table descriptions by database table name.

    Raises:
        ValueError: A table of the index that the database does not hold (the message names it).
    """
    return ObjectRetriever(retriever, PearlSQLTableMapping(index, sql_database, join_keys, context_strs))
