"""discover_join_paths end to end, the join graph's JSON/GraphML forms, and the evaluation."""

from __future__ import annotations

import json
import logging

import networkx as nx
import pandas as pd
from embeddings import TrigramEmbedding

from llama_index_pearl.evaluation.join_discovery import evaluate_join_discovery, format_join_report
from llama_index_pearl.joins import (
    JoinKind,
    JoinPath,
    discover_join_paths,
    graph_from_json,
    graph_to_json,
    paths_from_graph,
    read_graphml,
    write_graphml,
)
from llama_index_pearl.tables.table import ForeignKey, Table

EMB = TrigramEmbedding()


def shop_corpus() -> list[Table]:
    """owners <- dogs -> breeds, plus an unrelated weather table."""
    owners = pd.DataFrame({"owner_id": ["101", "102", "103", "104"], "city": ["Oslo", "Rome", "Lima", "Pune"]})
    dogs = pd.DataFrame(
        {
            "dog_id": ["9001", "9002", "9003", "9004", "9005"],
            "owner_id": ["101", "102", "102", "103", "104"],
            "breed_code": ["BUL", "ESK", "LAB", "BUL", "ESK"],
            "weight": ["9.5", "12.1", "20.0", "8.3", "11.0"],
        }
    )
    breeds = pd.DataFrame({"breed_code": ["BUL", "ESK", "LAB"], "breed_name": ["Bulldog", "Eskimo", "Labrador"]})
    weather = pd.DataFrame({"station": ["s1", "s2"], "temp": ["3.1", "4.2"]})
    return [
        Table("kennel__Owners", owners),
        Table("kennel__Dogs", dogs),
        Table("kennel__Breeds", breeds),
        Table("meteo__weather", weather),
    ]


def test_foreign_keys_named_after_tables_become_explicit_paths():
    result = discover_join_paths(shop_corpus(), EMB, use_declared=False, budget=10)
    pairs = {frozenset(p.tables) for p in result.paths if p.kind is JoinKind.EXPLICIT and len(p.tables) == 2}
    assert frozenset({"kennel__Dogs", "kennel__Owners"}) in pairs
    assert frozenset({"kennel__Dogs", "kennel__Breeds"}) in pairs
    assert "meteo__weather" not in {t for p in result.paths for t in p.tables}


def test_joins_are_oriented_along_the_path_from_foreign_key_to_key():
    result = discover_join_paths(shop_corpus(), EMB, use_declared=False)
    pair = next(p for p in result.paths if set(p.tables) == {"kennel__Dogs", "kennel__Owners"})
    assert pair.tables == ("kennel__Dogs", "kennel__Owners")
    assert (pair.joins[0][0].left_column, pair.joins[0][0].right_column) == ("owner_id", "owner_id")


def test_a_path_of_three_tables_runs_through_the_shared_middle_table():
    result = discover_join_paths(shop_corpus(), EMB, use_declared=False, budget=10)
    three = [p for p in result.paths if len(p.tables) == 3]
    assert [p.tables[1] for p in three] == ["kennel__Dogs"]
    assert all(pair.left_table == p.tables[i] for p in three for i, join in enumerate(p.joins) for pair in join)


def test_budget_limits_the_paths_of_each_pool():
    result = discover_join_paths(shop_corpus(), EMB, use_declared=False, budget=1)
    assert sum(p.kind is JoinKind.EXPLICIT for p in result.paths) == 1


def test_declared_foreign_key_is_used_even_without_name_or_value_evidence():
    a = Table("a", pd.DataFrame({"k": ["1", "2", "3"]}))
    b = Table("b", pd.DataFrame({"ref": ["x", "y", "z"]}), foreign_keys=[ForeignKey("ref", "a", "k")])
    result = discover_join_paths([a, b], EMB)
    assert [(p.tables, p.declared) for p in result.paths] == [(("b", "a"), True)]
    assert result.graph.edges["a", "b"]["declared"] is True


def test_unrelated_tables_give_an_empty_graph_and_a_warning(caplog):
    tables = [Table("a", pd.DataFrame({"p": ["1", "2"]})), Table("b", pd.DataFrame({"q": ["x y", "z w"]}))]
    with caplog.at_level(logging.WARNING):
        result = discover_join_paths(tables, EMB)
    assert result.paths == [] and result.graph.number_of_edges() == 0 and set(result.graph) == {"a", "b"}
    assert "no join path" in caplog.text


def test_a_single_table_works_and_is_not_embedded():
    result = discover_join_paths([Table("only", pd.DataFrame({"x": ["1"]}))], EMB)
    assert result.paths == [] and list(result.graph) == ["only"]
    assert set(result.seconds) == {"profile", "embed", "candidates", "score", "paths", "select"}


def test_graph_round_trips_through_json():
    result = discover_join_paths(shop_corpus(), EMB, use_declared=False)
    data = json.loads(json.dumps(graph_to_json(result.graph)))
    back = graph_from_json(data)
    assert nx.utils.graphs_equal(back, result.graph)
    assert paths_from_graph(back) == result.paths


def test_graph_round_trips_through_graphml(tmp_path):
    result = discover_join_paths(shop_corpus(), EMB, use_declared=False)
    write_graphml(result.graph, tmp_path / "g.graphml")
    back = read_graphml(tmp_path / "g.graphml")
    edge = back.edges["kennel__Dogs", "kennel__Owners"]
    assert edge["column_pairs"] == result.graph.edges["kennel__Dogs", "kennel__Owners"]["column_pairs"]
    assert [JoinPath.from_dict(p) for p in back.graph["paths"]] == result.paths


def test_evaluation_scores_discovered_joins_against_the_gold_file(tmp_path):
    folder = tmp_path / "tables"
    folder.mkdir()
    for table in shop_corpus():
        table.df.to_csv(folder / f"{table.id}.csv", index=False)
    gold = [
        {"left": "kennel__Dogs.owner_id", "right": "kennel__Owners.owner_id"},
        {"left": "kennel__Dogs.breed_code", "right": "kennel__Breeds.breed_code"},
    ]
    (tmp_path / "joins.jsonl").write_text("\n".join(json.dumps(g) for g in gold))
    result = evaluate_join_discovery(tmp_path, EMB)
    assert result["table_pairs"]["recall"] == 1.0 and result["column_pairs"]["recall"] == 1.0
    assert json.loads(json.dumps(result)) == result
    assert "explicit edges, table pairs" in format_join_report(result)
