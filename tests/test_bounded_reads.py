"""Bounded reads: at most max_rows_read rows per table from every source, exact count kept, sample persisted."""

from __future__ import annotations

import json
import sqlite3

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import sqlalchemy as sa

from llama_index_pearl import PearlTableIndex, load_tables
from llama_index_pearl.tables.inputs import DEFAULT_MAX_ROWS_READ, read_table_file


def _sqlite(path, n_rows: int):
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE events (event_id INTEGER PRIMARY KEY, kind TEXT)")
        connection.executemany("INSERT INTO events VALUES (?, ?)", ((i, f"k{i % 7}") for i in range(n_rows)))
        connection.execute("CREATE TABLE kinds (kind TEXT)")
        connection.executemany("INSERT INTO kinds VALUES (?)", ((f"k{i}",) for i in range(7)))
    return path


def test_the_default_is_ten_thousand_rows():
    assert DEFAULT_MAX_ROWS_READ == 10_000


def test_sql_reads_are_limited_by_the_server_and_counted_exactly(tmp_path):
    engine = sa.create_engine(f"sqlite:///{_sqlite(tmp_path / 'big.db', 20_000)}")
    statements = []
    sa.event.listen(engine, "before_cursor_execute", lambda *args: statements.append(args[2]))
    tables = {t.id: t for t in load_tables(engine, max_rows_read=1_000)}
    assert tables["events"].n_rows == 1_000 and tables["events"].total_rows == 20_000
    assert tables["kinds"].n_rows == 7 and tables["kinds"].total_rows is None
    reads = [s for s in statements if "FROM main.events" in s and "count" not in s.lower()]
    assert reads and all("LIMIT" in s for s in reads)


def test_csv_reads_stop_after_max_rows_and_count_quoted_newlines_right(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("id,note\n" + "".join(f'{i},"line one\nline two"\n' for i in range(5_000)))
    table = read_table_file(path, max_rows_read=100)
    assert table.n_rows == 100 and table.total_rows == 5_000
    assert table.df["note"].iloc[0] == "line one\nline two"


def test_parquet_reads_only_leading_row_groups(tmp_path, monkeypatch):
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"id": list(range(10_000))}), path, row_group_size=1_000)
    monkeypatch.setattr(pq.ParquetFile, "read", lambda *a, **k: pytest.fail("read the whole file"))
    table = read_table_file(path, max_rows_read=1_500)
    assert table.n_rows == 1_500 and table.total_rows == 10_000
    assert table.df["id"].tolist() == list(range(1_500))


def test_dataframes_are_cut_too_and_none_reads_everything():
    frame = pd.DataFrame({"x": range(50)})
    assert load_tables({"t": frame}, max_rows_read=10)[0].total_rows == 50
    assert load_tables({"t": frame}, max_rows_read=None)[0].n_rows == 50


@pytest.mark.parametrize("bad", [0, -1, 2.5, "3"])
def test_a_bad_max_rows_read_is_refused(bad):
    with pytest.raises(ValueError, match="max_rows_read"):
        load_tables({"t": pd.DataFrame({"x": [1]})}, max_rows_read=bad)


def test_only_the_sample_is_persisted_and_the_count_survives_a_round_trip(tmp_path, hashing_embedding):
    url = f"sqlite:///{_sqlite(tmp_path / 'big.db', 20_000)}"
    index = PearlTableIndex.from_tables(url, embed_model=hashing_embedding, max_rows_read=500)
    index.persist(tmp_path / "idx")
    records = {r["id"]: r for r in map(json.loads, (tmp_path / "idx" / "tables.jsonl").read_text().splitlines())}
    assert len(records["events"]["rows"]) == 500 and records["events"]["total_rows"] == 20_000
    loaded = PearlTableIndex.load(tmp_path / "idx", embed_model=hashing_embedding)
    assert loaded.tables["events"].row_count == 20_000 and loaded.config.max_rows_read == 500


def test_a_ragged_csv_is_still_counted_exactly(tmp_path):
    path = tmp_path / "ragged.csv"
    path.write_text("a,b,c\n" + "".join("1,2\n" if i % 3 else "1,2,3\n" for i in range(300)))
    table = read_table_file(path, max_rows_read=10)
    assert table.n_rows == 10 and table.total_rows == 300


def test_a_latin1_csv_is_counted_in_its_encoding(tmp_path):
    path = tmp_path / "latin.csv"
    path.write_bytes(("id,name\n" + "".join(f"{i},José {i}\n" for i in range(500))).encode("latin-1"))
    table = read_table_file(path, max_rows_read=20)
    assert table.total_rows == 500 and table.df["name"].iloc[0] == "José 0"
