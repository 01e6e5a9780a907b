"""Tables known by their header alone, as a schema without rows gives them to the joins step."""

from __future__ import annotations

import pandas as pd

from llama_index_pearl.tables.table import Table


def header(table_id: str, *columns: str, source: str | None = "db", types: dict[str, str] | None = None) -> Table:
    """A table known by its header only (optionally with declared pandas dtypes)."""
    df = pd.DataFrame({c: pd.Series([], dtype=(types or {}).get(c, object)) for c in columns})
    return Table(table_id, df, source=source)
