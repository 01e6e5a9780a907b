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

Pipeline step: retrieval (docs/architecture.md).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

__all__ = [
    "Memberships",
    "Pooled",
    "TableHit",
    "UnitHit",
    "fuse_lexical",
    "lexical_candidates",
    "max_pool",
    "next_fetch_size",
    "pool_all_units",
    "pool_best_units",
    "pool_top_units",
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
    """Whether the top ``k`` tables are final: pooling more (lower-scored) units cannot change them.

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
        lexical: Normalised lexical scores by unit id (see :class:`~llama_index_pearl.retrieval.lexical.LexicalScorer`).
        weight: Cosine gained by the best lexical match.
    """
    return [replace(h, score=h.score + weight * lexical.get(h.unit_id, 0.0)) for h in hits]


def lexical_candidates(dense_hits: Sequence[UnitHit], lexical: Mapping[str, float], weight: float, k: int) -> list[str]:
    """Unfetched units whose fused score could still reach the top ``k`` tables.

    The store returned the best units by dense score, so an unfetched unit's
    cosine is at most the lowest fetched one (the floor) and its fused score at
    most ``floor + weight * lexical``. Only units whose bound exceeds the ``k``-th
    pooled (fused) table score of the fetched units can change the top ``k``;
    while any is left, fetch more. With fewer than ``k`` tables fetched no bound
    exists yet: fetch more instead (empty list).

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


# ---------------------------------------------------------------------------
# Exact pooling over a store's top-n, settled from stored vectors (no over-fetch)
# ---------------------------------------------------------------------------
#
# Units and tables are numbered; ``Memberships`` holds unit -> tables and
# table -> units as CSR arrays. Units are numbered in store order, which breaks
# exact score ties (the lower unit first), so a ranking is a pure function of
# the unit scores: the one ``max_pool`` gives over all units listed in that order.


@dataclass(frozen=True)
class Memberships:
    """Unit -> tables and table -> units, as CSR arrays (units numbered in store order).

    Args:
        unit_ptr: ``unit_tables[unit_ptr[u]:unit_ptr[u + 1]]`` are unit ``u``'s tables, in its ``table_ids`` order.
        unit_tables: Table numbers.
        table_ptr: ``table_units[table_ptr[t]:table_ptr[t + 1]]`` are table ``t``'s units, ascending.
        table_units: Unit numbers.
        table_unit_pos: For each entry of ``table_units``, the table's position in that unit's ``table_ids``.
    """

    unit_ptr: np.ndarray
    unit_tables: np.ndarray
    table_ptr: np.ndarray
    table_units: np.ndarray
    table_unit_pos: np.ndarray

    @classmethod
    def from_lists(cls, unit_table_lists: Sequence[Sequence[int]], n_tables: int) -> Memberships:
        """Build both directions from each unit's table numbers (in its ``table_ids`` order)."""
        counts = np.fromiter((len(ts) for ts in unit_table_lists), dtype=np.int64, count=len(unit_table_lists))
        unit_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        unit_tables = np.fromiter((t for ts in unit_table_lists for t in ts), dtype=np.int64, count=int(unit_ptr[-1]))
        units = np.repeat(np.arange(len(unit_table_lists), dtype=np.int64), counts)
        positions = np.arange(len(unit_tables), dtype=np.int64) - np.repeat(unit_ptr[:-1], counts)
        order = np.lexsort((units, unit_tables))  # by table, then unit ascending
        table_counts = np.bincount(unit_tables, minlength=n_tables)
        table_ptr = np.concatenate([[0], np.cumsum(table_counts)]).astype(np.int64)
        return cls(unit_ptr, unit_tables, table_ptr, units[order], positions[order])

    def tables_of(self, unit: int) -> np.ndarray:
        return self.unit_tables[self.unit_ptr[unit] : self.unit_ptr[unit + 1]]

    def units_of(self, table: int) -> np.ndarray:
        return self.table_units[self.table_ptr[table] : self.table_ptr[table + 1]]


@dataclass(frozen=True)
class Pooled:
    """One table of an exact ranking, by number: pooled score, the unit that gave it, next-best unit score."""

    table: int
    score: float
    unit: int
    runner_up: float | None


def pool_top_units(
    units: np.ndarray,
    scores: np.ndarray,
    memberships: Memberships,
    k: int,
    exhausted: bool,
    unit_scores: Callable[[np.ndarray], np.ndarray],
) -> list[Pooled] | None:
    """The exact top-``k`` tables from a store's top-n units, or ``None`` when the top-n cannot tell.

    Unfetched units score at most the last fetched score ``s_n``, so tables whose
    best unit beats ``s_n`` have final scores, and every table that could reach the
    top ``k`` is seen once the ``k``-th table scores above ``s_n``. Tied tables are
    ordered by their next-best unit: read off the top-n when fetched, else computed
    for the tied tables only by ``unit_scores`` (from the stored vectors).

    Args:
        units: Fetched unit numbers, by descending score, equal scores by unit number.
        scores: Their scores.
        memberships: Unit <-> table arrays.
        k: Tables wanted.
        exhausted: The fetch holds every unit of the store.
        unit_scores: Scores of any units for the same query (one call per tie group).

    Returns:
        Tables as :func:`pool_all_units` ranks them; ``None`` when fewer than ``k``
        tables are seen or the ``k``-th table ties with ``s_n`` (pool every unit instead).
    """
    seen: dict[int, list[Any]] = {}  # table -> [score, unit, first-seen order, runner_up]
    for unit, score in zip(units.tolist(), scores.tolist()):
        for table in memberships.tables_of(unit).tolist():
            entry = seen.get(table)
            if entry is None:
                seen[table] = [score, unit, len(seen), None]
            elif entry[3] is None:
                entry[3] = score
    ranked = sorted(seen.items(), key=lambda item: (-item[1][0], item[1][2]))
    last = float(scores[-1]) if len(scores) else float("-inf")
    if not exhausted and (len(ranked) < k or ranked[k - 1][1][0] <= last):
        return None
    cut = ranked[min(k, len(ranked)) - 1][1][0]
    contenders = [(table, entry) for table, entry in ranked if entry[0] >= cut]
    groups: dict[float, list[tuple[int, list[Any]]]] = {}
    for table, entry in contenders:
        groups.setdefault(entry[0], []).append((table, entry))
    if not exhausted:
        _settle([g for g in groups.values() if len(g) > 1], memberships, unit_scores)
    contenders.sort(key=lambda item: (-item[1][0], -_or_minus_inf(item[1][3]), item[1][2]))
    return [Pooled(table, entry[0], entry[1], entry[3]) for table, entry in contenders[:k]]


def _settle(groups: list[list[tuple[int, list[Any]]]], memberships: Memberships, unit_scores: Callable) -> None:
    """Exact next-best scores of tie groups, in one ``unit_scores`` call.

    A group with any next-best unit missing from the fetch is computed whole, so
    that its members are compared on scores computed alike.
    """
    open_groups = [g for g in groups if any(e[3] is None and len(memberships.units_of(t)) > 1 for t, e in g)]
    if not open_groups:
        return
    own = {t: memberships.units_of(t).tolist() for g in open_groups for t, _ in g}
    wanted = list(dict.fromkeys(u for units in own.values() for u in units))
    score_of = dict(zip(wanted, np.asarray(unit_scores(np.asarray(wanted, dtype=np.int64))).tolist()))
    for group in open_groups:
        for table, entry in group:
            ranked = sorted((score_of[u] for u in own[table]), reverse=True)
            entry[3] = ranked[1] if len(ranked) > 1 else None


def _or_minus_inf(value: float | None) -> float:
    return float("-inf") if value is None else value


def pool_all_units(scores: np.ndarray, memberships: Memberships, k: int) -> list[Pooled]:
    """Exact top-``k`` tables from every unit's score (vectorized ``max_pool`` over all units in store order).

    Args:
        scores: One score per unit number.
        memberships: Unit <-> table arrays.
        k: Tables wanted.
    """
    counts = np.diff(memberships.table_ptr)
    tables = np.flatnonzero(counts)
    if not len(tables):
        return []
    starts = memberships.table_ptr[:-1][tables]
    values = scores[memberships.table_units].astype(np.float64)
    best = np.maximum.reduceat(values, starts)
    positions = np.arange(len(values))
    is_best = values == np.repeat(best, counts[tables])
    first = np.minimum.reduceat(np.where(is_best, positions, len(values)), starts)
    rest = values.copy()
    rest[first] = -np.inf
    runner = np.maximum.reduceat(rest, starts)
    runner[counts[tables] == 1] = -np.inf
    best_unit = memberships.table_units[first]
    order = np.lexsort((memberships.table_unit_pos[first], best_unit, -runner, -best))[:k]
    return [
        Pooled(int(tables[i]), float(best[i]), int(best_unit[i]), None if runner[i] == -np.inf else float(runner[i]))
        for i in order
    ]


def pool_best_units(scores: np.ndarray, memberships: Memberships, k: int, fetch: int) -> list[Pooled]:
    """Exact top-``k`` tables from every unit's score, pooling only the best units.

    The ranking of :func:`pool_all_units` (tables, scores, matched units; a runner-up
    only where a tie needs it), but only a partial sort (linear, vectorized)
    touches every unit: the best ``fetch`` units are pooled by :func:`pool_top_units`
    (the score of any unit is at hand for tie-breaks), four times as many while
    they cannot decide, every unit at the last. On the 100,000-unit synthetic index
    of ``benchmarks/latency.py`` (2-core machine), pooling every unit took 8.8-9.9 ms
    p50, this 0.4-0.7 ms, for the same tables, scores and matched units.

    Args:
        scores: One score per unit number.
        memberships: Unit <-> table arrays.
        k: Tables wanted.
        fetch: Units pooled in the first round.
    """
    n = len(scores)
    m = max(1, fetch)
    while m < n:
        best = np.argpartition(-scores, m - 1)[:m]
        best = best[np.lexsort((best, -scores[best]))]  # by descending score, equal scores by unit number
        pooled = pool_top_units(best, scores[best], memberships, k, False, lambda wanted: scores[wanted])
        if pooled is not None:
            return pooled
        m = next_fetch_size(m, n)
    return pool_all_units(scores, memberships, k)
