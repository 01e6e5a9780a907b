"""Candidate edges: structural patterns, value index, name neighbours, declared keys."""

from __future__ import annotations

import pandas as pd
from embeddings import TrigramEmbedding

from llama_index_pearl.joins import candidates as cand
from llama_index_pearl.joins.edges import admissible_pairs, keep_best_parents, score_admissible
from llama_index_pearl.joins.embedding import embed_names
from llama_index_pearl.joins.profiles import profile_tables
from llama_index_pearl.tables.table import ForeignKey, Table


def structural_pairs(*tables: Table) -> dict[tuple[str, str], str]:
    profiles = profile_tables(tables)
    pairs: cand.Pairs = {}
    cand.structural_candidates(profiles, pairs)
    out = {}
    for (i, j), sig in pairs.items():
        a, b = profiles[i], profiles[j]
        out[tuple(sorted((f"{a.table_id}.{a.column}", f"{b.table_id}.{b.column}")))] = sig.pattern
    return out


SINGER = Table("concert_singer__singer", pd.DataFrame({"id": ["1", "2", "3"], "name": ["a", "b", "c"]}))


def test_column_named_after_a_table_references_its_id():
    song = Table("song", pd.DataFrame({"singer_id": ["1", "1", "2"], "title": ["x", "y", "z"]}))
    assert structural_pairs(SINGER, song) == {("concert_singer__singer.id", "song.singer_id"): "fk_name"}


def test_camel_case_and_plural_table_names_match():
    customers = Table("customers", pd.DataFrame({"customer_id": ["7", "8", "9"]}))
    orders = Table("orders", pd.DataFrame({"customerId": ["7", "9", "9"]}))
    assert structural_pairs(customers, orders) == {("customers.customer_id", "orders.customerId"): "fk_name"}


def test_abbreviated_table_name_matches_by_prefix():
    customer = Table("customer", pd.DataFrame({"id": ["7", "8", "9"]}))
    orders = Table("orders", pd.DataFrame({"cust_id": ["7", "9", "9"]}))
    assert structural_pairs(customer, orders) == {("customer.id", "orders.cust_id"): "fk_name"}


def test_column_without_key_token_references_the_tables_primary_key():
    continents = Table("continents", pd.DataFrame({"ContId": ["1", "2", "3"], "Continent": ["asia", "europe", "x"]}))
    countries = Table("countries", pd.DataFrame({"Continent": ["1", "1", "2"]}))
    assert structural_pairs(continents, countries)[("continents.ContId", "countries.Continent")] == "fk_table"


def test_identical_generic_names_are_not_structural_anchors():
    a = Table("a", pd.DataFrame({"id": ["1", "2"], "name": ["x", "y"]}))
    b = Table("b", pd.DataFrame({"id": ["1", "2"], "name": ["x", "y"]}))
    assert structural_pairs(a, b) == {}


def test_identical_specific_key_name_is_an_anchor():
    a = Table("a", pd.DataFrame({"stadium_code": ["s1", "s2", "s3"]}))
    b = Table("b", pd.DataFrame({"stadium_code": ["s1", "s1", "s2"]}))
    assert structural_pairs(a, b) == {("a.stadium_code", "b.stadium_code"): "same_key_name"}


def test_value_index_finds_shared_values_and_skips_very_frequent_ones():
    shared = [f"v{i}" for i in range(10)]
    tables = [Table("a", pd.DataFrame({"x": shared})), Table("b", pd.DataFrame({"y": shared[:6] + ["q"] * 4}))]
    tables += [Table(f"n{i}", pd.DataFrame({"flag": ["yes", "no"] * 2})) for i in range(5)]
    profiles = profile_tables(tables)
    pairs: cand.Pairs = {}
    skipped = cand.value_candidates(profiles, pairs, max_posting=4)
    assert list(pairs) == [(0, 1)] and pairs[(0, 1)].found_by == {"V"}
    assert skipped == 2  # 'yes' and 'no' sit in 5 columns


def test_values_held_by_many_columns_pair_them_with_the_key_only():
    ids = [f"k{i}" for i in range(10)]
    key = Table("hub", pd.DataFrame({"hub_id": ids}))
    referencing = [Table(f"fact{i}", pd.DataFrame({"ref": ids[:8] * 2})) for i in range(4)]
    profiles = profile_tables([key, *referencing])
    pairs: cand.Pairs = {}
    cand.value_candidates(profiles, pairs, sibling_posting=3)
    assert sorted(pairs) == [(0, 1), (0, 2), (0, 3), (0, 4)]  # hub.hub_id with each fact.ref, no sibling pairs


def test_values_held_by_few_columns_pair_all_of_them():
    ids = [f"k{i}" for i in range(10)]
    tables = [Table("hub", pd.DataFrame({"hub_id": ids}))]
    tables += [Table(f"fact{i}", pd.DataFrame({"ref": ids[:8] * 2})) for i in range(2)]
    pairs: cand.Pairs = {}
    cand.value_candidates(profile_tables(tables), pairs, sibling_posting=3)
    assert sorted(pairs) == [(0, 1), (0, 2), (1, 2)]


def test_name_neighbours_link_similar_but_not_identical_names():
    tables = [
        Table("a", pd.DataFrame({"customer_number": ["1", "2"], "zzz": ["p", "q"]})),
        Table("b", pd.DataFrame({"customer_num": ["1", "2"], "qqq": ["r", "s"]})),
    ]
    profiles = profile_tables(tables)
    embed_names(profiles, TrigramEmbedding())
    pairs: cand.Pairs = {}
    cand.name_candidates(profiles, pairs, k=1)
    assert (0, 2) in pairs and "B" in pairs[(0, 2)].found_by


def test_declared_foreign_key_is_an_explicit_edge_with_full_structural_score():
    a = Table("a", pd.DataFrame({"k": ["1", "2", "3"]}))
    b = Table("b", pd.DataFrame({"ref": ["9", "8", "7"]}), foreign_keys=[ForeignKey("ref", "a", "k")])
    profiles = profile_tables([a, b])
    pairs: cand.Pairs = {}
    assert cand.declared_candidates([a, b], profiles, pairs) == 1
    (edge,) = score_admissible(profiles, admissible_pairs(profiles, pairs))
    assert edge.declared and edge.explicit and edge.s_str == 1.0
    assert (edge.left_table, edge.left_column, edge.right_table, edge.right_column) == ("b", "ref", "a", "k")


def test_only_the_best_parent_of_a_foreign_key_column_is_kept():
    good = Table("x__course", pd.DataFrame({"course_id": [str(i) for i in range(1, 16)]}))
    other = Table("y__course", pd.DataFrame({"course_id": [str(i) for i in range(1, 9)]}))
    child = Table("x__section", pd.DataFrame({"course_id": [str(i) for i in range(1, 16)]}))
    profiles = profile_tables([good, other, child])
    pairs: cand.Pairs = {}
    cand.structural_candidates(profiles, pairs)
    kept = keep_best_parents(score_admissible(profiles, admissible_pairs(profiles, pairs)))
    parents = {e.right_table for e in kept if e.left_table == "x__section"}
    assert parents == {"x__course"}


def test_unanchored_overlap_of_dense_ids_scores_no_overlap_but_anchored_keeps_it():
    tables = [
        Table("ship", pd.DataFrame({"id": [str(i) for i in range(1, 21)]})),
        Table("song", pd.DataFrame({"track_no": [str(i) for i in range(1, 21)]})),
        Table("crew", pd.DataFrame({"ship_id": [str(i % 20 + 1) for i in range(30)]})),
    ]
    profiles = profile_tables(tables)
    pairs: cand.Pairs = {}
    cand.structural_candidates(profiles, pairs)
    cand.value_candidates(profiles, pairs)
    edges = {frozenset(e.tables): e for e in score_admissible(profiles, admissible_pairs(profiles, pairs))}
    assert edges[frozenset({"ship", "song"})].s_ovlp == 0.0
    assert edges[frozenset({"ship", "crew"})].explicit and edges[frozenset({"ship", "crew"})].s_ovlp > 0.5
