"""The ObjectIndex anchor is LlamaIndex's own schema retriever over a SQLite database of the tables."""

from __future__ import annotations

import pandas as pd
import pytest

from llama_index_pearl.evaluation.llamaindex_baseline import ObjectIndexRanker, column_sql_type, sqlite_database
from llama_index_pearl.tables.table import Table


@pytest.mark.parametrize(
    ("cells", "expected"),
    [(["1", "2", ""], "INTEGER"), (["1.5", "2"], "REAL"), (["1", "x"], "TEXT"), (["", ""], "TEXT")],
)
def test_a_column_gets_the_narrowest_type_that_holds_its_cells(cells, expected):
    assert column_sql_type(pd.Series(cells)) == expected


def test_the_database_names_tables_by_id_and_llamaindex_describes_their_typed_columns(tmp_path):
    tables = [
        Table(id="music__singer", df=pd.DataFrame({"singer_id": ["1", "2"], "name": ["Joe", "Ann"]})),
        Table(id="zoo__singer", df=pd.DataFrame({"bird_id": ["7"], "song": ["trill"]})),
    ]
    database = sqlite_database(tables, tmp_path / "pool.sqlite")
    assert sorted(database.get_usable_table_names()) == ["music__singer", "zoo__singer"]
    info = database.get_single_table_info("music__singer")
    assert "singer_id (INTEGER)" in info and "name (TEXT)" in info


def test_the_ranker_returns_the_schema_that_shares_the_question_words(tmp_path, hashing_embedding):
    tables = [
        Table(id="stadium", df=pd.DataFrame({"stadium_name": ["Wembley"], "capacity": ["90000"]})),
        Table(id="animal", df=pd.DataFrame({"species": ["zebra"], "keeper": ["Tom"]})),
    ]
    ranker = ObjectIndexRanker(sqlite_database(tables, tmp_path / "pool.sqlite"), hashing_embedding)
    assert ranker.rank("keeper species", 1) == ["animal"]
