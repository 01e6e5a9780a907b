"""Join hints: how retrieved tables join, read off the join graph."""

from __future__ import annotations

import networkx as nx
import pandas as pd
from graphs import add_join

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.retrieval.answer.join_hints import compute_join_hints, format_join_hints, hints_for_table


def _edge(graph, left, lcol, right, rcol, kind="explicit", declared=False, score=1.5):
    add_join(graph, left, lcol, right, rcol, kind=kind, declared=declared, score=score)


def _chain() -> nx.Graph:
    graph = nx.Graph()
    graph.add_nodes_from(["singer", "concert", "stadium", "lonely"])
    _edge(graph, "concert", "singer_id", "singer", "singer_id")
    _edge(graph, "concert", "stadium_id", "stadium", "stadium_id", kind="implicit", score=1.1)
    return graph


def test_direct_edge_gives_a_hint_of_one_join_foreign_key_side_first():
    (hint,) = compute_join_hints(_chain(), ["singer", "concert"])
    assert hint.tables == ("singer", "concert") and hint.via is None
    assert hint.joins[0].column_pairs == (("singer_id", "singer_id"),)
    assert hint.text() == "JOIN concert.singer_id = singer.singer_id (explicit)"


def test_tables_joined_through_an_unretrieved_table_name_the_intermediate():
    (hint,) = compute_join_hints(_chain(), ["singer", "stadium"])
    assert hint.via == "concert"
    assert [(h.left_table, h.right_table) for h in hint.joins] == [("singer", "concert"), ("concert", "stadium")]
    assert [h.kind for h in hint.joins] == ["explicit", "implicit"]
    assert hint.text().endswith("[via concert]")


def test_unjoinable_and_unknown_tables_get_no_hint():
    assert compute_join_hints(_chain(), ["singer", "lonely", "not_a_table"]) == []


def test_declared_joins_say_so_in_text():
    graph = nx.Graph()
    _edge(graph, "orders", "customer_id", "customers", "id", declared=True)
    assert "(explicit, declared)" in format_join_hints(compute_join_hints(graph, ["orders", "customers"]))


def test_hints_for_table_keeps_only_hints_naming_it():
    hints = compute_join_hints(_chain(), ["singer", "concert", "stadium"])
    assert {h.tables for h in hints_for_table(hints, "stadium")} == {("concert", "stadium")}


def test_a_join_through_a_retrieved_middle_table_is_listed_once():
    hints = compute_join_hints(_chain(), ["singer", "stadium", "concert"])
    assert [h.tables for h in hints] == [("singer", "concert"), ("stadium", "concert")]
    assert all(h.via is None for h in hints)


def test_a_hint_through_a_table_only_for_pairs_no_direct_join_connects():
    graph = _chain()
    _edge(graph, "singer", "home_stadium", "stadium", "stadium_id")  # a triangle: every pair joins directly
    hints = compute_join_hints(graph, ["singer", "stadium"])
    assert [(h.tables, h.via) for h in hints] == [(("singer", "stadium"), None)]


def test_retrieved_nodes_carry_join_hints_and_the_matched_question(music_tables, hashing_embedding):
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding, budget=10)
    nodes = index.as_retriever(similarity_top_k=3).retrieve("stadium capacity of the concert")
    by_table = {n.node.metadata["table_id"]: n.node for n in nodes}
    hints = by_table["stadium"].metadata["join_hints"]
    direct = next(h for h in hints if h["tables"] == ["concert", "stadium"] or h["tables"] == ["stadium", "concert"])
    assert direct["via"] is None
    assert direct["joins"][0]["kind"] == "explicit" and direct["joins"][0]["declared"] is False
    assert sorted(direct["joins"][0]["column_pairs"][0]) == ["stadium_id", "stadium_id"]
    assert all("matched_question" in n.node.metadata for n in nodes)


def test_hints_are_hidden_from_node_text_by_default(music_tables, hashing_embedding):
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)
    for node in index.as_retriever(similarity_top_k=3).retrieve("stadium concert"):
        assert "JOIN " not in node.node.get_content(metadata_mode="llm")


def test_include_join_hints_in_text_appends_join_lines(music_tables, hashing_embedding):
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)
    retriever = index.as_retriever(similarity_top_k=3, include_join_hints_in_text=True)
    nodes = retriever.retrieve("stadium concert")
    context = "\n".join(n.node.get_content() for n in nodes)
    assert context.count("JOIN concert.stadium_id = stadium.stadium_id (explicit)") == 1
    later = max(("concert", "stadium"), key=[n.node.metadata["table_id"] for n in nodes].index)
    later_text = next(n.node.get_content() for n in nodes if n.node.metadata["table_id"] == later)
    assert "JOIN concert.stadium_id" in later_text


def test_declared_foreign_keys_show_as_declared_hints(hashing_embedding):
    from llama_index_pearl.tables.table import ForeignKey, Table

    orders = Table(
        "orders",
        pd.DataFrame({"order_no": [1, 2], "buyer": ["a", "b"]}),
        foreign_keys=[ForeignKey("buyer", "people", "handle")],
    )
    people = Table("people", pd.DataFrame({"handle": ["a", "b"], "city": ["Oslo", "Rome"]}))
    index = PearlTableIndex.from_tables([orders, people], embed_model=hashing_embedding)
    nodes = index.as_retriever(similarity_top_k=2).retrieve("orders buyer city")
    join = nodes[0].node.metadata["join_hints"][0]["joins"][0]
    assert join["declared"] is True
