"""Max-pooling unit scores to table scores."""

from __future__ import annotations

from llama_index_pearl.retrieval.search.pooling import (
    UnitHit,
    fuse_lexical,
    lexical_candidates,
    max_pool,
    next_fetch_size,
    ranking_is_final,
)


def test_table_score_is_its_best_unit():
    hits = [UnitHit("u1", ["a"], 0.4), UnitHit("u2", ["a"], 0.9), UnitHit("u3", ["b"], 0.5)]
    pooled = max_pool(hits)
    assert [(t.table_id, t.score, t.unit_id) for t in pooled] == [("a", 0.9, "u2"), ("b", 0.5, "u3")]


def test_a_unit_shared_by_two_tables_scores_both():
    hits = [UnitHit("joined", ["a", "b"], 0.8), UnitHit("orig_b", ["b"], 0.3), UnitHit("orig_c", ["c"], 0.5)]
    pooled = max_pool(hits)
    assert [(t.table_id, t.score) for t in pooled] == [("b", 0.8), ("a", 0.8), ("c", 0.5)]
    assert pooled[0].unit_id == "joined" and pooled[1].unit_id == "joined"


def test_tables_tied_on_a_joined_unit_are_ordered_by_their_next_best_unit():
    hits = [
        UnitHit("joined_abc", ["c", "a", "b"], 0.8),
        UnitHit("orig_b", ["b"], 0.6),
        UnitHit("orig_a", ["a"], 0.4),
        UnitHit("orig_c", ["c"], 0.2),
    ]
    assert [(t.table_id, t.score) for t in max_pool(hits, k=2)] == [("b", 0.8), ("a", 0.8)]


def test_a_tied_table_without_another_unit_comes_after_the_others():
    hits = [UnitHit("joined", ["a", "b"], 0.8), UnitHit("orig_b", ["b"], 0.1)]
    assert [t.table_id for t in max_pool(hits)] == ["b", "a"]


def test_k_cuts_the_ranking():
    hits = [UnitHit(f"u{i}", [f"t{i}"], 1.0 - i / 10) for i in range(5)]
    assert [t.table_id for t in max_pool(hits, k=2)] == ["t0", "t1"]


def test_fetch_schedule_grows_and_stops_at_corpus_size():
    assert next_fetch_size(8, 100) == 32
    assert next_fetch_size(64, 100) == 100


def test_ranking_is_final_once_k_tables_are_pooled_without_open_ties():
    assert ranking_is_final(max_pool([UnitHit("u1", ["a"], 0.9), UnitHit("u2", ["b"], 0.5)]), k=2)


def test_ranking_is_not_final_while_a_tie_in_the_top_k_lacks_a_next_best_unit():
    hits = [UnitHit("joined", ["a", "b"], 0.9), UnitHit("orig_a", ["a"], 0.5)]
    assert not ranking_is_final(max_pool(hits), k=1)
    assert ranking_is_final(max_pool([*hits, UnitHit("orig_b", ["b"], 0.4)]), k=1)


def test_ranking_is_not_final_with_fewer_than_k_tables():
    assert not ranking_is_final(max_pool([UnitHit("u1", ["a"], 0.9)]), k=2)


def test_fusion_adds_the_weighted_lexical_score_to_each_hit():
    fused = fuse_lexical([UnitHit("u1", ["a"], 0.5), UnitHit("u2", ["b"], 0.4)], {"u2": 1.0}, 0.2)
    assert [(h.unit_id, round(h.score, 6)) for h in fused] == [("u1", 0.5), ("u2", 0.6)]


def test_an_unfetched_unit_is_a_candidate_only_if_its_words_could_lift_it_into_the_top_k():
    fetched = [UnitHit("u1", ["a"], 0.9), UnitHit("u2", ["b"], 0.6), UnitHit("u5", ["c"], 0.5)]
    # floor 0.5, 2nd table 0.6: u3 (at most 0.5 + 0.2) may enter, u4 (at most 0.5 + 0.05) cannot
    assert lexical_candidates(fetched, {"u3": 1.0, "u4": 0.25, "u1": 1.0}, 0.2, k=2) == ["u3"]


def test_no_candidates_before_k_tables_are_fetched():
    assert lexical_candidates([UnitHit("u1", ["a"], 0.9)], {"u3": 1.0}, 0.2, k=2) == []
