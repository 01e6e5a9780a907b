"""Column vectors: each column embedded on its own, and the words of every name, for a question's business words.

A question asks in words no table spells ("revenue", "customers", "genre"); a unit's text names a table and
some of its columns together, so one word of the question weighs little against it. Each column is embedded
apart, as ``table: column — description (three sample values)`` (:func:`column_text`): its meaning, what it
holds and what its source says of it. The question's content words are matched against them one by one
(:mod:`~llama_index_pearl.retrieval.answer.evidence`); the words of every table and column name are embedded here
too (:attr:`ColumnIndex.words`), so a question's word that names something needs no encoder call.

A :class:`ColumnIndex` is built with the units (a build, an insert) and persisted beside the catalog
(``columns.npz``, ``storage/catalog_files.py``). Its vectors are unit length: a dot product is a cosine.

Pipeline step: corpus (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding

from llama_index_pearl.tables.table import Table, cell_text
from llama_index_pearl.text.models import unit_rows
from llama_index_pearl.text.words import identifier_words

__all__ = ["SAMPLE_VALUES", "ColumnIndex", "column_text", "embed_texts", "name_words"]

SAMPLE_VALUES = 3  # distinct values a column's text shows
MAX_VALUE_CHARS = 30
MAX_DESCRIPTION_CHARS = 200


def column_text(table: Table, column: str) -> str:
    """The text a column is embedded as: ``invoice line: unit price — description (0.99, 1.99)``.

    >>> import pandas as pd
    >>> column_text(Table("t", pd.DataFrame({"UnitPrice": [0.99, 0.99, 1.99]}), name="InvoiceLine"), "UnitPrice")
    'invoice line: unit price (0.99, 1.99)'

    Args:
        table: The table.
        column: One of its columns.
    """
    text = f"{' '.join(identifier_words(table.name or table.id))}: {' '.join(identifier_words(column))}"
    description = table.column_descriptions.get(column)
    if description:
        text += f" — {description[:MAX_DESCRIPTION_CHARS]}"
    values = []
    for value in table.df[column].tolist():
        cell = cell_text(value)[:MAX_VALUE_CHARS]
        if cell.strip() and cell not in values:
            values.append(cell)
            if len(values) == SAMPLE_VALUES:
                break
    return f"{text} ({', '.join(values)})" if values else text


def name_words(tables: Iterable[Table]) -> list[str]:
    """Every word of the tables' names and column names, once each, in order met."""
    words: dict[str, None] = {}
    for table in tables:
        for name in (table.name or table.id, *table.columns):
            words.update(dict.fromkeys(identifier_words(name)))
    return list(words)


def embed_texts(embed_model: BaseEmbedding, texts: Sequence[str]) -> np.ndarray:
    """Unit-length text embeddings, one row per text (``(0, 0)`` for none)."""
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    return unit_rows(np.asarray(embed_model.get_text_embedding_batch(list(texts)), dtype=np.float32))


@dataclass
class ColumnIndex:
    """Each column's vector, by table, and a vector per word of the names.

    Args:
        table_ids: The table of each column, in column-vector order.
        columns: The name of each column.
        vectors: One unit-length row per column.
        words: The words of the names.
        word_vectors: One unit-length row per word.
    """

    table_ids: list[str] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    vectors: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))
    words: list[str] = field(default_factory=list)
    word_vectors: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))

    def __post_init__(self) -> None:
        if len(self.table_ids) != len(self.columns) or len(self.columns) != len(self.vectors):
            raise ValueError(
                f"{len(self.table_ids)} tables, {len(self.columns)} columns and {len(self.vectors)} column vectors"
            )
        if len(self.words) != len(self.word_vectors):
            raise ValueError(f"{len(self.words)} words and {len(self.word_vectors)} word vectors")
        self._rows: dict[str, np.ndarray] | None = None
        self._word_row = {word: i for i, word in enumerate(self.words)}

    @classmethod
    def build(cls, tables: Sequence[Table], embed_model: BaseEmbedding, known: Iterable[str] = ()) -> ColumnIndex:
        """Embed the tables' columns, and the words of their names not in ``known``.

        Args:
            tables: The tables.
            embed_model: The index's encoder.
            known: Words already embedded (an insert's index holds them).
        """
        pairs = [(t, c) for t in tables for c in t.columns]
        seen = set(known)
        words = [w for w in name_words(tables) if w not in seen]
        vectors = embed_texts(embed_model, [column_text(t, c) for t, c in pairs] + words)
        return cls(
            [t.id for t, _ in pairs],
            [c for _, c in pairs],
            vectors[: len(pairs)],
            words,
            vectors[len(pairs) :],
        )

    @property
    def dimension(self) -> int:
        """The vectors' dimension (0 when there are none)."""
        for matrix in (self.vectors, self.word_vectors):
            if matrix.size:
                return int(matrix.shape[1])
        return 0

    def rows_of(self, table_id: str) -> np.ndarray:
        """The rows of a table's columns (none for a table without column vectors)."""
        if self._rows is None:
            grouped: dict[str, list[int]] = {}
            for row, table in enumerate(self.table_ids):
                grouped.setdefault(table, []).append(row)
            self._rows = {t: np.asarray(rows, dtype=np.int64) for t, rows in grouped.items()}
        return self._rows.get(table_id, np.zeros(0, dtype=np.int64))

    def word_vector(self, word: str) -> np.ndarray | None:
        """The vector of a word of the names, ``None`` for another word."""
        row = self._word_row.get(word)
        return None if row is None else self.word_vectors[row]

    def best_columns(self, table_ids: Sequence[str], queries: np.ndarray) -> np.ndarray:
        """Each query's best cosine with a column of each table: ``(queries, tables)``, ``-1`` without columns.

        Args:
            table_ids: The tables.
            queries: Unit-length query vectors, one row each.
        """
        out = np.full((len(queries), len(table_ids)), -1.0, dtype=np.float32)
        if not len(queries) or not len(self.vectors):
            return out
        for i, table_id in enumerate(table_ids):
            rows = self.rows_of(table_id)
            if len(rows):
                out[:, i] = (self.vectors[rows] @ queries.T).max(axis=0)
        return out

    def changed(self, removed_tables: Iterable[str], added: ColumnIndex | None) -> ColumnIndex:
        """This index without the removed tables' columns, with ``added``'s columns and new words."""
        gone = set(removed_tables)
        keep = [i for i, t in enumerate(self.table_ids) if t not in gone]
        parts = [self.vectors[keep]] if len(self.vectors) else []
        table_ids = [self.table_ids[i] for i in keep]
        columns = [self.columns[i] for i in keep]
        words, word_parts = list(self.words), [self.word_vectors] if len(self.word_vectors) else []
        if added is not None:
            table_ids += added.table_ids
            columns += added.columns
            parts += [added.vectors] if len(added.vectors) else []
            new = [i for i, w in enumerate(added.words) if w not in self._word_row]
            words += [added.words[i] for i in new]
            word_parts += [added.word_vectors[new]] if new else []
        return ColumnIndex(table_ids, columns, _stacked(parts), words, _stacked(word_parts))


def _stacked(parts: list[np.ndarray]) -> np.ndarray:
    parts = [p for p in parts if len(p)]
    return np.vstack(parts).astype(np.float32) if parts else np.zeros((0, 0), dtype=np.float32)
