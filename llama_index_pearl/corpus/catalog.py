"""The catalog of an index: what a query reads besides the vectors, without the units' texts or the tables' rows.

For each table, its text for an LLM (``PearlConfig.table_text_chars``, rendered once when the
table enters the index); for each unit, its kind, its tables and its generated question, in
unit order. A retrieval needs nothing else of the tables and units, so a loaded index reads the
catalog (and the persisted lexical index) at once and the units' texts and the tables' rows
only when something else asks for them (``storage/persistence.py``).

Pipeline step: corpus (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
from llama_index.core.schema import BaseNode

from llama_index_pearl.corpus.columns import ColumnIndex
from llama_index_pearl.corpus.units import KIND, QUESTION, TABLE_IDS, unit_meta
from llama_index_pearl.corpus.values import table_values
from llama_index_pearl.tables.table import Table
from llama_index_pearl.text.serialization import Serializer

__all__ = ["Catalog", "UnitInfo"]


class UnitInfo(NamedTuple):
    """What a retrieval reads of one unit: its kind, the tables it stands for, its generated question."""

    kind: str | None
    table_ids: list[str]
    question: str | None

    @classmethod
    def of(cls, unit: BaseNode) -> UnitInfo:
        meta = unit_meta(unit)
        return cls(meta.get(KIND), list(meta.get(TABLE_IDS, [])), meta.get(QUESTION))


@dataclass
class Catalog:
    """Each table's text for an LLM, and each unit's :class:`UnitInfo` in unit order.

    Args:
        texts: Table id -> its text (tables missing here are rendered when first asked for).
        units: Unit id -> what a retrieval reads of it, in the order of the index's units.
        sources: Table id -> its source (``Table.source``, the provenance a scope reads); a table missing here
            has none.
        columns: Each column's vector and the words of the names (:mod:`~llama_index_pearl.corpus.columns`);
            empty for an index persisted before they existed.
        values: Table id -> the text values its rows hold (:func:`~llama_index_pearl.corpus.values.table_values`),
            immutable, so a retrieval state copies the mapping and not the values; a table missing here holds none
            known (an index persisted before values were kept).
    """

    texts: dict[str, str] = field(default_factory=dict)
    units: dict[str, UnitInfo] = field(default_factory=dict)
    sources: dict[str, str | None] = field(default_factory=dict)
    columns: ColumnIndex = field(default_factory=ColumnIndex)
    values: dict[str, frozenset[str]] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        tables: Iterable[Table],
        units: Iterable[BaseNode],
        serializer: Serializer,
        max_chars: int,
        columns: ColumnIndex | None = None,
    ) -> Catalog:
        """The catalog of tables and units: every table's text rendered, every unit's info read.

        Args:
            tables: The tables.
            units: The units, in the index's order.
            serializer: The index's serializer (rows per view, titles).
            max_chars: ``PearlConfig.table_text_chars``.
            columns: The tables' column vectors (``None``: none).
        """
        tables = list(tables)
        return cls(
            {t.id: serializer.table_text(t, max_chars) for t in tables},
            {u.node_id: UnitInfo.of(u) for u in units},
            {t.id: t.source for t in tables if t.source is not None},
            columns if columns is not None else ColumnIndex(),
            {t.id: frozenset(held) for t in tables if (held := table_values(t))},
        )

    @classmethod
    def of_units(cls, tables: Iterable[Table], units: Iterable[BaseNode]) -> Catalog:
        """The catalog of units given without one (an index made of hand-written units): every unit's info read,
        no table text rendered yet (the index renders each when first asked for).

        Args:
            tables: The tables.
            units: The units, in the index's order.
        """
        sources = {t.id: t.source for t in tables if t.source is not None}
        return cls(units={u.node_id: UnitInfo.of(u) for u in units}, sources=sources)

    def change(
        self,
        removed_tables: Iterable[str],
        removed_units: Iterable[str],
        texts: Mapping[str, str],
        units: Iterable[BaseNode],
        sources: Mapping[str, str | None] | None = None,
        columns: ColumnIndex | None = None,
        values: Mapping[str, Iterable[str]] | None = None,
    ) -> None:
        """Apply an update: drop removed tables and units, add the new ones (in place)."""
        removed_tables = list(removed_tables)
        self.columns = self.columns.changed(removed_tables, columns)
        for table_id in removed_tables:
            self.texts.pop(table_id, None)
            self.sources.pop(table_id, None)
            self.values.pop(table_id, None)
        self.values.update((t, frozenset(v)) for t, v in (values or {}).items() if v)
        self.sources.update((t, s) for t, s in (sources or {}).items() if s is not None)
        for unit_id in removed_units:
            self.units.pop(unit_id, None)
        self.texts.update(texts)
        self.units.update((u.node_id, UnitInfo.of(u)) for u in units)

    def to_dict(self) -> dict[str, Any]:
        """JSON of the catalog, one list per field (few containers to read back: a load allocates little).

        ``{"texts": {table id: text}, "sources": {table id: source}, "units": {"ids", "kinds", "questions", "tables",
        "table_counts"}, "columns": {"tables", "columns", "words"}, "values": {table id: values}}``: ``tables``
        holds every unit's tables as numbers in ``texts``' order, ``table_counts`` how many each; ``sources`` and
        ``values`` only the tables that have some; ``columns`` names what each column vector and word vector stands
        for (the vectors are ``columns.npz``'s).
        """
        number = {table_id: i for i, table_id in enumerate(self.texts)}
        infos = self.units.values()
        return {
            "columns": {
                "tables": [number[t] for t in self.columns.table_ids],
                "columns": self.columns.columns,
                "words": self.columns.words,
            },
            "texts": self.texts,
            "sources": {t: s for t, s in self.sources.items() if s is not None},
            "values": {t: sorted(v) for t, v in self.values.items() if v},
            "units": {
                "ids": list(self.units),
                "kinds": [info.kind for info in infos],
                "questions": [info.question for info in infos],
                "tables": [number[t] for info in infos for t in info.table_ids],
                "table_counts": [len(info.table_ids) for info in infos],
            },
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Catalog:
        """Read :meth:`to_dict`'s output (a malformed one raises ``KeyError``, ``TypeError`` or ``ValueError``)."""
        texts = data["texts"]
        if not isinstance(texts, dict) or not all(isinstance(v, str) for v in texts.values()):
            raise ValueError("texts must map table ids to texts")
        sources = data.get("sources", {})
        if not isinstance(sources, dict) or not all(t in texts and isinstance(s, str) for t, s in sources.items()):
            raise ValueError("sources must map table ids of texts to their sources")
        values = data.get("values", {})
        if not isinstance(values, dict) or not all(
            t in texts and isinstance(v, list) and all(isinstance(x, str) for x in v) for t, v in values.items()
        ):
            raise ValueError("values must map table ids of texts to lists of texts")
        names = list(texts)
        columns = data["units"]
        ids, kinds, questions = columns["ids"], columns["kinds"], columns["questions"]
        counts, numbers = columns["table_counts"], columns["tables"]
        if not len(ids) == len(kinds) == len(questions) == len(counts) or sum(counts) != len(numbers):
            raise ValueError("the unit fields differ in length")
        units = {}
        start = 0
        for unit_id, kind, question, count in zip(ids, kinds, questions, counts):
            tables = numbers[start : start + count]
            if count < 1 or not all(isinstance(i, int) and 0 <= i < len(names) for i in tables):
                raise ValueError(f"unit {unit_id} names tables {tables}, the catalog lists {len(names)}")
            units[unit_id] = UnitInfo(kind, [names[i] for i in tables], question)
            start += count
        held = {t: frozenset(v) for t, v in values.items()}
        return cls(dict(texts), units, dict(sources), _column_names(data.get("columns"), names), held)


def _column_names(data: Any, tables: list[str]) -> ColumnIndex:
    """The names of :meth:`Catalog.to_dict`'s ``columns``, without vectors (``columns.npz`` holds them)."""
    if data is None:
        return ColumnIndex()
    numbers, columns, words = data["tables"], data["columns"], data["words"]
    if not isinstance(numbers, list) or not isinstance(columns, list) or not isinstance(words, list):
        raise ValueError("columns must hold the lists tables, columns and words")
    if len(numbers) != len(columns):
        raise ValueError(f"columns names {len(columns)} columns of {len(numbers)} tables")
    if not all(isinstance(i, int) and 0 <= i < len(tables) for i in numbers):
        raise ValueError(f"columns name tables the catalog does not list ({len(tables)})")
    if not all(isinstance(x, str) for x in (*columns, *words)):
        raise ValueError("columns and words must be texts")
    # vectors of no dimension until columns.npz's are read (storage.catalog_files.read_columns)
    return ColumnIndex(
        [tables[i] for i in numbers],
        columns,
        np.zeros((len(columns), 0), dtype=np.float32),
        words,
        np.zeros((len(words), 0), dtype=np.float32),
    )
