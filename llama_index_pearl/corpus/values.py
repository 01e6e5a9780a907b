"""The values a table holds: the text cells a question may name ("Cancelled", "classic cars", "PG-13").

A question that names a value filters on the column holding it, so the table holding it is likely needed even where
no word of the question names the table (``benchmarks/README.md``, "Other forms of the confidence"). Each table's
text cells are kept in a normal form (:func:`value_form`: lower case, words only) with the catalog, built from the
rows an index reads; numbers are left out (a year or a count names no table), and so are the cells exports write for
"no value" (``NA``, ``N/A``, ``\\N``: :data:`~llama_index_pearl.joins.profiles.NULL_MARKERS`).

Pipeline step: corpus (docs/architecture.md).
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from llama_index_pearl.joins.profiles import normal_value
from llama_index_pearl.tables.table import Table, cell_text

__all__ = ["MAX_VALUES", "MAX_VALUE_CHARS", "table_values", "value_form"]

MAX_VALUE_CHARS = 60  # longer cells are prose (a description, an address), not a value a question names
MAX_VALUES = 1000  # distinct values kept of one column, in the order the rows hold them

_WORD = re.compile(r"[0-9a-z]+(?:['.-][0-9a-z]+)*")
_LETTER = re.compile(r"[a-z]")


def value_form(text: str) -> str:
    """A text as values are compared: lower case, its words joined by single spaces.

    >>> value_form("AC/DC"), value_form("  Classic   Cars "), value_form("PG-13")
    ('ac dc', 'classic cars', 'pg-13')
    """
    return " ".join(_WORD.findall(text.lower()))


def table_values(table: Table) -> list[str]:
    """The distinct text values of a table's cells in :func:`value_form`, numbers, long texts and "no value"
    markers left out.

    >>> import pandas as pd
    >>> table_values(Table("t", pd.DataFrame({"status": ["Shipped", "Cancelled", "N/A"], "n": [1, 2, 3]})))
    ['shipped', 'cancelled']

    Args:
        table: The table (its rows as read).
    """
    out: dict[str, None] = {}
    for column in table.df.columns:
        kept = 0
        for cell in _distinct_cells(table.df[column]):
            text = cell_text(cell)
            form = value_form(text)
            if not form or len(form) > MAX_VALUE_CHARS or not _LETTER.search(form) or _number(text):
                continue
            if not normal_value(text):  # a cell exports write for "no value" (NULL_MARKERS)
                continue
            if form not in out:
                out[form] = None
                kept += 1
                if kept == MAX_VALUES:
                    break
    return list(out)


def _distinct_cells(cells: pd.Series) -> list[Any]:
    """A column's distinct cells in the order they first appear: a status column of a million rows is normalised
    a few times, not a million (cells pandas cannot hash, such as lists, are read one by one)."""
    try:
        return cells.unique().tolist()
    except TypeError:
        return cells.tolist()


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
