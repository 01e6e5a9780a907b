"""Inputs read the way users' files are: CSV encodings, BOMs and delimiters; SQL errors that name the culprit."""

from __future__ import annotations

import logging
import sqlite3

import pytest

from llama_index_pearl import load_tables
from llama_index_pearl.tables.inputs import read_table_file


def _csv(tmp_path, name: str, text: str, encoding: str = "utf-8"):
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return path


def test_a_utf8_bom_is_not_part_of_the_first_column_name(tmp_path):
    table = read_table_file(_csv(tmp_path, "t.csv", "id,name\n1,Ann\n", "utf-8-sig"))
    assert table.columns == ["id", "name"] and table.df["id"].tolist() == ["1"]


def test_a_latin1_file_is_decoded_by_detection(tmp_path, caplog):
    text = "id,name,city\n1,José Núñez,Zürich\n2,Zoë Brontë,Besançon\n3,François,Orléans\n"
    with caplog.at_level(logging.WARNING):
        table = read_table_file(_csv(tmp_path, "people.csv", text, "latin-1"))
    assert table.df["name"].tolist()[:2] == ["José Núñez", "Zoë Brontë"]
    assert "\ufffd" not in caplog.text


@pytest.mark.parametrize("delimiter", [";", "\t", "|"])
def test_the_delimiter_is_sniffed(tmp_path, delimiter):
    rows = ["a", "b", "c"], ["1", "x,y", "3"], ["4", "5", "6"]
    table = read_table_file(_csv(tmp_path, "t.csv", "\n".join(delimiter.join(r) for r in rows) + "\n"))
    assert table.columns == ["a", "b", "c"] and table.df["b"].tolist() == ["x,y", "5"]


def test_a_quoted_delimiter_does_not_fool_the_sniffer(tmp_path):
    table = read_table_file(_csv(tmp_path, "t.csv", 'name,note\n"Lee; Ann","a;b;c"\n"Kim; Jo","d;e"\n'))
    assert table.columns == ["name", "note"] and table.df["name"].tolist() == ["Lee; Ann", "Kim; Jo"]


def test_csv_options_override_detection(tmp_path):
    path = _csv(tmp_path, "t.csv", "a;b\n1;Jos\xe9\n", "latin-1")
    table = read_table_file(path, csv_options={"delimiter": ";", "encoding": "latin-1"})
    assert table.df["b"].tolist() == ["José"]
    forced = load_tables([path], csv_options={"delimiter": ","})[0]
    assert forced.columns == ["a;b"]


def test_a_lossy_decode_warns_naming_the_file(tmp_path, caplog):
    path = _csv(tmp_path, "mixed.csv", "a,b\n1,ok\n", "utf-8")
    path.write_bytes(path.read_bytes() + b"2,bad \xff\xfe byte\n")
    with caplog.at_level(logging.WARNING):
        table = read_table_file(path, csv_options={"encoding": "utf-8"})
    assert "\ufffd" in table.df["b"].tolist()[1]
    assert "mixed.csv" in caplog.text and "U+FFFD" in caplog.text


@pytest.mark.parametrize(
    ("options", "message"),
    [({"sep": ";"}, "unknown option"), ({"encoding": "klingon"}, "unknown encoding"), ({"delimiter": ";;"}, "one")],
)
def test_bad_csv_options_are_named(tmp_path, options, message):
    with pytest.raises(ValueError, match=message):
        read_table_file(_csv(tmp_path, "t.csv", "a\n1\n"), csv_options=options)


def test_a_missing_sqlite_file_is_reported_and_not_created(tmp_path):
    with pytest.raises(ValueError, match=r"missing\.db.*not found"):
        load_tables(f"sqlite:///{tmp_path / 'missing.db'}")
    assert not (tmp_path / "missing.db").exists()


def test_a_sqlite_file_in_a_missing_folder_is_reported(tmp_path):
    with pytest.raises(ValueError, match="folder does not exist"):
        load_tables(f"sqlite:///{tmp_path / 'no_dir' / 'x.db'}")


@pytest.mark.parametrize("scheme", ["postgresql", "postgresql+psycopg", "mysql+nosuchdriver"])
def test_a_failing_server_url_never_echoes_the_password(scheme):
    with pytest.raises(ValueError) as caught:
        load_tables(f"{scheme}://reader:s3cr3t-pw@127.0.0.1:9/warehouse")
    message = str(caught.value)
    assert "s3cr3t-pw" not in message and "***" in message and "warehouse" in message


def test_a_table_that_fails_to_read_is_named(tmp_path):
    path = tmp_path / "db.sqlite"
    with sqlite3.connect(path) as connection:
        connection.executescript(
            "CREATE TABLE good (id INTEGER); CREATE TABLE events (name TEXT);"
            "INSERT INTO events VALUES (CAST(X'FF' AS TEXT));"  # text that is not UTF-8: sqlite3 cannot decode it
        )
    with pytest.raises(ValueError, match=r"SQL table 'events'"):
        load_tables(f"sqlite:///{path}")


@pytest.mark.parametrize("line", [2, 4])
def test_a_row_with_one_field_more_than_the_header_is_an_error_naming_file_and_line(tmp_path, line):
    rows = ["order_id,customer", "1,Ann", "2,Bob", "3,Cy"]
    rows[line - 1] += ",EXTRA"
    path = _csv(tmp_path, "orders.csv", "\n".join(rows) + "\n")
    with pytest.raises(ValueError, match=rf"orders\.csv.*Expected 2 fields in line {line}, saw 3"):
        read_table_file(path)


def test_a_short_row_is_padded_and_no_column_shifts(tmp_path):
    table = read_table_file(_csv(tmp_path, "orders.csv", "order_id,customer\n1\n2,Bob\n"))
    assert table.df.to_dict("list") == {"order_id": ["1", "2"], "customer": ["", "Bob"]}


def test_a_csv_of_nul_bytes_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "download.csv"
    path.write_bytes(bytes(4096))
    with pytest.raises(ValueError, match=r"download\.csv.*NUL bytes"):
        load_tables(tmp_path)


def test_a_gzip_file_named_csv_is_refused_naming_the_file(tmp_path):
    import gzip

    path = tmp_path / "orders.csv"
    path.write_bytes(gzip.compress(b"order_id,customer\n1,Ann\n"))
    with pytest.raises(ValueError, match=r"orders\.csv.*gzip-compressed"):
        read_table_file(path)


def test_utf16_without_a_byte_order_mark_is_read_as_text(tmp_path):
    table = read_table_file(_csv(tmp_path, "t.csv", "id,name\n1,Zoë\n", "utf-16-le"))
    assert table.df.to_dict("list") == {"id": ["1"], "name": ["Zoë"]}


HUGE = 200_000  # characters in one cell: Python's csv module stops at 131,072


def test_a_cell_over_the_csv_module_s_limit_in_the_first_row_is_read_whole(tmp_path):
    blob = '{"html": "' + "x" * HUGE + '"}'
    path = _csv(tmp_path, "pages.csv", 'page_id;body\n1;"' + blob.replace('"', '""') + '"\n2;short\n')
    table = read_table_file(path)
    assert table.df.columns.tolist() == ["page_id", "body"]  # the delimiter is still sniffed
    assert table.df["body"].tolist() == [blob, "short"]


def test_a_folder_with_a_huge_cell_indexes_every_file(tmp_path, caplog):
    _csv(tmp_path, "pages.csv", "page_id,site_id,body\n1,7," + "y" * HUGE + "\n")
    _csv(tmp_path, "sites.csv", "site_id,name\n7,Docs\n")
    with caplog.at_level("WARNING"):
        assert sorted(t.id for t in load_tables(tmp_path)) == ["pages", "sites"]
    assert not [r for r in caplog.records if r.levelname == "WARNING"]
