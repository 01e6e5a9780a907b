"""Path selection: lazy greedy maximisation of quality plus table coverage (paper section 3.1.1).

The marginal gain of a path given the selected set S is
``g(p | S) = f(p) + lambda_div * |tables(p) - tables(S)|``. It only shrinks as S
grows (the coverage term is submodular), so a gain computed earlier is an upper
bound: the lazy greedy keeps those bounds in a heap and re-evaluates only the
top, instead of rescanning every candidate at every step.

Pipeline step: joins (docs/architecture.md).
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

__all__ = ["LAMBDA_DIV", "default_budget", "lazy_greedy", "resolve_budget", "split_by_budget"]

P = TypeVar("P")

LAMBDA_DIV = 0.1  # the paper's diversity weight λ_div (section 3.1.1)


def default_budget(n_tables: int) -> int:
    """The paper's default budget K = floor(|C| / 2), at least 1.

    Args:
        n_tables: Number of tables in the corpus.
    """
    return max(1, n_tables // 2)


def resolve_budget(budget: int | None, n_tables: int, cost_per_path: float) -> int | None:
    """Paths per pool a build selects: the budget follows what a path costs.

    A free generator (the heuristic: no LLM call) indexes every candidate path, which
    raised R@2 on every dev set measured (benchmarks/README.md, "Constants"). A paid
    generator (an LLM) gets the paper's cost cap floor(|C|/2), which
    ``PearlTableIndex.estimate_cost`` shows before anything is spent.

    Args:
        budget: The user's budget (wins when given).
        n_tables: Tables in the corpus.
        cost_per_path: The generator's cost of one path (``QueryGenerator.cost_per_path``).

    Returns:
        Paths per pool, or ``None`` for no cap.

    Raises:
        ValueError: A negative budget.

    >>> resolve_budget(None, 40, cost_per_path=0.0), resolve_budget(None, 40, cost_per_path=1.0)
    (None, 20)
    >>> resolve_budget(5, 40, cost_per_path=1.0)
    5
    """
    if budget is not None:
        if budget < 0:
            raise ValueError(f"budget must be >= 0 paths per pool, got {budget}")
        return budget
    return None if cost_per_path <= 0 else default_budget(n_tables)


def lazy_greedy(
    candidates: Sequence[P],
    budget: int | None,
    lambda_div: float = LAMBDA_DIV,
    *,
    score: Callable[[P], float] = lambda p: p.score,  # type: ignore[attr-defined]
    tables: Callable[[P], Iterable[Hashable]] = lambda p: p.tables,  # type: ignore[attr-defined]
    covered: Iterable[Hashable] = (),
) -> list[P]:
    """Pick up to ``budget`` candidates maximising ``f(p) + lambda_div * |new tables covered|``.

    Ties are broken by input order, so the result is deterministic.

    Args:
        candidates: Paths (anything with a score and a set of tables).
        budget: Maximum number of picks (K); ``None`` ranks every candidate.
        lambda_div: Weight of newly covered tables.
        score: Base score f(p) of a candidate.
        tables: Tables a candidate covers.
        covered: Tables already covered by earlier picks (incremental indexing:
            the paths kept from the existing index), so coverage gains count only new tables.

    Returns:
        The selected candidates in selection order.
    """
    if budget is None:
        budget = len(candidates)
    if budget <= 0 or not candidates:
        return []
    covers = [frozenset(tables(p)) for p in candidates]
    bases = [float(score(p)) for p in candidates]
    seen: set[Hashable] = set(covered)
    heap = [(-(bases[i] + lambda_div * len(covers[i] - seen)), i) for i in range(len(candidates))]
    heapq.heapify(heap)
    chosen: list[P] = []
    while heap and len(chosen) < budget:
        _, i = heapq.heappop(heap)
        gain = bases[i] + lambda_div * len(covers[i] - seen)
        # A stale bound is re-pushed with its fresh gain; the candidate wins only
        # when its fresh gain still beats every other (upper-bound) entry.
        if heap and gain < -heap[0][0] - 1e-12:
            heapq.heappush(heap, (-gain, i))
            continue
        chosen.append(candidates[i])
        seen |= covers[i]
    return chosen


def split_by_budget(
    paths: Iterable[P],
    budget: int | None,
    *,
    pool: Callable[[P], Hashable] = lambda p: p.kind,  # type: ignore[attr-defined]
    used: Mapping[Hashable, int] | None = None,
) -> tuple[list[P], list[P]]:
    """The first ``budget`` paths of each pool, in the given (selection) order, and the rest.

    Args:
        paths: Ranked paths, e.g. :func:`lazy_greedy`'s output for each pool.
        budget: Paths per pool for the paid generator (``None``: all of them).
        pool: The pool a path belongs to (explicit or implicit).
        used: Budget already spent per pool (the paths an index already holds).

    Returns:
        ``(within budget, beyond budget)``, each in input order.
    """
    paths = list(paths)
    if budget is None:
        return paths, []
    taken: Counter[Hashable] = Counter(used or {})
    within, beyond = [], []
    for path in paths:
        key = pool(path)
        if taken[key] < budget:
            within.append(path)
            taken[key] += 1
        else:
            beyond.append(path)
    return within, beyond
