"""What a column's name says it references: pure naming functions, no data."""

from __future__ import annotations

import pytest

from llama_index_pearl.joins.abbreviations import qualified
from llama_index_pearl.joins.naming import (
    NameReference,
    entity_match,
    key_name_worth,
    parse_reference,
    table_forms,
)
from llama_index_pearl.joins.table_names import glued_qualifier, starts_with_qualifier


@pytest.mark.parametrize(
    ("column", "core", "key"),
    [
        ("customer_id", ("customer",), "id"),
        ("DeliveryCityID", ("delivery", "city"), "id"),
        ("Customer Key", ("customer",), "key"),
        ("emp_no", ("emp",), "no"),
        ("ITEMID", ("item",), "id"),
        ("link_to_member", ("link", "to", "member"), None),
        ("gender_concept_id", ("gender", "concept"), "id"),
        ("PID", ("p",), "id"),
        ("LAID", ("la",), "id"),
    ],
)
def test_a_reference_is_its_entity_words_and_key_suffix(column, core, key):
    ref = parse_reference(column)
    assert (ref.core, ref.key) == (core, key)


def test_a_trailing_number_is_dropped_and_remembered():
    assert parse_reference("home_player_11") == NameReference(("home", "player"), None, numbered=True)
    assert parse_reference("atom_id2") == NameReference(("atom",), "id", numbered=True)
    assert parse_reference("concept_id_1").core == ("concept",)


def test_agents_are_roles_not_entities():
    assert parse_reference("LastEditedBy") == NameReference(("last", "edited"), "by", agent=True)
    assert parse_reference("creator_id").agent
    assert not parse_reference("customer_name").agent  # no key word: an attribute
    assert parse_reference("Salesperson Key").agent  # a compound whose head is a person
    assert not parse_reference("person_id").agent  # the entity itself


def test_a_leading_count_word_makes_a_measure_not_a_reference():
    assert parse_reference("NumberEmployees").core == ()
    assert parse_reference("num_players").core == ()


def test_table_forms_are_the_whole_name_singular_and_its_head():
    assert table_forms("forum_topics") == {("forum", "topic"): 1.0, ("topic",): 0.9}
    assert table_forms("db__People") == {("person",): 1.0}
    assert table_forms("zip_code")[("zip",)] == 1.0


def test_a_head_is_no_form_when_the_words_before_it_name_another_table():
    assert ("concert",) not in table_forms("singer_in_concert", {("singer",), ("concert",)})
    assert ("emp",) not in table_forms("dept_emp", {("department",), ("employee",)})
    assert ("pet",) not in table_forms("Has_Pet", {("pet",), ("student",)})


def test_abbreviations_and_glued_words_match_whole_names_only():
    assert entity_match(("cust",), table_forms("customers")) == pytest.approx(0.85)
    assert entity_match(("dept",), table_forms("departments")) == pytest.approx(0.85)
    assert entity_match(("hero",), table_forms("superhero")) == pytest.approx(0.8)
    assert entity_match(("make",), table_forms("car_makers", {("car",)})) == 0.0


def test_a_far_longer_word_with_the_same_letters_is_no_abbreviation():
    assert entity_match(("dokur",), table_forms("dotekur")) == 0.0


def test_a_column_named_after_its_table_is_its_key():
    assert key_name_worth("CityID", table_forms("Cities")) == 1.0
    assert key_name_worth("id", table_forms("users")) == 1.0
    assert key_name_worth("player_api_id", table_forms("Player")) == pytest.approx(0.9)
    assert key_name_worth("name", table_forms("users")) == 0.0


def test_words_naming_another_table_make_a_reference_not_a_qualified_key():
    forms = table_forms("Product")
    assert key_name_worth("ProductModelID", forms, others={("product", "model")}) == 0.0
    assert key_name_worth("product_api_id", forms, others={("product", "model")}) == pytest.approx(0.9)


def test_an_abbreviated_or_glued_key_name_counts_unless_it_names_another_table():
    assert key_name_worth("stay_id", table_forms("icustays")) == pytest.approx(0.8)
    assert key_name_worth("stor_id", table_forms("stores")) == pytest.approx(0.85)
    assert key_name_worth("title_id", table_forms("titleauthor"), others={("title",)}) == 0.0


def test_a_tables_initials_glued_to_id_name_its_key():
    assert key_name_worth("PID", table_forms("Person")) == pytest.approx(0.85)
    assert key_name_worth("LAID", table_forms("Language")) == pytest.approx(0.85)
    assert key_name_worth("po_id", table_forms("purchase_orders")) == pytest.approx(0.85)


def test_initials_of_another_table_name_no_key():
    # M_Cast links movies and people: its MID and PID are references, its own key is ID
    assert key_name_worth("PID", table_forms("M_Cast")) == 0.0
    assert key_name_worth("MID", table_forms("M_Cast")) == 0.0
    assert key_name_worth("CGID", table_forms("caregivers")) == 0.0


def test_a_qualifiers_initial_before_an_abbreviation_names_the_word():
    assert qualified("hadm", "admission")  # h(ospital) adm(ission)
    assert not qualified("adm", "admission")  # a plain abbreviation, read as one elsewhere
    assert not qualified("hab", "admission")  # too short after the initial to abbreviate anything
    assert not qualified("hstay", "admission")


def test_a_table_name_glued_before_an_entity_names_a_qualifier():
    assert glued_qualifier("item", "d_labitems") == "lab"
    assert glued_qualifier("item", "d_items") == ""  # the plain entity
    assert glued_qualifier("item", "d_xitems") == ""  # too short to be a word
    assert starts_with_qualifier("labevents", "lab")
    assert not starts_with_qualifier("chartevents", "lab")
