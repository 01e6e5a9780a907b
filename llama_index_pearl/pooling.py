"""Max-pooling of unit scores to table scores (paper section 3.2), as pure functions.

Score(q, T) = max over units u with T in u.table_ids of cos(q, u). Walking unit
hits in descending score order, the first hit that names a table is that table's
max, so the first k distinct tables met are exactly the top-k tables. That is
why a store that returns its top-n units in order lets the retriever stop as soon
as k distinct tables are seen, and stays exact.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["TableHit", "UnitHit", "max_pool", "next_fetch_size"]


@dataclass(frozen=True)
class UnitHit:
    """One unit returned by the vector store."""

    unit_id: str
    table_ids: Sequence[str]
    score: float


@dataclass(frozen=True)
class TableHit:
    """One table's pooled score and the unit that gave it."""

    table_id: str
    score: float
    unit_id: str


def max_pool(hits: Iterable[UnitHit], k: int | None = None) -> list[TableHit]:
    """Pool unit hits to tables by max score; ties keep the store's order.

    Args:
        hits: Unit hits in any order.
        k: Keep at most this many tables (``None``: all).

    Returns:
        Tables by descending pooled score.
    """
    ordered = sorted(hits, key=lambda h: -h.score)  # stable: equal scores keep input order
    best: dict[str, TableHit] = {}
    for hit in ordered:
        for table_id in hit.table_ids:
            if table_id not in best:
                best[table_id] = TableHit(table_id, float(hit.score), hit.unit_id)
        if k is not None and len(best) >= k:
            break
    return list(best.values())[:k] if k is not None else list(best.values())


def next_fetch_size(current: int, n_units: int) -> int:
    """Over-fetch schedule: quadruple the unit count, capped at the corpus size."""
    return min(n_units, max(current * 4, current + 1))
