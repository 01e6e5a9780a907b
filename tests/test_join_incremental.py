"""Incremental join discovery: new edges only touch new tables; deletes drop only what goes through a table."""

from __future__ import annotations

import pandas as pd
import pytest
from embeddings import HashingEmbedding, TrigramEmbedding

from llama_index_pearl.joins import (
    CandidateEdge,
    discover_join_paths,
    drop_table,
    edges_from_graph,
    extend_join_paths,
    graph_from_json,
    graph_to_json,
    lazy_greedy,
)
from llama_index_pearl.tables.table import Table


def _tables(music_tables) -> list[Table]:
    ticket = pd.DataFrame({"ticket_id": [100, 101], "concert_id": [10, 11], "price": [35, 60]})
    return [Table(name, df) for name, df in {**music_tables, "ticket": ticket}.items()]


def test_candidate_edge_round_trips_through_a_dict():
    edge = CandidateEdge("a", "b_id", "b", "id", ("S", "V"), "fk_name", 1.0, 0.4, 0.6, 0.5, 1.0, True, False)
    assert CandidateEdge.from_dict(edge.to_dict()) == edge


def test_join_graph_keeps_its_column_pair_edges_through_json(music_tables):
    tables = [Table(n, df) for n, df in music_tables.items()]
    graph = discover_join_paths(tables, HashingEmbedding()).graph
    assert edges_from_graph(graph_from_json(graph_to_json(graph))) == edges_from_graph(graph)
    assert edges_from_graph(graph)


def test_extend_scores_only_edges_touching_the_new_tables(music_tables):
    tables = _tables(music_tables)
    old = discover_join_paths([t for t in tables if t.id != "ticket"], HashingEmbedding(), budget=10)
    found = extend_join_paths(tables, old.graph, ["ticket"], HashingEmbedding(), budget=10)
    assert found.edges and all("ticket" in e.tables for e in found.edges)
    assert found.paths and all("ticket" in p.tables for p in found.paths)


def test_extend_keeps_existing_edges_and_paths(music_tables):
    tables = _tables(music_tables)
    old = discover_join_paths([t for t in tables if t.id != "ticket"], HashingEmbedding(), budget=10)
    merged = extend_join_paths(tables, old.graph, ["ticket"], HashingEmbedding(), budget=10).graph
    assert set(old.graph.edges) <= set(merged.edges)
    old_ids = {p["path_id"] for p in old.graph.graph["paths"]}
    assert old_ids <= {p["path_id"] for p in merged.graph["paths"]}


def test_extend_fills_only_the_budget_left_by_existing_paths(music_tables):
    tables = _tables(music_tables)
    old = discover_join_paths([t for t in tables if t.id != "ticket"], HashingEmbedding(), budget=2)
    found = extend_join_paths(tables, old.graph, ["ticket"], HashingEmbedding(), budget=2)
    explicit = [p for p in found.graph.graph["paths"] if p["kind"] == "explicit"]
    assert len(explicit) <= 2


def test_extend_refuses_a_table_already_in_the_graph(music_tables):
    tables = _tables(music_tables)
    old = discover_join_paths(tables, HashingEmbedding())
    with pytest.raises(ValueError, match="already in the join graph: ticket"):
        extend_join_paths(tables, old.graph, ["ticket"], HashingEmbedding())


def test_drop_table_removes_its_edges_and_paths_and_leaves_the_input_alone(music_tables):
    graph = discover_join_paths(_tables(music_tables), HashingEmbedding(), budget=10).graph
    out, removed = drop_table(graph, "stadium")
    assert "stadium" in graph and "stadium" not in out
    assert removed and all("stadium" in p.tables for p in removed)
    assert all("stadium" not in p["tables"] for p in out.graph["paths"])


def test_drop_unknown_table_names_it(music_tables):
    graph = discover_join_paths(_tables(music_tables), HashingEmbedding()).graph
    with pytest.raises(ValueError, match="'nope'"):
        drop_table(graph, "nope")


class _P:
    def __init__(self, name: str, score: float, tables: tuple[str, ...]) -> None:
        self.name, self.score, self.tables = name, score, tables


def test_lazy_greedy_counts_covered_tables_as_already_seen():
    a = _P("a", 1.0, ("x", "y"))
    b = _P("b", 0.95, ("z", "w"))
    assert [p.name for p in lazy_greedy([a, b], 1, 0.1)] == ["a"]
    # x and y are covered by existing paths: a gains 1.0, b gains 0.95 + 0.2
    assert [p.name for p in lazy_greedy([a, b], 1, 0.1, covered={"x", "y"})] == ["b"]


def test_discovery_touching_a_table_scores_only_its_pairs(music_tables):
    found = discover_join_paths(_tables(music_tables), HashingEmbedding(), touching=["ticket"])
    assert found.edges and all("ticket" in e.tables for e in found.edges)


def test_discovery_refuses_a_previous_graph_without_the_touched_tables(music_tables):
    tables = _tables(music_tables)
    old = discover_join_paths(tables, HashingEmbedding())
    with pytest.raises(ValueError, match="previous needs touching"):
        discover_join_paths(tables, HashingEmbedding(), previous=old.graph)


class _RecordingEmbedding(TrigramEmbedding):
    """Remembers every text it is asked to embed."""

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        _EMBEDDED.extend(texts)
        return super()._get_text_embeddings(texts)


_EMBEDDED: list[str] = []


def test_an_insert_embeds_only_the_values_of_the_pairs_it_scores():
    owners = Table("owners", pd.DataFrame({"owner_id": [1, 2, 3], "city": ["Oslo", "Rome", "Lima"]}))
    dogs = Table("dogs", pd.DataFrame({"dog_id": [11, 12, 13], "owner_id": [1, 2, 2]}))
    visits = Table("visits", pd.DataFrame({"visit_id": [21, 22, 23, 24], "dog_id": [11, 11, 12, 13]}))
    _EMBEDDED.clear()
    found = discover_join_paths([owners, dogs, visits], _RecordingEmbedding(), touching=["visits"])
    assert ("visits", "dog_id", "dogs", "dog_id") in {
        (e.left_table, e.left_column, e.right_table, e.right_column) for e in found.edges
    }
    assert {"11", "21"} <= set(_EMBEDDED)  # dogs.dog_id, visits.visit_id
    assert not {"oslo", "rome", "lima"} & {
        text.lower() for text in _EMBEDDED
    }  # owners.city pairs with no visits column
