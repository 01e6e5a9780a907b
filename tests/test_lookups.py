"""Lookups and roles: where the needed tables hold only codes, the table that names them comes in, as may be needed;
where a needed table's key calls a row by a role the question spells (a store's manager), that row's table."""

from __future__ import annotations

import dataclasses

import networkx as nx
import pandas as pd
import pytest
from graphs import add_join

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.retrieval.answer.lookups import (
    LOOKUP_CONFIDENCE,
    asks_to_count,
    date_share,
    holds_names,
    names_a_period,
    role_words,
    with_dates,
    with_lookups,
    with_roles,
)
from llama_index_pearl.retrieval.answer.table_sets import SetReason, SetRule, SetTier, choose_table_set

NAMED = {"d_diagnoses", "patients", "d_wards"}  # the tables of _hospital() that hold a name


def _hospital() -> nx.Graph:
    """diagnoses codes each stay's conditions (icd_code -> d_diagnoses) and its patient (subject_id -> patients)."""
    graph = nx.Graph()
    add_join(graph, "diagnoses", "icd_code", "d_diagnoses", "icd_code")
    add_join(graph, "diagnoses", "subject_id", "patients", "subject_id")
    return graph


def _alone(graph: nx.Graph, seed: str, others: list[str], confidence: float = 0.9):
    """The set of ``seed`` alone: every other table ranked below it and far too unsure to come in."""
    ranked = [(seed, 0.6), *((t, 0.3 - 0.1 * i) for i, t in enumerate(others))]
    return choose_table_set(ranked, {seed: confidence, **dict.fromkeys(others, 0.01)}, seed, graph)


def _diagnoses_alone(graph: nx.Graph, confidence: float = 0.9):
    return _alone(graph, "diagnoses", ["patients", "d_diagnoses"], confidence)


def test_a_set_of_codes_gets_the_lookup_that_names_them_as_may_be_needed():
    answered = with_lookups(_diagnoses_alone(_hospital()), _hospital(), NAMED)
    assert "d_diagnoses" in answered.tables
    assert answered.reasons["d_diagnoses"] is SetReason.LOOKUP
    assert answered.tiers["d_diagnoses"] is SetTier.MAYBE
    assert answered.confidence["d_diagnoses"] == LOOKUP_CONFIDENCE


def test_a_lookup_is_never_surer_than_the_table_that_references_it():
    graph = _hospital()
    answered = with_lookups(_diagnoses_alone(graph, confidence=0.2), graph, NAMED, confidence=0.3)
    assert answered.confidence["d_diagnoses"] == 0.2


def test_the_people_a_table_references_are_a_lookup_too_when_they_hold_a_name():
    assert with_lookups(_diagnoses_alone(_hospital()), _hospital(), NAMED).tables == (
        "diagnoses",
        "d_diagnoses",
        "patients",
    )


def test_a_set_whose_needed_table_holds_a_name_gets_no_lookup():
    graph = _hospital()
    chosen = _diagnoses_alone(graph)
    assert with_lookups(chosen, graph, NAMED | {"diagnoses"}) == chosen


def test_a_table_that_references_another_is_no_lookup():
    graph = _hospital()
    add_join(graph, "d_diagnoses", "ward_id", "d_wards", "ward_id")
    assert "d_diagnoses" not in with_lookups(_diagnoses_alone(graph), graph, NAMED).tables


def test_a_table_without_a_name_is_no_lookup():
    graph = _hospital()
    assert "d_diagnoses" not in with_lookups(_diagnoses_alone(graph), graph, NAMED - {"d_diagnoses"}).tables


def test_a_table_that_references_a_needed_table_is_no_lookup_of_it():
    graph = nx.Graph()
    add_join(graph, "d_diagnoses", "icd_code", "diagnoses", "icd_code")  # d_diagnoses is the referencing side here
    assert with_lookups(_diagnoses_alone(graph), graph, NAMED).tables == ("diagnoses",)


def test_a_column_holds_a_name_by_a_word_of_its_name():
    assert holds_names(["icd_code", "long_title"])
    assert holds_names(["JobDesc"])
    assert holds_names(["EnglishProductCategoryName"])
    assert not holds_names(["subject_id", "hadm_id", "icd_code", "seq_num"])


def test_a_column_named_as_its_table_is_its_name():
    assert holds_names(["alid", "Airline", "Country"], entity={"airline"})
    assert not holds_names(["alid", "Country"], entity={"airline"})


def test_a_question_that_counts_names_nothing():
    assert asks_to_count("How many diagnoses were coded last year?")
    assert asks_to_count("What is the number of stays per ward?")
    assert not asks_to_count("Which conditions are coded most often?")


def _clinic() -> dict[str, pd.DataFrame]:
    """A hospital's stays, the conditions coded on each (codes only) and the dictionary of those codes."""
    return {
        "patients": pd.DataFrame({"subject_id": [1, 2, 3], "gender": ["F", "M", "F"], "anchor_age": [71, 64, 80]}),
        "admissions": pd.DataFrame(
            {"hadm_id": [10, 11, 12], "subject_id": [1, 2, 3], "admission_type": ["EW EMER.", "ELECTIVE", "URGENT"]}
        ),
        "diagnoses_icd": pd.DataFrame(
            {"subject_id": [1, 1, 2, 3], "hadm_id": [10, 10, 11, 12], "seq_num": [1, 2, 1, 1],
             "icd_code": ["A419", "I10", "I10", "E119"]}
        ),
        "d_icd_diagnoses": pd.DataFrame(
            {"icd_code": ["A419", "I10", "E119"],
             "long_title": ["Sepsis, unspecified organism", "Essential hypertension", "Type 2 diabetes"]}
        ),
    }  # fmt: skip


def _set_of(index: PearlTableIndex, question: str) -> dict[str, str]:
    """Each table of the question's set and why it is there; one candidate only, so the set's evidence can bring
    in nothing but the seed."""
    nodes = index.as_retriever(similarity_top_k=4, set_rule=SetRule(depth=1)).retrieve(question)
    return {n.node.metadata["table_id"]: n.node.metadata["set_reason"] for n in nodes if n.node.metadata["in_set"]}


def test_a_question_that_lists_coded_conditions_gets_their_dictionary(minilm):
    index = PearlTableIndex.from_tables(_clinic(), embed_model=minilm)
    assert _set_of(index, "Which conditions are coded most often?") == {
        "diagnoses_icd": "matched",
        "d_icd_diagnoses": "lookup",
    }


def test_a_question_that_counts_coded_conditions_gets_no_dictionary(minilm):
    index = PearlTableIndex.from_tables(_clinic(), embed_model=minilm)
    assert _set_of(index, "How many conditions were coded?") == {"diagnoses_icd": "matched"}


def _store() -> nx.Graph:
    """A store references the staff member who manages it (manager_staff_id) and its address (address_id)."""
    graph = nx.Graph()
    add_join(graph, "store", "manager_staff_id", "staff", "staff_id")
    add_join(graph, "store", "address_id", "address", "address_id")
    return graph


def _store_alone(graph: nx.Graph, confidence: float = 0.9):
    return _alone(graph, "store", ["address", "staff"], confidence)


NAMES = {"store": frozenset({"store"}), "staff": frozenset({"staff"}), "address": frozenset({"address"})}


def test_a_key_named_by_a_persons_role_gives_that_role_to_the_table_it_references():
    assert role_words("manager_staff_id", {"staff"}) == {"manager"}
    assert role_words("SupportRepId", {"employee"}) == {"support", "rep"}
    assert role_words("salesRepEmployeeNumber", {"employee"}) == {"sale", "rep"}


def test_a_key_named_by_its_table_or_by_no_persons_role_gives_no_role():
    assert role_words("address_id", {"address"}) == frozenset()
    assert role_words("order_provider_id", {"provider"}) == frozenset()
    assert role_words("billing_address_id", {"address"}) == frozenset()


def test_a_role_the_question_spells_brings_in_the_table_the_key_references_as_may_be_needed():
    answered = with_roles(_store_alone(_store()), _store(), {"name", "store", "manager"}, NAMES)
    assert answered.tables == ("store", "staff")
    assert answered.reasons["staff"] is SetReason.ROLE
    assert answered.tiers["staff"] is SetTier.MAYBE
    assert answered.confidence["staff"] == LOOKUP_CONFIDENCE


def test_a_role_is_never_surer_than_the_table_whose_key_names_it():
    answered = with_roles(_store_alone(_store(), confidence=0.6), _store(), {"store", "manager"}, NAMES, 0.7)
    assert answered.confidence["staff"] == 0.6


def test_without_the_role_in_the_question_the_table_stays_out():
    chosen = _store_alone(_store())
    assert with_roles(chosen, _store(), {"name", "store", "staff_member"}, NAMES) == chosen


def test_a_role_spelled_in_part_names_nothing():
    graph = nx.Graph()
    add_join(graph, "customers", "salesRepEmployeeNumber", "employees", "employeeNumber")
    chosen = _alone(graph, "customers", ["employees"])
    names = {"customers": frozenset({"customer"}), "employees": frozenset({"employee"})}
    assert "employees" not in with_roles(chosen, graph, {"customer", "rep"}, names).tables
    assert "employees" in with_roles(chosen, graph, {"customer", "sale", "rep"}, names).tables


def test_only_a_needed_tables_keys_give_roles():
    chosen = _store_alone(_store(), confidence=0.3)  # the store itself only may be needed
    chosen = dataclasses.replace(chosen, tiers={"store": SetTier.MAYBE})
    assert with_roles(chosen, _store(), {"store", "manager"}, NAMES) == chosen


def _rental_shop() -> dict[str, pd.DataFrame]:
    """Stores, each managed by a member of staff (manager_staff_id), at an address; staff who rent films out."""
    return {
        "store": pd.DataFrame(
            {"store_id": [1, 2], "manager_staff_id": [1, 2], "address_id": [1, 2], "opened": ["2004-01", "2005-03"]}
        ),
        "staff": pd.DataFrame(
            {"staff_id": [1, 2], "first_name": ["Eve", "Max"], "last_name": ["Berg", "Ray"], "store_id": [1, 2]}
        ),
        "address": pd.DataFrame({"address_id": [1, 2], "address": ["1 Elm St", "2 Oak Rd"], "city": ["Oslo", "Rome"]}),
        "rental": pd.DataFrame({"rental_id": [1, 2, 3], "staff_id": [1, 2, 1], "rental_date": ["2005-05-24"] * 3}),
    }  # fmt: skip


def _reasons(index: PearlTableIndex, question: str) -> dict[str, str]:
    nodes = index.as_retriever(similarity_top_k=4).retrieve(question)
    return {n.node.metadata["table_id"]: n.node.metadata["set_reason"] for n in nodes if n.node.metadata["in_set"]}


def test_a_question_about_a_stores_manager_gets_the_staff_table(minilm):
    index = PearlTableIndex.from_tables(_rental_shop(), embed_model=minilm)
    assert _reasons(index, "What is the name of each store's manager?")["staff"] == "role"
    assert "staff" not in _reasons(index, "When did each store open?")


def _order_lines() -> nx.Graph:
    """Order lines reference their order (which holds its date) and their product (which holds none)."""
    graph = nx.Graph()
    add_join(graph, "order_lines", "order_id", "orders", "order_id")
    add_join(graph, "order_lines", "product_id", "products", "product_id")
    return graph


DATES = {"orders": 0.25}  # the share of each table's columns that hold a date (none: 0)


def _lines_alone(graph: nx.Graph):
    return _alone(graph, "order_lines", ["products", "orders"])


def test_a_tables_date_share_counts_the_columns_named_as_dates():
    assert date_share(["OrderID", "OrderDate", "ShippedDate", "Freight"]) == 0.5
    assert date_share(["yearID", "teamID", "HR"]) == pytest.approx(1 / 3)
    assert date_share(["OrderID", "UnitPrice", "Discount"]) == 0.0


def test_a_time_of_day_or_a_duration_is_no_date():
    assert date_share(["t_time", "t_hour", "lead_time_days"]) == 0.0


def test_a_question_names_a_period_by_a_year_a_month_or_a_word_of_periods():
    assert names_a_period("What were our total sales in 1997?")
    assert names_a_period("How much did we sell per month?") and names_a_period("What is annual revenue?")
    assert names_a_period("Which products sold best in March?")
    assert not names_a_period("Which products sold best?") and not names_a_period("List 2500 customers.")


def test_the_date_of_a_period_comes_from_the_table_a_needed_table_references():
    answered = with_dates(_lines_alone(_order_lines()), _order_lines(), lambda t: DATES.get(t, 0.0))
    assert answered.tables == ("order_lines", "orders")
    assert answered.reasons["orders"] is SetReason.DATE
    assert answered.tiers["orders"] is SetTier.MAYBE
    assert answered.confidence["orders"] == LOOKUP_CONFIDENCE


def test_a_needed_table_that_holds_a_date_needs_no_other():
    chosen = _lines_alone(_order_lines())
    assert with_dates(chosen, _order_lines(), lambda t: {**DATES, "order_lines": 0.2}.get(t, 0.0)) == chosen


def test_of_the_referenced_tables_the_one_most_made_of_dates_holds_the_date():
    graph = nx.Graph()  # a warehouse's fact: its date key references the date dimension; a store records when it opened
    add_join(graph, "sales", "date_key", "date_dim", "date_key")
    add_join(graph, "sales", "store_key", "store", "store_key")
    chosen = _alone(graph, "sales", ["store", "date_dim"])
    answered = with_dates(chosen, graph, lambda t: {"date_dim": 0.6, "store": 0.1}.get(t, 0.0))
    assert answered.tables == ("sales", "date_dim")


def test_a_referenced_table_without_a_date_never_comes_in_for_one():
    chosen = _lines_alone(_order_lines())
    assert with_dates(chosen, _order_lines(), lambda t: 0.0) == chosen


def _sales() -> dict[str, pd.DataFrame]:
    """Order lines without a date; the orders they belong to hold it."""
    return {
        "orders": pd.DataFrame(
            {"order_id": [1, 2, 3], "order_date": ["1996-07-04", "1997-03-02", "1997-11-20"],
             "ship_city": ["Reims", "Lyon", "Graz"]}
        ),
        "order_lines": pd.DataFrame(
            {"order_id": [1, 1, 2, 3], "product_id": [11, 42, 11, 7], "unit_price": [14.0, 9.8, 14.0, 21.0],
             "quantity": [12, 10, 5, 8], "discount": [0.0, 0.1, 0.0, 0.05]}
        ),
        "products": pd.DataFrame(
            {"product_id": [7, 11, 42], "product_name": ["Tofu", "Queso Cabrales", "Singaporean Hokkien"],
             "units_in_stock": [35, 22, 26]}
        ),
    }  # fmt: skip


def test_a_question_of_sales_in_a_year_gets_the_orders_that_hold_their_dates(minilm):
    index = PearlTableIndex.from_tables(_sales(), embed_model=minilm)
    question = "What were our total sales, net of discounts"
    assert _set_of(index, f"{question}, in 1997?").get("orders") == "date"
    assert "orders" not in _set_of(index, f"{question}?")
