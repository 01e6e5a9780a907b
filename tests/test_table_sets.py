"""The answer as a set of tables that join: every table the question needs first, chosen by the question's
evidence and the join graph."""

from __future__ import annotations

import networkx as nx
import pandas as pd
import pytest
from graphs import add_join

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.retrieval.join_hints import compute_join_hints
from llama_index_pearl.retrieval.table_sets import (
    Evidence,
    SetReason,
    SetRule,
    TableSet,
    choose_table_set,
    set_first,
    word_weights,
)

MATCHED, BRIDGE, UNJOINED = SetReason.MATCHED, SetReason.BRIDGE, SetReason.UNJOINED


def _gigs() -> nx.Graph:
    graph = nx.Graph()
    graph.add_nodes_from(["artist", "gig", "venue", "label"])
    add_join(graph, "gig", "artist_id", "artist", "artist_id")
    add_join(graph, "gig", "venue_id", "venue", "venue_id")
    return graph


WEIGHTS = {"joe": 2.0, "sharp": 2.0, "wembley": 2.0, "city": 1.0}


def test_a_link_table_the_question_never_names_comes_in_as_a_bridge():
    ranked = [("artist", 0.60), ("venue", 0.55), ("label", 0.40), ("gig", 0.20)]
    words = {"artist": frozenset({"joe", "sharp"}), "venue": frozenset({"wembley"})}
    chosen = choose_table_set(ranked, words, WEIGHTS, _gigs())
    assert chosen.tables == ("artist", "venue", "gig")
    assert dict(chosen.reasons) == {"artist": MATCHED, "venue": MATCHED, "gig": BRIDGE}


def _chain() -> nx.Graph:
    """country - city - address - customer: a chain of three joins."""
    graph = nx.Graph()
    for left, right in [("city", "country"), ("address", "city"), ("customer", "address")]:
        add_join(graph, left, f"{right}_id", right, f"{right}_id")
    return graph


def test_a_chain_of_three_joins_comes_in_whole():
    ranked = [("customer", 0.60), ("country", 0.55), ("address", 0.20), ("city", 0.15)]
    words = {"customer": frozenset({"customers"}), "country": frozenset({"canada"})}
    chosen = choose_table_set(ranked, words, {"customers": 1.0, "canada": 3.0}, _chain())
    assert set(chosen.tables) == {"customer", "country", "address", "city"}
    assert [t for t in chosen.tables if chosen.reasons[t] is MATCHED] == ["customer", "country"]


def test_no_more_bridges_than_the_rule_allows():
    ranked = [("customer", 0.60), ("country", 0.55), ("address", 0.20), ("city", 0.15)]
    words = {"customer": frozenset({"customers"}), "country": frozenset({"canada"})}
    chosen = choose_table_set(ranked, words, {"customers": 1.0, "canada": 3.0}, _chain(), SetRule(bridges=1))
    assert chosen.reasons["country"] is UNJOINED  # named by the question, no path of one bridge joins it
    assert "city" not in chosen and "address" not in chosen


def test_a_table_far_below_the_best_score_with_none_of_the_question_words_stays_out():
    ranked = [("artist", 0.60), ("venue", 0.35), ("label", 0.30)]
    words = {"artist": frozenset({"joe", "sharp"})}
    assert choose_table_set(ranked, words, WEIGHTS, _gigs()).tables == ("artist",)


def test_a_table_holding_the_words_no_member_holds_is_more_surely_needed():
    evidence = Evidence()
    assert evidence.logit(0.05, 0.5, 1, 2) > evidence.logit(0.05, 0.0, 1, 2)
    assert evidence.logit(0.05, 0.0, 1, 2) > evidence.logit(0.20, 0.0, 1, 2)
    assert evidence.logit(0.05, 0.0, 1, 2) > evidence.logit(0.05, 0.0, 3, 2)


def test_the_table_holding_more_of_the_question_starts_the_set_when_scores_are_close():
    ranked = [("gig", 0.600), ("artist", 0.590)]
    words = {"gig": frozenset({"joe"}), "artist": frozenset({"joe", "sharp"})}
    assert choose_table_set(ranked, words, WEIGHTS, _gigs()).tables[0] == "artist"


def test_words_that_ask_are_no_evidence():
    ranked = [("artist", 0.60), ("venue", 0.40)]
    words = {"artist": frozenset({"joe"}), "venue": frozenset({"how", "many"})}
    weights = {"joe": 1.0, "how": 3.0, "many": 3.0}
    assert choose_table_set(ranked, words, weights, _gigs()).tables == ("artist",)


def test_a_table_of_another_source_never_joins_the_set_without_a_join():
    ranked = [("shop.orders", 0.60), ("crm.customers", 0.58)]
    words = {"shop.orders": frozenset({"orders"}), "crm.customers": frozenset({"customers"})}
    graph = nx.Graph()
    graph.add_nodes_from(["shop.orders", "crm.customers"])
    sources = {"shop.orders": "shop", "crm.customers": "crm"}
    chosen = choose_table_set(ranked, words, {"orders": 1.0, "customers": 1.0}, graph, sources=sources)
    assert chosen.tables == ("shop.orders",)


def test_with_a_rival_database_only_evidence_brings_a_table_in():
    graph = nx.Graph()
    add_join(graph, "a.singer", "singer_id", "a.concert", "singer_id")
    sources = {"a.singer": "a", "a.concert": "a", "b.singer": "b"}
    words = {"a.singer": frozenset({"singer"}), "b.singer": frozenset({"singer"})}
    rival = [("a.singer", 0.60), ("b.singer", 0.59), ("a.concert", 0.58)]
    assert choose_table_set(rival, words, {"singer": 1.0}, graph, sources=sources).tables == ("a.singer",)
    alone = [("a.singer", 0.60), ("a.concert", 0.58), ("b.singer", 0.30)]
    assert "a.concert" in choose_table_set(alone, words, {"singer": 1.0}, graph, sources=sources)


def test_each_table_carries_the_confidence_it_came_in_with():
    ranked = [("artist", 0.60), ("venue", 0.55), ("label", 0.40), ("gig", 0.20)]
    words = {"artist": frozenset({"joe", "sharp"}), "venue": frozenset({"wembley"})}
    chosen = choose_table_set(ranked, words, WEIGHTS, _gigs())
    assert chosen.confidence["artist"] == 1.0
    assert 0.0 < chosen.confidence["venue"] < 1.0
    assert chosen.confidence["gig"] == chosen.confidence["venue"]  # a bridge is as sure as what it joins


def test_the_set_comes_first_then_the_ranking():
    chosen = TableSet(("venue", "gig"), {"venue": MATCHED, "gig": BRIDGE})
    assert set_first(["artist", "venue", "label", "gig"], chosen) == ["venue", "gig", "artist", "label"]


def test_a_word_every_table_holds_weighs_less_than_a_rare_one():
    weights = word_weights({"name": 40, "wembley": 1}, 40)
    assert weights["wembley"] > weights["name"] > 0


def test_an_empty_ranking_has_an_empty_set():
    assert choose_table_set([], {}, {}, nx.Graph()) == TableSet((), {})


@pytest.mark.parametrize(
    "field, value", [("depth", 0), ("bridges", -1), ("min_confidence", 0.0), ("min_confidence", 1.0), ("coverage", -1)]
)
def test_a_rule_out_of_range_is_refused(field, value):
    with pytest.raises(ValueError, match=field):
        SetRule(**{field: value})


# ----------------------------------------------------------------- through the retriever, small inline tables
@pytest.fixture
def gig_index(hashing_embedding) -> PearlTableIndex:
    tables = {
        "artist": pd.DataFrame({"artist_id": [1, 2, 3], "artist_name": ["Joe Sharp", "Ann Lee", "Rosa Park"]}),
        "gig": pd.DataFrame({"gig_id": [10, 11, 12, 13], "artist_id": [1, 2, 3, 1], "venue_id": [7, 8, 7, 9]}),
        "venue": pd.DataFrame({"venue_id": [7, 8, 9], "venue_name": ["Wembley", "Maracana", "Olympia"]}),
        "label": pd.DataFrame({"label_name": ["Sub Pop", "Rough Trade"], "founded": [1988, 1978]}),
    }
    return PearlTableIndex.from_tables(tables, embed_model=hashing_embedding)


def test_retrieve_brings_in_the_bridge_and_returns_the_set_first(gig_index):
    nodes = gig_index.as_retriever(similarity_top_k=4).retrieve("Did Joe Sharp ever play at Wembley?")
    meta = [n.node.metadata for n in nodes]
    assert {m["table_id"]: m["set_reason"] for m in meta if m["in_set"]} == {
        "artist": "matched",
        "venue": "matched",
        "gig": "bridge",
    }
    assert [m["in_set"] for m in meta] == [True, True, True, False]
    assert all(0.0 < m["set_confidence"] <= 1.0 for m in meta if m["in_set"])
    assert meta[-1]["set_confidence"] is None


def test_a_single_table_question_returns_its_table_first(gig_index):
    nodes = gig_index.as_retriever(similarity_top_k=3).retrieve("When was the label Rough Trade founded?")
    assert nodes[0].node.metadata["table_id"] == "label"
    assert [n.node.metadata["table_id"] for n in nodes if n.node.metadata["in_set"]] == ["label"]


def test_similarity_top_k_tables_come_back_and_a_larger_set_is_cut_there_least_sure_last(gig_index):
    nodes = gig_index.as_retriever(similarity_top_k=2).retrieve("Did Joe Sharp ever play at Wembley?")
    assert [n.node.metadata["table_id"] for n in nodes] == ["artist", "venue"]
    assert nodes[0].node.metadata["set_size"] == 3


def test_set_margin_returns_a_set_larger_than_similarity_top_k_whole(gig_index):
    nodes = gig_index.as_retriever(similarity_top_k=2, set_margin=0).retrieve("Did Joe Sharp ever play at Wembley?")
    assert [n.node.metadata["table_id"] for n in nodes] == ["artist", "venue", "gig"]


def test_the_sets_joins_are_the_join_hints_each_once(gig_index):
    nodes = gig_index.as_retriever(similarity_top_k=3).retrieve("Did Joe Sharp ever play at Wembley?")
    in_set = [n.node.metadata["table_id"] for n in nodes if n.node.metadata["in_set"]]
    hints = {tuple(sorted(h["tables"])): h for n in nodes for h in n.node.metadata["join_hints"] if h["via"] is None}
    assert set(hints) == {("artist", "gig"), ("gig", "venue")}
    expected = {tuple(sorted(h.tables)) for h in compute_join_hints(gig_index.join_graph, in_set)}
    assert set(hints) == expected
    assert all(len(h["joins"]) == 1 for h in hints.values())


def test_set_rule_none_returns_the_pooled_ranking_without_a_set(gig_index):
    nodes = gig_index.as_retriever(similarity_top_k=4, set_rule=None).retrieve("Did Joe Sharp ever play at Wembley?")
    assert not any(n.node.metadata["in_set"] for n in nodes)
    assert [n.score for n in nodes] == sorted((n.score for n in nodes), reverse=True)


def test_set_margin_returns_the_set_and_that_many_other_tables(gig_index):
    retriever = gig_index.as_retriever(similarity_top_k=4, set_margin=0)
    assert len(retriever.retrieve("Did Joe Sharp ever play at Wembley?")) == 3
    with pytest.raises(ValueError, match="set_margin"):
        gig_index.as_retriever(set_margin=-1)


def test_a_business_word_finds_the_table_of_its_column(minilm):
    """ "spend" names no table and no column: the encoder reads it as payment.amount, three joins from customer."""
    tables = {
        "customer": pd.DataFrame({"customer_id": [1, 2, 3, 4], "first_name": ["Ann", "Bob", "Cy", "Di"]}),
        "rental": pd.DataFrame({"rental_id": [10, 11, 12, 13, 14], "customer_id": [1, 2, 1, 3, 4]}),
        "payment": pd.DataFrame(
            {
                "payment_id": [100, 101, 102, 103, 104],
                "rental_id": [10, 11, 12, 13, 14],
                "amount": [2.99, 4.99, 0.99, 3.99, 5.99],
            }
        ),
        "store": pd.DataFrame({"store_id": [1, 2], "address": ["1 Main St", "9 High St"]}),
    }
    index = PearlTableIndex.from_tables(tables, embed_model=minilm)
    nodes = index.as_retriever(similarity_top_k=4).retrieve("How much did each customer spend?")
    assert {n.node.metadata["table_id"] for n in nodes if n.node.metadata["in_set"]} == {
        "customer",
        "rental",
        "payment",
    }


def test_a_tables_name_is_read_back_from_its_text():
    from llama_index_pearl.text.serialization import table_name_in_text

    assert table_name_in_text("Title: Gigs\nTable: gig (database music)\nColumns: gig_id") == "gig"
    assert table_name_in_text("Columns: a\nTable: not a header") is None
