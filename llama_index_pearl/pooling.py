"""Max-pooling of unit scores to table scores (paper section 3.2), as pure functions.

Score(q, T) = max over units u with T in u.table_ids of cos(q, u). Walking unit
hits in descending score order, the first hit that names a table is that table's
max, so the first k distinct tables met are exactly the top-k tables. That is
why a store that returns its top-n units in order lets the retriever stop as soon
as k distinct tables are seen (and their ties settled, see below), and stays exact.

Tables that share their best unit (the tables of one joined entry) tie on the
pooled score. The paper leaves their order open; we rank tied tables by their
next-best unit, so that a joined entry matched by a question about one of its
tables ranks that table (whose own original or sub-entry scores higher) first.
Scores are unchanged.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

__all__ = [
    "TableHit",
    "UnitHit",
    "fuse_lexical",
    "lexical_candidates",
    "max_pool",
    "next_fetch_size",
    "ranking_is_final",
]


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
    runner_up: float | None = None  # the table's next-best fetched unit, if any


def max_pool(hits: Iterable[UnitHit], k: int | None = None) -> list[TableHit]:
    """Pool unit hits to tables by max score; tied tables by their next-best unit.

    Args:
        hits: Unit hits in any order.
        k: Keep at most this many tables (``None``: all).

    Returns:
        Tables by descending pooled score; among equal scores, by descending
        next-best unit score (a table with no other fetched unit last), then in
        the store's order.
    """
    ordered = sorted(hits, key=lambda h: -h.score)  # stable: equal scores keep input order
    best: dict[str, TableHit] = {}
    runner_up: dict[str, float] = {}
    for hit in ordered:
        for table_id in hit.table_ids:
            if table_id not in best:
                best[table_id] = TableHit(table_id, float(hit.score), hit.unit_id)
            elif table_id not in runner_up and hit.unit_id != best[table_id].unit_id:
                runner_up[table_id] = float(hit.score)
    tables = [replace(t, runner_up=runner_up.get(t.table_id)) for t in best.values()]
    tables.sort(key=lambda t: (-t.score, -(t.runner_up if t.runner_up is not None else float("-inf"))))
    return tables[:k] if k is not None else tables


def ranking_is_final(tables: Sequence[TableHit], k: int) -> bool:
    """Whether pooling more (lower-scored) units could still change the top ``k`` tables.

    ``tables`` is the full pooled list of a top-n fetch. Unfetched units score no
    higher than any fetched one, so pooled scores are final; only the order of
    tied tables can still change, while a tied table's next-best unit is unfetched.

    Args:
        tables: All pooled tables, as :func:`max_pool` returns them.
        k: Tables wanted.
    """
    if len(tables) < k:
        return False
    counts = Counter(t.score for t in tables)
    cut = tables[k - 1].score
    return all(t.runner_up is not None for t in tables if counts[t.score] > 1 and t.score >= cut)


def next_fetch_size(current: int, n_units: int) -> int:
    """Over-fetch schedule: quadruple the unit count, capped at the corpus size."""
    return min(n_units, max(current * 4, current + 1))


def fuse_lexical(hits: Iterable[UnitHit], lexical: Mapping[str, float], weight: float) -> list[UnitHit]:
    """Each hit's score plus ``weight`` times its lexical score (``0`` for a unit sharing no term).

    Args:
        hits: Units with their dense (cosine) scores.
        lexical: Normalised lexical scores by unit id (see :class:`~llama_index_pearl.lexical.LexicalScorer`).
        weight: Cosine gained by the best lexical match.
    """
    return [replace(h, score=h.score + weight * lexical.get(h.unit_id, 0.0)) for h in hits]


def lexical_candidates(dense_hits: Sequence[UnitHit], lexical: Mapping[str, float], weight: float, k: int) -> list[str]:
    """Unfetched units whose fused score could still reach the top ``k`` tables.

    The store returned the best units by dense score, so an unfetched unit's
    cosine is at most the lowest fetched one (the floor) and its fused score at
    most ``floor + weight * lexical``. Only units whose bound exceeds the ``k``-th
    pooled (fused) table score of the fetched units can change the top ``k``;
    their exact cosine must be looked up. With fewer than ``k`` tables fetched no
    bound exists yet: fetch more instead (empty list).

    Args:
        dense_hits: The fetched units with their dense scores.
        lexical: Normalised lexical scores by unit id.
        weight: Cosine gained by the best lexical match.
        k: Tables wanted.
    """
    if not dense_hits or not lexical or weight <= 0:
        return []
    tables = max_pool(fuse_lexical(dense_hits, lexical, weight), k)
    if len(tables) < k:
        return []
    floor = min(h.score for h in dense_hits)
    kth = tables[-1].score
    fetched = {h.unit_id for h in dense_hits}
    return [u for u, b in lexical.items() if u not in fetched and floor + weight * b > kth]
