"""Prompt families, their content and their size."""

from __future__ import annotations

import pandas as pd
import pytest

from llama_index_pearl.generation import (
    PROMPT_VERSION,
    LLMQueryGenerator,
    PathRequest,
    SingleTableRequest,
    build_messages,
    estimate_prompt_tokens,
)
from llama_index_pearl.joins.paths import ColumnPair, JoinKind, JoinPath
from llama_index_pearl.tables.table import Table


def wide(table_id: str, n_rows: int = 40, n_cols: int = 12, key: str = "k", offset: int = 0) -> Table:
    data = {key: [i + offset for i in range(n_rows)]}
    for c in range(n_cols - 1):
        data[f"{table_id}_attribute_{c}"] = [f"value {table_id} {c} {i} " + "long text " * 3 for i in range(n_rows)]
    return Table(table_id, pd.DataFrame(data))


def request(kind: JoinKind, n: int) -> PathRequest:
    ids = ["a", "b", "c"][:n]
    tables = {t: wide(t, offset=5 * i) for i, t in enumerate(ids)}
    joins = tuple((ColumnPair(ids[i], "k", ids[i + 1], "k"),) for i in range(n - 1))
    return PathRequest(JoinPath(tuple(ids), joins, kind, 1.0), tables)


@pytest.mark.parametrize(
    ("kind", "n", "marker"),
    [(JoinKind.EXPLICIT, 2, "foreign keys"), (JoinKind.EXPLICIT, 3, "T2 must appear"),
     (JoinKind.IMPLICIT, 2, "no declared key"), (JoinKind.IMPLICIT, 3, "T2 is the bridge")],
)  # fmt: skip
def test_path_kind_and_length_pick_the_prompt_family(kind, n, marker):
    prompt = build_messages(request(kind, n))
    assert marker in prompt.system
    assert f'"relevant_columns_t{n}"' in prompt.user and f'"relevant_columns_t{n + 1}"' not in prompt.user


def test_single_table_prompt_asks_for_n_questions_of_different_focus():
    prompt = build_messages(SingleTableRequest(wide("a"), n_questions=3))
    assert "Write 3 different questions" in prompt.system and "(3)" in prompt.system and "(4)" not in prompt.system
    assert '"questions"' in prompt.user


def test_prompt_lists_each_join_with_its_columns():
    assert "Joins: T1.k = T2.k; T2.k = T3.k" in build_messages(request(JoinKind.EXPLICIT, 3)).user


def test_prompt_shows_joining_rows_first():
    lines = build_messages(request(JoinKind.EXPLICIT, 2)).user.splitlines()
    first_row_of_a = lines[lines.index(next(line for line in lines if line.startswith("Columns:"))) + 1]
    assert first_row_of_a.startswith("5 | ")  # a's keys 0-4 have no partner in b (keys 5-44)


def test_long_cells_are_clipped():
    table = Table("t", pd.DataFrame({"text": ["x" * 500]}))
    assert "x" * 41 not in build_messages(SingleTableRequest(table)).user


def test_three_wide_tables_stay_under_a_thousand_prompt_tokens():
    estimate = estimate_prompt_tokens([request(JoinKind.EXPLICIT, 3), request(JoinKind.IMPLICIT, 2)])
    assert estimate["requests"] == 2
    assert estimate["max_prompt_tokens"] <= 1000


def test_each_table_block_is_labelled_with_its_position():
    prompt = build_messages(request(JoinKind.IMPLICIT, 2))
    assert "Table: T1 a" in prompt.user and "Table: T2 b" in prompt.user


def test_prompt_version_is_part_of_the_cache_key():
    class Stub(LLMQueryGenerator):
        def __init__(self, version: str) -> None:
            self.prompt_version, self.model_name, self.max_rows = version, "m", 10

    req = request(JoinKind.EXPLICIT, 2)
    assert Stub(PROMPT_VERSION).cache_key(req) != Stub(PROMPT_VERSION + "x").cache_key(req)


def test_estimate_uses_the_given_token_counter():
    estimate = estimate_prompt_tokens([request(JoinKind.EXPLICIT, 2)], count_tokens=lambda texts: [7 for _ in texts])
    assert estimate == {"requests": 1, "prompt_tokens": 7, "per_path_avg": 7.0, "max_prompt_tokens": 7}
