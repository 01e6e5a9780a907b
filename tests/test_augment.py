"""Vertical partitioning: paths and generated questions become units of the right shape."""

from __future__ import annotations

import pandas as pd
import pytest

from llama_index_pearl import Table
from llama_index_pearl.corpus.augment import path_units
from llama_index_pearl.generation import GeneratedQuery, GenerationResult
from llama_index_pearl.joins import ColumnPair, JoinKind, JoinPath
from llama_index_pearl.text.serialization import Serializer


@pytest.fixture
def tables():
    return {
        "singer": Table("singer", pd.DataFrame({"singer_id": [1, 2], "name": ["Joe", "Ann"], "age": [30, 41]})),
        "concert": Table("concert", pd.DataFrame({"concert_id": [5], "singer_id": [2], "venue": ["Wembley"]})),
    }


def _path(kind):
    return JoinPath(("singer", "concert"), ((ColumnPair("singer", "singer_id", "concert", "singer_id"),),), kind, 1.2)


def _result(columns):
    return GenerationResult(request_id="p", queries=[GeneratedQuery("Where did Ann sing?", columns)])


def test_explicit_path_gives_one_joined_entry_over_both_tables(tables):
    units = path_units(
        _path(JoinKind.EXPLICIT), _result({"singer": ["name"], "concert": ["venue"]}), tables, Serializer()
    )
    assert len(units) == 1
    assert sorted(units[0].metadata["table_ids"]) == ["concert", "singer"]
    assert units[0].metadata["kind"] == "explicit"
    assert units[0].text.startswith("Where did Ann sing?\nTable: singer\nColumns: name")
    assert "Columns: venue" in units[0].text


def test_joined_entry_lists_the_far_end_of_the_path_first_for_pooling_ties(tables):
    # questions target the far end of the chain; max pooling breaks ties by table_ids order
    units = path_units(
        _path(JoinKind.EXPLICIT), _result({"singer": ["name"], "concert": ["venue"]}), tables, Serializer()
    )
    assert units[0].metadata["table_ids"] == ["concert", "singer"]
    assert units[0].text.index("Table: singer") < units[0].text.index("Table: concert")


def test_implicit_path_gives_one_sub_entry_per_table(tables):
    units = path_units(
        _path(JoinKind.IMPLICIT), _result({"singer": ["name"], "concert": ["venue"]}), tables, Serializer()
    )
    assert [u.metadata["table_ids"] for u in units] == [["singer"], ["concert"]]
    assert all(u.text.startswith("Where did Ann sing?") for u in units)
    assert units[0].metadata["columns"] == {"singer": ["name"]}


def test_join_overlapping_rows_come_first_in_views(tables):
    units = path_units(
        _path(JoinKind.EXPLICIT), _result({"singer": ["name"], "concert": ["venue"]}), tables, Serializer()
    )
    singer_block = units[0].text.split("\n\n")[0].splitlines()
    assert singer_block[3] == "Ann"  # singer 2 plays in the concert; singer 1 does not


def test_skipped_generation_makes_no_unit(tables):
    skipped = GenerationResult(request_id="p", queries=[], skipped_reason="garbage")
    assert path_units(_path(JoinKind.EXPLICIT), skipped, tables, Serializer()) == []
