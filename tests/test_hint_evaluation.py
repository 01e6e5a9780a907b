"""Join hints scored against the join conditions of gold SQL (sqlglot)."""

from __future__ import annotations

import networkx as nx
import pandas as pd
import pytest
from graphs import add_join

from llama_index_pearl.evaluation.benchmark import BenchQuery
from llama_index_pearl.evaluation.hint_recall import SqlSchema, evaluate_join_hints, gold_join_pairs
from llama_index_pearl.tables.table import Table

pytest.importorskip("sqlglot")


def _table(table_id: str, *columns: str) -> Table:
    return Table(table_id, pd.DataFrame({c: [1] for c in columns}))


TABLES = [
    _table("music__singer", "singer_id", "name"),
    _table("music__concert", "concert_id", "singer_id", "stadium_id", "year"),
    _table("music__stadium", "stadium_id", "name", "capacity"),
    _table("zoo__stadium", "stadium_id"),
]
SCHEMA = SqlSchema(TABLES)


def _pairs(*pairs: tuple[str, str]) -> set[frozenset[str]]:
    return {frozenset(p) for p in pairs}


def test_join_on_with_aliases_gives_the_column_pair():
    sql = "SELECT T2.name FROM concert AS T1 JOIN stadium AS T2 ON T1.stadium_id = T2.stadium_id WHERE T1.year > 2013"
    assert gold_join_pairs(sql, "music", SCHEMA) == _pairs(("music__concert.stadium_id", "music__stadium.stadium_id"))


def test_three_table_join_gives_both_joins_and_ignores_value_filters():
    sql = (
        "select t1.name from singer as t1 join concert as t2 on t1.singer_id = t2.singer_id "
        "join stadium as t3 on t2.stadium_id = t3.stadium_id where t3.capacity = 5"
    )
    assert gold_join_pairs(sql, "music", SCHEMA) == _pairs(
        ("music__singer.singer_id", "music__concert.singer_id"),
        ("music__concert.stadium_id", "music__stadium.stadium_id"),
    )


def test_in_subquery_and_scalar_subquery_are_semi_joins():
    expected = _pairs(("music__stadium.stadium_id", "music__concert.stadium_id"))
    in_sql = "SELECT name FROM stadium WHERE stadium_id NOT IN (SELECT stadium_id FROM concert)"
    assert gold_join_pairs(in_sql, "music", SCHEMA) == expected
    scalar = (
        "SELECT count(*) FROM concert WHERE stadium_id = (SELECT stadium_id FROM stadium ORDER BY capacity LIMIT 1)"
    )
    assert gold_join_pairs(scalar, "music", SCHEMA) == expected


def test_except_between_two_tables_is_an_anti_join():
    sql = "SELECT stadium_id FROM stadium EXCEPT SELECT stadium_id FROM concert"
    assert gold_join_pairs(sql, "music", SCHEMA) == _pairs(("music__stadium.stadium_id", "music__concert.stadium_id"))


def test_single_table_and_unparseable_sql_have_no_join():
    assert gold_join_pairs("SELECT count(*) FROM singer WHERE singer_id = 3", "music", SCHEMA) == set()
    assert gold_join_pairs("SELECT FROM WHERE (", "music", SCHEMA) == set()


def _graph(column_pairs_by_edge: dict[tuple[str, str], tuple[str, str]]) -> nx.Graph:
    graph = nx.Graph()
    for (left, right), (lc, rc) in column_pairs_by_edge.items():
        add_join(graph, left, lc, right, rc)
    return graph


QUERY = BenchQuery(
    "q",
    "Which stadium hosted Ann Lee?",
    ("music__singer", "music__concert", "music__stadium"),
    3,
    db="music",
    sql="SELECT T3.name FROM singer AS T1 JOIN concert AS T2 ON T1.singer_id = T2.singer_id "
    "JOIN stadium AS T3 ON T2.stadium_id = T3.stadium_id",
)
RANKED = ["music__concert", "music__singer", "music__stadium", "zoo__stadium"]


def test_right_hints_score_full_recall_and_precision():
    graph = _graph(
        {
            ("music__concert", "music__singer"): ("singer_id", "singer_id"),
            ("music__concert", "music__stadium"): ("stadium_id", "stadium_id"),
            ("music__stadium", "zoo__stadium"): ("stadium_id", "stadium_id"),  # towards a non-gold table: not judged
        }
    )
    scores = evaluate_join_hints([QUERY], [RANKED], graph, TABLES, [3])
    assert scores["@3"] == {"questions": 1, "n": 1, "recall": 100.0, "precision": 100.0, "n_precision": 1}


def test_a_wrong_key_between_gold_tables_costs_recall_and_precision():
    graph = _graph(
        {
            ("music__concert", "music__singer"): ("singer_id", "singer_id"),
            ("music__concert", "music__stadium"): ("year", "capacity"),
        }
    )
    scores = evaluate_join_hints([QUERY], [RANKED], graph, TABLES, [3])["@3"]
    assert (scores["recall"], scores["precision"]) == (50.0, 50.0)


def test_questions_missing_a_gold_table_in_the_top_k_are_not_scored():
    graph = _graph({("music__concert", "music__singer"): ("singer_id", "singer_id")})
    scores = evaluate_join_hints([QUERY], [RANKED], graph, TABLES, [2, 3])
    assert scores["@2"]["n"] == 0 and scores["@3"]["n"] == 1
