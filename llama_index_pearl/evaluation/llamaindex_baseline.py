"""The table retriever LlamaIndex users already have, as the anchor of every retrieval report.

LlamaIndex's text-to-SQL recipe (``SQLTableRetrieverQueryEngine``, ``NLSQLRetriever``)
chooses tables with an ``ObjectIndex`` over ``SQLTableSchema`` objects mapped by
``SQLTableNodeMapping``: one vector per table, of the schema text LlamaIndex writes
(``Schema of table x: Table 'x' has columns: a (INTEGER), b (TEXT), ...``), no rows.
This module builds exactly that, through LlamaIndex's own classes, over one SQLite
database holding a benchmark's tables (named by their ids, so a corpus's repeated names
stay apart), and ranks questions with ``ObjectIndex.as_retriever``.

Column types are what a database would declare for the values: ``INTEGER`` when every
non-empty cell is an integer, ``REAL`` when every one is a number, else ``TEXT``.

Pipeline step: evaluation (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from llama_index.core.base.embeddings.base import BaseEmbedding

from llama_index_pearl.tables.table import Table

__all__ = ["ObjectIndexRanker", "column_sql_type", "sqlite_database"]


def column_sql_type(values: pd.Series) -> str:
    """``INTEGER``, ``REAL`` or ``TEXT``: the narrowest type that holds every non-empty cell."""
    cells = values.dropna().astype(str).str.strip()
    cells = cells[cells != ""]
    if cells.empty:
        return "TEXT"
    numbers = pd.to_numeric(cells, errors="coerce")
    if numbers.isna().any():
        return "TEXT"
    return "INTEGER" if (numbers == numbers.round()).all() and not cells.str.contains(r"[.eE]").any() else "REAL"


def sqlite_database(tables: Sequence[Table], path: str | Path) -> Any:
    """A LlamaIndex ``SQLDatabase`` over a new SQLite file holding ``tables`` (named by id, typed by values).

    Args:
        tables: The tables; each becomes one SQL table named by its id.
        path: The SQLite file to write (replaced if it exists).
    """
    import sqlalchemy as sa
    from llama_index.core import SQLDatabase

    sql_types = {"INTEGER": sa.Integer(), "REAL": sa.Float(), "TEXT": sa.Text()}
    target = Path(path)
    target.unlink(missing_ok=True)
    engine = sa.create_engine(f"sqlite:///{target}")
    with engine.begin() as connection:
        for table in tables:
            frame = table.df.copy()
            types = {str(c): column_sql_type(frame[c]) for c in frame.columns}
            for column, kind in types.items():
                if kind != "TEXT":
                    frame[column] = pd.to_numeric(frame[column].replace("", None))
            frame.to_sql(table.id, connection, index=False, dtype={c: sql_types[t] for c, t in types.items()})
    return SQLDatabase(engine)


class ObjectIndexRanker:
    """``ObjectIndex`` + ``SQLTableNodeMapping`` + ``VectorStoreIndex`` over a ``SQLDatabase``'s tables.

    Args:
        sql_database: The database (every table it names is indexed).
        embed_model: The encoder (the same one PEARL is measured with).
    """

    def __init__(self, sql_database: Any, embed_model: BaseEmbedding) -> None:
        from llama_index.core import VectorStoreIndex
        from llama_index.core.objects import ObjectIndex, SQLTableNodeMapping, SQLTableSchema

        schemas = [SQLTableSchema(table_name=name) for name in sorted(sql_database.get_usable_table_names())]
        self._index = ObjectIndex.from_objects(
            schemas, SQLTableNodeMapping(sql_database), index_cls=VectorStoreIndex, embed_model=embed_model
        )
        self.n_tables = len(schemas)

    def rank(self, question: str, k: int) -> list[str]:
        """The names of the top-``k`` tables for ``question``, best first."""
        retriever = self._index.as_retriever(similarity_top_k=k)
        return list(dict.fromkeys(schema.table_name for schema in retriever.retrieve(question)))
