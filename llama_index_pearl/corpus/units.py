"""Indexed units: table views turned into LlamaIndex ``TextNode`` objects.

Every unit records which tables it stands for (``table_ids``) so that the
retriever can max-pool unit scores to tables (paper section 3.2). Kinds:

- ``original``: a whole table (header and leading rows);
- ``implicit``: question ∥ one projected table of an implicit path;
- ``explicit``: question ∥ all projected tables of an explicit path (joined entry);
- ``single_hop``: question ∥ one projected table, for tables in no path;
- ``random_view``: a random column subset without a question (ablation).

Metadata is for people and for the retriever, never for the encoder: all keys are
excluded from the embedded and the LLM text.

Pipeline step: corpus (docs/architecture.md).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from enum import Enum

from llama_index.core.schema import TextNode

from llama_index_pearl.tables.table import Table
from llama_index_pearl.text.serialization import Serializer, TableView

__all__ = ["UnitKind", "make_unit", "original_unit", "unit_id"]

_UNIT_NAMESPACE = uuid.UUID("6f1d8a52-4c3e-4b8e-9f0e-2d7c1a9b5e10")


class UnitKind(str, Enum):
    ORIGINAL = "original"
    IMPLICIT = "implicit"
    EXPLICIT = "explicit"
    SINGLE_HOP = "single_hop"
    RANDOM_VIEW = "random_view"


def unit_id(kind: UnitKind | str, table_ids: Sequence[str], key: str = "") -> str:
    """Deterministic UUID (valid for Qdrant and friends) for a unit."""
    kind_value = kind.value if isinstance(kind, UnitKind) else str(kind)
    return str(uuid.uuid5(_UNIT_NAMESPACE, "\x1f".join([kind_value, *table_ids, key])))


def make_unit(
    kind: UnitKind,
    views: Sequence[TableView],
    serializer: Serializer,
    *,
    question: str | None = None,
    path_id: str | None = None,
    key: str = "",
) -> TextNode:
    """Serialize views (after an optional question) into one unit.

    Args:
        kind: What the unit stands for.
        views: The projected tables, in path order.
        serializer: The index's serializer.
        question: Generated question placed before the tables.
        path_id: Id of the join path the unit came from.
        key: Extra text that makes the id unique among units of the same tables.
    """
    if not views:
        raise ValueError("A unit needs at least one table view")
    table_ids = [v.table.id for v in views]
    metadata = {
        "table_ids": table_ids,
        "kind": kind.value,
        "path_id": path_id,
        "question": question,
        "columns": {v.table.id: list(v.column_names) for v in views},
    }
    node = TextNode(
        id_=unit_id(kind, table_ids, key or (path_id or "") + (question or "")),
        text=serializer(views, prefix=question),
        metadata=metadata,
    )
    node.excluded_embed_metadata_keys = list(metadata)
    node.excluded_llm_metadata_keys = list(metadata)
    return node


def original_unit(table: Table, serializer: Serializer) -> TextNode:
    """The whole-table entry every table gets."""
    return make_unit(UnitKind.ORIGINAL, [serializer.view(table)], serializer)
