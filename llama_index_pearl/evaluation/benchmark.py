"""Retrieval metrics of a benchmark's questions (``pearl eval``).

A benchmark folder is read by :mod:`~llama_index_pearl.evaluation.benchmark_folder` (its names are
re-exported here). Metrics are pure functions over ranked table ids:

- R@k: |G ∩ top-k| / |G|, averaged over questions;
- C@k (complete recall): share of questions with G ⊆ top-k;
- PaperR@k: |G ∩ top-k| / min(k, |G|), the PEARL paper's R@k (its tables compare on this one).

- Slot R@k (the paper's adjusted recall, appendix "adjusted recall"): the tables
  named by the top-k *units* are re-ranked by each table's own best unit (a unit
  naming that table alone), and R@k is taken over that list. An explicit unit that
  names several gold tables at rank 1 counts once per table under R@k, but here
  each of its tables must earn its rank on its own evidence.

All are reported as percentages per group of questions by their number of gold tables:
``all``, ``1 table``, ``2 tables``, ``3 tables``, ``4+ tables``, and ``multi`` (2 tables or more).

Pipeline step: evaluation (docs/architecture.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from llama_index_pearl.evaluation.benchmark_folder import Benchmark, BenchQuery, load_benchmark
from llama_index_pearl.store.any_store import unit_vectors

__all__ = [
    "ANCHOR_METRICS",
    "BenchQuery",
    "Benchmark",
    "anchor_metrics",
    "complete_at_k",
    "complete_within_spare",
    "evaluate_rankings",
    "evaluate_slot_rankings",
    "format_beside",
    "group_means",
    "load_benchmark",
    "paper_recall_at_k",
    "ranking_depth",
    "recall_at_k",
    "slot_rankings",
    "time_queries",
    "unit_vectors",
]

DEFAULT_KS = (1, 2, 5, 10)
SPARE_TABLES = 2  # C@G+2: complete within the gold tables and two more


def recall_at_k(gold: Sequence[str], ranked: Sequence[str], k: int) -> float:
    """|gold ∩ top-k| / |gold|."""
    if not gold:
        return 0.0
    return len(set(gold) & set(ranked[:k])) / len(set(gold))


def paper_recall_at_k(gold: Sequence[str], ranked: Sequence[str], k: int) -> float:
    """|gold ∩ top-k| / min(k, |gold|): the PEARL paper's normalisation (a 3-table question can reach 1.0 at k=2)."""
    if not gold:
        return 0.0
    return len(set(gold) & set(ranked[:k])) / min(k, len(set(gold)))


def complete_at_k(gold: Sequence[str], ranked: Sequence[str], k: int) -> float:
    """1.0 when every gold table is in the top-k, else 0.0."""
    return float(set(gold) <= set(ranked[:k]))


def complete_within_spare(gold: Sequence[str], ranked: Sequence[str], spare: int = SPARE_TABLES) -> float:
    """1.0 when every gold table is in the top ``|gold| + spare``: what a SQL writer reads, with a few to spare."""
    return complete_at_k(gold, ranked, len(set(gold)) + spare)


def ranking_depth(queries: Sequence[BenchQuery], ks: Sequence[int]) -> int:
    """Tables to rank per question: the largest k, or the largest ``|gold| + SPARE_TABLES``."""
    return max([*ks, *(len(set(q.gold_tables)) + SPARE_TABLES for q in queries)])


GROUPS = ("all", "1 table", "2 tables", "3 tables", "4+ tables", "multi")


def _groups(n_tables: int) -> list[str]:
    """The groups of a question that needs ``n_tables`` tables."""
    groups = ["all"]
    if n_tables == 1:
        groups.append("1 table")
    elif n_tables in (2, 3):
        groups.append(f"{n_tables} tables")
    else:
        groups.append("4+ tables")
    if n_tables >= 2:
        groups.append("multi")
    return groups


def group_means(queries: Sequence[BenchQuery], scores: Sequence[Mapping[str, float]]) -> dict[str, dict[str, float]]:
    """Per-question scores (0..1) averaged by group (:data:`GROUPS`), as percentages; groups with no question are
    left out.

    Args:
        queries: The questions (their ``n_tables`` pick the groups).
        scores: One ``{metric: value}`` per question, the same metrics in the same order.

    Returns:
        ``{group: {"n": questions, metric: percent, ...}}`` in the order of ``GROUPS``.
    """
    sums: dict[str, dict[str, float]] = {}
    for query, row in zip(queries, scores):
        for group in _groups(query.n_tables):
            bucket = sums.setdefault(group, {"n": 0})
            bucket["n"] += 1
            for metric, value in row.items():
                bucket[metric] = bucket.get(metric, 0.0) + value
    metrics = {}
    for group in GROUPS:
        if group in sums:
            bucket = sums[group]
            n = int(bucket["n"])
            metrics[group] = {"n": n, **{m: round(100.0 * v / n, 2) for m, v in bucket.items() if m != "n"}}
    return metrics


def evaluate_rankings(
    queries: Sequence[BenchQuery], rankings: Sequence[Sequence[str]], ks: Sequence[int] = DEFAULT_KS
) -> dict[str, dict[str, float]]:
    """R@k, C@k, ``C@G+2`` (:func:`complete_within_spare`) and the paper's R@k (``PaperR@k``), in percent by
    group; groups with no question are left out. Rankings should hold :func:`ranking_depth` tables."""
    scores = [
        {
            **{f"R@{k}": recall_at_k(query.gold_tables, ranked, k) for k in ks},
            **{f"C@{k}": complete_at_k(query.gold_tables, ranked, k) for k in ks},
            f"C@G+{SPARE_TABLES}": complete_within_spare(query.gold_tables, ranked),
            **{f"PaperR@{k}": paper_recall_at_k(query.gold_tables, ranked, k) for k in ks},
        }
        for query, ranked in zip(queries, rankings)
    ]
    return group_means(queries, scores)


def evaluate_sets(
    queries: Sequence[BenchQuery],
    sets: Sequence[Sequence[str]],
    needed: Sequence[Sequence[str]] | None = None,
    confidences: Sequence[Sequence[tuple[str, float]]] | None = None,
    sources: Mapping[str, str | None] | None = None,
    copies: Sequence[Sequence[str | None]] | None = None,
) -> dict[str, dict[str, float]]:
    """The returned sets by group: ``Set`` = how often a set holds every gold table (percent), ``SetPrecision`` =
    the share of a set's tables that are gold (percent, averaged over questions), ``SetSize`` and ``GoldSize`` =
    mean tables in the set and in the gold (plain means, not percent); with ``needed``, ``NeededPrecision`` = the
    share of the needed tier's tables that are gold (percent); with ``confidences``, ``ECE`` = the expected
    calibration error of the confidences against gold membership (:func:`calibration_error`, a plain number);
    with ``sources``, ``Source@1`` = how often the set lies within the question's ``db`` (percent; questions with
    no ``db`` count as within), and with ``copies`` too, ``Copy@1`` = how often it does or the answer names the
    ``db`` as a copy of the database it was answered within.

    Args:
        queries: The questions.
        sets: Each question's set (the tables a retriever marks ``in_set``), in the same order.
        needed: Each question's needed tier (``set_tier == "needed"``).
        confidences: Each question's ``(table, set_confidence)`` of every returned table that has one.
        sources: Table -> its source (a benchmark's ``db``).
        copies: Each question's named copies of the database it was answered within (``route_twins``).
    """
    rows = []
    for i, (q, chosen) in enumerate(zip(queries, sets)):
        gold = set(q.gold_tables)
        row = {
            "Set": complete_at_k(q.gold_tables, list(chosen), len(chosen)),
            "SetPrecision": len(gold & set(chosen)) / len(set(chosen)) if chosen else 0.0,
            "SetSize": len(chosen),
            "GoldSize": len(gold),
        }
        if needed is not None:
            tier = set(needed[i])
            row["NeededPrecision"] = len(gold & tier) / len(tier) if tier else 0.0
        if sources is not None:
            row["Source@1"] = float(bool(chosen) and all(q.db is None or sources.get(t) == q.db for t in chosen))
            if copies is not None:
                row["Copy@1"] = max(row["Source@1"], float(q.db is not None and q.db in copies[i]))
        rows.append(row)
    metrics = group_means(queries, rows)
    for row in metrics.values():  # group_means gives percents; sizes are means
        row["SetSize"] = round(row["SetSize"] / 100.0, 2)
        row["GoldSize"] = round(row["GoldSize"] / 100.0, 2)
    if confidences is not None:
        pairs: dict[str, list[tuple[float, bool]]] = {}
        for q, given in zip(queries, confidences):
            for group in _groups(q.n_tables):
                pairs.setdefault(group, []).extend((c, t in q.gold_tables) for t, c in given)
        for group, row in metrics.items():
            row["ECE"] = round(calibration_error(pairs.get(group, [])), 4)
    return metrics


def calibration_error(pairs: Sequence[tuple[float, bool]], bins: int = 10) -> float:
    """Expected calibration error: the mean gap between confidence and how often it came true, over ``bins``
    equal-width bins of confidence, each weighted by its share of the pairs (0 without pairs).

    >>> round(calibration_error([(0.9, True), (0.9, False), (0.1, False)]), 3)
    0.3

    Args:
        pairs: ``(confidence, came true)`` pairs.
        bins: Bins over [0, 1].
    """
    if not pairs:
        return 0.0
    totals = [[0, 0.0, 0] for _ in range(bins)]
    for confidence, true in pairs:
        bucket = totals[min(int(confidence * bins), bins - 1)]
        bucket[0] += 1
        bucket[1] += confidence
        bucket[2] += int(true)
    return sum(abs(c - t) for n, c, t in totals if n) / len(pairs)


ANCHOR_METRICS = ("R@", "C@")  # what pearl eval --anchor sets beside: R@k, C@k and C@G+2


def anchor_metrics(metrics: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
    """The R@k, C@k and C@G+2 of each group (and its question count), the columns an anchor is compared on."""
    return {
        group: {key: value for key, value in row.items() if key == "n" or key.startswith(ANCHOR_METRICS)}
        for group, row in metrics.items()
    }


def format_beside(metrics: Mapping[str, Mapping[str, float]], anchor: Mapping[str, Mapping[str, float]]) -> str:
    """PEARL's R@k, C@k and C@G+2 per group, each with the anchor's (LlamaIndex's ObjectIndex) after a slash."""
    columns = [c for c in next(iter(anchor.values()), {}) if c != "n"]
    lines = [
        "beside LlamaIndex's ObjectIndex (PEARL / ObjectIndex):",
        f"{'group':<9} {'n':>5} " + " ".join(f"{c:>13}" for c in columns),
    ]
    for group, row in anchor.items():
        ours = metrics.get(group, {})
        cells = " ".join(f"{ours.get(c, float('nan')):>6.2f}/{row[c]:<6.2f}" for c in columns)
        lines.append(f"{group:<9} {row['n']:>5} {cells}")
    return "\n".join(lines)


def slot_rankings(
    unit_scores: Sequence[float], unit_tables: Sequence[Sequence[str]], ks: Sequence[int]
) -> dict[int, list[str]]:
    """Slot re-ranking of one question: for each k, the top-k units' tables by their own best unit.

    Args:
        unit_scores: Score of every unit for the question.
        unit_tables: Tables of every unit (same order).
        ks: The k values.

    Returns:
        ``{k: tables of the top-k units, best own-unit score first}``. A table
        with no unit of its own (originals ablated) is scored by its best unit.
    """
    order = np.argsort(-np.asarray(unit_scores, dtype=np.float64), kind="stable")
    own: dict[str, float] = {}
    any_unit: dict[str, float] = {}
    for i in order:
        tables = unit_tables[i]
        for table in tables:
            any_unit.setdefault(table, float(unit_scores[i]))
        if len(tables) == 1:
            own.setdefault(tables[0], float(unit_scores[i]))
    ranked = {}
    for k in ks:
        candidates = list(dict.fromkeys(t for i in order[:k] for t in unit_tables[i]))
        ranked[k] = sorted(candidates, key=lambda t: -own.get(t, any_unit[t]))
    return ranked


def evaluate_slot_rankings(
    queries: Sequence[BenchQuery], slots: Sequence[dict[int, list[str]]], ks: Sequence[int] = DEFAULT_KS
) -> dict[str, dict[str, float]]:
    """Slot R@k (percent) by group, from :func:`slot_rankings` of each question."""
    scores = [{f"SlotR@{k}": recall_at_k(q.gold_tables, slot[k], k) for k in ks} for q, slot in zip(queries, slots)]
    return group_means(queries, scores)


def time_queries(
    retrieve: Callable[[str], list[str]], questions: Sequence[str]
) -> tuple[list[list[str]], dict[str, float]]:
    """Run ``retrieve`` on each question; return rankings and latency p50/p95 (ms)."""
    rankings, latencies = [], []
    for question in questions:
        started = time.perf_counter()
        rankings.append(retrieve(question))
        latencies.append(1000.0 * (time.perf_counter() - started))
    if not latencies:
        return rankings, {"p50": 0.0, "p95": 0.0}
    p50, p95 = np.percentile(latencies, [50, 95])
    return rankings, {"p50": round(float(p50), 2), "p95": round(float(p95), 2)}
