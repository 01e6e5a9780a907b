"""Exact pooling from a store's top-n units equals brute-force ``max_pool`` over every unit, ties included."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llama_index_pearl.retrieval.search.pooling import (
    Memberships,
    UnitHit,
    max_pool,
    pool_all_units,
    pool_best_units,
    pool_top_units,
)


@st.composite
def corpora(draw):
    """Small corpora full of exact ties: few distinct scores, joined units, identical single-unit tables."""
    n_tables = draw(st.integers(1, 8))
    n_units = draw(st.integers(1, 30))
    unit_tables = [
        draw(st.lists(st.integers(0, n_tables - 1), min_size=1, max_size=3, unique=True)) for _ in range(n_units)
    ]
    scores = np.asarray(
        draw(st.lists(st.sampled_from([0.1, 0.25, 0.5, 0.75, 0.9]), min_size=n_units, max_size=n_units)),
        dtype=np.float32,
    )
    return n_tables, unit_tables, scores


def numbered(unit_tables, n_tables):
    """Memberships of units and tables named by their numbers."""
    return Memberships.from_lists(
        unit_tables, [str(t) for t in range(n_tables)], [str(u) for u in range(len(unit_tables))]
    )


def brute_force(unit_tables, scores, k):
    hits = [UnitHit(str(u), [str(t) for t in ts], float(s)) for u, (ts, s) in enumerate(zip(unit_tables, scores))]
    return as_tuples(max_pool(hits, k))


def top_n(scores, n):
    order = np.lexsort((np.arange(len(scores)), -scores))[:n]
    return order, scores[order]


def as_tuples(pooled):
    return [(int(p.table_id), p.score, int(p.unit_id)) for p in pooled]


@settings(max_examples=300, deadline=None)
@given(corpora(), st.integers(1, 6), st.integers(1, 30))
def test_pooling_a_top_n_fetch_equals_brute_force_or_defers(corpus, k, n):
    n_tables, unit_tables, scores = corpus
    memberships = numbered(unit_tables, n_tables)
    units, fetched = top_n(scores, n)
    calls = []

    def unit_scores(wanted):
        calls.append(len(wanted))
        return scores[wanted]

    pooled = pool_top_units(units, fetched, memberships, k, len(units) == len(scores), unit_scores)
    if pooled is not None:
        assert as_tuples(pooled) == brute_force(unit_tables, scores, k)


@settings(max_examples=300, deadline=None)
@given(corpora(), st.integers(1, 6))
def test_pooling_every_unit_vectorized_equals_brute_force(corpus, k):
    n_tables, unit_tables, scores = corpus
    memberships = numbered(unit_tables, n_tables)
    assert as_tuples(pool_all_units(scores, memberships, k)) == brute_force(unit_tables, scores, k)


@settings(max_examples=300, deadline=None)
@given(corpora(), st.integers(1, 6), st.integers(1, 30))
def test_pooling_the_best_units_of_every_score_equals_brute_force(corpus, k, fetch):
    n_tables, unit_tables, scores = corpus
    memberships = numbered(unit_tables, n_tables)
    assert as_tuples(pool_best_units(scores, memberships, k, fetch)) == brute_force(unit_tables, scores, k)


def test_pooling_the_best_units_never_pools_every_unit_when_the_best_decide(monkeypatch):
    import llama_index_pearl.retrieval.search.pooling as pooling

    monkeypatch.setattr(pooling, "pool_all_units", lambda *args: pytest.fail("pooled every unit"))
    scores = np.linspace(1.0, 0.0, 1000, dtype=np.float32)
    memberships = numbered([[u] for u in range(1000)], 1000)
    pooled = pooling.pool_best_units(scores, memberships, 3, fetch=8)
    assert [(p.table_id, p.unit_id) for p in pooled] == [("0", "0"), ("1", "1"), ("2", "2")]


def test_tables_of_one_explicit_unit_are_settled_from_stored_scores_without_fetching_more():
    # units: 0 joined(a, b, c) 0.9; 1..20 other tables 0.8; 21 own(b) 0.3; 22 own(a) 0.2; c has no other unit
    unit_tables = [[0, 1, 2]] + [[3 + i] for i in range(20)] + [[1], [0]]
    scores = np.asarray([0.9] + [0.8] * 20 + [0.3, 0.2], dtype=np.float32)
    memberships = numbered(unit_tables, 23)
    units, fetched = top_n(scores, 4)
    asked = []
    pooled = pool_top_units(units, fetched, memberships, 3, False, lambda u: asked.append(u.tolist()) or scores[u])
    assert [p.table_id for p in pooled] == ["1", "0", "2"]
    assert as_tuples(pooled) == brute_force(unit_tables, scores, 3)
    assert sorted(asked[0]) == [0, 21, 22]  # the tied tables' own units only


def test_identical_single_unit_tables_keep_store_order():
    unit_tables = [[2], [0], [1]]
    scores = np.asarray([0.5, 0.5, 0.5], dtype=np.float32)
    memberships = numbered(unit_tables, 3)
    units, fetched = top_n(scores, 3)
    pooled = pool_top_units(units, fetched, memberships, 2, True, lambda u: scores[u])
    assert [p.table_id for p in pooled] == ["2", "0"]


@pytest.mark.parametrize(
    ("unit_tables", "scores"),
    [
        ([[0], [1], [2]], [0.9, 0.5, 0.5]),  # the 2nd table ties with the last fetched score
        ([[0], [0], [1]], [0.9, 0.8, 0.5]),  # the top-2 units name one table only
    ],
)
def test_an_undecided_top_n_defers_to_pooling_every_unit(unit_tables, scores):
    scores = np.asarray(scores, dtype=np.float32)
    memberships = numbered(unit_tables, 1 + max(t for ts in unit_tables for t in ts))
    units, fetched = top_n(scores, 2)
    assert pool_top_units(units, fetched, memberships, 2, False, lambda u: scores[u]) is None


def test_an_approximate_top_n_is_widened_by_every_unit_of_its_first_tables_in_its_own_order():
    memberships = Memberships.from_lists([[0], [1, 2], [2], [1], [0, 2]], ["a", "b", "c"], [f"u{i}" for i in range(5)])
    widened = memberships.with_units_of_first_tables(np.array([3, 0]), 1)
    assert widened.tolist() == [0, 1, 3]  # table b (unit 3 came first): its units 1 and 3; unit 0 stays
    assert memberships.with_units_of_first_tables(np.array([3, 0]), 2).tolist() == [0, 1, 3, 4]
