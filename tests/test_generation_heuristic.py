"""HeuristicQueryGenerator: deterministic questions and 3-5 columns per table without an LLM."""

from __future__ import annotations

import pandas as pd
import pytest

from llama_index_pearl.generation import HeuristicQueryGenerator, PathRequest, SingleTableRequest, humanize
from llama_index_pearl.joins.paths import ColumnPair, JoinKind, JoinPath
from llama_index_pearl.tables.table import Table

CONCERT = Table(
    "concert_singer__concert",
    pd.DataFrame(
        {
            "concert_ID": [1, 2, 3, 4],
            "concert_Name": ["Auditions", "Super bootcamp", "Home Visits", "Week 1"],
            "Theme": ["Free choice", "Free choice 2", "Bleeding Love", "Wide Awake"],
            "Stadium_ID": [99, 2, 1, 2],
            "Year": [2014, 2014, 2015, 2014],
        }
    ),
)
STADIUM = Table(
    "concert_singer__stadium",
    pd.DataFrame(
        {
            "Stadium_ID": [1, 2, 3],
            "Location": ["Raith Rovers", "Ayr United", "East Fife"],
            "Name": ["Stark's Park", "Somerset Park", "Bayview Stadium"],
            "Capacity": [10104, 11998, 2000],
            "Highest": [4812, 2363, 1980],
            "Average": [2106, 1477, 864],
        }
    ),
)
SINGER_IN_CONCERT = Table(
    "concert_singer__singer_in_concert", pd.DataFrame({"concert_ID": [2, 3], "Singer_ID": [2, 3]})
)
TABLES = {t.id: t for t in (CONCERT, STADIUM, SINGER_IN_CONCERT)}


def two_tables() -> PathRequest:
    pair = ColumnPair(CONCERT.id, "Stadium_ID", STADIUM.id, "Stadium_ID")
    return PathRequest(JoinPath((CONCERT.id, STADIUM.id), ((pair,),), JoinKind.EXPLICIT, 1.0), TABLES)


def three_tables() -> PathRequest:
    first = ColumnPair(SINGER_IN_CONCERT.id, "concert_ID", CONCERT.id, "concert_ID")
    second = ColumnPair(CONCERT.id, "Stadium_ID", STADIUM.id, "Stadium_ID")
    path = JoinPath((SINGER_IN_CONCERT.id, CONCERT.id, STADIUM.id), ((first,), (second,)), JoinKind.EXPLICIT, 1.0)
    return PathRequest(path, TABLES)


def test_same_request_and_seed_give_the_same_query():
    first = HeuristicQueryGenerator().generate(two_tables())
    again = HeuristicQueryGenerator().generate(two_tables())
    assert first.queries == again.queries


def test_path_query_picks_three_to_five_columns_per_table_with_join_keys():
    (query,) = HeuristicQueryGenerator().generate(two_tables()).queries
    for table_id, columns in query.columns.items():
        assert 3 <= len(columns) <= 5
        assert "Stadium_ID" in columns
        assert set(columns) <= set(TABLES[table_id].columns)


def test_path_query_prefers_descriptive_columns_over_numbers():
    (query,) = HeuristicQueryGenerator().generate(two_tables()).queries
    assert "Name" in query.columns[STADIUM.id]
    assert "concert_Name" in query.columns[CONCERT.id]


def test_path_question_anchors_on_a_value_from_a_joining_row_and_names_the_far_table():
    (query,) = HeuristicQueryGenerator().generate(two_tables()).queries
    # row 0 (Stadium_ID 99) joins nothing, so the anchor comes from a joining row
    assert any(name in query.question for name in ("Super bootcamp", "Home Visits", "Week 1"))
    assert "stadium" in query.question and "Auditions" not in query.question


def test_question_uses_plain_words_not_raw_column_names():
    (query,) = HeuristicQueryGenerator().generate(two_tables()).queries
    assert "_" not in query.question and "concert_singer" not in query.question


def test_three_table_question_mentions_the_middle_entity():
    (query,) = HeuristicQueryGenerator().generate(three_tables()).queries
    assert "concert" in query.question and "stadium" in query.question
    assert len(query.columns) == 3
    assert {"concert_ID", "Stadium_ID"} <= set(query.columns[CONCERT.id])


def test_single_table_request_gives_n_single_distinct_questions():
    result = HeuristicQueryGenerator(n_single=2).generate(SingleTableRequest(STADIUM))
    assert len(result.queries) == 2
    assert len({q.question for q in result.queries}) == 2
    assert all(3 <= len(q.columns[STADIUM.id]) <= 5 for q in result.queries)


def test_seed_changes_the_cache_identity():
    request = two_tables()
    assert HeuristicQueryGenerator(seed=0).cache_key(request) != HeuristicQueryGenerator(seed=1).cache_key(request)


async def test_async_interface_matches_sync():
    generator = HeuristicQueryGenerator()
    assert (await generator.agenerate(two_tables())).queries == generator.generate(two_tables()).queries


@pytest.mark.parametrize(
    ("raw", "plain"),
    [("stadium_id", "stadium"), ("Song_Name", "song name"), ("AirportCode", "airport"), ("db__singer", "singer"),
     ("id", "id"), ("Highest", "highest")],
)  # fmt: skip
def test_humanize_turns_identifiers_into_words(raw, plain):
    assert humanize(raw) == plain


def test_all_numeric_table_still_gets_a_question():
    numbers = Table("measurements", pd.DataFrame({"sensor_id": [1, 2], "reading": [0.5, 0.7], "hour": [1, 2]}))
    result = HeuristicQueryGenerator().generate(SingleTableRequest(numbers))
    assert result.ok and "of each measurement?" in result.queries[0].question
    assert len(result.queries[0].columns["measurements"]) == 3


def implicit_pair(stadium_ids: list[int]) -> PathRequest:
    concert = Table(CONCERT.id, CONCERT.df.assign(Stadium_ID=stadium_ids))
    pair = ColumnPair(CONCERT.id, "Stadium_ID", STADIUM.id, "Stadium_ID")
    path = JoinPath((CONCERT.id, STADIUM.id), ((pair,),), JoinKind.IMPLICIT, 0.9)
    return PathRequest(path, {CONCERT.id: concert, STADIUM.id: STADIUM})


def test_explicit_question_asks_for_far_table_attributes_for_an_anchor_of_the_first():
    (query,) = HeuristicQueryGenerator().generate(two_tables()).queries
    assert query.question.startswith("What are the location and name of the stadium for the concert")


def test_three_table_question_walks_the_chain_back_and_asks_for_the_middle_entity_attribute():
    (query,) = HeuristicQueryGenerator().generate(three_tables()).queries
    assert query.question == (
        "What are the location and name of the stadium of the concert for each singer in concert, "
        "and what is the name of that concert?"
    )


def test_implicit_question_names_every_table_and_its_attributes_around_the_shared_value():
    (query,) = HeuristicQueryGenerator().generate(implicit_pair([99, 2, 1, 2])).queries
    assert query.question == (
        "For the same stadium, what are the name and theme of the concert and the location and name of the stadium?"
    )


RACES = Table(
    "formula_1__races",
    pd.DataFrame({"raceId": [1, 2, 3], "race": ["Chinese Grand Prix", "Monaco Grand Prix", "Belgian Grand Prix"]}),
    name="races",
)
RESULTS = Table(
    "formula_1__results",
    pd.DataFrame({"resultId": [10, 11, 12], "raceId": [1, 2, 3], "points": [25, 18, 15], "position": [1, 2, 3]}),
    name="results",
)


def test_plural_table_names_become_singular_entities_and_an_attribute_never_repeats_its_entity():
    pair = ColumnPair(RACES.id, "raceId", RESULTS.id, "raceId")
    path = JoinPath((RACES.id, RESULTS.id), ((pair,),), JoinKind.EXPLICIT, 1.0)
    (query,) = HeuristicQueryGenerator().generate(PathRequest(path, {t.id: t for t in (RACES, RESULTS)})).queries
    assert query.question.startswith("What are the points and position of the result for the race ")
    assert "race of the race" not in query.question and "races" not in query.question


def test_far_table_with_no_attribute_but_its_name_is_asked_with_which():
    pair = ColumnPair(RESULTS.id, "raceId", RACES.id, "raceId")
    path = JoinPath((RESULTS.id, RACES.id), ((pair,),), JoinKind.EXPLICIT, 1.0)
    (query,) = HeuristicQueryGenerator().generate(PathRequest(path, {t.id: t for t in (RACES, RESULTS)})).queries
    assert query.question == "Which race is linked to each result?"


def test_one_singular_target_takes_is():
    drivers = Table("drivers", pd.DataFrame({"driverId": [1, 2], "nationality": ["British", "German"]}))
    results = Table("results", RESULTS.df.assign(driverId=[1, 2, 1]))
    pair = ColumnPair(results.id, "driverId", drivers.id, "driverId")
    path = JoinPath((results.id, drivers.id), ((pair,),), JoinKind.EXPLICIT, 1.0)
    (query,) = HeuristicQueryGenerator().generate(PathRequest(path, {t.id: t for t in (drivers, results)})).queries
    assert query.question.startswith("What is the nationality of the driver for ")
