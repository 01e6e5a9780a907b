"""The one serializer: title, name, header, whole rows within a token budget."""

from __future__ import annotations

import pandas as pd

from llama_index_pearl import Table, TableView
from llama_index_pearl.text.serialization import serialize_views


def words(lines):
    return [len(line.split()) for line in lines]


def _table(n_rows=20, **kwargs):
    df = pd.DataFrame({"id": range(n_rows), "name": [f"name {i}" for i in range(n_rows)]})
    return Table(id="people", df=df, **kwargs)


def test_renders_title_name_header_and_first_ten_rows():
    text = serialize_views([TableView(_table(title="Staff list"))])
    lines = text.splitlines()
    assert lines[:3] == ["Title: Staff list", "Table: people", "Columns: id | name"]
    assert lines[3:] == [f"{i} | name {i}" for i in range(10)]


def test_titles_can_be_left_out():
    assert "Title:" not in serialize_views([TableView(_table(title="Staff"))], include_titles=False)


def test_budget_keeps_only_whole_rows():
    # header lines cost 2 + 4 words; every row costs 4 words ("3 | name 3")
    text = serialize_views([TableView(_table())], max_tokens=2 + 6 + 4 * 3 + 2, count_tokens=words)
    assert text.splitlines()[2:] == ["0 | name 0", "1 | name 1", "2 | name 2"]


def test_header_survives_even_when_no_row_fits():
    text = serialize_views([TableView(_table())], max_tokens=3, count_tokens=words)
    assert text.splitlines() == ["Table: people", "Columns: id | name"]


def test_joined_views_share_the_budget_round_robin():
    a, b = _table(), Table(id="other", df=pd.DataFrame({"x": ["u v w"] * 5}))
    text = serialize_views([TableView(a), TableView(b)], max_tokens=2 + 6 + 4 + 4 + 4, count_tokens=words)
    blocks = text.split("\n\n")
    assert blocks[0].splitlines()[2:] == ["0 | name 0"]
    assert blocks[1].splitlines()[2:] == ["u v w"]


def test_question_prefix_comes_first():
    text = serialize_views([TableView(_table())], prefix="Who is name 3?")
    assert text.startswith("Who is name 3?\nTable: people")


def test_view_projects_columns_and_reorders_rows():
    text = serialize_views([TableView(_table(), columns=["name"], rows=[5, 2])])
    assert text.splitlines() == ["Table: people", "Columns: name", "name 5", "name 2"]


def test_view_rejects_unknown_columns_naming_the_table():
    import pytest

    with pytest.raises(ValueError, match="Table 'people' has no column"):
        TableView(_table(), columns=["salary"])


def test_missing_cells_render_empty():
    table = Table(id="t", df=pd.DataFrame({"a": [None, 1.0], "b": ["x", None]}))
    assert serialize_views([TableView(table)]).splitlines()[2:] == [" | x", "1 | "]


def _wide(columns: int, rows: int = 10) -> Table:
    data = [[f"v{r}_{c}" for c in range(columns)] for r in range(rows)]
    return Table(id="wide", df=pd.DataFrame(data, columns=[f"column_{c}" for c in range(columns)]))


def test_a_table_text_within_its_budget_is_the_whole_header_and_rows():
    from llama_index_pearl.text.serialization import Serializer

    serializer = Serializer(max_rows=10)
    table = _wide(4)
    assert serializer.table_text(table, 4000) == serializer([serializer.view(table)])


def test_a_wide_table_text_fits_its_budget_and_says_what_it_cut():
    from llama_index_pearl.text.serialization import Serializer

    text = Serializer(max_rows=10).table_text(_wide(2000), 4000)
    lines = text.splitlines()
    assert len(text) <= 4000
    assert lines[0] == "Table: wide"
    shown = lines[1].removeprefix("Columns: ").split(" | ")
    assert shown[-1] == f"… ({2000 - len(shown) + 1:,} more columns)"
    assert lines[2].split(" | ") == [f"v0_{c}" for c in range(len(shown) - 1)]  # rows show the same columns
    assert lines[-1].startswith("… (") and lines[-1].endswith("more rows)")


def test_rows_that_do_not_fit_are_counted_in_one_marker_line():
    from llama_index_pearl.text.serialization import Serializer

    table = Table(id="notes", df=pd.DataFrame({"note": ["x" * 100] * 10}))
    lines = Serializer(max_rows=10).table_text(table, 400).splitlines()
    assert lines[:2] == ["Table: notes", "Columns: note"]
    assert lines[2:-1] == ["x" * 100] * 3
    assert lines[-1] == "… (7 more rows)"
