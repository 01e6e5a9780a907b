"""Max-pooling of unit scores to table scores (paper section 3.2), as pure functions.

Score(q, T) = max over units u with T in u.table_ids of cos(q, u). Walking unit
hits in descending score order, the first hit that names a table is that table's
max, so the first k distinct tables met are exactly the top-k tables. That is
why a store that returns its top-n units in order lets the retriever stop as soon
as k distinct tables are seen (and their ties settled, see below), and stays exact.

Tables that share their best unit (the tables of one explicit unit) tie on the
pooled score. The paper leaves their order open; we rank tied tables by their
next-best unit, so that an explicit unit matched by a question about one of its
tables ranks that table (whose own original or implicit unit scores higher) first.
Scores are unchanged.

Pipeline step: search (docs/architecture.md).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

__all__ = [
    "Memberships",
    "PooledTable",
    "UnitHit",
    "fuse_lexical",
    "lexical_candidates",
    "max_pool",
    "next_fetch_size",
    "pool_all_units",
    "pool_best_units",
    "pool_top_units",
    "ranking_is_final",
    "ranking_key",
]


@dataclass(frozen=True)
class UnitHit:
    """One unit returned by the vector store.

    Args:
        unit_id: The unit.
        table_ids: The tables it stands for.
        score: Its score for the question: its cosine, or the cosine plus lexical evidence (:func:`fuse_lexical`).
        cosine: Its cosine alone, when ``score`` is fused (``None``: ``score`` is the cosine).
    """

    unit_id: str
    table_ids: Sequence[str]
    score: float
    cosine: float | None = None


@dataclass(frozen=True)
class PooledTable:
    """One table of a ranking: the one record every search returns (FAISS, Qdrant's grouped search, other stores).

    Args:
        table_id: The table.
        score: Its pooled score: the best score of the units that stand for it (cosine plus lexical evidence).
        unit_id: The unit that gave ``score`` (of equal scores, the first in store order).
        cosine: That unit's cosine with the question alone (``score`` without lexical evidence).
        runner_up: The table's next-best unit score, where known: it orders tables tied on ``score``.
    """

    table_id: str
    score: float
    unit_id: str
    cosine: float
    runner_up: float | None = None


def ranking_key(table: PooledTable) -> tuple[float, float]:
    """Sort key of a ranking: descending score, then descending next-best unit (a table without one last)."""
    return -table.score, -(table.runner_up if table.runner_up is not None else float("-inf"))


def max_pool(hits: Iterable[UnitHit], k: int | None = None) -> list[PooledTable]:
    """Pool unit hits to tables by max score; tied tables by their next-best unit.

    Args:
        hits: Unit hits in any order.
        k: Keep at most this many tables (``None``: all).

    Returns:
        Tables by descending pooled score; among equal scores, by descending
        next-best unit score (a table with no other fetched unit last), then in
        the store's order.

    >>> hits = [UnitHit("u1", ["orders", "customers"], 0.8), UnitHit("u2", ["orders"], 0.6)]
    >>> hits.append(UnitHit("u3", ["items"], 0.7))
    >>> [(t.table_id, t.score, t.unit_id, t.runner_up) for t in max_pool(hits)]
    [('orders', 0.8, 'u1', 0.6), ('customers', 0.8, 'u1', None), ('items', 0.7, 'u3', None)]
    """
    ordered = sorted(hits, key=lambda h: -h.score)  # stable: equal scores keep input order
    best: dict[str, UnitHit] = {}
    runner_up: dict[str, float] = {}
    for hit in ordered:
        for table_id in hit.table_ids:
            if table_id not in best:
                best[table_id] = hit
            elif table_id not in runner_up and hit.unit_id != best[table_id].unit_id:
                runner_up[table_id] = float(hit.score)
    tables = [
        PooledTable(table_id, float(hit.score), hit.unit_id, float(_cosine(hit)), runner_up.get(table_id))
        for table_id, hit in best.items()
    ]
    tables.sort(key=ranking_key)
    return tables[:k] if k is not None else tables


def _cosine(hit: UnitHit) -> float:
    return hit.score if hit.cosine is None else hit.cosine


def ranking_is_final(tables: Sequence[PooledTable], k: int) -> bool:
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
        lexical: Normalised lexical scores by unit id
            (see :class:`~llama_index_pearl.retrieval.search.lexical.LexicalScorer`).
        weight: Cosine gained by the best lexical match.
    """
    return [replace(h, score=h.score + weight * lexical.get(h.unit_id, 0.0), cosine=_cosine(h)) for h in hits]


def lexical_candidates(dense_hits: Sequence[UnitHit], lexical: Mapping[str, float], weight: float, k: int) -> list[str]:
    """Unfetched units whose fused score could still reach the top ``k`` tables.

    The store returned the best units by dense score, so an unfetched unit's
    cosine is at most the lowest fetched one (the floor) and its fused score at
    most ``floor + weight * lexical``. Only units whose bound reaches the ``k``-th
    pooled (fused) table score of the fetched units can change the top ``k`` (a tie
    too: ties rank in store order, and an unfetched unit may come first);
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
    return [u for u, b in lexical.items() if u not in fetched and floor + weight * b >= kth]  # a tie may rank first


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
    """Unit -> tables and table -> units, as CSR arrays (units numbered in store order), and the numbers' ids.

    Args:
        unit_ids: The id of each unit number.
        table_ids: The id of each table number.
        unit_ptr: ``unit_tables[unit_ptr[u]:unit_ptr[u + 1]]`` are unit ``u``'s tables, in its ``table_ids`` order.
        unit_tables: Table numbers.
        table_ptr: ``table_units[table_ptr[t]:table_ptr[t + 1]]`` are table ``t``'s units, ascending.
        table_units: Unit numbers.
        table_unit_pos: For each item of ``table_units``, the table's position in that unit's ``table_ids``.
    """

    unit_ids: Sequence[str]
    table_ids: Sequence[str]
    unit_ptr: np.ndarray
    unit_tables: np.ndarray
    table_ptr: np.ndarray
    table_units: np.ndarray
    table_unit_pos: np.ndarray

    @classmethod
    def from_lists(
        cls, unit_table_lists: Sequence[Sequence[int]], table_ids: Sequence[str], unit_ids: Sequence[str]
    ) -> Memberships:
        """Build both directions from each unit's table numbers (in its ``table_ids`` order).

        Args:
            unit_table_lists: Each unit's table numbers, by unit number.
            table_ids: The id of each table number.
            unit_ids: The id of each unit number.
        """
        counts = np.fromiter((len(ts) for ts in unit_table_lists), dtype=np.int64, count=len(unit_table_lists))
        unit_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        unit_tables = np.fromiter((t for ts in unit_table_lists for t in ts), dtype=np.int64, count=int(unit_ptr[-1]))
        units = np.repeat(np.arange(len(unit_table_lists), dtype=np.int64), counts)
        positions = np.arange(len(unit_tables), dtype=np.int64) - np.repeat(unit_ptr[:-1], counts)
        order = np.lexsort((units, unit_tables))  # by table, then unit ascending
        table_counts = np.bincount(unit_tables, minlength=len(table_ids))
        table_ptr = np.concatenate([[0], np.cumsum(table_counts)]).astype(np.int64)
        return cls(unit_ids, table_ids, unit_ptr, unit_tables, table_ptr, units[order], positions[order])

    def tables_of(self, unit: int) -> np.ndarray:
        return self.unit_tables[self.unit_ptr[unit] : self.unit_ptr[unit + 1]]

    def units_of(self, table: int) -> np.ndarray:
        return self.table_units[self.table_ptr[table] : self.table_ptr[table + 1]]

    def units_within(self, inside: np.ndarray) -> np.ndarray:
        """The units every table of which is ``inside`` (a mask by table number), ascending.

        >>> m = Memberships.from_lists([[0], [0, 1], [1], [2]], ["a", "b", "c"], ["u0", "u1", "u2", "u3"])
        >>> m.units_within(np.array([True, False, True])).tolist()
        [0, 3]
        """
        counts = np.diff(self.unit_ptr)
        entry_unit = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
        outside = np.zeros(len(counts), dtype=bool)
        outside[entry_unit[~inside[self.unit_tables]]] = True
        return np.flatnonzero((counts > 0) & ~outside).astype(np.int64)

    def with_units_of_first_tables(self, units: np.ndarray, k: int) -> np.ndarray:
        """``units`` and every unit of the first ``k`` tables they name (in ``units``' order), ascending.

        A joined unit holds its tables, so the tables that rank just below a question's own tables are those its
        tables' units name: an approximate search that met a table's best unit scores all of its units to find
        them (benchmarks/README.md, "Scale").

        >>> m = Memberships.from_lists([[0], [0, 1], [1], [2]], ["a", "b", "c"], ["u0", "u1", "u2", "u3"])
        >>> m.with_units_of_first_tables(np.array([0, 3]), 1).tolist()
        [0, 1, 3]
        """
        first = dict.fromkeys(t for u in units.tolist() for t in self.tables_of(u).tolist())
        wanted = [self.units_of(t) for t in list(first)[:k]]
        return np.unique(np.concatenate([units.astype(np.int64), *wanted]))

    def pooled(self, table: int, score: float, unit: int, cosine: float, runner_up: float | None) -> PooledTable:
        """The ranking record of table number ``table``, whose best unit is number ``unit``."""
        return PooledTable(self.table_ids[table], score, self.unit_ids[unit], cosine, runner_up)


@dataclass(slots=True)
class _Seen:
    """A table met while walking a top-n fetch: its best score and unit, when first met, its next-best score."""

    score: float
    unit: int
    order: int
    runner_up: float | None = None


def pool_top_units(
    units: np.ndarray,
    scores: np.ndarray,
    memberships: Memberships,
    k: int,
    exhausted: bool,
    unit_scores: Callable[[np.ndarray], np.ndarray],
    cosines: np.ndarray | None = None,
) -> list[PooledTable] | None:
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
        cosines: Each unit's cosine by unit number, when the scores are fused with lexical evidence
            (``None``: the scores are the cosines).

    Returns:
        Tables as :func:`pool_all_units` ranks them; ``None`` when fewer than ``k``
        tables are seen or the ``k``-th table ties with ``s_n`` (pool every unit instead).
    """
    seen: dict[int, _Seen] = {}
    for unit, score in zip(units.tolist(), scores.tolist()):
        for table in memberships.tables_of(unit).tolist():
            met = seen.get(table)
            if met is None:
                seen[table] = _Seen(score, unit, len(seen))
            elif met.runner_up is None:
                met.runner_up = score
    ranked = sorted(seen.items(), key=lambda item: (-item[1].score, item[1].order))
    last = float(scores[-1]) if len(scores) else float("-inf")
    if not exhausted and (len(ranked) < k or ranked[k - 1][1].score <= last):
        return None
    cut = ranked[min(k, len(ranked)) - 1][1].score
    contenders = [(table, met) for table, met in ranked if met.score >= cut]
    groups: dict[float, list[tuple[int, _Seen]]] = {}
    for table, met in contenders:
        groups.setdefault(met.score, []).append((table, met))
    if not exhausted:
        _settle([g for g in groups.values() if len(g) > 1], memberships, unit_scores)
    contenders.sort(key=lambda item: (-item[1].score, -_or_minus_inf(item[1].runner_up), item[1].order))
    cosine = _cosine_of(cosines)
    return [memberships.pooled(t, m.score, m.unit, cosine(m.unit, m.score), m.runner_up) for t, m in contenders[:k]]


def _settle(groups: list[list[tuple[int, _Seen]]], memberships: Memberships, unit_scores: Callable) -> None:
    """Exact next-best scores of tie groups, in one ``unit_scores`` call.

    A group with any next-best unit missing from the fetch is computed whole, so
    that its members are compared on scores computed alike.
    """
    open_groups = [g for g in groups if any(m.runner_up is None and len(memberships.units_of(t)) > 1 for t, m in g)]
    if not open_groups:
        return
    own = {t: memberships.units_of(t).tolist() for g in open_groups for t, _ in g}
    wanted = list(dict.fromkeys(u for units in own.values() for u in units))
    score_of = dict(zip(wanted, np.asarray(unit_scores(np.asarray(wanted, dtype=np.int64))).tolist()))
    for group in open_groups:
        for table, met in group:
            ranked = sorted((score_of[u] for u in own[table]), reverse=True)
            met.runner_up = ranked[1] if len(ranked) > 1 else None


def _cosine_of(cosines: np.ndarray | None) -> Callable[[int, float], float]:
    """``(unit number, its score) -> its cosine``: read from ``cosines``, or the score itself when ``None``."""
    if cosines is None:
        return lambda unit, score: score
    return lambda unit, score: float(cosines[unit])


def _or_minus_inf(value: float | None) -> float:
    return float("-inf") if value is None else value


def pool_all_units(
    scores: np.ndarray, memberships: Memberships, k: int, cosines: np.ndarray | None = None
) -> list[PooledTable]:
    """Exact top-``k`` tables from every unit's score (vectorized ``max_pool`` over all units in store order).

    Args:
        scores: One score per unit number.
        memberships: Unit <-> table arrays.
        k: Tables wanted.
        cosines: Each unit's cosine, when ``scores`` are fused with lexical evidence (``None``: the scores).
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
    cosine = _cosine_of(cosines)
    return [
        memberships.pooled(
            int(tables[i]),
            float(best[i]),
            int(best_unit[i]),
            cosine(int(best_unit[i]), float(best[i])),
            None if runner[i] == -np.inf else float(runner[i]),
        )
        for i in order
    ]


def pool_best_units(
    scores: np.ndarray, memberships: Memberships, k: int, fetch: int, cosines: np.ndarray | None = None
) -> list[PooledTable]:
    """Exact top-``k`` tables from every unit's score, pooling only the best units.

    The ranking of :func:`pool_all_units` (tables, scores, matched units; a runner-up
    only where a tie needs it), but only a partial sort (linear, vectorized)
    touches every unit: the best ``fetch`` units are pooled by :func:`pool_top_units`
    (the score of any unit is at hand for tie-breaks), four times as many while
    they cannot decide, every unit at the last: on 100,000 units, a tenth of the time of pooling every
    unit (``benchmarks/README.md``, "Query latency").

    Args:
        scores: One score per unit number.
        memberships: Unit <-> table arrays.
        k: Tables wanted.
        fetch: Units pooled in the first round.
        cosines: Each unit's cosine, when ``scores`` are fused with lexical evidence (``None``: the scores).
    """
    n = len(scores)
    m = max(1, fetch)
    while m < n:
        best = np.argpartition(-scores, m - 1)[:m]
        best = best[np.lexsort((best, -scores[best]))]  # by descending score, equal scores by unit number
        pooled = pool_top_units(best, scores[best], memberships, k, False, lambda wanted: scores[wanted], cosines)
        if pooled is not None:
            return pooled
        m = next_fetch_size(m, n)
    return pool_all_units(scores, memberships, k, cosines)
