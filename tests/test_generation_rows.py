"""reorder_rows_for_path: join-overlapping rows first, original order otherwise."""

from __future__ import annotations

import pandas as pd

from llama_index_pearl.generation import reorder_rows_for_path
from llama_index_pearl.joins.paths import ColumnPair, JoinKind, JoinPath
from llama_index_pearl.tables.table import Table


def table(table_id: str, **columns) -> Table:
    return Table(table_id, pd.DataFrame(columns))


def chain(*joins: tuple[str, str, str, str]) -> JoinPath:
    tables = [joins[0][0]] + [j[2] for j in joins]
    return JoinPath(tuple(tables), tuple((ColumnPair(*j),) for j in joins), JoinKind.EXPLICIT, 1.0)


def test_rows_with_overlapping_join_values_come_first_in_original_order():
    a = table("a", k=[10, 11, 1, 12, 2], name=list("vwxyz"))
    b = table("b", k=[2, 1, 99], name=list("pqr"))
    rows = reorder_rows_for_path(chain(("a", "k", "b", "k")), {"a": a, "b": b}, max_rows=10)
    assert rows["a"] == [2, 4, 0, 1, 3]
    assert rows["b"][2] == 2  # the non-overlapping row goes last
    assert sorted(rows["b"][:2]) == [0, 1]


def test_each_table_is_cut_to_max_rows():
    a = table("a", k=list(range(30)))
    b = table("b", k=list(range(25, 40)))
    rows = reorder_rows_for_path(chain(("a", "k", "b", "k")), {"a": a, "b": b}, max_rows=3)
    assert rows["a"] == [25, 26, 27]
    assert rows["b"] == [0, 1, 2]


def test_middle_table_takes_the_union_of_both_joins_overlaps():
    a = table("a", x=[1])
    mid = table("mid", x=[5, 1, 6, 7], y=["q", "r", "s", "p"])
    c = table("c", y=["p"])
    path = chain(("a", "x", "mid", "x"), ("mid", "y", "c", "y"))
    rows = reorder_rows_for_path(path, {"a": a, "mid": mid, "c": c})
    assert rows["mid"][:2] == [1, 3]
    assert rows["mid"][2:] == [0, 2]


def test_rows_joining_the_rows_chosen_for_the_previous_table_rank_first():
    a = table("a", k=[3, 1, 2], name=list("xyz"))
    b = table("b", k=[2, 1, 3, 3])
    rows = reorder_rows_for_path(chain(("a", "k", "b", "k")), {"a": a, "b": b}, max_rows=1)
    assert rows == {"a": [0], "b": [2]}  # a's row 0 has k=3, b's first k=3 row is 2


def test_values_match_as_text_ignoring_case_and_float_formatting():
    a = table("a", code=["ABC", "x"])
    b = table("b", code=["zzz", "abc "])
    c = table("c", n=[7.0, 8.0])
    d = table("d", n=["8"])
    assert reorder_rows_for_path(chain(("a", "code", "b", "code")), {"a": a, "b": b})["b"] == [1, 0]
    assert reorder_rows_for_path(chain(("c", "n", "d", "n")), {"c": c, "d": d})["c"] == [1, 0]


def test_missing_values_never_count_as_overlap():
    a = table("a", k=[None, 1.0])
    b = table("b", k=[None, 2.0])
    rows = reorder_rows_for_path(chain(("a", "k", "b", "k")), {"a": a, "b": b})
    assert rows == {"a": [0, 1], "b": [0, 1]}


def test_reordering_leaves_the_tables_untouched():
    a = table("a", k=[2, 1])
    b = table("b", k=[1])
    before = a.df.copy()
    reorder_rows_for_path(chain(("a", "k", "b", "k")), {"a": a, "b": b})
    pd.testing.assert_frame_equal(a.df, before)
