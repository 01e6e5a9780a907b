"""The tables a retrieval may return: LlamaIndex's ``MetadataFilters`` read against each table's metadata.

A question asked of one database in a lake of many is asked within that database's tables:
``index.as_retriever(filters=MetadataFilters(filters=[MetadataFilter(key="source", value="sakila")]))``. A filter
reads a table's ``table_id`` and its ``source`` (the database, schema or sub-folder it came from; ``None``
where unknown), the two keys every result node carries; ``==``, ``!=``, ``in``, ``nin`` and ``is_empty``, joined
by ``and``, ``or`` and ``not`` and nested as LlamaIndex nests them. A value is compared as text (``1`` keeps the
table ``"1"``), except ``None``, which stands for no value: ``source == None`` keeps the tables without a source, as
``is_empty`` does, and never a source named ``"None"``; ``!= None`` keeps every table that has one. The empty
name ``""`` is compared as text, as LlamaIndex compares it (``source == ""`` keeps a table whose source is ``""``).
A source that no table of the index has is an error naming it and listing the index's sources, as
``pearl query --source`` says (a typo would scope the question to nothing). A retrieval
within a scope is the retrieval of an index holding only those tables' units: a unit counts when every table it
stands for is in scope, and the words' evidence (BM25) is weighed over those units alone.
:class:`Scopes` keeps each filters' :class:`Scope` (its tables, units and joins) for one revision of an index.

Pipeline step: search (docs/architecture.md).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

import networkx as nx
import numpy as np
from llama_index.core.vector_stores.types import FilterCondition, FilterOperator, MetadataFilter, MetadataFilters

from llama_index_pearl.retrieval.search.pooling import Memberships

__all__ = ["MAX_LISTED", "SCOPE_KEYS", "Scope", "Scopes", "listed", "tables_in_scope", "unknown_source"]

SCOPE_KEYS = ("table_id", "source")
MAX_LISTED = 20  # names an error lists before it says how many more there are
_OPERATORS = (FilterOperator.EQ, FilterOperator.NE, FilterOperator.IN, FilterOperator.NIN, FilterOperator.IS_EMPTY)
SCOPE_CACHE_SIZE = 256  # distinct filters whose scope a revision keeps


@dataclass(frozen=True)
class Scope:
    """The tables a scoped retrieval may return, as a search and the set read them.

    Args:
        tables: The tables in scope.
        inside: By table number, whether the table is in scope.
        units: Unit numbers of the units whose tables are all in scope.
        graph: The join graph among the tables in scope.
        sources: How many sources its tables come from.
    """

    tables: frozenset[str]
    inside: np.ndarray
    units: np.ndarray
    graph: nx.Graph
    sources: int = 1


class Scopes:
    """The :class:`Scope` of each filters asked of one revision of an index, computed once per filters.

    Args:
        memberships: The revision's units and tables, numbered.
        sources: Table -> its source.
        graph: The revision's join graph.
    """

    def __init__(self, memberships: Memberships, sources: Mapping[str, str | None], graph: nx.Graph) -> None:
        self._memberships = memberships
        self._sources = sources
        self._graph = graph
        self._table_number = {table_id: i for i, table_id in enumerate(memberships.table_ids)}
        self._kept: dict[str, Scope] = {}
        self._lock = threading.Lock()

    def of(self, filters: MetadataFilters | None) -> Scope | None:
        """The tables, units and joins ``filters`` keep (``None``: every table).

        Args:
            filters: LlamaIndex's filters on ``table_id`` and ``source``.
        """
        if filters is None:
            return None
        key = json.dumps(filters.model_dump(mode="json"), sort_keys=True)
        with self._lock:
            found = self._kept.get(key)
        if found is not None:
            return found
        return self._kept_as(key, tables_in_scope(filters, self._memberships.table_ids, self._sources))

    def of_source(self, source: str | None, within: Scope | None = None) -> Scope:
        """The scope of a question routed to ``source``: its tables, and the tables of other sources its tables
        join (a join across sources stands on evidence: ``joins.scoring``), within ``within`` if given.

        Args:
            source: The source routed to.
            within: The retrieval's own scope (``None``: every table).
        """
        key = json.dumps(["source", source, sorted(within.tables) if within is not None else None])
        with self._lock:
            found = self._kept.get(key)
        if found is not None:
            return found
        own = {t for t in self._memberships.table_ids if self._sources.get(t) == source}
        joined = {n for t in own if t in self._graph for n in self._graph.neighbors(t)}
        tables = own | joined
        if within is not None:
            tables &= within.tables
        return self._kept_as(key, frozenset(tables))

    def _kept_as(self, key: str, tables: frozenset[str]) -> Scope:
        memberships = self._memberships
        inside = np.zeros(len(memberships.table_ids), dtype=bool)
        inside[[self._table_number[t] for t in tables]] = True
        sources = len({self._sources.get(t) for t in tables})
        found = Scope(tables, inside, memberships.units_within(inside), self._graph.subgraph(tables), sources)
        with self._lock:
            if len(self._kept) >= SCOPE_CACHE_SIZE:
                self._kept.clear()
            self._kept[key] = found
        return found


def tables_in_scope(
    filters: MetadataFilters, table_ids: Sequence[str], sources: Mapping[str, str | None]
) -> frozenset[str]:
    """The tables whose metadata the filters keep.

    >>> from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters
    >>> filters = MetadataFilters(filters=[MetadataFilter(key="source", value="shop")])
    >>> sorted(tables_in_scope(filters, ["orders", "users", "logs"], {"orders": "shop", "users": "shop"}))
    ['orders', 'users']

    Args:
        filters: LlamaIndex's filters, on ``table_id`` and ``source``.
        table_ids: Every table of the index.
        sources: Table -> its source (a table missing here has none).

    Raises:
        ValueError: A key other than ``table_id`` or ``source``, an operator this scope cannot read, or a source
            no table has (named).
    """
    _check(filters, {s for t in table_ids if (s := sources.get(t)) is not None})
    return frozenset(t for t in table_ids if _keeps(filters, {"table_id": t, "source": sources.get(t)}))


def listed(names: Iterable[str], limit: int = MAX_LISTED) -> str:
    """Names for a one-line message: each quoted with its escapes (a newline stays ``\\n``), sorted, the first
    ``limit``, then how many more.

    >>> listed(["b", "a\\nx", "c"], limit=2)
    "'a\\\\nx', 'b' and 1 more"

    Args:
        names: The names.
        limit: How many to list at most.
    """
    ordered = sorted(set(names))
    shown = ", ".join(map(repr, ordered[:limit]))
    return shown + (f" and {len(ordered) - limit} more" if len(ordered) > limit else "")


def unknown_source(name: str, sources: Collection[str]) -> ValueError:
    """The error of a source that no table has, listing the index's sources (filters and ``--source`` alike).

    Args:
        name: The source asked for.
        sources: The index's sources.
    """
    there = listed(sources) or "none: the index records no source (rebuild it to scope questions)"
    return ValueError(f"no table of source {name!r}; the index's sources: {there}")


def _check(filters: MetadataFilters, sources: Collection[str]) -> None:
    for item in filters.filters:
        if isinstance(item, MetadataFilters):
            _check(item, sources)
            continue
        if item.key not in SCOPE_KEYS:
            raise ValueError(
                f"A PEARL retrieval is scoped by a table's {' or '.join(SCOPE_KEYS)}; the filter names {item.key!r}"
            )
        if item.operator not in _OPERATORS:
            names = ", ".join(o.value for o in _OPERATORS)
            raise ValueError(f"The filter on {item.key!r} uses {item.operator.value!r}; a scope reads {names}")
        if item.key == "source" and item.operator is not FilterOperator.IS_EMPTY:
            known = {str(s) for s in sources}
            for wanted in item.value if isinstance(item.value, list) else [item.value]:
                if wanted is not None and str(wanted) not in known:
                    raise unknown_source(str(wanted), sources)


def _keeps(filters: MetadataFilters, meta: Mapping[str, str | None]) -> bool:
    results = [
        _keeps(item, meta) if isinstance(item, MetadataFilters) else _matches(item, meta) for item in filters.filters
    ]
    condition = filters.condition or FilterCondition.AND
    if condition is FilterCondition.OR:
        return any(results)
    if condition is FilterCondition.NOT:  # LlamaIndex: none of them holds
        return not any(results)
    return all(results)


def _matches(item: MetadataFilter, meta: Mapping[str, str | None]) -> bool:
    value = meta.get(item.key)
    if item.operator is FilterOperator.IS_EMPTY:
        return _empty(value)
    wanted = item.value if isinstance(item.value, list) else [item.value]
    found = any(_empty(value) if w is None else value is not None and str(value) == str(w) for w in wanted)
    if item.operator in (FilterOperator.EQ, FilterOperator.IN):
        return found
    return not found  # != and nin


def _empty(value: str | None) -> bool:
    """No value, as ``is_empty`` reads it: a table without a source (``None``), or with an empty name."""
    return value is None or value == ""
