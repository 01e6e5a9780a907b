"""A CSV file with rows that do not fit its header, and binary files named .csv: what is kept, skipped and said."""

from __future__ import annotations

import os
import zlib

import pytest

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.cli import main
from llama_index_pearl.tables import files
from llama_index_pearl.tables.inputs import read_table_file

ORDERS = "order_id,customer\n1,Ann\n2,Bob,EXTRA\n3,Cy\n4,Di,X,Y\n5,Ed\n"  # lines 3 and 5 hold too many fields


@pytest.fixture
def orders_folder(tmp_path):
    folder = tmp_path / "tables"
    folder.mkdir()
    (folder / "orders.csv").write_text(ORDERS)
    (folder / "customers.csv").write_text("customer,city\nAnn,Oslo\nBob,Lima\n")
    return folder


def test_skip_bad_lines_keeps_the_other_rows_and_the_build_report_counts_those_skipped(
    orders_folder, hashing_embedding
):
    index = PearlTableIndex.from_tables(orders_folder, embed_model=hashing_embedding, skip_bad_lines=True)
    assert index.tables["orders"].df["order_id"].tolist() == ["1", "3", "5"]
    assert index.report.bad_lines == [{"path": str(orders_folder / "orders.csv"), "rows": 2, "lines": [3, 5]}]


def test_without_skip_bad_lines_the_file_is_skipped_and_the_message_names_the_option(orders_folder):
    with pytest.raises(ValueError, match=r"orders\.csv.*Expected 2 fields in line 3, saw 3.*skip_bad_lines=True"):
        read_table_file(orders_folder / "orders.csv")


def test_pearl_index_skip_bad_lines_says_how_many_rows_it_skipped(orders_folder, tmp_path, capsys):
    assert main(["index", str(orders_folder), "--out", str(tmp_path / "idx"), "--skip-bad-lines"]) == 0
    out = capsys.readouterr().out
    assert (
        f"skipped 2 rows with more fields than the header (--skip-bad-lines): {orders_folder / 'orders.csv'} (2)"
        in (out)
    )


# 22 data lines, of which lines 4 and 16 hold too many fields; a short row (line 9) is padded, as pandas pads it
MANY_ORDERS = "order_id,customer\n" + "".join(
    f"{n},c{n},EXTRA\n" if n in (3, 15) else f"{n}\n" if n == 8 else f"{n},c{n}\n" for n in range(1, 23)
)


def test_a_sampled_table_counts_the_rows_a_whole_read_keeps(tmp_path):
    (tmp_path / "orders.csv").write_text(MANY_ORDERS)
    whole = read_table_file(tmp_path / "orders.csv", max_rows_read=None, skip_bad_lines=True)
    sampled = read_table_file(tmp_path / "orders.csv", max_rows_read=5, skip_bad_lines=True)
    assert (len(whole.df), whole.row_count) == (20, 20)
    assert (len(sampled.df), sampled.row_count) == (5, 20)


def test_without_pyarrow_a_sampled_table_counts_the_rows_a_whole_read_keeps(tmp_path, monkeypatch):
    def no_pyarrow(*args):
        raise ImportError("pyarrow")

    monkeypatch.setattr(files, "_count_rows_arrow", no_pyarrow)
    (tmp_path / "orders.csv").write_text(MANY_ORDERS)
    assert read_table_file(tmp_path / "orders.csv", max_rows_read=5, skip_bad_lines=True).row_count == 20


def test_a_pdf_named_csv_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "report.csv"
    path.write_bytes(b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nstream\n" + zlib.compress(b"totals " * 99))
    with pytest.raises(ValueError, match=r"report\.csv.*a PDF document, not CSV text"):
        read_table_file(path)


def test_binary_bytes_without_a_nul_named_csv_are_refused_naming_the_file(tmp_path):
    path = tmp_path / "export.csv"
    path.write_bytes(bytes(b for b in os.urandom(8000) if b)[:4000])
    with pytest.raises(ValueError, match=r"export\.csv.*control characters or bytes no text encoding reads"):
        read_table_file(path)


def test_a_stray_control_character_in_a_text_file_is_read(tmp_path):
    path = tmp_path / "notes.csv"
    path.write_text("note_id,text\n" + "".join(f"{i},line {i} of the notes\n" for i in range(100)) + "100,end\x1a\n")
    assert len(read_table_file(path).df) == 101
