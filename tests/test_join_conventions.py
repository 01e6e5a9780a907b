"""Naming-convention classes of foreign keys, and the per-class report of join evaluation."""

from __future__ import annotations

import json

import pytest
from embeddings import TrigramEmbedding

from llama_index_pearl.evaluation.bench_tables import sql_type_dtype
from llama_index_pearl.evaluation.join_discovery import evaluate_join_discovery, format_join_report
from llama_index_pearl.joins.conventions import by_convention, convention_class


@pytest.mark.parametrize(
    ("child", "parent_table", "parent_column", "expected"),
    [
        ("person_id", "omop__person", "person_id", "entity_key"),
        ("UserId", "users", "Id", "generic_key"),
        ("gender_concept_id", "concept", "concept_id", "role_prefix"),
        ("home_player_1", "Player", "player_api_id", "numbered"),
        ("LastEditedBy", "People", "PersonID", "agent"),
        ("cust_id", "customers", "customer_id", "abbreviation"),
        ("topic_id", "forum_topics", "id", "compound_table"),
        ("hero_id", "superhero", "id", "compound_table"),
        ("SUBJECT_ID", "PATIENTS", "SUBJECT_ID", "same_name"),
        ("MakeId", "cars_data", "Id", "unrelated"),
    ],
)
def test_each_reference_falls_in_the_first_class_that_fits(child, parent_table, parent_column, expected):
    assert convention_class(child, parent_table, parent_column) == expected


def test_a_discovered_pair_takes_the_gold_class_and_any_other_its_own():
    gold = {frozenset({"a", "users"}): ("a", "UserId", "users", "Id")}
    predicted = {
        frozenset({"a", "users"}): ("a", "owner_user_id", "users", "Id"),
        frozenset({"b", "posts"}): ("b", "post_id", "posts", "post_id"),
    }
    classes = by_convention(predicted, gold)
    assert classes["generic_key"] == ({frozenset({"a", "users"})}, {frozenset({"a", "users"})})
    assert classes["entity_key"] == ({frozenset({"b", "posts"})}, set())


def test_sql_types_read_as_the_dtypes_a_join_compares():
    assert [sql_type_dtype(t) for t in ("INTEGER", "[int]", "NUMBER(6)", "numeric(19, 4)")] == [
        "Int64",
        "Int64",
        "Int64",
        "Float64",
    ]
    assert [sql_type_dtype(t) for t in ("varchar(50)", "nchar (5)", "TIMESTAMP", "[hierarchyid]")] == [
        "string",
        "string",
        "datetime64[ns]",
        None,
    ]


def test_a_header_only_benchmark_is_scored_by_names_and_declared_types(tmp_path):
    (tmp_path / "tables").mkdir()
    meta = [
        {"id": "s__users", "db": "s", "columns": ["Id", "Name"], "column_types": ["int", "nvarchar(50)"]},
        {"id": "s__badges", "db": "s", "columns": ["Id", "UserId"], "column_types": ["int", "int"]},
        {"id": "s__devices", "db": "s", "columns": ["Id", "UserCode"], "column_types": ["int", "nvarchar(8)"]},
    ]
    for row in meta:
        (tmp_path / "tables" / f"{row['id']}.csv").write_text(",".join(row["columns"]) + "\n")
    (tmp_path / "tables_meta.jsonl").write_text("\n".join(json.dumps(r) for r in meta))
    (tmp_path / "joins.jsonl").write_text(json.dumps({"left": "s__badges.UserId", "right": "s__users.Id"}))
    result = evaluate_join_discovery(tmp_path, TrigramEmbedding())
    assert result["table_pairs"]["precision"] == 1.0 and result["table_pairs"]["recall"] == 1.0
    assert result["by_convention"]["generic_key"]["recall"] == 1.0
    assert "generic_key" in format_join_report(result)
