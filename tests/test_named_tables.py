"""A table the question names by its whole name comes into the set, with the tables that join it: "in each country"
asks for what ``country`` holds, however far it lies from the set."""

from __future__ import annotations

import pandas as pd
import pytest
from indexes import set_confidences

from llama_index_pearl import PearlTableIndex, Table
from llama_index_pearl.retrieval.answer.named_values import asked_words, own_name_words, spelled_tables
from llama_index_pearl.retrieval.answer.table_sets import SetRule


def test_a_tables_own_name_leaves_out_the_words_every_table_of_its_source_carries():
    names = {"a": frozenset({"shop", "country"}), "b": frozenset({"shop", "city", "country"})}
    own = own_name_words(names, {"a": "shop", "b": "shop"})
    assert own == {"a": frozenset(), "b": frozenset({"city"})}


def test_the_only_table_of_its_source_keeps_its_whole_name():
    own = own_name_words({"a": frozenset({"shop", "country"})}, {"a": "shop"})
    assert own == {"a": frozenset({"shop", "country"})}


def test_a_name_is_spelled_only_when_the_question_holds_every_word_of_it():
    names = {"film_category": frozenset({"film", "category"}), "country": frozenset({"country"})}
    assert spelled_tables(frozenset({"film", "country"}), names) == frozenset({"country"})


def test_a_table_without_own_name_words_is_never_spelled():
    assert spelled_tables(frozenset({"shop"}), {"a": frozenset()}) == frozenset()


@pytest.fixture(scope="module")
def rentals(minilm) -> PearlTableIndex:
    """A rental shop exported with its database's name before each table's; a country lies three joins from
    the customers who pay."""

    def table(name: str, columns: dict) -> Table:
        return Table(f"rentals__{name}", pd.DataFrame(columns))

    return PearlTableIndex.from_tables(
        [
            table(
                "payment", {"payment_id": [1, 2, 3, 4], "customer_id": [1, 2, 3, 1], "amount": [2.99, 4.99, 0.99, 5.99]}
            ),
            table("customer", {"customer_id": [1, 2, 3], "first_name": ["Ann", "Bo", "Cy"], "address_id": [1, 2, 3]}),
            table(
                "address",
                {"address_id": [1, 2, 3], "address": ["1 Elm St", "2 Oak Rd", "3 Pine Ave"], "city_id": [1, 2, 3]},
            ),
            table("city", {"city_id": [1, 2, 3], "city": ["Oslo", "Rome", "Lima"], "country_id": [1, 2, 3]}),
            table("country", {"country_id": [1, 2, 3], "country": ["Norway", "Italy", "Peru"]}),
            table("film", {"film_id": [1, 2], "title": ["Alien Dawn", "Blue Bay"], "rental_rate": [0.99, 2.99]}),
            table("inventory", {"inventory_id": [1, 2, 3], "film_id": [1, 2, 1], "store_id": [1, 1, 2]}),
            table("rental", {"rental_id": [1, 2, 3], "inventory_id": [1, 2, 3], "customer_id": [1, 2, 3]}),
            table("staff", {"staff_id": [1, 2], "first_name": ["Eve", "Max"], "store_id": [1, 2]}),
            table("store", {"store_id": [1, 2], "manager_staff_id": [1, 2], "address_id": [1, 2]}),
            table("actor", {"actor_id": [1, 2], "first_name": ["Ida", "Leo"], "last_name": ["Berg", "Ray"]}),
            table("film_actor", {"actor_id": [1, 2, 1], "film_id": [1, 2, 2]}),
            table("category", {"category_id": [1, 2], "name": ["Drama", "Comedy"]}),
            table("film_category", {"film_id": [1, 2], "category_id": [1, 2]}),
            table("language", {"language_id": [1, 2], "name": ["English", "French"]}),
        ],
        embed_model=minilm,
    )


def _in_set(index: PearlTableIndex, question: str) -> dict[str, float]:
    return set_confidences(index, question, 15)


def test_a_table_the_question_names_comes_into_the_set_with_the_tables_that_join_it(rentals):
    chosen = _in_set(rentals, "What is the average payment amount per customer in each country?")
    assert chosen.get("rentals__country", 0.0) >= SetRule().maybe
    assert {"rentals__address", "rentals__city"} <= set(chosen)


def test_without_its_name_in_the_question_the_same_table_stays_out(rentals):
    assert "rentals__country" not in _in_set(rentals, "What is the average payment amount per customer?")


def test_a_name_whose_words_run_together_is_spelled_by_the_two_words_in_a_row():
    asked = asked_words(["which", "product", "line", "sold"])
    names = {"productlines": frozenset({"productline"}), "lineitems": frozenset({"lineitem"})}
    assert spelled_tables(asked, names) == frozenset({"productlines"})
