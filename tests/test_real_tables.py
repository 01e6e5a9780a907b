"""Join discovery on tables as real systems write them: R's NA, warehouse prefixes, statistics, composite keys."""

from __future__ import annotations

import pandas as pd
from embeddings import TrigramEmbedding

from llama_index_pearl.generation import HeuristicQueryGenerator, PathRequest
from llama_index_pearl.joins import discover_join_paths, extend_join_paths
from llama_index_pearl.joins.graph import joins_between
from llama_index_pearl.joins.profiles import profile_column, profile_tables
from llama_index_pearl.retrieval.answer.join_hints import compute_join_hints
from llama_index_pearl.tables.inputs import load_tables
from llama_index_pearl.tables.table import Table

EMB = TrigramEmbedding()


def joined(tables: list[Table]) -> set[frozenset[str]]:
    """Table pairs joined by an explicit edge of the discovered graph."""
    graph = discover_join_paths(tables, EMB, use_declared=False).graph
    return {frozenset((u, v)) for u, v, d in graph.edges(data=True) if d["kind"] == "explicit"}


def test_na_after_300_integers_is_a_missing_value_not_a_crash():
    cells = [str(i) for i in range(300)] + ["NA", "N/A", "\\N", "#N/A", "null", ""]
    p = profile_column("flights", "dep_delay", cells)
    assert (p.dtype, p.n_values, p.int_range) == ("int", 300, (0, 299))


def test_one_late_word_makes_a_column_text_rather_than_failing():
    assert profile_column("t", "code", [str(i) for i in range(500)] + ["X9"]).dtype == "text"


def test_a_mostly_empty_column_with_distinct_values_is_no_key():
    speeds = ["NA"] * 90 + [str(100 + i) for i in range(10)]
    assert not profile_column("planes", "speed", speeds).key_like


def test_statistics_repeated_in_two_tables_are_no_join():
    batting = pd.DataFrame({"playerID": [f"p{i % 10}" for i in range(40)], "W": [str(i % 9) for i in range(40)]})
    post = pd.DataFrame({"playerID": [f"p{i % 5}" for i in range(20)], "W": [str(i % 7) for i in range(20)]})
    assert not joined([Table("stats__batting", batting), Table("stats__batting_post", post)])


def test_warehouse_prefixes_do_not_hide_a_key():
    orders = pd.DataFrame({"o_orderkey": [str(i) for i in range(1, 41)], "o_status": ["F", "O"] * 20})
    lines = pd.DataFrame(
        {"l_orderkey": [str(1 + i // 3) for i in range(60)], "l_linenumber": [str(1 + i % 3) for i in range(60)]}
    )
    edges = discover_join_paths([Table("w__orders", orders), Table("w__lineitem", lines)], EMB).edges
    keys = {(e.left_column, e.right_column) for e in edges if e.explicit}
    assert ("l_orderkey", "o_orderkey") in keys
    assert ("l_linenumber", "o_orderkey") not in keys  # 1..3 sits inside any key that counts from 1


def test_role_playing_keys_join_a_dimension_read_in_part():
    dates = pd.DataFrame({"d_date_sk": [str(2415022 + i) for i in range(50)], "d_year": ["1900"] * 50})
    sales = pd.DataFrame(
        {
            "ss_sold_date_sk": [str(2451000 + i) for i in range(30)],
            "ss_ship_date_sk": [str(2451010 + i) for i in range(30)],
            "ss_quantity": [str(i % 5 + 1) for i in range(30)],
        }
    )
    tables = [Table("dw__date_dim", dates), Table("dw__store_sales", sales)]
    graph = discover_join_paths(tables, EMB).graph
    joins = joins_between(graph, "dw__store_sales", "dw__date_dim")
    assert {j.column_pairs for j in joins} == {(("ss_sold_date_sk", "d_date_sk"),), (("ss_ship_date_sk", "d_date_sk"),)}


def test_a_composite_key_is_one_join_of_all_its_columns():
    weather = pd.DataFrame(
        {
            "origin": ["EWR", "JFK", "LGA"] * 8,
            "hour": [str(h) for h in range(8) for _ in range(3)],
            "temp": [str(30 + i) for i in range(24)],
        }
    )
    flights = pd.DataFrame(
        {
            "flight": [str(100 + i) for i in range(48)],
            "origin": ["EWR", "JFK", "LGA"] * 16,
            "hour": [str(h % 8) for h in range(48)],
        }
    )
    graph = discover_join_paths([Table("nyc__weather", weather), Table("nyc__flights", flights)], EMB).graph
    (join,) = joins_between(graph, "nyc__flights", "nyc__weather")
    assert set(join.column_pairs) == {("origin", "origin"), ("hour", "hour")}
    (hint,) = compute_join_hints(graph, ["nyc__flights", "nyc__weather"])
    assert " AND " in hint.text() and "or JOIN" not in hint.text()


def test_two_references_to_one_key_are_alternatives_never_anded():
    teams = pd.DataFrame({"team_id": [f"T{i}" for i in range(12)], "name": [f"Team {i}" for i in range(12)]})
    series = pd.DataFrame(
        {
            "round": [f"R{i}" for i in range(30)],
            "team_id_winner": [f"T{i % 12}" for i in range(30)],
            "team_id_loser": [f"T{(i + 5) % 12}" for i in range(30)],
        }
    )
    graph = discover_join_paths([Table("mlb__teams", teams), Table("mlb__series", series)], EMB).graph
    (hint,) = compute_join_hints(graph, ["mlb__series", "mlb__teams"])
    conditions = [j.column_pairs for j in (*hint.joins, *hint.alternatives)]
    assert sorted(conditions) == [(("team_id_loser", "team_id"),), (("team_id_winner", "team_id"),)]


def test_a_sorted_parent_is_read_past_its_first_rows():
    people = pd.DataFrame({"player_code": [f"{c}{i:04d}" for c in "abcdefgh" for i in range(900)]})
    games = pd.DataFrame({"player_code": [f"h{i:04d}" for i in range(0, 900, 9)], "runs": ["1"] * 100})
    people_profile = next(p for p in profile_tables([Table("bb__people", people)]) if p.column == "player_code")
    assert people_profile.n_rows == 7200
    assert frozenset({"bb__people", "bb__games"}) in joined([Table("bb__people", people), Table("bb__games", games)])


def test_own_business_ids_of_the_same_format_are_no_join():
    items = pd.DataFrame(
        {"i_item_sk": [str(i) for i in range(1, 31)], "i_item_id": [f"AAAA{i:04d}" for i in range(30)]}
    )
    customers = pd.DataFrame(
        {"c_customer_sk": [str(i) for i in range(1, 21)], "c_customer_id": [f"AAAA{i:04d}" for i in range(20)]}
    )
    assert not joined([Table("dw__item", items), Table("dw__customer", customers)])


def test_three_airports_of_origin_are_found_in_a_large_airport_key():
    codes = [f"{a}{b}{c}" for a in "ABCDEFGH" for b in "ABCDEFGH" for c in "ABCDEF"]  # 384 codes
    airports = pd.DataFrame({"faa": codes, "name": [f"Airport {c}" for c in codes]})
    flights = pd.DataFrame({"origin": ["ABA", "CDE", "HGF"] * 10, "flight": [str(i) for i in range(30)]})
    edges = discover_join_paths([Table("nyc__airports", airports), Table("nyc__flights", flights)], EMB).edges
    assert any(e.explicit and (e.left_column, e.right_column) == ("origin", "faa") for e in edges)


def test_an_inserted_fact_table_finds_its_composite_key_and_its_prefixed_dimension():
    part = pd.DataFrame({"p_partkey": [str(i) for i in range(1, 21)], "p_name": [f"part {i}" for i in range(20)]})
    partsupp = pd.DataFrame(
        {
            "ps_partkey": [str(1 + i // 2) for i in range(40)],
            "ps_suppkey": [str(1 + i % 2) for i in range(40)],
            "ps_availqty": [str(100 + i) for i in range(40)],
        }
    )
    lineitem = pd.DataFrame(
        {
            "l_partkey": [str(1 + i % 20) for i in range(80)],
            "l_suppkey": [str(1 + (i // 20) % 2) for i in range(80)],
            "l_quantity": [str(i % 7 + 1) for i in range(80)],
        }
    )
    before = [Table("h__part", part), Table("h__partsupp", partsupp)]
    graph = discover_join_paths(before, EMB).graph
    after = extend_join_paths([*before, Table("h__lineitem", lineitem)], graph, ["h__lineitem"], EMB).graph
    assert joins_between(after, "h__lineitem", "h__part")[0].column_pairs == (("l_partkey", "p_partkey"),)
    composite = joins_between(after, "h__lineitem", "h__partsupp")[0]
    assert set(composite.column_pairs) == {("l_partkey", "ps_partkey"), ("l_suppkey", "ps_suppkey")}


def test_a_key_join_whose_samples_share_no_value_still_gets_a_question():
    dates = pd.DataFrame({"d_date_sk": [str(2415022 + i) for i in range(20)], "d_day_name": ["Monday"] * 20})
    sales = pd.DataFrame({"ss_sold_date_sk": [str(2451000 + i) for i in range(20)], "ss_store": ["Oslo"] * 20})
    tables = {t.id: t for t in (Table("dw__date_dim", dates), Table("dw__store_sales", sales))}
    path = next(p for p in discover_join_paths(list(tables.values()), EMB).paths if len(p.tables) == 2)
    result = HeuristicQueryGenerator().generate(PathRequest(path, tables))
    assert result.queries and not result.skipped_reason


def test_csv_options_still_win_on_an_r_export(tmp_path):
    (tmp_path / "planes.csv").write_text("tailnum;speed\nN1;NA\nN2;120\nN3;NA\n", encoding="utf-8")
    (table,) = load_tables(tmp_path, csv_options={"delimiter": ";"})
    speed = next(p for p in profile_tables([table]) if p.column == "speed")
    assert table.columns == ["tailnum", "speed"] and (speed.dtype, speed.n_values) == ("int", 1)


def test_two_references_to_one_key_are_joined_through_it_not_to_each_other():
    teams = pd.DataFrame({"team_id": [f"T{i}" for i in range(10)], "city": [f"City {i}" for i in range(10)]})
    batting = pd.DataFrame({"team_id": [f"T{i % 10}" for i in range(50)], "hits": [str(i) for i in range(50)]})
    series = pd.DataFrame({"winner_team_id": [f"T{i % 10}" for i in range(30)], "round": ["WS"] * 30})
    tables = [Table("mlb__teams", teams), Table("mlb__batting", batting), Table("mlb__series", series)]
    graph = discover_join_paths(tables, EMB).graph
    assert graph.has_edge("mlb__batting", "mlb__teams") and graph.has_edge("mlb__series", "mlb__teams")
    assert not graph.has_edge("mlb__batting", "mlb__series")
