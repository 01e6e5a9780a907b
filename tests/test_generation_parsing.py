"""parse_answer: tolerant JSON reading and column validation, one rejection type."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llama_index_pearl.generation import ParseRejection, extract_json, parse_answer
from llama_index_pearl.tables.table import Table

SINGER = Table("singer", pd.DataFrame({"Singer_ID": [1], "Name": ["Joe Sharp"], "Country": ["Netherlands"]}))
CONCERT = Table("concert", pd.DataFrame({"concert_ID": [1], "concert_Name": ["Auditions"], "Year": [2014]}))
TABLES = [SINGER, CONCERT]


def parse(text: str, tables=TABLES, **kwargs):
    return parse_answer(text, tables, **kwargs)


def test_plain_object_with_per_table_keys():
    (query,) = parse('{"question": "Where is Joe Sharp from?", "relevant_columns_t1": ["Name"], '
                     '"relevant_columns_t2": ["concert_Name"]}')  # fmt: skip
    assert query.question == "Where is Joe Sharp from?"
    assert query.columns == {"singer": ["Name"], "concert": ["concert_Name"]}


def test_questions_wrapper_takes_the_first_item():
    answer = {"questions": [{"question": "Q1?", "relevant_columns_t1": ["Name"], "relevant_columns_t2": ["Year"]}]}
    assert parse(json.dumps(answer))[0].question == "Q1?"


def test_code_fence_and_surrounding_prose_are_ignored():
    body = '{"question": "Q?", "relevant_columns_t1": ["Name"], "relevant_columns_t2": ["Year"]}'
    assert parse(f"Here you go:\n```json\n{body}\n```\nAnything else?")[0].question == "Q?"


def test_prose_without_fences_around_the_object():
    body = '{"question": "Q?", "relevant_columns_t1": ["Name"], "relevant_columns_t2": ["Year"]}'
    assert parse(f"The answer is {body} -- done.")[0].question == "Q?"


def test_trailing_commas_are_tolerated():
    assert parse('{"question": "Q?", "relevant_columns_t1": ["Name",], "relevant_columns_t2": ["Year"],}')


def test_columns_mapping_by_table_name():
    (query,) = parse('{"question": "Q?", "columns": {"singer": ["name"], "concert": ["YEAR"]}}')
    assert query.columns == {"singer": ["Name"], "concert": ["Year"]}


def test_columns_mapping_by_label_and_qualified_names():
    (query,) = parse('{"question": "Q?", "columns": ["singer.Country", "T2.concert_Name"]}')
    assert query.columns == {"singer": ["Country"], "concert": ["concert_Name"]}


def test_column_match_ignores_case_and_spaces():
    (query,) = parse(
        '{"question": "Q?", "relevant_columns_t1": [" name ", "COUNTRY"], "relevant_columns_t2": ["year"]}'
    )
    assert query.columns["singer"] == ["Name", "Country"]


def test_column_under_the_wrong_table_moves_to_the_table_that_has_it():
    (query,) = parse(
        '{"question": "Q?", "relevant_columns_t1": ["Name", "Year"], "relevant_columns_t2": ["concert_Name"]}'
    )
    assert query.columns == {"singer": ["Name"], "concert": ["concert_Name", "Year"]}


def test_unknown_columns_are_dropped():
    (query,) = parse('{"question": "Q?", "relevant_columns_t1": ["Name", "Label"], "relevant_columns_t2": ["Year"]}')
    assert query.columns["singer"] == ["Name"]


def test_table_left_without_valid_columns_is_rejected_naming_it():
    with pytest.raises(ParseRejection, match="concert"):
        parse('{"question": "Q?", "relevant_columns_t1": ["Name"], "relevant_columns_t2": ["Venue"]}')


@pytest.mark.parametrize("question", ["null", '""', '"  "', '"null"'])
def test_null_or_empty_question_is_rejected(question):
    with pytest.raises(ParseRejection, match="question"):
        parse(f'{{"question": {question}, "relevant_columns_t1": ["Name"], "relevant_columns_t2": ["Year"]}}')


@pytest.mark.parametrize("garbage", ["", "   ", "I am sorry.", "```\nnot json\n```", "[1, 2, 3]", "{broken"])
def test_unparsable_answers_are_rejected(garbage):
    with pytest.raises(ParseRejection):
        parse(garbage)


def test_single_table_answer_keeps_valid_items_up_to_the_count():
    items = [
        {"question": "Q1?", "relevant_columns": ["Name"]},
        {"question": None, "relevant_columns": ["Name"]},
        {"question": "Q3?", "relevant_columns": ["Nope"]},
        {"question": "Q4?", "relevant_columns": ["Country"]},
        {"question": "Q5?", "relevant_columns": ["Name", "Country"]},
    ]
    queries = parse(json.dumps({"questions": items}), [SINGER], expected=2)
    assert [q.question for q in queries] == ["Q1?", "Q4?"]


def test_single_table_answer_with_no_valid_item_is_rejected():
    with pytest.raises(ParseRejection):
        parse('{"questions": [{"question": null, "relevant_columns": ["Name"]}]}', [SINGER], expected=5)


def test_extract_json_prefers_fenced_block_over_prose_braces():
    assert extract_json('Use {braces} wisely.\n```json\n{"a": 1}\n```') == {"a": 1}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=25), children, max_size=4),
    max_leaves=12,
)
answer_like = st.fixed_dictionaries(
    {},
    optional={
        "question": st.none() | st.text(max_size=30) | st.integers(),
        "relevant_columns_t1": json_values | st.lists(st.sampled_from(["Name", "Year", "x", ""]), max_size=3),
        "relevant_columns_t2": json_values | st.lists(st.sampled_from(["concert_Name", "Name", "T1.Name"]), max_size=3),
        "columns": json_values,
        "questions": json_values,
    },
)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_any_text_gives_queries_or_a_rejection(text):
    try:
        queries = parse(text)
    except ParseRejection:
        return
    assert queries and all(q.question.strip() for q in queries)


@settings(max_examples=300, deadline=None)
@given(answer_like, st.sampled_from(["{}", "```json\n{}\n```", "Sure: {} ok", "{},"]), st.integers(1, 5))
def test_any_json_shaped_answer_gives_valid_queries_or_a_rejection(answer, wrapper, expected):
    text = wrapper.replace("{}", json.dumps(answer))
    try:
        queries = parse(text, expected=expected)
    except ParseRejection:
        return
    for query in queries:
        assert query.question.strip()
        assert set(query.columns) == {"singer", "concert"}
        assert all(query.columns[t.id] and set(query.columns[t.id]) <= set(t.columns) for t in TABLES)
