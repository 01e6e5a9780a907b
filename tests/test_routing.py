"""A lake of several databases: each question is routed to its own database, and answered within it."""

from __future__ import annotations

import pandas as pd
import pytest
from llama_index.core import StorageContext
from llama_index.core.vector_stores import MetadataFilter, MetadataFilters, SimpleVectorStore

from llama_index_pearl import PearlConfig, PearlTableIndex, Table
from llama_index_pearl.retrieval.answer.answer import AnswerRequest
from llama_index_pearl.retrieval.answer.routing import (
    ROUTE_DEPTH,
    Routing,
    SourceEvidence,
    rank_confidence,
    route,
    source_evidence,
    twin_sources,
)


def test_the_source_holding_more_of_the_question_wins_over_the_one_with_the_best_table():
    """``customers`` is in both: the music store also holds the tracks and invoices the question asks about."""
    music = SourceEvidence("music", gap=0.01, gap_three=0.02, words=0.9, word_columns=0.6, tables=3)
    films = SourceEvidence("films", gap=0.0, gap_three=0.12, words=0.3, word_columns=0.35, tables=1)
    assert route([films, music], Routing(), {}).source == "music"


def test_a_close_second_source_is_named_as_a_rival():
    a = SourceEvidence("a", 0.0, 0.0, 0.5, 0.5, 2)
    b = SourceEvidence("b", 0.0, 0.0, 0.5, 0.5, 2)
    chosen = route([a, b], Routing(), {})
    assert chosen.source == "a" and chosen.rivals == ("b",)
    assert chosen.confidence == pytest.approx(0.5)


def test_a_table_no_set_reads_is_as_sure_as_its_databases_probability_times_how_often_its_rank_is_needed():
    ranked = ["music.track", "films.film", "music.invoice", "films.rental", "music.album"]
    sources = {t: t.split(".")[0] for t in ranked}
    sure = rank_confidence(ranked, sources, {"music": 0.8, "films": 0.2}, rates=(0.9, 0.5))
    assert sure["music.track"] == pytest.approx(0.8 * 0.9) and sure["films.film"] == pytest.approx(0.2 * 0.9)
    assert sure["films.rental"] == pytest.approx(0.2 * 0.5)
    assert sure["music.album"] == pytest.approx(0.8 * 0.5)  # the last rate holds for every later rank


def test_a_database_the_routing_did_not_read_is_taken_as_not_meant():
    assert rank_confidence(["shop.order"], {"shop.order": "shop"}, {"music": 1.0}) == {"shop.order": 0.0}


def test_a_route_holds_every_sources_probability():
    a = SourceEvidence("a", 0.0, 0.0, 0.5, 0.5, 2)
    b = SourceEvidence("b", 0.1, 0.1, 0.2, 0.3, 1)
    chosen = route([a, b], Routing(), {})
    probabilities = dict(chosen.probabilities)
    assert set(probabilities) == {"a", "b"} and sum(probabilities.values()) == pytest.approx(1.0)
    assert probabilities["a"] == chosen.confidence


def test_twins_are_named_only_when_the_ranking_holds_them():
    a, b = SourceEvidence("pagila", 0, 0, 1, 0.6, 3), SourceEvidence("zoo", 0.3, 0.3, 0, 0.2, 0)
    assert route([a, b], Routing(), {"pagila": ["sakila"]}).twins == ()
    twin = SourceEvidence("sakila", 0, 0, 1, 0.6, 3)
    assert route([a, twin], Routing(), {"pagila": ["sakila"]}).twins == ("sakila",)


def test_twin_schemas_match_once_a_prefix_all_their_tables_carry_is_dropped():
    twins = twin_sources(
        {
            "olist": ["olist_orders", "olist_customers", "olist_products"],
            "shop": ["orders", "customers", "products", "sellers"],
            "zoo": ["animals", "keepers"],
        }
    )
    assert twins == {"olist": ["shop"], "shop": ["olist"]}


SPORTS_CAMEL = {
    "Teams": ["teamID", "yearID", "name", "wins", "losses"],
    "Players": ["playerID", "nameFirst", "nameLast", "birthYear", "teamID"],
    "AllStarFull": ["playerID", "yearID", "gameID", "teamID", "startingPos"],
}
SPORTS_SNAKE = {
    "teams": ["team_id", "year_id", "name", "wins", "losses"],
    "players": ["player_id", "name_first", "name_last", "birth_year", "team_id"],
    "all_star_full": ["player_id", "year_id", "game_id", "team_id", "starting_pos"],
    "salaries": ["player_id", "year_id", "team_id", "salary"],
    "parks": ["park_id", "park_name", "city", "state"],
}


def _columns(source: str, tables: dict[str, list[str]]) -> dict[tuple[str, str], list[str]]:
    return {(source, name): columns for name, columns in tables.items()}


def test_a_camel_case_copy_and_a_snake_case_superset_are_named_copies():
    names = {"camel": list(SPORTS_CAMEL), "snake": list(SPORTS_SNAKE)}
    columns = {**_columns("camel", SPORTS_CAMEL), **_columns("snake", SPORTS_SNAKE)}
    assert twin_sources(names, columns) == {"camel": ["snake"], "snake": ["camel"]}


def test_a_copy_under_other_table_names_is_named_by_the_columns_it_holds():
    renamed = dict(zip(["team_seasons", "people", "all_star_games"], SPORTS_SNAKE.values()))
    names = {"camel": list(SPORTS_CAMEL), "stats": list(renamed)}
    columns = {**_columns("camel", SPORTS_CAMEL), **_columns("stats", renamed)}
    assert twin_sources(names, columns) == {"camel": ["stats"], "stats": ["camel"]}


def test_two_companies_tables_of_the_same_names_and_other_columns_are_no_copies():
    ours = {
        "customers": ["customerNumber", "customerName", "phone", "creditLimit"],
        "orders": ["orderNumber", "status"],
        "products": ["productCode", "productLine", "buyPrice"],
    }
    theirs = {
        "Customers": ["CustomerID", "CompanyName", "ContactName", "Fax"],
        "Orders": ["OrderID", "ShipVia"],
        "Products": ["ProductID", "UnitPrice", "Discontinued"],
    }
    names = {"ours": list(ours), "theirs": list(theirs)}
    columns = {**_columns("ours", ours), **_columns("theirs", theirs)}
    assert twin_sources(names, columns) == {}
    assert twin_sources(names) == {"ours": ["theirs"], "theirs": ["ours"]}  # names alone cannot tell


def test_a_source_evidence_counts_the_words_its_tables_hold_and_its_best_scores():
    ranked = [("m.track", 0.7), ("f.film", 0.65), ("m.invoice", 0.6)]
    sources = {"m.track": "m", "m.invoice": "m", "f.film": "f"}
    words = {"m.invoice": frozenset({"invoice"}), "f.film": frozenset({"film"})}
    evidence = {e.source: e for e in source_evidence(ranked, sources, words, {"invoice": 2.0, "film": 1.0}, {})}
    assert evidence["m"].words == pytest.approx(2 / 3) and evidence["f"].words == pytest.approx(1 / 3)
    assert evidence["m"].gap == 0.0 and evidence["f"].gap == pytest.approx(0.05)
    assert evidence["m"].gap_three == pytest.approx(0.7 - (0.7 + 0.6 + 0.6) / 3)


# ----------------------------------------------------------------- small lakes, the real encoder
def _table(source: str, name: str, frame: pd.DataFrame) -> Table:
    return Table(id=f"{source}/{name}", df=frame, name=name, source=source)


@pytest.fixture(scope="module")
def look_alikes(minilm) -> PearlTableIndex:
    """A music store and a film rental shop: both have customers, each sells its own things."""
    customers = pd.DataFrame({"customer_id": [1, 2, 3, 4], "first_name": ["Ann", "Bob", "Cy", "Di"]})
    tables = [
        _table("music", "customer", customers),
        _table("music", "track", pd.DataFrame({"track_id": [1, 2, 3], "track_name": ["Blue", "Red", "Gold"]})),
        _table(
            "music",
            "invoice_line",
            pd.DataFrame({"line_id": [1, 2, 3, 4], "customer_id": [1, 2, 1, 4], "track_id": [1, 2, 3, 1]}),
        ),
        _table("films", "customer", customers.assign(customer_id=[11, 12, 13, 14])),
        _table("films", "film", pd.DataFrame({"film_id": [5, 6, 7], "title": ["Alien", "Heat", "Up"]})),
        _table(
            "films",
            "rental",
            pd.DataFrame({"rental_id": [1, 2, 3, 4], "customer_id": [11, 12, 13, 11], "film_id": [5, 6, 7, 5]}),
        ),
    ]
    return PearlTableIndex.from_tables(tables, embed_model=minilm)


def _answer(index: PearlTableIndex, question: str) -> tuple[set[str], dict]:
    nodes = index.as_retriever(similarity_top_k=6).retrieve(question)
    return {n.node.metadata["table_id"] for n in nodes if n.node.metadata["in_set"]}, nodes[0].node.metadata


def test_a_question_naming_one_databases_tables_is_answered_within_it(look_alikes):
    chosen, meta = _answer(look_alikes, "Which tracks did each customer buy?")
    assert meta["routed_source"] == "music" and 0.5 < meta["route_confidence"] <= 1.0
    assert chosen and all(t.startswith("music/") for t in chosen)


def test_the_other_database_is_routed_to_by_its_own_words(look_alikes):
    chosen, meta = _answer(look_alikes, "Which films did each customer rent?")
    assert meta["routed_source"] == "films"
    assert chosen and all(t.startswith("films/") for t in chosen)


def _of_source(source: str) -> MetadataFilters:
    return MetadataFilters(filters=[MetadataFilter(key="source", value=source)])


def test_a_routed_tables_confidence_is_its_confidence_within_its_database_times_the_routes(look_alikes):
    """Asked of the lake, a table is needed only if the question means its database: the probability of both."""
    question = "Who are the customers?"
    nodes = look_alikes.as_retriever(similarity_top_k=6).retrieve(question)
    meta = nodes[0].node.metadata
    source, sure = meta["routed_source"], meta["route_confidence"]
    assert sure < 0.9 and meta["route_rivals"]  # both databases have customers
    inside = look_alikes.as_retriever(similarity_top_k=6, filters=_of_source(source)).retrieve(question)
    within = {n.node.metadata["table_id"]: n.node.metadata["set_confidence"] for n in inside}
    ours = [n.node.metadata for n in nodes if n.node.metadata["in_set"]]
    assert ours and all(m["set_tier"] == "needed" for m in ours)
    for m in ours:
        assert m["set_confidence"] == pytest.approx(within[m["table_id"]] * sure, abs=2e-4)


def test_every_returned_table_of_a_lake_carries_a_confidence_no_surer_than_its_database(look_alikes):
    nodes = look_alikes.as_retriever(similarity_top_k=6).retrieve("Which tracks did each customer buy?")
    meta = [n.node.metadata for n in nodes]
    routed, sure = meta[0]["routed_source"], meta[0]["route_confidence"]
    elsewhere = [m for m in meta if m["source"] != routed]
    assert len(meta) == 6 and elsewhere and all(m["set_confidence"] is not None for m in meta)
    assert all(m["set_confidence"] <= 1.0 - sure + 1e-4 for m in elsewhere)


def test_the_router_reads_a_ranking_route_depth_deep_only_where_the_reach_holds_two_sources(look_alikes):
    state = look_alikes.revisions.state()
    assert state.router.depth(None) == ROUTE_DEPTH
    assert state.router.depth(state.scope(_of_source("music"))) == 0


def test_the_answer_asks_its_search_as_deep_as_its_set_and_its_routing_read(look_alikes):
    state = look_alikes.revisions.state()
    rule, music = state.set_rule, state.scope(_of_source("music"))
    assert state.answer.depth(AnswerRequest(k=5, rule=rule, margin=None, scope=None)) == ROUTE_DEPTH
    assert state.answer_in(music).depth(AnswerRequest(k=5, rule=rule, margin=None, scope=music)) == rule.depth
    assert state.answer.depth(AnswerRequest(k=5, rule=None, margin=None, scope=None)) == 5


def test_a_search_that_scores_no_given_table_routes_within_its_ranking_kept_to_the_source(minilm, look_alikes):
    """A store known only through LlamaIndex cannot rank a source's tables anew: the ranking is kept to them."""
    context = StorageContext.from_defaults(vector_store=SimpleVectorStore())
    index = PearlTableIndex.from_tables(look_alikes.tables.values(), embed_model=minilm, storage_context=context)
    assert index.revisions.state().router.scoring is None
    chosen, meta = _answer(index, "Which films did each customer rent?")
    assert meta["routed_source"] == "films"
    assert chosen and all(t.startswith("films/") for t in chosen)


def test_one_source_is_not_routed(minilm):
    index = PearlTableIndex.from_tables({"a": pd.DataFrame({"x": [1, 2]})}, embed_model=minilm)
    assert index.as_retriever().retrieve("x?")[0].node.metadata["routed_source"] is None


def test_a_twin_of_the_chosen_database_is_named(minilm):
    schema = {
        "actor": pd.DataFrame({"actor_id": [1, 2, 3], "last_name": ["Hope", "Reed", "Page"]}),
        "film_actor": pd.DataFrame({"actor_id": [1, 2, 3, 1], "film_id": [9, 8, 9, 7]}),
    }
    tables = [_table(source, name, frame) for source in ("pagila", "sakila") for name, frame in schema.items()]
    tables.append(_table("zoo", "animal", pd.DataFrame({"animal_id": [1, 2], "species": ["zebra", "yak"]})))
    index = PearlTableIndex.from_tables(tables, embed_model=minilm)
    _, meta = _answer(index, "Which actors played in the most films?")
    assert meta["routed_source"] in ("pagila", "sakila")
    assert meta["route_twins"] == [{"pagila": "sakila", "sakila": "pagila"}[meta["routed_source"]]]


def test_a_question_across_two_sources_joined_by_a_key_gets_one_set_across_them(minilm):
    """Exports of one company in two folders: the invoices reference the CRM's customers by key."""
    tables = [
        _table(
            "crm",
            "customers",
            pd.DataFrame({"customer_id": range(1, 9), "customer_name": [f"Client {c}" for c in "ABCDEFGH"]}),
        ),
        _table(
            "billing",
            "invoices",
            pd.DataFrame(
                {
                    "invoice_id": range(100, 112),
                    "customer_id": [1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4],
                    "amount": [10.0, 20.5, 7.25, 99.0, 12.0, 5.5, 80.0, 3.0, 44.0, 1.0, 2.0, 9.9],
                }
            ),
        ),
    ]
    index = PearlTableIndex.from_tables(tables, embed_model=minilm)
    assert index.join_graph.has_edge("billing/invoices", "crm/customers")
    chosen, _ = _answer(index, "What is the total invoice amount of each customer name?")
    assert chosen == {"billing/invoices", "crm/customers"}


def test_a_question_two_databases_answer_gets_both_sets_each_labelled_with_its_database(minilm):
    schema = {
        "actor": pd.DataFrame({"actor_id": [1, 2, 3], "last_name": ["Hope", "Reed", "Page"]}),
        "film_actor": pd.DataFrame({"actor_id": [1, 2, 3, 1], "film_id": [9, 8, 9, 7]}),
    }
    tables = [_table(source, name, frame) for source in ("pagila", "sakila") for name, frame in schema.items()]
    index = PearlTableIndex.from_tables(tables, embed_model=minilm)
    nodes = index.as_retriever(similarity_top_k=4).retrieve("Which actors played in the most films?")
    meta = [n.node.metadata for n in nodes]
    chosen, (rival,) = meta[0]["routed_source"], meta[0]["route_rivals"]
    ours = [m for m in meta if m["in_set"]]
    theirs = [m for m in meta if not m["in_set"] and m["set_source"] == rival]
    assert {m["source"] for m in ours} == {chosen} and {m["set_source"] for m in ours} == {chosen}
    assert {m["source"] for m in theirs} == {rival} and {m["set_tier"] for m in theirs} == {"needed"}
    needed = [meta.index(m) for m in ours if m["set_tier"] == "needed"]
    assert len(ours) == len(schema)  # a rival's table takes no table of the set's place
    assert meta.index(theirs[0]) > max(needed)  # the rival's set follows the set's needed tier
    assert all(m["set_confidence"] is not None for m in meta)


def test_a_question_routed_to_a_copy_is_answered_within_the_source_the_user_prefers(minilm):
    schema = {
        "actor": pd.DataFrame({"actor_id": [1, 2, 3], "last_name": ["Hope", "Reed", "Page"]}),
        "film_actor": pd.DataFrame({"actor_id": [1, 2, 3, 1], "film_id": [9, 8, 9, 7]}),
    }
    tables = [_table(source, name, frame) for source in ("pagila", "sakila") for name, frame in schema.items()]
    for prefer, copy in (("sakila", "pagila"), ("pagila", "sakila")):
        config = PearlConfig(preferred_sources=prefer)
        index = PearlTableIndex.from_tables(tables, embed_model=minilm, config=config)
        _, meta = _answer(index, "Which actors played in the most films?")
        assert (meta["routed_source"], meta["route_twins"]) == (prefer, [copy])
        assert copy not in meta["route_rivals"]


def test_the_preferred_sources_are_kept_by_an_insert_and_a_load(minilm, tmp_path):
    index = PearlTableIndex.from_tables(
        [_table("crm", "users", pd.DataFrame({"user_id": [1, 2], "name": ["Ann", "Bo"]}))], embed_model=minilm
    )
    index.insert_tables(
        [_table("crm_copy", "users", pd.DataFrame({"user_id": [1], "name": ["Ann"]}))], preferred_sources="crm"
    )
    index.persist(tmp_path / "idx")
    assert PearlTableIndex.load(tmp_path / "idx", embed_model=minilm).config.preferred_sources == "crm"
