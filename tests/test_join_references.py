"""References by name: the conventions real schemas use, with few or no sample values, and their decoys."""

from __future__ import annotations

import random

import pandas as pd
from headers import header

from llama_index_pearl.joins import candidates as cand
from llama_index_pearl.joins.discovery import TAU_2, discover_join_paths
from llama_index_pearl.joins.edges import admissible_pairs, keep_best_parents, score_admissible
from llama_index_pearl.joins.profiles import profile_tables
from llama_index_pearl.tables.table import Table


def rows(table_id: str, source: str | None = "db", **columns: list[str]) -> Table:
    return Table(table_id, pd.DataFrame(columns), source=source)


def joins(*tables: Table) -> set[tuple[str, str]]:
    """``(child.column, parent.column)`` of every explicit edge that passes, as discovery keeps them."""
    profiles = profile_tables(tables)
    pairs: cand.Pairs = {}
    cand.structural_candidates(profiles, pairs)
    cand.value_candidates(profiles, pairs)
    edges = keep_best_parents(score_admissible(profiles, admissible_pairs(profiles, pairs)))
    return {
        (f"{e.left_table}.{e.left_column}", f"{e.right_table}.{e.right_column}")
        for e in edges
        if e.explicit and e.passes(TAU_2)
    }


def test_camel_case_reference_to_a_plural_table_with_a_generic_id():
    users = header("users", "Id", "DisplayName")
    badges = header("badges", "Id", "UserId", "Name")
    assert joins(users, badges) == {("badges.UserId", "users.Id")}


def test_a_role_prefix_is_dropped():
    posts = header("posts", "Id", "Title")
    tags = header("tags", "Id", "TagName", "ExcerptPostId")
    assert joins(posts, tags) == {("tags.ExcerptPostId", "posts.Id")}


def test_an_edited_by_column_references_the_people_table():
    people = header("People", "PersonID", "FullName")
    cities = header("Cities", "CityID", "CityName", "LastEditedBy")
    assert joins(people, cities) == {("Cities.LastEditedBy", "People.PersonID")}


def test_an_agent_role_shared_by_tables_references_the_users_table():
    users = header("users", "id", "name")
    notes = header("notes", "id", "creator_id")
    comments = header("comments", "id", "creator_id")
    assert joins(users, notes, comments) == {("notes.creator_id", "users.id"), ("comments.creator_id", "users.id")}


def test_an_agent_word_in_one_table_only_is_a_thing_not_a_role():
    users = header("users", "id", "name")
    readings = header("readings", "id", "sensor_id")
    assert joins(users, readings) == set()


def test_a_role_compound_of_person_in_one_table_references_the_employee_table():
    employees = header("Employee", "Employee Key", "Employee", "Is Salesperson")
    sales = header("Sale", "Sale Key", "Salesperson Key", "Quantity")
    assert joins(employees, sales) == {("Sale.Salesperson Key", "Employee.Employee Key")}


def test_numbered_references_resolve_to_the_key_their_values_meet():
    player = rows("Player", id=["1", "2", "3"], player_api_id=["505942", "155782", "162549"], name=["a", "b", "c"])
    match = rows("Match", id=["7", "8"], home_player_1=["505942.0", ""], home_player_2=["162549.0", "98765.0"])
    assert joins(player, match) == {
        ("Match.home_player_1", "Player.player_api_id"),
        ("Match.home_player_2", "Player.player_api_id"),
    }


def test_link_to_entity_references_the_entitys_key():
    member = header("member", "member_id", "first_name")
    attendance = header("attendance", "link_to_event", "link_to_member")
    assert joins(member, attendance) == {("attendance.link_to_member", "member.member_id")}


def test_the_entity_may_be_glued_into_the_tables_name():
    superhero = header("superhero", "id", "superhero_name")
    superpower = header("superpower", "id", "power_name")
    hero_power = header("hero_power", "hero_id", "power_id")
    assert joins(superhero, superpower, hero_power) == {
        ("hero_power.hero_id", "superhero.id"),
        ("hero_power.power_id", "superpower.id"),
    }


def test_abbreviations_and_tables_named_after_their_key():
    customers = header("customers", "customer_id", "name")
    zip_code = header("zip_code", "zip_code", "city")
    orders = header("orders", "order_id", "cust_id", "zip")
    assert joins(customers, zip_code, orders) == {
        ("orders.cust_id", "customers.customer_id"),
        ("orders.zip", "zip_code.zip_code"),
    }


def test_a_key_named_after_its_entity_names_the_table_its_own_name_does_not():
    team = header("Team", "id", "team_api_id", "team_long_name")
    match = header("Match", "id", "home_team_api_id", "away_team_api_id")
    assert joins(team, match) == {("Match.home_team_api_id", "Team.team_api_id")} | {
        ("Match.away_team_api_id", "Team.team_api_id")
    }


def test_a_foreign_key_sample_of_one_repeated_value_still_references_by_name():
    country = rows("country", id=["1", "2", "3"], name=["x", "y", "z"])
    league = rows("league", id=["10", "11", "12"], country_id=["1", "1", "1"])
    assert ("league.country_id", "country.id") in joins(country, league)


def test_integers_written_as_floats_meet_their_key():
    district = rows("district", district_id=["13", "14", "15", "16"], name=["a", "b", "c", "d"])
    account = rows("account", account_id=["1", "2", "3"], district_id=["13.0", "15.0", ""])
    edges = joins(district, account)
    assert edges == {("account.district_id", "district.district_id")}


def test_ids_of_two_tables_sharing_an_improbable_value_are_one_key():
    patient = rows("Patient", ID=["2110", "11408", "12052", "14872", "5119703"], SEX=["F", "F", "M", "F", "M"])
    examination = rows("Examination", ID=["14872", "163109", "4007151"], aCL=["1.3", "4.2", "0.1"])
    assert joins(patient, examination) == {("Examination.ID", "Patient.ID")}


def test_dense_ids_named_id_in_every_table_are_no_key():
    a = rows("ships", id=[str(i) for i in range(1, 9)], name=list("abcdefgh"))
    b = rows("crews", id=[str(i) for i in range(1, 6)], size=list("12345"))
    assert joins(a, b) == set()


def test_counts_and_scores_named_after_an_entity_are_no_references():
    player = header("player", "player_id", "name")
    scores = header("scores", "score_id", "value")
    game = header("game", "game_id", "player_count", "home_score", "NumberPlayers")
    assert joins(player, scores, game) == set()


def test_a_text_created_by_column_does_not_reference_integer_user_ids():
    users = rows("users", id=["1", "2", "3"], name=["ann", "bo", "cy"])
    posts = rows("posts", id=["7", "8", "9"], created_by=["ann smith", "bo jones", "ann smith"])
    assert joins(users, posts) == set()


def test_names_are_no_evidence_across_sources():
    zip_a = header("a__zip_code", "zip_code", "city", source="a")
    people_b = header("b__people", "person_id", "zip", source="b")
    assert joins(zip_a, people_b) == set()


def test_a_name_that_resolves_to_two_parents_alike_needs_values():
    a = header("x__customer", "customer_id", "name", source=None)
    b = header("y__customer", "customer_id", "name", source=None)
    orders = header("orders", "order_id", "customer_id", source=None)
    assert joins(a, b, orders) == set()


def test_an_archive_copy_makes_no_references_of_its_own():
    colors = header("Colors", "ColorID", "ColorName", "LastEditedBy", "ValidFrom", "ValidTo")
    people = header("People", "PersonID", "FullName")
    archive = header("Colors_Archive", "ColorID", "ColorName", "LastEditedBy", "ValidFrom", "ValidTo")
    assert joins(colors, people, archive) == {("Colors.LastEditedBy", "People.PersonID")}


def test_declared_types_keep_a_text_reference_from_an_integer_key():
    users = header("users", "id", "name", types={"id": "Int64"})
    devices = header("devices", "id", "user_code", types={"user_code": "string"})
    assert joins(users, devices) == set()


def test_a_name_whose_values_look_unlike_the_key_does_not_stand_alone():
    country = rows("country", Code=["ABW", "AFG", "AGO"], Name=["Aruba", "Afghanistan", "Angola"])
    airports = rows("airports", AirportCode=["APG", "ABR", "DYS"], Country=["United States"] * 3)
    assert joins(country, airports) == set()


def test_a_detail_tables_key_refers_to_the_table_its_name_extends():
    entity = header("BusinessEntity", "BusinessEntityID", "rowguid")
    employee = header("Employee", "BusinessEntityID", "JobTitle")
    history = header("EmployeePayHistory", "BusinessEntityID", "RateChangeDate", "Rate")
    assert ("EmployeePayHistory.BusinessEntityID", "Employee.BusinessEntityID") in joins(entity, employee, history)
    assert ("EmployeePayHistory.BusinessEntityID", "BusinessEntity.BusinessEntityID") not in joins(
        entity, employee, history
    )


def test_a_detail_table_extends_only_through_its_parents_key():
    items = header("StockItems", "StockItemID", "Name")
    lines = header("OrderLines", "OrderLineID", "OrderID", "StockItemID")
    orders = header("Orders", "OrderID", "OrderDate")
    purchase_lines = header("PurchaseOrderLines", "PurchaseOrderLineID", "StockItemID")
    found = joins(items, lines, orders, purchase_lines)
    assert ("PurchaseOrderLines.StockItemID", "StockItems.StockItemID") in found
    assert ("OrderLines.OrderID", "Orders.OrderID") in found


def test_a_role_prefixed_id_is_not_a_surrogate_key():
    order = header("Order", "Order Key", "Order Date")
    movement = header("Movement", "Movement Key", "WWI Purchase Order ID", "Customer Key")
    assert joins(order, movement) == set()


def _five_row_shop(prefix: str = "") -> list[Table]:
    """Orders and two tables of theirs as a random five-row sample holds them: every id unique, none met twice."""
    draw = random.Random(7)

    def five() -> list[str]:  # hashed ids, as e-commerce exports write them
        return [f"{draw.getrandbits(128):032x}" for _ in range(5)]

    stamps = ["2018-03-09 11:28", "2017-11-20 16:46", "2018-01-02 10:00", "2017-05-06 08:09", "2018-07-08 09:10"]
    # most columns begin with "order_", the table's own prefix, as in Olist's export
    orders = rows(
        f"{prefix}orders",
        order_id=five(),
        customer_id=five(),
        order_status=["delivered"] * 5,
        order_purchase_timestamp=stamps,
    )
    items = rows(
        f"{prefix}order_items",
        order_id=five(),
        order_item_id=["1", "1", "2", "1", "1"],
        product_id=five(),
        seller_id=five(),
        price=["68.0", "124.9", "15.5", "99.9", "30.0"],
    )
    payments = rows(
        f"{prefix}order_payments",
        order_id=five(),
        payment_sequential=["1", "1", "1", "2", "1"],
        payment_type=["credit_card", "boleto", "credit_card", "voucher", "credit_card"],
        payment_installments=["1", "3", "1", "1", "8"],
        payment_value=["74.63", "158.8", "116.13", "104.4", "189.0"],
    )
    return [orders, items, payments]


def _discovered(tables: list[Table]) -> set[tuple[str, str]]:
    found = discover_join_paths(tables).edges
    return {(f"{e.left_table}.{e.left_column}", f"{e.right_table}.{e.right_column}") for e in found if e.passes(TAU_2)}


def test_a_sibling_whose_copy_of_the_key_is_unique_in_five_rows_is_no_parent():
    # order_payments has no id of its own, so its order_id, unique in five rows, looks like its key
    assert _discovered(_five_row_shop()) == {
        ("order_items.order_id", "orders.order_id"),
        ("order_payments.order_id", "orders.order_id"),
    }


def test_a_table_named_by_the_entity_under_a_shared_prefix_is_its_parent():
    assert _discovered(_five_row_shop("olist_")) == {
        ("olist_order_items.order_id", "olist_orders.order_id"),
        ("olist_order_payments.order_id", "olist_orders.order_id"),
    }


def test_a_table_of_movies_is_named_by_movie_id():
    movies = rows("movies", id=["tt01", "tt02", "tt03"], title=["A", "B", "C"])
    ratings = rows("ratings", movie_id=["tt09", "tt08", "tt07"], avg_rating=["7.1", "6.0", "8.2"])
    assert joins(movies, ratings) == {("ratings.movie_id", "movies.id")}


def test_a_role_named_column_of_codes_of_the_keys_one_length_references_it():
    # departure_airport is no key word, but three-letter codes like the airports' own are no attribute
    airports = rows("airports_data", airport_code=["ESL", "KGP", "UFA", "MJZ", "NAL"], timezone=["Europe/Moscow"] * 5)
    flights = rows(
        "flights",
        flight_id=["28201", "8942", "17756", "3310", "21404"],
        departure_airport=["PEZ", "LED", "OSW", "SVO", "DME"],
        arrival_airport=["DME", "TBW", "HMA", "KZN", "AER"],
        status=["Arrived", "Scheduled", "Scheduled", "Arrived", "On Time"],
    )
    assert joins(airports, flights) == {
        ("flights.departure_airport", "airports_data.airport_code"),
        ("flights.arrival_airport", "airports_data.airport_code"),
    }
