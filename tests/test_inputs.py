"""Tables in: every supported input, and bad input reported by name."""

from __future__ import annotations

import os
import sqlite3

import numpy as np
import pandas as pd
import pytest

from llama_index_pearl import Table, load_tables
from llama_index_pearl.tables.table import ForeignKey, cell_text


def _write_db(path):
    connection = sqlite3.connect(path)
    connection.executescript(
        """
        CREATE TABLE stadium (stadium_id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE concert (concert_id INTEGER PRIMARY KEY, stadium_id INTEGER REFERENCES stadium(stadium_id));
        INSERT INTO stadium VALUES (1, 'Wembley');
        INSERT INTO concert VALUES (10, 1);
        """
    )
    connection.commit()
    connection.close()


def test_dict_of_dataframes_keeps_keys_as_ids():
    tables = load_tables({"a": pd.DataFrame({"x": [1]}), "b": pd.DataFrame({"y": [2]})})
    assert [t.id for t in tables] == ["a", "b"]


def test_table_objects_keep_title_and_description():
    table = Table(id="t", df=pd.DataFrame({"x": [1]}), title="Page", description="About t")
    assert load_tables([table])[0].title == "Page"


def test_csv_folder_uses_file_stems_as_ids(tmp_path):
    (tmp_path / "singer.csv").write_text("singer_id,name\n007,Joe\n")
    (tmp_path / "notes.txt").write_text("ignored")
    tables = load_tables(tmp_path)
    assert [t.id for t in tables] == ["singer"]
    assert tables[0].df.iloc[0, 0] == "007"  # leading zeros survive: cells are read as text


def test_list_of_csv_and_parquet_files(tmp_path):
    pd.DataFrame({"x": [1, 2]}).to_parquet(tmp_path / "p.parquet")
    (tmp_path / "c.csv").write_text("y\n3\n")
    tables = load_tables([tmp_path / "p.parquet", str(tmp_path / "c.csv")])
    assert [t.id for t in tables] == ["p", "c"]


def test_sqlalchemy_url_reads_every_table_and_declared_foreign_keys(tmp_path):
    _write_db(tmp_path / "m.db")
    tables = {t.id: t for t in load_tables(f"sqlite:///{tmp_path / 'm.db'}")}
    assert set(tables) == {"stadium", "concert"}
    assert tables["concert"].foreign_keys == [ForeignKey("stadium_id", "stadium", "stadium_id")]


def test_sqlalchemy_engine_and_llamaindex_sqldatabase(tmp_path):
    import sqlalchemy as sa
    from llama_index.core import SQLDatabase

    _write_db(tmp_path / "m.db")
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'm.db'}")
    assert len(load_tables(engine)) == 2
    assert len(load_tables(SQLDatabase(engine))) == 2


def test_duplicate_table_ids_are_named(tmp_path):
    table = Table(id="dup", df=pd.DataFrame({"x": [1]}))
    with pytest.raises(ValueError, match="Duplicate table id 'dup'"):
        load_tables([table, Table(id="dup", df=pd.DataFrame({"y": [1]}))])


def test_table_without_columns_is_named():
    with pytest.raises(ValueError, match="Table 'empty' has no columns"):
        load_tables({"empty": pd.DataFrame()})


def test_duplicate_columns_after_normalisation_are_named():
    df = pd.DataFrame([[1, 2]], columns=["Name", " name "])
    with pytest.raises(ValueError, match=r"Table 'people' has duplicate column names.*'Name'.*' name '"):
        load_tables({"people": df})


def test_a_repeated_csv_header_gets_pandas_names_and_one_warning_naming_the_file(tmp_path, caplog):
    (tmp_path / "wiki.csv").write_text("Year,Performance,Performance,performance\n2001,Hamlet,lead,x\n")
    with caplog.at_level("WARNING"):
        (table,) = load_tables(tmp_path)
    assert table.columns == ["Year", "Performance", "Performance.1", "performance.2"]
    assert table.df.iloc[0].tolist() == ["2001", "Hamlet", "lead", "x"]
    (warning,) = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert "wiki.csv" in warning and "'Performance' -> 'Performance.1'" in warning


def test_a_file_that_cannot_be_read_is_skipped_with_a_warning_and_the_others_are_read(tmp_path, caplog):
    from llama_index_pearl.tables.inputs import read_tables

    (tmp_path / "good.csv").write_text("id,name\n1,Ann\n")
    (tmp_path / "broken.csv").write_bytes(bytes(64))
    with caplog.at_level("WARNING"):
        read = read_tables(tmp_path)
    assert [t.id for t in read.tables] == ["good"]
    assert [f.path for f in read.skipped] == [str(tmp_path / "broken.csv")]
    assert "NUL bytes" in read.skipped[0].reason
    (warning,) = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert "broken.csv" in warning and "NUL bytes" in warning


def test_strict_stops_at_the_first_file_that_cannot_be_read(tmp_path):
    (tmp_path / "good.csv").write_text("id,name\n1,Ann\n")
    (tmp_path / "broken.csv").write_bytes(bytes(64))
    with pytest.raises(ValueError, match=r"broken\.csv.*NUL bytes"):
        load_tables(tmp_path, strict=True)


def test_a_folder_of_unreadable_files_is_an_error_naming_them(tmp_path):
    (tmp_path / "broken.csv").write_bytes(bytes(64))
    with pytest.raises(ValueError, match=r"No table could be read.*broken\.csv"):
        load_tables(tmp_path)


def test_unreadable_file_is_named(tmp_path):
    bad = tmp_path / "broken.parquet"
    bad.write_bytes(b"not parquet at all")
    with pytest.raises(ValueError, match="broken.parquet"):
        load_tables([bad])


def test_missing_path_is_named(tmp_path):
    with pytest.raises(ValueError, match="nowhere"):
        load_tables(tmp_path / "nowhere")


def test_header_only_table_is_allowed(tmp_path):
    (tmp_path / "schema_only.csv").write_text("id,name\n")
    assert load_tables(tmp_path)[0].n_rows == 0


def test_non_string_headers_are_stringified():
    table = load_tables({"t": pd.DataFrame([[1, 2]], columns=[0, 2024])})[0]
    assert table.columns == ["0", "2024"]


@pytest.mark.parametrize("value", [None, np.nan, float("nan"), pd.NA, pd.NaT])
def test_missing_values_render_as_empty_cells(value):
    assert cell_text(value) == ""


def test_integral_floats_render_without_trailing_zero():
    assert cell_text(3.0) == "3"
    assert cell_text(2.5) == "2.5"


def test_text_rows_of_any_rows_and_columns_match_the_frame_cell_by_cell():
    df = pd.DataFrame({"id": [1, 2, 3, 4], "name": ["a", None, "c", "d"], "score": [1.0, 2.5, float("nan"), 4.0]})
    table = Table(id="t", name="t", df=df)
    assert table.text_rows([1, 2], ["score", "id"]) == [["2.5", "2"], ["", "3"]]
    assert table.text_rows([3, 0], ["name"]) == [["d"], ["a"]]
    assert table.text_rows() == [["1", "a", "1"], ["2", "", "2.5"], ["3", "c", ""], ["4", "d", "4"]]


def test_text_rows_of_an_unknown_column_names_the_table():
    table = Table(id="shop", name="shop", df=pd.DataFrame({"id": [1]}))
    with pytest.raises(KeyError, match="shop.*price"):
        table.text_rows([0], ["price"])


def test_a_derived_value_is_computed_once_per_table_and_again_for_new_rows():
    table = Table("t", pd.DataFrame({"a": [1, 2]}))
    calls = []

    def rows() -> int:
        calls.append(1)
        return len(table.df)

    assert table.derived("rows", rows) == 2
    assert table.derived("rows", rows) == 2
    table.df = pd.DataFrame({"a": [1, 2, 3]})
    assert table.derived("rows", rows) == 3
    assert len(calls) == 2


# ---------------------------------------------------------------- a DataFrame's named index is its key
_ORDERS = pd.DataFrame({"customer_id": [7, 8, 7], "month": ["jan", "jan", "feb"], "amount": [1.0, 2.0, 3.0]})


@pytest.mark.parametrize(
    "frame",
    [
        _ORDERS.set_index("customer_id"),
        _ORDERS.groupby(["customer_id", "month"]).sum(),
        _ORDERS.pivot_table(index="customer_id", columns="month", values="amount"),
    ],
    ids=["set_index", "groupby", "pivot_table"],
)
def test_a_named_index_is_kept_as_the_leading_columns_as_to_csv_writes_it(frame):
    table = load_tables({"orders": frame})[0]
    assert table.columns[: len(frame.index.names)] == list(frame.index.names)
    assert table.df["customer_id"].tolist() == frame.index.get_level_values("customer_id").tolist()


def test_an_index_named_like_a_column_already_there_is_that_column():
    table = load_tables({"orders": _ORDERS.set_index("customer_id", drop=False)})[0]
    assert table.columns == ["customer_id", "month", "amount"]


def test_an_unnamed_index_is_not_data():
    table = load_tables({"orders": _ORDERS[_ORDERS["amount"] > 1]})[0]
    assert table.columns == ["customer_id", "month", "amount"]


# ---------------------------------------------------------------- what real files and databases hold
def test_a_file_name_that_is_not_utf8_is_read_under_its_bytes_escaped_with_a_warning(tmp_path, caplog):
    folder = bytes(tmp_path / "export")
    os.makedirs(folder)
    with open(folder + b"/caf\xe9.csv", "wb") as handle:  # Latin-1, as a Windows zip archive leaves it
        handle.write(b"id,name\n1,Ann\n")
    tables = load_tables(os.fsdecode(folder))
    assert [t.id for t in tables] == ["caf\\xe9"] and tables[0].name == "caf\\xe9"
    assert "caf\\xe9" in caplog.text and "not UTF-8" in caplog.text


def test_a_folder_holding_a_file_name_that_is_not_utf8_builds_with_the_bundled_encoder(tmp_path, minilm):
    from llama_index_pearl import PearlTableIndex

    folder = bytes(tmp_path / "export")
    os.makedirs(folder)
    with open(folder + b"/caf\xe9.csv", "wb") as handle:
        handle.write(b"cafe_id,name\n1,Ann\n2,Bo\n")
    index = PearlTableIndex.from_tables(os.fsdecode(folder), embed_model=minilm)
    index.persist(tmp_path / "idx")
    assert set(PearlTableIndex.load(tmp_path / "idx", embed_model=minilm).tables) == {"caf\\xe9"}


def test_sqlite_values_their_declared_type_does_not_fit_are_read_as_stored(tmp_path):
    connection = sqlite3.connect(tmp_path / "real.db")
    connection.executescript(
        """
        CREATE TABLE visits (visit_id INTEGER PRIMARY KEY, at DATETIME, fee NUMERIC, notes JSON, opens TIME);
        INSERT INTO visits VALUES (1, '03/04/2021', 'n/a', 'free text', 'noonish');
        INSERT INTO visits VALUES (2, '2021-03-04 10:00:00', 12.5, '{"a": 1}', '10:00:00');
        """
    )
    connection.commit()
    connection.close()
    table = load_tables(f"sqlite:///{tmp_path / 'real.db'}")[0]
    assert table.text_rows() == [
        ["1", "03/04/2021", "n/a", "free text", "noonish"],
        ["2", "2021-03-04 10:00:00", "12.5", '{"a": 1}', "10:00:00"],
    ]


def test_a_sqlite_table_whose_values_fit_their_types_is_converted_as_before(tmp_path):
    connection = sqlite3.connect(tmp_path / "clean.db")
    connection.executescript(
        """
        CREATE TABLE visits (visit_id INTEGER PRIMARY KEY, at DATETIME, fee NUMERIC);
        INSERT INTO visits VALUES (1, '2021-03-04 10:00:00', 12.50);
        """
    )
    connection.commit()
    connection.close()
    frame = load_tables(f"sqlite:///{tmp_path / 'clean.db'}")[0].df
    assert frame["at"].iloc[0] == pd.Timestamp("2021-03-04 10:00:00") and frame["fee"].iloc[0] == 12.5
