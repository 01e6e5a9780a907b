"""Same-named keys whose few sample rows share no value: which side is the key, read from what makes a column one.

Each test builds a few five-row tables inline, as a random sample of large tables holds them (no value met twice
across tables), and states one rule of the joins step (docs/architecture.md, "The joins step", rule 8).
"""

from __future__ import annotations

import random

import pandas as pd
import pytest
from embeddings import TrigramEmbedding
from headers import header

from llama_index_pearl.joins import TAU_2, discover_join_paths
from llama_index_pearl.tables.table import Table

EMB = TrigramEmbedding()


def table(table_id: str, **columns: list[str]) -> Table:
    return Table(table_id, pd.DataFrame(columns), source="db")


def found(*tables: Table) -> set[tuple[str, str]]:
    """``(child.column, parent.column)`` of every edge that joins its tables."""
    edges = discover_join_paths(list(tables), EMB, use_declared=False).edges
    return {(f"{e.left_table}.{e.left_column}", f"{e.right_table}.{e.right_column}") for e in edges if e.passes(TAU_2)}


def sparse(seed: int, n: int = 5, digits: int = 7) -> list[str]:
    """``n`` distinct integers of ``digits`` digits, as a random sample of a large table's ids holds them."""
    draw = random.Random(seed)
    return [str(v) for v in draw.sample(range(10 ** (digits - 1), 10**digits), n)]


def uuids(seed: int, n: int = 5) -> list[str]:
    draw = random.Random(seed)
    return ["-".join(f"{draw.getrandbits(b):0{b // 4}x}" for b in (32, 16, 16, 16, 48)) for _ in range(n)]


DATES = ["2019-01-04", "2019-03-11", "2020-07-21", "2020-11-02", "2021-05-30"]
LATER = ["2022-02-14", "2022-06-01", "2023-01-19", "2023-08-08", "2024-03-03"]


def test_a_bare_id_repeated_by_a_table_joins_the_table_it_identifies():
    # each table names its key ID; the laboratory repeats a patient's ID row after row: it references the patient
    patient = table("Patient", ID=sparse(1), SEX=["F", "M", "F", "F", "M"], Birthday=DATES)
    lab_ids = sparse(2, 2)
    laboratory = table(
        "Laboratory", ID=[lab_ids[0]] * 3 + [lab_ids[1]] * 2, Date=LATER, GOT=["21", "34", "18", "40", "25"]
    )
    assert found(patient, laboratory) == {("Laboratory.ID", "Patient.ID")}


def test_a_uuid_repeated_by_a_child_joins_the_table_it_is_unique_in():
    cards = table("cards", id=["1", "2", "3", "4", "5"], uuid=uuids(3), name=["Ajani", "Bog", "Cat", "Drake", "Elf"])
    card = uuids(4, 2)
    rulings = table(
        "rulings", id=["10", "11", "12", "13", "14"], uuid=[card[0]] * 2 + [card[1]] * 3, date=DATES, text=list("vwxyz")
    )
    assert ("rulings.uuid", "cards.uuid") in found(cards, rulings)


def test_a_same_named_key_joins_the_table_it_leads_from_a_table_keyed_otherwise():
    # the clients lead with cust_code (their key); an invoice, keyed by invoice_id, names the client's code
    clients = table("clients", cust_code=["C" + v for v in sparse(5)], name=["Ann", "Bob", "Cy", "Di", "Ed"])
    invoices = table(
        "invoices", invoice_id=sparse(6), cust_code=["C" + v for v in sparse(7)], total=["9.5", "12", "3.2", "40", "7"]
    )
    assert found(clients, invoices) == {("invoices.cust_code", "clients.cust_code")}


def test_a_detail_table_named_after_another_joins_it_on_their_shared_key():
    # no name says that id_bioguide is the legislators' key; the terms' table is named after the legislators
    legislators = table(
        "legislators",
        full_name=["Al B", "Cy D", "Ed F", "Gil H", "Ivy J"],
        id_bioguide=["B00" + v for v in sparse(8, 5, 4)],
    )
    terms = table(
        "legislators_terms",
        id_bioguide=["T00" + v for v in sparse(9, 5, 4)],
        term_id=["t" + v for v in sparse(10)],
        term_start=DATES,
    )
    assert found(legislators, terms) == {("legislators_terms.id_bioguide", "legislators.id_bioguide")}


def test_keys_whose_names_differ_by_an_abbreviation_join():
    # the clients' key is cust_id; a sale, keyed by sale_id, spells the same key out
    clients = table("clients", cust_id=sparse(11), name=["Ann", "Bob", "Cy", "Di", "Ed"])
    sales = table("sales", sale_id=sparse(12), customer_id=sparse(13), amount=["1.5", "2.5", "3", "4", "5"])
    assert found(clients, sales) == {("sales.customer_id", "clients.cust_id")}


def test_keys_named_by_their_tables_initials_join_the_link_table_that_repeats_them():
    # a movie database's export: each table's key is its initials and ID, a cast table links movies and people
    movie = table("Movie", MID=sparse(21), title=["Up", "Heat", "Alien", "Jaws", "Rocky"])
    person = table("Person", PID=sparse(22), Name=["Ann", "Bob", "Cy", "Di", "Ed"])
    cast = table("M_Cast", ID=sparse(23), MID=sparse(24), PID=sparse(25))
    assert found(movie, person, cast) == {("M_Cast.MID", "Movie.MID"), ("M_Cast.PID", "Person.PID")}


def test_an_employee_number_and_an_employee_id_are_one_key():
    staff = table("staff", emp_no=sparse(14), last_name=["Li", "Ma", "Ng", "Oz", "Pi"])
    payroll = table(
        "payroll", payroll_id=sparse(15), employee_id=sparse(16), salary=["100", "200", "300", "400", "500"]
    )
    assert found(staff, payroll) == {("payroll.employee_id", "staff.emp_no")}


def test_an_id_column_in_two_unrelated_tables_does_not_join():
    # each is its own table's surrogate key, unique in both: nothing says one refers to the other
    wrestlers = table("Wrestlers", id=sparse(17, 5, 5), name=["Ace", "Bam", "Cruz", "Dax", "Eli"])
    belts = table("Belts", id=sparse(18, 5, 5), name=["World", "Tag", "Cruiser", "Women", "Intl"])
    assert found(wrestlers, belts) == set()


def test_a_row_guid_in_every_table_joins_none_of_them():
    # a guid beside each table's key identifies that table's rows, also in a table whose key it would be
    product = table("product", productid=sparse(19), rowguid=uuids(20), name=list("abcde"))
    quota = table("quota_history", entityid=sparse(21), quotadate=DATES, rowguid=uuids(22))
    territory = table("territory", territoryid=sparse(23), rowguid=uuids(24), name=list("fghij"))
    assert found(product, quota, territory) == set()


def test_two_tables_own_ids_are_no_join_where_a_named_key_joins_them():
    # a league's id happens to equal its country's id; the league names its country: that is the join
    ids = sparse(25)
    country = table("Country", id=ids, name=["Belgium", "England", "France", "Germany", "Italy"])
    league = table("League", id=ids, country_id=ids, name=["Jupiler", "Premier", "Ligue 1", "Bundesliga", "Serie A"])
    assert found(country, league) == {("League.country_id", "Country.id")}


def test_a_reference_goes_to_the_entitys_table_before_a_sibling_that_copies_the_key():
    # a manager is a person; the managers' table holds playerID unique in five rows, but is no table of players
    people = table("People", ID=sparse(26), playerID=[f"p{v}" for v in sparse(27, 5, 5)], nameFirst=list("abcde"))
    managers = table("Managers", playerID=[f"p{v}" for v in sparse(28, 5, 5)], yearID=["1990"] * 5, G=list("12345"))
    awards = table("AwardsManagers", playerID=[f"p{v}" for v in sparse(29, 5, 5)], awardID=["BBWAA"] * 5)
    edges = found(people, managers, awards)
    assert ("AwardsManagers.playerID", "Managers.playerID") not in edges
    assert ("AwardsManagers.playerID", "People.playerID") in edges


def test_an_extended_copy_joins_its_original_on_the_originals_key():
    # races_ext repeats the races' columns and adds its own: the same races, numbered alike
    races = table(
        "races",
        race_id=["1107", "676", "136", "179", "821"],
        year=["2023", "1968", "2002", "1969", "2009"],
        round=["9", "10", "13", "4", "17"],
        name=list("abcde"),
    )
    extended = table(
        "races_ext",
        race_id=["6", "530", "173", "875", "984"],
        year=["2009", "1978", "2000", "2012", "2017"],
        round=["6", "4", "16", "11", "1"],
        name=list("fghij"),
        max_points=["10", "9", "10", "25", "25"],
    )
    assert found(races, extended) == {("races_ext.race_id", "races.race_id")}


def test_a_copy_numbering_rows_of_its_own_does_not_join_its_original_by_number():
    # sprint results have the results' columns, but their result_id counts sprint rows, far below the results'
    columns = {"race_id": ["18", "19", "20", "21", "22"], "points": list("13579"), "grid": list("24680")}
    columns |= {"driver_id": ["1", "830", "844", "847", "20"]}
    results = table("results", result_id=["13392", "5230", "7199", "22727", "5622"], **columns)
    sprints = table("sprint_results", result_id=["175", "57", "71", "2", "254"], **columns)
    assert ("sprint_results.result_id", "results.result_id") not in found(results, sprints)


def test_a_key_name_many_tables_lead_with_joins_the_one_table_it_alone_keys():
    # a hospital's schema: patients are keyed by subject_id; admissions lead with it but are keyed by hadm_id beside
    # it, and lab events name it after their own key
    patients = header("patients", "subject_id", "gender", "anchor_age")
    admissions = header("admissions", "subject_id", "hadm_id", "admittime")
    labs = header("labevents", "labevent_id", "subject_id", "charttime")
    assert found(patients, admissions, labs) == {
        ("admissions.subject_id", "patients.subject_id"),
        ("labevents.subject_id", "patients.subject_id"),
    }


def test_a_row_number_every_table_carries_joins_none_of_them():
    codes = header("d_cpt", "row_id", "category", "section_header")
    notes = header("noteevents", "row_id", "subject_id", "chartdate")
    calls = header("callout", "row_id", "subject_id", "callout_status")
    assert found(codes, notes, calls) == set()


def test_two_tables_leading_with_a_row_number_do_not_join_on_it():
    codes = header("d_cpt", "row_id", "category", "section_header")
    notes = header("noteevents", "row_id", "subject_id", "chartdate")
    assert found(codes, notes) == set()


def test_a_table_keyed_after_its_row_number_is_read_from_its_next_column():
    # every table of an export leads with its row number; patients are keyed by the column after it
    patients = header("PATIENTS", "ROW_ID", "SUBJECT_ID", "GENDER")
    admissions = header("ADMISSIONS", "ROW_ID", "SUBJECT_ID", "HADM_ID", "ADMITTIME")
    notes = header("NOTEEVENTS", "ROW_ID", "SUBJECT_ID", "HADM_ID", "TEXT")
    assert found(patients, admissions, notes) == {
        ("ADMISSIONS.SUBJECT_ID", "PATIENTS.SUBJECT_ID"),
        ("NOTEEVENTS.SUBJECT_ID", "PATIENTS.SUBJECT_ID"),
        ("NOTEEVENTS.HADM_ID", "ADMISSIONS.HADM_ID"),
    }


def test_a_key_name_that_abbreviates_one_table_after_an_initial_is_that_tables_key():
    # hadm_id is the h(ospital) adm(ission): no table leads with it, and the one it abbreviates is keyed by it
    admissions = header("admissions", "subject_id", "hadm_id", "admittime")
    labs = header("labevents", "labevent_id", "subject_id", "hadm_id")
    services = header("services", "subject_id", "hadm_id", "curr_service")
    assert {pair for pair in found(admissions, labs, services) if "hadm_id" in pair[0]} == {
        ("labevents.hadm_id", "admissions.hadm_id"),
        ("services.hadm_id", "admissions.hadm_id"),
    }


def test_a_key_name_no_table_it_abbreviates_carries_joins_nothing():
    # the admissions table is not among these: two tables referring to it are not each other's key
    labs = header("labevents", "labevent_id", "subject_id", "hadm_id")
    services = header("services", "subject_id", "hadm_id", "curr_service")
    assert not {pair for pair in found(labs, services) if "hadm_id" in pair[0]}


def test_a_lookup_that_glues_a_qualifier_to_the_entity_keys_the_tables_named_with_it():
    # MIMIC's lab items beside its plain items: lab events code lab items, chart events the other items
    items = header("d_items", "itemid", "label", "category")
    lab_items = header("d_labitems", "itemid", "label", "fluid")
    charts = header("chartevents", "subject_id", "itemid", "valuenum")
    labs = header("labevents", "labevent_id", "subject_id", "itemid")
    assert {pair for pair in found(items, lab_items, charts, labs) if "itemid" in pair[0]} == {
        ("chartevents.itemid", "d_items.itemid"),
        ("labevents.itemid", "d_labitems.itemid"),
    }


@pytest.mark.parametrize("row_number", ["index", ""])
def test_a_data_frames_index_written_as_a_column_is_a_row_number(row_number):
    # pandas writes a frame's row labels as a leading column: named "index" (to_sql, reset_index) or under an empty
    # header (to_csv), here in two tables of five; each is keyed by the column after it, and the sales carry an item
    loss_rates = header("loss_rates", row_number, "item_code", "loss_rate")
    sales = header("sales", row_number, "sale_date", "item_code", "quantity")
    members = header("members", "member_id", "region")
    prices = header("prices", "ticker", "market_date", "price")
    regions = header("regions", "region_id", "region_name")
    joins = found(loss_rates, sales, members, prices, regions)
    assert {pair for pair in joins if "item_code" in pair[0]} == {("sales.item_code", "loss_rates.item_code")}
