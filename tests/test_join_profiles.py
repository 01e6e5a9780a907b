"""Column profiles: names, types, value samples, key-likeness."""

from __future__ import annotations

import pandas as pd

from llama_index_pearl.joins.profiles import (
    MAX_CELL_CHARS,
    normal_value,
    profile_column,
    profile_tables,
    table_name_words,
)
from llama_index_pearl.tables.table import Table


def test_table_name_drops_the_db_namespace_prefix():
    assert table_name_words("concert_singer__singer_in_concert") == ("singer", "in", "concert")
    assert table_name_words("orders") == ("orders",)


def test_types_are_inferred_from_string_cells():
    assert profile_column("t", "a", ["1", "22", "-3"]).dtype == "int"
    assert profile_column("t", "a", ["1.5", "2", "3e2"]).dtype == "float"
    assert profile_column("t", "a", ["2020-01-02", "2021-12-31"]).dtype == "date"
    assert profile_column("t", "a", ["x", "1"]).dtype == "text"
    assert profile_column("t", "a", ["", ""]).dtype == "empty"


def test_integral_floats_meet_ints_in_the_value_sample():
    assert set(profile_column("t", "a", [7.0, 8.0, None]).sample) == {"7", "8"}


def test_constant_and_all_null_columns_are_never_joinable():
    assert not profile_column("t", "a", ["x", "x", "x"]).joinable
    assert not profile_column("t", "a", [None, "", None]).joinable
    assert profile_column("t", "a", ["x", "y"]).joinable


def test_unique_column_is_key_like_and_repeated_column_is_not():
    assert profile_column("t", "a", ["1", "2", "3", "4"]).key_like
    assert not profile_column("t", "a", ["1", "1", "2", "2"]).key_like


def test_value_sample_is_bounded_and_records_its_hash_threshold():
    p = profile_column("t", "a", [str(i) for i in range(1000)], sample_size=50)
    assert len(p.sample) == 50 and p.threshold == max(p.sample.values())
    assert p.n_distinct == 1000


def test_huge_cells_are_truncated_before_profiling():
    p = profile_column("t", "a", ["x" * 10_000, "y"])
    assert max(len(v) for v in p.sample) == MAX_CELL_CHARS


def test_profile_tables_covers_every_column_in_order():
    tables = [Table("a", pd.DataFrame({"x": [1, 2], "y": ["p", "q"]})), Table("b", pd.DataFrame({"z": [3]}))]
    assert [(p.table_id, p.column) for p in profile_tables(tables)] == [("a", "x"), ("a", "y"), ("b", "z")]


def test_values_are_compared_in_one_normal_form():
    assert normal_value(" 13.0 ") == normal_value("13.00") == normal_value("13") == "13"
    assert normal_value("AB12") == normal_value("ab12")
    assert normal_value("New  York") == "new york"
    assert normal_value("13.5") == "13.5"


def test_null_markers_and_empty_cells_are_no_values():
    p = profile_column("t", "a", ["NULL", "None", "nan", "", "  ", "-", "7"])
    assert set(p.sample) == {"7"} and p.n_values == 1


def test_a_column_without_values_takes_the_type_its_table_declares():
    df = pd.DataFrame({"a": pd.Series([], dtype="Int64"), "b": pd.Series([], dtype="string"), "c": []})
    assert [p.dtype for p in profile_tables([Table("t", df)])] == ["int", "text", "empty"]


def test_unsigned_64_bit_ids_build_and_join():
    import numpy as np
    from embeddings import HashingEmbedding

    from llama_index_pearl import PearlTableIndex

    ids = np.array([2**63 + i for i in range(5)] + [2**64 - 1], dtype=np.uint64)
    tables = {
        "account": pd.DataFrame({"account_id": ids, "owner": list("abcdef")}),
        "payment": pd.DataFrame({"payment_id": [1, 2, 3], "account_id": ids[:3], "amount": [5, 6, 7]}),
    }
    index = PearlTableIndex.from_tables(tables, embed_model=HashingEmbedding())
    assert index.join_graph.has_edge("account", "payment")


def test_ids_beyond_64_bits_next_to_negative_ones_build_and_join():
    from embeddings import HashingEmbedding

    from llama_index_pearl import PearlTableIndex

    tables = {
        "account": pd.DataFrame({"account_id": [2**70 + i for i in range(4)] + [-5], "owner": list("abcde")}),
        "payment": pd.DataFrame({"payment_id": [1, 2], "account_id": [2**70, -5], "amount": [1, 2]}),
    }
    index = PearlTableIndex.from_tables(tables, embed_model=HashingEmbedding())
    assert index.join_graph.has_edge("account", "payment")


def test_the_int_sample_of_huge_ids_keeps_their_order():
    profile = profile_column("t", "a", [str(2**64 - 1), str(2**63), "-1"])
    assert profile.dtype == "int"
    assert list(profile.int_sample) == [-1, 2**63, 2**64 - 1]
