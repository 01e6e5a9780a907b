"""The tables a retrieval may return: LlamaIndex's ``MetadataFilters`` read against each table's metadata.

A question asked of one database in a lake of many is asked within that database's tables:
``index.as_retriever(filters=MetadataFilters(filters=[MetadataFilter(key="source", value="sakila")]))``. A filter
reads a table's ``table_id`` and its ``source`` (the database, schema or sub-folder it came from; ``None``
where unknown), the two keys every result node carries; ``==``, ``!=``, ``in``, ``nin`` and ``is_empty``, joined
by ``and``, ``or`` and ``not`` and nested as LlamaIndex nests them. A retrieval within a scope is the retrieval of
an index holding only those tables' units: a unit counts when every table it stands for is in scope.

Pipeline step: retrieval (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from llama_index.core.vector_stores.types import FilterCondition, FilterOperator, MetadataFilter, MetadataFilters

__all__ = ["SCOPE_KEYS", "tables_in_scope"]

SCOPE_KEYS = ("table_id", "source")
_OPERATORS = (FilterOperator.EQ, FilterOperator.NE, FilterOperator.IN, FilterOperator.NIN, FilterOperator.IS_EMPTY)


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
        ValueError: A key other than ``table_id`` or ``source``, or an operator this scope cannot read (named).
    """
    _check(filters)
    return frozenset(t for t in table_ids if _keeps(filters, {"table_id": t, "source": sources.get(t)}))


def _check(filters: MetadataFilters) -> None:
    for item in filters.filters:
        if isinstance(item, MetadataFilters):
            _check(item)
            continue
        if item.key not in SCOPE_KEYS:
            raise ValueError(
                f"A PEARL retrieval is scoped by a table's {' or '.join(SCOPE_KEYS)}; the filter names {item.key!r}"
            )
        if item.operator not in _OPERATORS:
            names = ", ".join(o.value for o in _OPERATORS)
            raise ValueError(f"The filter on {item.key!r} uses {item.operator.value!r}; a scope reads {names}")


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
        return value is None or value == ""
    wanted = item.value if isinstance(item.value, list) else [item.value]
    found = value is not None and str(value) in {str(w) for w in wanted}
    if item.operator in (FilterOperator.EQ, FilterOperator.IN):
        return found
    return not found  # != and nin
