"""Indexed units: table views turned into LlamaIndex ``TextNode`` objects.

Every unit records which tables it stands for (``table_ids``) so that the
retriever can max-pool unit scores to tables (paper section 3.2). Kinds:

- ``original``: a whole table (header and leading rows);
- ``schema``: a table's names (source, table, columns) and one row, the text a small encoder
  matches names against (not in the paper; see :func:`~llama_index_pearl.corpus.augment.table_units`);
- ``implicit``: question ∥ one projected table of an implicit path;
- ``explicit``: question ∥ all projected tables of an explicit path;
- ``single_hop``: question ∥ one projected table, for tables in no path;
- ``star``: a fact table and the dimensions it references, each projected to its join keys and
  what describes it (:mod:`~llama_index_pearl.joins.stars`; not in the paper);
- ``random_view``: a random column subset without a question (ablation).

Metadata is for people and for the retriever, never for the encoder: all keys are
excluded from the embedded and the LLM text. :class:`UnitMeta` declares its keys once; every
module reads and writes them through these constants. ``lexical_only`` holds the view rows the
embedded text leaves out (see ``PearlConfig.embedded_rows``): BM25 reads them
(:func:`lexical_text`), the encoder does not.

Pipeline step: corpus (docs/architecture.md).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import replace
from enum import Enum
from typing import Final, TypedDict, cast

from llama_index.core.schema import BaseNode, MetadataMode, TextNode

from llama_index_pearl.tables.table import Table
from llama_index_pearl.text.serialization import Serializer, TableView

__all__ = [
    "COLUMNS",
    "KIND",
    "LEXICAL_ONLY",
    "PATH_ID",
    "QUESTION",
    "TABLE_IDS",
    "UNIT_META_KEYS",
    "UnitKind",
    "UnitMeta",
    "count_kinds",
    "lexical_text",
    "make_unit",
    "original_unit",
    "schema_unit",
    "unit_id",
    "unit_meta",
]


class UnitMeta(TypedDict):
    """The metadata of every unit, one declaration of its keys (persisted in ``docstore.json``).

    Args:
        table_ids: The tables the unit stands for, in the order max pooling breaks ties by; Qdrant's
            ``group_by`` field (:mod:`~llama_index_pearl.retrieval.search.grouped_search`).
        kind: A :class:`UnitKind` value.
        path_id: The join path the unit came from (``JoinPath.path_id``), else ``None``.
        question: The generated question placed before the tables, else ``None``.
        columns: Each table's columns in the unit's views.
        lexical_only: The view rows the embedded text leaves out: the lexical index reads them, the encoder does not.
    """

    table_ids: list[str]
    kind: str
    path_id: str | None
    question: str | None
    columns: dict[str, list[str]]
    lexical_only: str


TABLE_IDS: Final = "table_ids"
KIND: Final = "kind"
PATH_ID: Final = "path_id"
QUESTION: Final = "question"
COLUMNS: Final = "columns"
LEXICAL_ONLY: Final = "lexical_only"
UNIT_META_KEYS = (TABLE_IDS, KIND, PATH_ID, QUESTION, COLUMNS, LEXICAL_ONLY)  # UnitMeta's keys (a test checks)

_UNIT_NAMESPACE = uuid.UUID("6f1d8a52-4c3e-4b8e-9f0e-2d7c1a9b5e10")


class UnitKind(str, Enum):
    ORIGINAL = "original"
    SCHEMA = "schema"
    IMPLICIT = "implicit"
    EXPLICIT = "explicit"
    SINGLE_HOP = "single_hop"
    STAR = "star"
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
    question_only: bool = False,
) -> TextNode:
    """Serialize views (after an optional question) into one unit.

    Args:
        kind: What the unit stands for.
        views: The projected tables, in path order.
        serializer: The index's serializer.
        question: Generated question placed before the tables.
        path_id: Id of the join path the unit came from.
        key: Extra text that makes the id unique among units of the same tables.
        question_only: Embed the question alone; the serialized views reach the lexical index only
            (a star's ten headers would bury what its question says).
    """
    if not views:
        raise ValueError("A unit needs at least one table view")
    table_ids = [v.table.id for v in views]
    embedded, lexical_only = serializer.texts(views, prefix=question)
    if question_only and question:
        embedded, lexical_only = question, "\n".join(part for part in (embedded, lexical_only) if part)
    metadata: UnitMeta = {
        TABLE_IDS: table_ids,
        KIND: kind.value,
        PATH_ID: path_id,
        QUESTION: question,
        COLUMNS: {v.table.id: list(v.column_names) for v in views},
        LEXICAL_ONLY: lexical_only,
    }
    node = TextNode(
        id_=unit_id(kind, table_ids, key or (path_id or "") + (question or "")),
        text=embedded,
        metadata=dict(metadata),
    )
    node.excluded_embed_metadata_keys = list(metadata)
    node.excluded_llm_metadata_keys = list(metadata)
    return node


def original_unit(table: Table, serializer: Serializer) -> TextNode:
    """The original unit every table gets: its header and every row of its view (``max_rows``)."""
    whole = replace(serializer, embedded_rows=None)
    return make_unit(UnitKind.ORIGINAL, [whole.view(table)], whole)


def schema_unit(table: Table, serializer: Serializer) -> TextNode:
    """The table's names for the encoder: header and ``embedded_rows`` rows (its other rows reach BM25 only)."""
    return make_unit(UnitKind.SCHEMA, [serializer.view(table)], serializer)


def unit_meta(unit: BaseNode) -> UnitMeta:
    """A unit's metadata as the typed :class:`UnitMeta` (every unit :func:`make_unit` made holds each key)."""
    return cast(UnitMeta, unit.metadata)


def lexical_text(unit: BaseNode) -> str:
    """What the lexical index reads of a unit: its embedded text, then the rows only the lexical index holds."""
    text = unit.get_content(metadata_mode=MetadataMode.EMBED)
    extra = unit_meta(unit).get(LEXICAL_ONLY)
    return f"{text}\n{extra}" if extra else text


def count_kinds(units: Sequence[TextNode]) -> dict[str, int]:
    """Units per :class:`~llama_index_pearl.corpus.units.UnitKind` value, kinds with none left out."""
    counts = {kind.value: 0 for kind in UnitKind}
    for unit in units:
        counts[unit_meta(unit)[KIND]] += 1
    return {k: v for k, v in counts.items() if v}
