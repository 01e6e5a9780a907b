"""The answer as a connected set of tables: chosen by the question's words and the join graph, returned first."""

from __future__ import annotations

import networkx as nx
import pandas as pd
import pytest
from graphs import add_join

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.retrieval.join_hints import compute_join_hints
from llama_index_pearl.retrieval.table_sets import (
    BRIDGE,
    MATCHED,
    SetRule,
    TableSet,
    choose_table_set,
    set_first,
    word_weights,
)


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


def _chain_of_four_joins() -> nx.Graph:
    """venue - concert - artist - album - label, and a second way venue - city - artist."""
    graph = nx.Graph()
    for left, right in [("concert", "venue"), ("concert", "artist"), ("album", "artist"), ("album", "label")]:
        add_join(graph, left, f"{right}_id", right, f"{right}_id")
    add_join(graph, "venue", "city_id", "city", "city_id")
    add_join(graph, "artist", "city_id", "city", "city_id")
    return graph


def test_a_table_far_in_the_join_graph_comes_in_with_every_bridge_of_the_shortest_path():
    ranked = [("label", 0.47), ("concert", 0.45), ("venue", 0.40), ("city", 0.10)]
    words = {"label": frozenset({"northwind"}), "venue": frozenset({"venue"})}
    weights = {"northwind": 3.0, "venue": 2.0}
    chosen = choose_table_set(ranked, words, weights, _chain_of_four_joins(), SetRule(bridges=3))
    assert set(chosen.tables) == {"label", "venue", "album", "artist", "concert"}  # concert, the ranked bridge
    assert [t for t in chosen.tables if chosen.reasons[t] == MATCHED] == ["label", "venue"]
    assert choose_table_set(ranked, words, weights, _chain_of_four_joins(), SetRule(bridges=2)).tables == ("label",)


def test_a_table_that_adds_none_of_the_question_words_stays_out():
    ranked = [("artist", 0.60), ("gig", 0.59), ("venue", 0.58)]
    words = {"artist": frozenset({"joe", "sharp"}), "gig": frozenset({"joe"})}
    assert choose_table_set(ranked, words, WEIGHTS, _gigs()).tables == ("artist",)


def test_a_table_that_joins_no_member_stays_out_however_many_words_it_holds():
    ranked = [("artist", 0.60), ("label", 0.59)]
    words = {"artist": frozenset({"joe", "sharp"}), "label": frozenset({"wembley", "city"})}
    assert choose_table_set(ranked, words, WEIGHTS, _gigs()).tables == ("artist",)


def test_the_table_holding_more_of_the_question_starts_the_set_when_scores_are_close():
    ranked = [("gig", 0.600), ("artist", 0.590)]
    words = {"gig": frozenset({"joe"}), "artist": frozenset({"joe", "sharp"})}
    assert choose_table_set(ranked, words, WEIGHTS, _gigs()).tables[0] == "artist"


def test_tables_beyond_the_window_of_the_best_score_are_no_candidates():
    ranked = [("artist", 0.60), ("venue", 0.30)]
    words = {"artist": frozenset({"joe", "sharp"}), "venue": frozenset({"wembley"})}
    assert choose_table_set(ranked, words, WEIGHTS, _gigs(), SetRule(window=0.1)).tables == ("artist",)
    assert choose_table_set(ranked, words, WEIGHTS, _gigs(), SetRule(window=0.5)).tables == ("artist", "venue", "gig")


def test_words_that_ask_are_no_evidence():
    ranked = [("artist", 0.60), ("venue", 0.59)]
    words = {"artist": frozenset({"joe"}), "venue": frozenset({"how", "many"})}
    weights = {"joe": 1.0, "how": 3.0, "many": 3.0}
    assert choose_table_set(ranked, words, weights, _gigs()).tables == ("artist",)


def test_the_set_comes_first_then_the_ranking():
    chosen = TableSet(("venue", "gig"), {"venue": MATCHED, "gig": BRIDGE})
    assert set_first(["artist", "venue", "label", "gig"], chosen) == ["venue", "gig", "artist", "label"]


def test_a_word_every_table_holds_weighs_less_than_a_rare_one():
    weights = word_weights({"name": 40, "wembley": 1}, 40)
    assert weights["wembley"] > weights["name"] > 0


def test_an_empty_ranking_has_an_empty_set():
    assert choose_table_set([], {}, {}, nx.Graph()) == TableSet((), {})


@pytest.mark.parametrize("field, value", [("window", -0.1), ("depth", 0), ("min_gain", 1.5)])
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
    assert [m["table_id"] for m in meta][2:] == ["gig", "label"]
    assert {m["table_id"]: m["set_reason"] for m in meta if m["in_set"]} == {
        "artist": MATCHED,
        "venue": MATCHED,
        "gig": BRIDGE,
    }
    assert [m["in_set"] for m in meta] == [True, True, True, False]


def test_a_single_table_question_returns_its_table_first_and_alone_in_the_set(gig_index):
    nodes = gig_index.as_retriever(similarity_top_k=3).retrieve("When was the label Rough Trade founded?")
    assert nodes[0].node.metadata["table_id"] == "label"
    assert [n.node.metadata["table_id"] for n in nodes if n.node.metadata["in_set"]] == ["label"]


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


def test_a_tables_name_is_read_back_from_its_text():
    from llama_index_pearl.text.serialization import table_name_in_text

    assert table_name_in_text("Title: Gigs\nTable: gig (database music)\nColumns: gig_id") == "gig"
    assert table_name_in_text("Columns: a\nTable: not a header") is None
