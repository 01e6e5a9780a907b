"""One identifier splitter: BM25, join naming and the heuristic questions read a name's words alike."""

from __future__ import annotations

import pytest

from llama_index_pearl.corpus.lexical import text_tokens
from llama_index_pearl.generation import humanize
from llama_index_pearl.joins.naming import parse_reference
from llama_index_pearl.text.words import identifier_words, singular, split_identifiers


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("customerId", ("customer", "id")),
        ("Stadium_ID", ("stadium", "id")),
        ("AirportCode", ("airport", "code")),
        ("HTTPServer name", ("http", "server", "name")),
        ("teamIDwinner", ("team", "id", "winner")),
        ("customer2Name", ("customer2", "name")),
        ("order-date (UTC)", ("order", "date", "utc")),
        ("documentIDs", ("document", "ids")),
        ("list URLs and APIsList", ("list", "urls", "and", "apis", "list")),
    ],
)
def test_a_name_is_split_on_snake_case_camel_case_acronyms_and_punctuation(name, words):
    assert identifier_words(name) == words


def test_split_identifiers_keeps_case_and_the_text_around_names():
    assert split_identifiers("Has_Pet carMakers, HTTPServer!") == "Has Pet car Makers, HTTP Server!"


@pytest.mark.parametrize("name", ["HTTPServer", "teamIDwinner", "Has_Pet", "carMakers"])
def test_bm25_join_naming_and_questions_read_the_same_words(name):
    words = identifier_words(name)
    assert tuple(text_tokens(name)) == tuple(singular(w) for w in words)
    assert tuple(humanize(name).split()) == words


def test_join_naming_reads_a_role_after_a_key_from_the_same_words():
    assert parse_reference("teamIDwinner").core == ("team",)


@pytest.mark.parametrize(
    ("plural", "one"),
    [
        ("countries", "country"),
        ("races", "race"),
        ("bus", "bus"),
        ("movies", "movie"),
        ("series", "series"),
        ("diagnoses", "diagnosis"),
        ("analyses", "analysis"),
        ("courses", "course"),
        ("doses", "dose"),
    ],
)
def test_plurals_fold_to_the_singular(plural, one):
    assert singular(plural) == one
