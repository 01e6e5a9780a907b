"""The answer as a set of tables that join, in two tiers: what the question needs (joined by the fewest bridges),
and what it may need."""

from __future__ import annotations

import networkx as nx
import pandas as pd
import pytest
from graphs import add_join

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.retrieval.answer.join_hints import compute_join_hints
from llama_index_pearl.retrieval.answer.table_sets import (
    SetReason,
    SetRule,
    SetTier,
    TableSet,
    choose_table_set,
    fit_whole,
    set_first,
)

MATCHED, BRIDGE, UNJOINED = SetReason.MATCHED, SetReason.BRIDGE, SetReason.UNJOINED
NEEDED, MAYBE = SetTier.NEEDED, SetTier.MAYBE


def _gigs() -> nx.Graph:
    graph = nx.Graph()
    graph.add_nodes_from(["artist", "gig", "venue", "label"])
    add_join(graph, "gig", "artist_id", "artist", "artist_id")
    add_join(graph, "gig", "venue_id", "venue", "venue_id")
    return graph


def _chain() -> nx.Graph:
    """country - city - address - customer: a chain of three joins."""
    graph = nx.Graph()
    for left, right in [("city", "country"), ("address", "city"), ("customer", "address")]:
        add_join(graph, left, f"{right}_id", right, f"{right}_id")
    return graph


GIGS = [("artist", 0.60), ("venue", 0.55), ("label", 0.40), ("gig", 0.20)]


def test_a_link_table_the_question_never_names_comes_in_as_a_bridge_of_the_needed_tables():
    chosen = choose_table_set(GIGS, {"artist": 0.9, "venue": 0.8, "label": 0.02, "gig": 0.05}, "artist", _gigs())
    assert chosen.tables == ("artist", "venue", "gig")
    assert dict(chosen.reasons) == {"artist": MATCHED, "venue": MATCHED, "gig": BRIDGE}
    assert dict(chosen.tiers) == {"artist": NEEDED, "venue": NEEDED, "gig": NEEDED}


def test_a_chain_of_three_joins_comes_in_whole():
    ranked = [("customer", 0.60), ("country", 0.55), ("address", 0.20), ("city", 0.15)]
    chosen = choose_table_set(ranked, {"customer": 0.9, "country": 0.7}, "customer", _chain())
    assert set(chosen.tables) == {"customer", "country", "address", "city"}
    assert [t for t in chosen.tables if chosen.reasons[t] is MATCHED] == ["customer", "country"]


def test_no_more_bridges_than_the_rule_allows():
    ranked = [("customer", 0.60), ("country", 0.55), ("address", 0.20), ("city", 0.15)]
    chosen = choose_table_set(ranked, {"customer": 0.9, "country": 0.7}, "customer", _chain(), SetRule(bridges=1))
    assert chosen.tables == ("customer", "country")
    assert chosen.reasons["country"] is UNJOINED


def test_a_table_below_the_second_bar_stays_out():
    chosen = choose_table_set(GIGS, {"artist": 0.9, "venue": 0.05, "label": 0.01, "gig": 0.03}, "artist", _gigs())
    assert chosen.tables == ("artist",)


def test_a_table_between_the_bars_may_be_needed_and_comes_after_the_needed_ones():
    confidence = {"artist": 0.9, "venue": 0.3, "label": 0.02, "gig": 0.7}
    chosen = choose_table_set(GIGS, confidence, "artist", _gigs(), SetRule(needed=0.5, maybe=0.2))
    assert chosen.tables == ("artist", "gig", "venue")
    assert [chosen.tiers[t] for t in chosen.tables] == [NEEDED, NEEDED, MAYBE]
    assert chosen.needed == ("artist", "gig")


def test_a_needed_table_no_path_reaches_at_first_joins_once_another_one_makes_the_path():
    """Takahashi-Matsuyama: ``country`` is four joins from the seed, but one from ``city``, which comes in first."""
    graph = _chain()
    ranked = [("customer", 0.6), ("country", 0.58), ("city", 0.5), ("address", 0.1)]
    chosen = choose_table_set(ranked, {"country": 0.95, "city": 0.9}, "customer", graph, SetRule(bridges=1))
    assert dict(chosen.reasons) == {"customer": MATCHED, "city": MATCHED, "address": BRIDGE, "country": MATCHED}


def test_a_table_of_another_source_never_joins_the_set_without_a_join():
    graph = nx.Graph()
    graph.add_nodes_from(["shop.orders", "zoo.animals"])
    ranked = [("shop.orders", 0.6), ("zoo.animals", 0.58)]
    sources = {"shop.orders": "shop", "zoo.animals": "zoo"}
    chosen = choose_table_set(ranked, {"zoo.animals": 0.9}, "shop.orders", graph, sources=sources)
    assert chosen.tables == ("shop.orders",)


def test_a_table_of_the_seeds_source_without_a_join_comes_in_unjoined_last():
    confidence = {"artist": 0.9, "label": 0.8, "venue": 0.7, "gig": 0.05}
    chosen = choose_table_set(GIGS, confidence, "artist", _gigs())
    assert chosen.tables == ("artist", "venue", "gig", "label")
    assert chosen.reasons["label"] is UNJOINED


def test_every_candidate_keeps_its_confidence_and_a_bridge_is_as_sure_as_bridges_are():
    confidence = {"artist": 0.9, "venue": 0.8, "label": 0.02, "gig": 0.05}
    chosen = choose_table_set(GIGS, confidence, "artist", _gigs(), SetRule(bridge_confidence=0.6))
    assert chosen.confidence["label"] == 0.02
    assert chosen.confidence["gig"] == 0.6


def test_a_bridge_is_never_surer_than_the_tables_it_joins():
    """``venue`` may be needed at 0.31: the link table ``gig`` that joins it to the set is no surer than that."""
    confidence = {"artist": 0.9, "venue": 0.31, "label": 0.02, "gig": 0.05}
    chosen = choose_table_set(GIGS, confidence, "artist", _gigs(), SetRule(needed=0.5, maybe=0.12))
    assert chosen.tiers["gig"] is MAYBE and chosen.reasons["gig"] is BRIDGE
    assert chosen.confidence["gig"] == 0.31


def test_a_tables_confidence_is_its_evidences_before_its_ranks():
    chosen = TableSet(("venue",), {"venue": MATCHED}, {"venue": 0.9}, other_confidence={"venue": 0.4, "label": 0.1})
    assert chosen.confidence_of("venue") == 0.9 and chosen.confidence_of("label") == 0.1
    assert chosen.confidence_of("artist") is None


def test_the_set_comes_first_then_the_ranking():
    chosen = TableSet(("venue", "gig"), {"venue": MATCHED, "gig": BRIDGE})
    assert set_first(["artist", "venue", "label", "gig"], chosen) == ["venue", "gig", "artist", "label"]


def test_a_cut_never_leaves_a_bridge_behind_the_table_it_joined():
    whole = TableSet(
        ("artist", "venue", "gig"),
        {"artist": MATCHED, "venue": MATCHED, "gig": BRIDGE},
        tiers={"artist": NEEDED, "venue": NEEDED, "gig": NEEDED},
    )
    assert fit_whole(["artist", "venue", "gig", "label"], whole, 2) == ["artist", "label"]


def test_the_sets_first_table_comes_alone_where_its_bridges_do_not_fit():
    """A chain of three tables, the first joined through a bridge: one table asked for is the first, never none."""
    whole = TableSet(
        ("stadium", "concert", "singer"),
        {"stadium": MATCHED, "concert": BRIDGE, "singer": MATCHED},
        tiers={"stadium": NEEDED, "concert": NEEDED, "singer": NEEDED},
    )
    assert fit_whole(["stadium", "concert", "singer"], whole, 1) == ["stadium"]


def test_a_rival_databases_table_never_takes_the_place_of_a_table_of_the_set():
    """A hedge (a rival database's best table) comes after the whole set, bridges included, whatever ``k``."""
    reasons = {"a": MATCHED, "m": MATCHED, "mb": BRIDGE}
    tiers = {"a": NEEDED, "m": MAYBE, "mb": MAYBE}
    chosen = TableSet(("a", "m", "mb"), reasons, tiers=tiers, hedges=("h",))
    order = set_first(["h", "a", "m", "mb", "x"], chosen)
    assert order == ["a", "m", "mb", "h", "x"]
    assert fit_whole(order, chosen, 3) == ["a", "m", "mb"]
    assert fit_whole(order, chosen, 4) == ["a", "m", "mb", "h"]


def test_a_rival_databases_table_surer_than_a_may_be_needed_one_comes_before_it_never_before_a_needed_one():
    reasons = {"a": MATCHED, "m": MATCHED, "mb": BRIDGE, "n": MATCHED}
    tiers = {"a": NEEDED, "m": MAYBE, "mb": MAYBE, "n": MAYBE}
    confidence = {"a": 0.9, "m": 0.4, "mb": 0.4, "n": 0.15, "h": 0.3}
    chosen = TableSet(("a", "m", "mb", "n"), reasons, confidence, tiers=tiers, hedges=("h",))
    assert set_first(["h", "a", "x", "m", "mb", "n"], chosen) == ["a", "m", "mb", "h", "n", "x"]


def test_a_rival_databases_table_surer_than_a_may_be_needed_one_fills_only_the_room_the_set_leaves():
    reasons = {"a": MATCHED, "m": MATCHED, "mb": BRIDGE, "n": MATCHED}
    tiers = {"a": NEEDED, "m": MAYBE, "mb": MAYBE, "n": MAYBE}
    confidence = {"a": 0.9, "m": 0.4, "mb": 0.4, "n": 0.15, "h": 0.3}
    chosen = TableSet(("a", "m", "mb", "n"), reasons, confidence, tiers=tiers, hedges=("h",))
    order = set_first(["h", "a", "x", "m", "mb", "n"], chosen)
    assert fit_whole(order, chosen, 4) == ["a", "m", "mb", "n"]
    assert fit_whole(order, chosen, 5) == ["a", "m", "mb", "h", "n"]


def test_an_empty_ranking_has_an_empty_set():
    assert choose_table_set([], {}, "x", nx.Graph()).tables == ()


@pytest.mark.parametrize(
    "field, value", [("depth", 0), ("bridges", -1), ("needed", 0.0), ("maybe", 1.0), ("coverage", -1)]
)
def test_a_rule_out_of_range_is_refused(field, value):
    with pytest.raises(ValueError, match=field):
        SetRule(**{field: value})


@pytest.mark.parametrize(
    "field, value",
    [
        ("needed", "0.5"),
        ("maybe", None),
        ("coverage", "x"),
        ("depth", 2.5),
        ("depth", True),
        ("bridges", 1.5),
        ("bridges", False),
        ("bridge_confidence", float("nan")),
        ("coverage", float("inf")),
        ("needed", True),
        ("confidence", 0.5),
    ],
)
def test_a_rule_of_the_wrong_type_is_refused_naming_the_field(field, value):
    with pytest.raises(ValueError, match=rf"SetRule\.{field} must be"):
        SetRule(**{field: value})


def test_the_second_bar_above_the_first_is_refused():
    with pytest.raises(ValueError, match="maybe"):
        SetRule(needed=0.3, maybe=0.4)


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


RULE = SetRule(needed=0.2, maybe=0.1)  # bars low enough for the hashing encoder's scores


def test_every_returned_table_says_its_tier_reason_and_confidence(gig_index):
    nodes = gig_index.as_retriever(similarity_top_k=4, set_rule=RULE).retrieve("Did Joe Sharp ever play at Wembley?")
    meta = [n.node.metadata for n in nodes]
    members = [m for m in meta if m["in_set"]]
    assert members and all(m["set_tier"] in ("needed", "may_be_needed") for m in members)
    assert all(m["set_tier"] is None for m in meta if not m["in_set"])
    assert all(0.0 <= m["set_confidence"] <= 1.0 for m in meta)


def test_a_set_larger_than_similarity_top_k_is_cut_there(gig_index):
    retriever = gig_index.as_retriever(similarity_top_k=1, set_rule=SetRule(needed=0.01, maybe=0.01))
    nodes = retriever.retrieve("Did Joe Sharp ever play at Wembley?")
    assert len(nodes) == 1
    assert nodes[0].node.metadata["set_size"] > 1


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_no_bridge_comes_back_without_the_table_it_joined_whatever_similarity_top_k(gig_index, k):
    retriever = gig_index.as_retriever(similarity_top_k=k, set_rule=SetRule(needed=0.01, maybe=0.01))
    meta = [n.node.metadata for n in retriever.retrieve("Did Joe Sharp ever play at Wembley?")]
    for i, m in enumerate(meta):
        if m["set_reason"] == "bridge":
            assert any(earlier["set_reason"] == "matched" for earlier in meta[:i])


def test_set_margin_returns_a_set_larger_than_similarity_top_k_whole(gig_index):
    retriever = gig_index.as_retriever(similarity_top_k=1, set_margin=0, set_rule=SetRule(needed=0.01, maybe=0.01))
    nodes = retriever.retrieve("Did Joe Sharp ever play at Wembley?")
    assert len(nodes) == nodes[0].node.metadata["set_size"] > 1


def test_the_sets_joins_are_the_join_hints_each_once(gig_index):
    retriever = gig_index.as_retriever(similarity_top_k=3, set_rule=SetRule(needed=0.01, maybe=0.01))
    nodes = retriever.retrieve("Did Joe Sharp ever play at Wembley?")
    in_set = [n.node.metadata["table_id"] for n in nodes if n.node.metadata["in_set"]]
    hints = {tuple(sorted(h["tables"])): h for n in nodes for h in n.node.metadata["join_hints"] if h["via"] is None}
    expected = {tuple(sorted(h.tables)) for h in compute_join_hints(gig_index.join_graph, in_set) if h.via is None}
    assert set(hints) == expected


def test_set_rule_none_returns_the_pooled_ranking_without_a_set(gig_index):
    nodes = gig_index.as_retriever(similarity_top_k=4, set_rule=None).retrieve("Did Joe Sharp ever play at Wembley?")
    assert not any(n.node.metadata["in_set"] for n in nodes)
    assert [n.score for n in nodes] == sorted((n.score for n in nodes), reverse=True)


def test_the_index_settings_give_the_retrievers_bars(hashing_embedding):
    tables = {"a": pd.DataFrame({"x": [1, 2]}), "b": pd.DataFrame({"y": [3, 4]})}
    index = PearlTableIndex.from_tables(tables, embed_model=hashing_embedding, needed_confidence=0.7)
    assert index.revisions.state().set_rule.needed == 0.7
    with pytest.raises(ValueError, match="set_rule"):
        index.as_retriever(set_rule="loose")


# ----------------------------------------------------------------- the real encoder: what a question needs
@pytest.fixture(scope="module")
def shop(minilm) -> PearlTableIndex:
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
    return PearlTableIndex.from_tables(tables, embed_model=minilm)


def _set(index: PearlTableIndex, question: str) -> set[str]:
    nodes = index.as_retriever(similarity_top_k=4).retrieve(question)
    return {n.node.metadata["table_id"] for n in nodes if n.node.metadata["in_set"]}


def test_a_business_word_finds_the_table_of_its_column(shop):
    """ "revenue" names no table and no column: it is payment.amount's meaning, two joins from the customer."""
    assert {"customer", "payment"} <= _set(shop, "Which customers brought in the most revenue?")


def test_a_single_table_questions_set_is_that_table(shop):
    assert _set(shop, "What are the addresses of the stores?") == {"store"}


def test_a_tie_on_a_star_unit_does_not_bring_its_tables_in(minilm):
    """A star unit names the fact and its four dimensions: each scores the star's score for a question about one."""
    dims = {
        "store": pd.DataFrame({"store_id": [1, 2, 3], "store_name": ["North", "South", "East"]}),
        "product": pd.DataFrame({"product_id": [1, 2, 3], "product_name": ["Tea", "Jam", "Oil"]}),
        "customer": pd.DataFrame({"customer_id": [1, 2, 3], "customer_name": ["Ann", "Bob", "Cy"]}),
        "calendar": pd.DataFrame({"calendar_id": [1, 2, 3], "day": ["2024-01-01", "2024-01-02", "2024-01-03"]}),
    }
    sales = pd.DataFrame(
        {
            "sale_id": range(1, 10),
            "store_id": [1, 2, 3] * 3,
            "product_id": [1, 1, 2, 2, 3, 3, 1, 2, 3],
            "customer_id": [3, 2, 1] * 3,
            "calendar_id": [1, 2, 3, 1, 2, 3, 1, 2, 3],
            "quantity": [5, 2, 7, 1, 3, 9, 4, 4, 2],
        }
    )
    index = PearlTableIndex.from_tables({**dims, "sales": sales}, embed_model=minilm)
    assert index.report.units_by_kind.get("star", 0) == 1
    nodes = index.as_retriever(similarity_top_k=5).retrieve("List the names of the stores.")
    tiers = {n.node.metadata["table_id"]: n.node.metadata["set_tier"] for n in nodes}
    assert [t for t, tier in tiers.items() if tier == "needed"] == ["store"]
    assert tiers["product"] is tiers["customer"] is tiers["calendar"] is None


@pytest.fixture(scope="module")
def orders_shop(minilm) -> PearlTableIndex:
    """An order line holds the amounts (quantity, unit price); payments hold what was paid."""
    tables = {
        "customers": pd.DataFrame(
            {"customer_id": [1, 2, 3, 4], "full_name": ["Ann Lee", "Bob Ray", "Cy Park", "Di Moss"]}
        ),
        "orders": pd.DataFrame(
            {
                "order_id": [10, 11, 12, 13, 14],
                "customer_id": [1, 2, 1, 3, 4],
                "order_date": ["2024-01-03", "2024-01-05", "2024-02-01", "2024-02-11", "2024-03-07"],
            }
        ),
        "order_items": pd.DataFrame(
            {
                "order_id": [10, 10, 11, 12, 13, 14],
                "product_id": [1, 2, 2, 3, 1, 3],
                "quantity": [2, 1, 5, 1, 3, 2],
                "unit_price": [9.5, 4.0, 4.0, 19.9, 9.5, 19.9],
            }
        ),
        "products": pd.DataFrame(
            {"product_id": [1, 2, 3], "product_name": ["Kettle", "Mug", "Toaster"], "category_id": [1, 2, 1]}
        ),
        "categories": pd.DataFrame({"category_id": [1, 2], "category_name": ["Appliances", "Tableware"]}),
        "payments": pd.DataFrame(
            {"payment_id": [100, 101, 102, 103], "order_id": [10, 11, 12, 13], "amount": [23.0, 20.0, 19.9, 28.5]}
        ),
        "stores": pd.DataFrame({"store_id": [1, 2], "store_address": ["1 Main St", "9 High St"]}),
    }
    return PearlTableIndex.from_tables(tables, embed_model=minilm)


def test_a_measure_word_finds_the_order_lines_that_hold_its_amounts(orders_shop):
    """ "revenue" is quantity times unit price on an order line: no name spells it, and payments are no answer."""
    assert {"products", "order_items"} <= _set(orders_shop, "What revenue did each product bring in?")


def test_a_question_of_five_tables_in_business_words_gets_all_five(orders_shop):
    """ "spend" is an order line's amounts, reached from the customer through the order; "product category"
    names a lookup two joins away."""
    question = "How much did each customer spend per product category?"
    wanted = {"customers", "orders", "order_items", "products", "categories"}
    nodes = orders_shop.as_retriever(similarity_top_k=5, set_margin=0).retrieve(question)
    assert wanted <= {n.node.metadata["table_id"] for n in nodes if n.node.metadata["in_set"]}


@pytest.mark.parametrize(
    ("question", "table"),
    [
        ("When was each order placed?", "orders"),
        ("Which payments were larger than 20?", "payments"),
    ],
)
def test_a_single_table_question_gets_its_table_first(orders_shop, question, table):
    nodes = orders_shop.as_retriever(similarity_top_k=3).retrieve(question)
    assert nodes[0].node.metadata["table_id"] == table
