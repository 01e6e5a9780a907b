"""Join precision on ordinary databases: the kinds of false and missed joins real OLTP schemas show.

Each test builds a few small tables inline and states one rule of the joins step (docs/architecture.md,
"The joins step").
"""

from __future__ import annotations

import pandas as pd
from embeddings import TrigramEmbedding

from llama_index_pearl.joins import discover_join_paths
from llama_index_pearl.joins.graph import joins_between
from llama_index_pearl.joins.profiles import profile_tables
from llama_index_pearl.joins.sources import identifier_shaped
from llama_index_pearl.tables.table import Table

EMB = TrigramEmbedding()
FIRST_NAMES = ["Ann", "Bob", "Carla", "Dmitri", "Eve", "Farid", "Gus", "Hana", "Ivo", "Jun", "Kemal", "Lena"]
COUNTRIES = ["USA", "Germany", "France", "Brazil", "Mexico", "Spain", "Canada", "Italy", "Sweden", "Japan"]


def graph_of(tables: list[Table]):
    return discover_join_paths(tables, EMB, use_declared=False).graph


def joined_pairs(tables: list[Table]) -> set[frozenset[str]]:
    """Table pairs joined by any edge of the discovered graph."""
    return {frozenset((u, v)) for u, v in graph_of(tables).edges}


def frame(**columns: list[object]) -> pd.DataFrame:
    return pd.DataFrame({name: [str(v) for v in values] for name, values in columns.items()})


def shippers() -> Table:
    return Table("shop__Shippers", frame(ShipperID=[1, 2, 3], CompanyName=["Speedy", "United", "Federal"]))


def orders(n: int = 30) -> Table:
    return Table(
        "shop__Orders",
        frame(
            OrderID=[10248 + i for i in range(n)],
            ShipVia=[1 + i % 3 for i in range(n)],
            Freight=[round(3.5 * i, 2) for i in range(n)],
        ),
    )


# 1. A role-named key with no shared word


def test_an_order_shipped_via_a_shipper_references_the_shippers_key():
    joins = joins_between(graph_of([shippers(), orders()]), "shop__Orders", "shop__Shippers")
    assert [j.column_pairs for j in joins] == [(("ShipVia", "ShipperID"),)]


def test_via_names_the_shipper_in_a_schema_without_rows():
    empty_orders = Table("shop__Orders", pd.DataFrame(columns=["OrderID", "ShipVia"]))
    empty_shippers = Table("shop__Shippers", pd.DataFrame(columns=["ShipperID", "CompanyName"]))
    assert frozenset(("shop__Orders", "shop__Shippers")) in joined_pairs([empty_orders, empty_shippers])


def test_a_support_rep_is_an_employee():
    employees = Table("music__Employee", frame(EmployeeId=list(range(1, 9)), LastName=list("ABCDEFGH")))
    customers = Table(
        "music__Customer", frame(CustomerId=list(range(1, 41)), SupportRepId=[3 + i % 3 for i in range(40)])
    )
    joins = joins_between(graph_of([employees, customers]), "music__Customer", "music__Employee")
    assert [j.column_pairs for j in joins] == [(("SupportRepId", "EmployeeId"),)]


# 2. A unique column that is not a key, shared by name


def test_unique_phone_numbers_of_a_three_row_table_are_no_key():
    suppliers = Table(
        "shop__Suppliers",
        frame(SupplierID=list(range(1, 11)), Phone=["(503) 555-9931"] + [f"(171) 555-{2222 + i}" for i in range(9)]),
    )
    shippers_with_phone = Table(
        "shop__Shippers",
        frame(ShipperID=[1, 2, 3], Phone=["(503) 555-9831", "(503) 555-3199", "(503) 555-9931"]),
    )
    assert not joined_pairs([suppliers, shippers_with_phone])


def test_the_city_of_each_of_seven_offices_is_a_label_not_a_key():
    offices = Table(
        "retail__offices",
        frame(officeCode=list(range(1, 8)), city=["Boston", "NYC", "Paris", "Tokyo", "Sydney", "London", "Oslo"]),
    )
    profiles = {p.column: p for p in profile_tables([offices])}
    assert profiles["officeCode"].key_like
    assert profiles["city"].label and not profiles["city"].key_like


def test_a_natural_key_named_as_a_key_beside_a_surrogate_stays_a_key():
    people = Table("stats__People", frame(ID=list(range(1, 21)), playerID=[f"abc{i:02d}" for i in range(20)]))
    profiles = {p.column: p for p in profile_tables([people])}
    assert profiles["playerID"].key_like


# 3. Two children of one parent, one of them 1:1 with it


def test_a_child_joins_the_parent_not_the_parents_one_to_one_child():
    film = Table("dvd__film", frame(film_id=list(range(1, 41)), title=[f"Film {i}" for i in range(40)]))
    film_category = Table(
        "dvd__film_category", frame(film_id=list(range(1, 41)), category_id=[1 + i % 4 for i in range(40)])
    )
    category = Table("dvd__category", frame(category_id=[1, 2, 3, 4], name=["Drama", "Comedy", "Horror", "Kids"]))
    inventory = Table("dvd__inventory", frame(inventory_id=list(range(1, 81)), film_id=[1 + i % 40 for i in range(80)]))
    pairs = joined_pairs([film, film_category, category, inventory])
    assert frozenset(("dvd__inventory", "dvd__film")) in pairs
    assert frozenset(("dvd__inventory", "dvd__film_category")) not in pairs


# 4. Descriptive columns are no alternative to a key


def test_ship_address_is_no_alternative_to_the_customer_key():
    ids = [f"C{i:03d}" for i in range(20)]
    customers = Table(
        "shop__Customers",
        frame(
            CustomerID=ids, Address=[f"{i} Main St." for i in range(20)], PostalCode=[f"0{5000 + i}" for i in range(20)]
        ),
    )
    placed = Table(
        "shop__Orders",
        frame(
            OrderID=list(range(60)),
            CustomerID=[ids[i % 20] for i in range(60)],
            ShipAddress=[f"{i % 20} Main St." for i in range(60)],
            ShipPostalCode=[f"0{5000 + i % 20}" for i in range(60)],
        ),
    )
    joins = joins_between(graph_of([customers, placed]), "shop__Orders", "shop__Customers")
    assert [j.column_pairs for j in joins] == [(("CustomerID", "CustomerID"),)]


# 5. Value overlap that chance or a shared vocabulary explains


def test_first_names_shared_by_actors_and_customers_make_no_join():
    actors = Table(
        "dvd__actor", frame(actor_id=list(range(1, 25)), first_name=[FIRST_NAMES[i % 12] for i in range(24)])
    )
    customers = Table("dvd__customer", frame(customer_id=list(range(1, 13)), first_name=FIRST_NAMES))
    assert not joined_pairs([actors, customers])


def test_countries_of_orders_and_of_suppliers_make_no_join():
    placed = Table("shop__Orders", frame(OrderID=list(range(50)), ShipCountry=[COUNTRIES[i % 10] for i in range(50)]))
    suppliers = Table(
        "shop__Suppliers", frame(SupplierID=list(range(1, 16)), Country=[COUNTRIES[i % 7] for i in range(15)])
    )
    assert not joined_pairs([placed, suppliers])


def test_order_dates_and_payment_dates_make_no_join():
    dates = [f"2004-0{1 + i % 9}-{10 + i % 18}" for i in range(40)]
    placed = Table("retail__orders", frame(orderNumber=list(range(10100, 10140)), orderDate=dates))
    paid = Table("retail__payments", frame(checkNumber=[f"HQ{i:05d}" for i in range(30)], paymentDate=dates[5:35]))
    assert not joined_pairs([placed, paid])


def test_country_names_of_two_databases_are_no_reference_across_them():
    countries = Table("geo__country", frame(country_id=list(range(1, 11)), country=COUNTRIES))
    countries.source = "geo"
    customers = Table(
        "crm__Customer", frame(CustomerId=list(range(1, 31)), Country=[COUNTRIES[i % 10] for i in range(30)])
    )
    customers.source = "crm"
    assert not joined_pairs([countries, customers])


def test_words_are_no_identifiers_while_codes_and_emails_are():
    profiles = profile_tables(
        [
            Table(
                "t__x",
                frame(
                    country=COUNTRIES,
                    iso=["USA", "DEU", "FRA", "BRA", "MEX", "ESP", "CAN", "ITA", "SWE", "JPN"],
                    email=[f"user{i}@example.org" for i in range(10)],
                    city=[
                        "New York",
                        "St. Louis",
                        "Saint-Denis",
                        "Oslo",
                        "Lima",
                        "Kyiv",
                        "Rome",
                        "Nice",
                        "Bern",
                        "Pune",
                    ],
                ),
            )
        ]
    )
    shaped = {p.column: identifier_shaped(p) for p in profiles}
    assert shaped == {"country": False, "iso": True, "email": True, "city": False}


# 6. Tables without rows


def test_two_header_only_tables_join_on_the_key_one_of_them_lists_first():
    link = Table("shop__CustomerCustomerDemo", pd.DataFrame(columns=["CustomerID", "CustomerTypeID"]))
    demographics = Table("shop__CustomerDemographics", pd.DataFrame(columns=["CustomerTypeID", "CustomerDesc"]))
    joins = joins_between(graph_of([link, demographics]), "shop__CustomerCustomerDemo", "shop__CustomerDemographics")
    assert [j.column_pairs for j in joins] == [(("CustomerTypeID", "CustomerTypeID"),)]
