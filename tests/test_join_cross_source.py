"""Joins across sources (databases, sub-folders: ``Table.source``) need a key on one side.

Each test builds two small sources inline and states one rule of the joins step (docs/architecture.md, "The joins
step", rule 9): values two databases share by nature (postal codes, phone numbers) join nothing; a reference named
after another source's table, whose values that table's key holds, does.
"""

from __future__ import annotations

import pandas as pd
from embeddings import TrigramEmbedding

from llama_index_pearl.joins import discover_join_paths
from llama_index_pearl.tables.table import Table

EMB = TrigramEmbedding()
POSTCODES = ["05021", "12209", "1010", "3012", "44000", "B-6000", "S-958 22", "WA1 1DP", "80805", "68306"]
PHONES = [f"(171) 555-{2000 + 37 * i}" for i in range(10)]


def frame(**columns: list[object]) -> pd.DataFrame:
    return pd.DataFrame({name: [str(v) for v in values] for name, values in columns.items()})


def joined(*tables: Table) -> set[frozenset[str]]:
    """Table pairs the discovered join graph joins."""
    return {frozenset(edge) for edge in discover_join_paths(list(tables), EMB).graph.edges}


def customers(source: str, key: str, first: int, codes: list[str], phones: list[str]) -> Table:
    """A customers' table keyed by its own number, with the postal code and phone of each customer."""
    n = len(codes)
    df = frame(**{key: list(range(first, first + n))}, postalCode=codes, phone=phones, city=["Lyon"] * n)
    return Table(f"{source}/customers", df, source=source)


def test_postal_codes_of_two_databases_customers_make_no_join():
    # the same postal codes in two unrelated databases: each unique beside its table's own key, neither a key
    models = customers("models", "customerNumber", 103, POSTCODES, [f"{i}-555-01{i:02d}" for i in range(10)])
    trade = customers("trade", "CustomerID", 1, [*POSTCODES[2:], "75012", "90110"], [f"0{i}21-3456" for i in range(10)])
    assert joined(models, trade) == set()


def test_phone_numbers_of_two_databases_make_no_join():
    models = customers("models", "customerNumber", 103, [f"P{i}" for i in range(10)], PHONES)
    trade = customers("trade", "CustomerID", 1, [f"Q{i}" for i in range(10)], [*PHONES[3:], "x1", "x2", "x3"])
    assert joined(models, trade) == set()


def test_an_export_folder_naming_another_folders_table_joins_its_key():
    # billing's invoices name the customer; only crm holds customers, keyed by customer_id
    crm = Table("crm/customers", frame(customer_id=list(range(1, 21)), name=[f"n{i}" for i in range(20)]), source="crm")
    invoices = Table(
        "billing/invoices",
        frame(
            invoice_id=list(range(500, 540)),
            customer_id=[1 + (7 * i) % 20 for i in range(40)],
            amount=[f"{3 * i}.5" for i in range(40)],
        ),
        source="billing",
    )
    assert joined(crm, invoices) == {frozenset({"crm/customers", "billing/invoices"})}


def test_a_name_that_finds_its_table_at_home_joins_no_other_source():
    # two shops with one schema and 1..n ids: each shop's orders name the customers of their own shop
    tables = []
    for shop, n in (("shop_a", 20), ("shop_b", 30)):
        people = frame(customer_id=list(range(1, n + 1)), name=[f"{shop}{i}" for i in range(n)])
        orders = frame(order_id=list(range(1, 2 * n + 1)), customer_id=[1 + i % n for i in range(2 * n)])
        tables += [Table(f"{shop}/customers", people, source=shop), Table(f"{shop}/orders", orders, source=shop)]
    assert joined(*tables) == {
        frozenset({"shop_a/customers", "shop_a/orders"}),
        frozenset({"shop_b/customers", "shop_b/orders"}),
    }
