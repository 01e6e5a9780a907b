"""Lazy greedy path selection."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llama_index_pearl.joins.selection import default_budget, lazy_greedy, resolve_budget, split_by_budget


@dataclass(frozen=True)
class Cand:
    name: str
    score: float
    tables: tuple[str, ...]


def naive_greedy(cands, budget, lam):
    chosen, covered, left = [], set(), list(cands)
    while left and len(chosen) < budget:
        best = max(left, key=lambda p: p.score + lam * len(set(p.tables) - covered))
        chosen.append(best)
        covered |= set(best.tables)
        left.remove(best)
    return chosen


def gains(selection, lam):
    covered, total = set(), 0.0
    for p in selection:
        total += p.score + lam * len(set(p.tables) - covered)
        covered |= set(p.tables)
    return total


def test_default_budget_is_half_the_tables():
    assert default_budget(81) == 40
    assert default_budget(1) == 1


def test_budget_caps_the_selection():
    cands = [Cand(str(i), 1.0, (f"t{i}", f"u{i}")) for i in range(10)]
    assert len(lazy_greedy(cands, 3)) == 3
    assert lazy_greedy(cands, 0) == []


def test_diversity_prefers_a_path_covering_new_tables_over_a_slightly_better_repeat():
    first = Cand("first", 1.5, ("a", "b"))
    repeat = Cand("repeat", 1.45, ("a", "b"))
    fresh = Cand("fresh", 1.4, ("c", "d"))
    assert [p.name for p in lazy_greedy([first, repeat, fresh], 2, 0.1)] == ["first", "fresh"]


def test_without_diversity_selection_is_by_score():
    cands = [Cand("low", 1.0, ("a", "b")), Cand("high", 2.0, ("a", "b")), Cand("mid", 1.5, ("c", "d"))]
    assert [p.name for p in lazy_greedy(cands, 3, 0.0)] == ["high", "mid", "low"]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(0, 2, allow_nan=False), st.sets(st.sampled_from("abcdefgh"), min_size=2, max_size=3)),
        min_size=1,
        max_size=25,
    ),
    st.integers(1, 10),
    st.floats(0, 1),
)
def test_lazy_greedy_reaches_the_same_total_gain_as_the_naive_greedy(raw, budget, lam):
    cands = [Cand(str(i), s, tuple(sorted(t))) for i, (s, t) in enumerate(raw)]
    lazy, naive = lazy_greedy(cands, budget, lam), naive_greedy(cands, budget, lam)
    assert len(lazy) == len(naive)
    assert abs(gains(lazy, lam) - gains(naive, lam)) < 1e-6


def test_a_free_generator_gets_every_candidate_path():
    assert resolve_budget(None, n_tables=80, cost_per_path=0.0) is None


def test_a_paid_generator_gets_the_papers_half_of_the_tables_per_pool():
    assert resolve_budget(None, n_tables=81, cost_per_path=1.0) == 40


def test_a_budget_the_user_gives_wins_and_a_negative_one_is_rejected():
    assert resolve_budget(7, n_tables=81, cost_per_path=0.0) == 7
    with pytest.raises(ValueError, match="budget must be >= 0"):
        resolve_budget(-1, n_tables=81, cost_per_path=1.0)


def test_no_budget_ranks_every_candidate():
    cands = [Cand("a", 0.5, ("x", "y")), Cand("b", 0.9, ("y", "z"))]
    assert [c.name for c in lazy_greedy(cands, None)] == ["b", "a"]


@dataclass(frozen=True)
class Pooled:
    name: str
    kind: str


def test_split_by_budget_takes_the_first_paths_of_each_pool_in_order():
    paths = [Pooled("e1", "explicit"), Pooled("i1", "implicit"), Pooled("e2", "explicit"), Pooled("i2", "implicit")]
    within, beyond = split_by_budget(paths, 1)
    assert [p.name for p in within] == ["e1", "i1"] and [p.name for p in beyond] == ["e2", "i2"]


def test_split_by_budget_counts_what_a_pool_already_spent():
    paths = [Pooled("e1", "explicit"), Pooled("e2", "explicit")]
    within, beyond = split_by_budget(paths, 2, used={"explicit": 1})
    assert [p.name for p in within] == ["e1"] and [p.name for p in beyond] == ["e2"]
    assert split_by_budget(paths, None) == (paths, [])
