"""A value the question names: the text values each table holds, the word groups of a question that may name one,
and the table holding it comes into the set."""

from __future__ import annotations

import pandas as pd
import pytest
from indexes import set_confidences

from llama_index_pearl import PearlTableIndex, Table
from llama_index_pearl.corpus.catalog import Catalog
from llama_index_pearl.corpus.values import MAX_VALUE_CHARS, MAX_VALUES, table_values, value_form
from llama_index_pearl.retrieval.answer.named_values import named_floor, value_groups, value_holders
from llama_index_pearl.retrieval.answer.table_sets import SetRule


def test_values_are_compared_in_lower_case_words_only():
    assert value_form("AC/DC") == "ac dc"
    assert value_form("  Classic   Cars ") == "classic cars"
    assert value_form("PG-13") == "pg-13"


def test_a_tables_values_are_its_text_cells_once_each_numbers_and_missing_cells_left_out():
    frame = pd.DataFrame(
        {"status": ["Shipped", "Cancelled", "shipped", None], "amount": ["12.5", "3", "7", "1"], "year": [1, 2, 3, 4]}
    )
    assert table_values(Table("orders", frame)) == ["shipped", "cancelled"]


def test_the_cells_exports_write_for_no_value_are_no_values():
    frame = pd.DataFrame({"status": ["NA", "N/A", "\\N", "NULL", "#N/A", "Shipped"]})
    assert table_values(Table("orders", frame)) == ["shipped"]


def test_cells_pandas_cannot_hash_are_read_one_by_one():
    frame = pd.DataFrame({"tags": [["rock"], ["jazz"]], "status": ["Shipped", "Shipped"]})
    assert table_values(Table("albums", frame)) == ["rock", "jazz", "shipped"]


def test_prose_longer_than_a_value_is_left_out():
    frame = pd.DataFrame({"note": ["x" * (MAX_VALUE_CHARS + 1), "On hold"]})
    assert table_values(Table("notes", frame)) == ["on hold"]


def test_a_column_gives_at_most_max_values_values():
    frame = pd.DataFrame({"code": [f"item {i}" for i in range(MAX_VALUES + 5)]})
    assert len(table_values(Table("items", frame))) == MAX_VALUES


def test_a_value_group_may_start_with_a_function_word_but_never_with_a_question_word():
    groups = value_groups("Which orders are On Hold in Paris?")
    assert {"on hold", "paris", "orders"} <= groups
    assert not any(g.startswith("which") for g in groups)


def test_a_function_word_alone_is_no_value():
    groups = value_groups("Which orders have no discount?")
    assert "no discount" in groups and "no" not in groups


def test_a_value_group_spans_at_most_five_words():
    assert "new york city" in value_groups("Orders shipped to New York City")
    assert all(len(g.split()) <= 5 for g in value_groups("alpha beta gamma delta epsilon zeta eta theta"))


def test_a_table_holding_a_named_value_is_raised_to_the_floor_and_no_higher():
    values = {"warehouses": frozenset({"tamsin cove"}), "orders": frozenset({"shipped"})}
    holders = value_holders(frozenset({"tamsin cove"}), values)
    raised = named_floor({"orders": 0.9, "warehouses": 0.03}, holders, 0.12)
    assert raised == {"orders": 0.9, "warehouses": 0.12}


def test_a_table_of_another_database_than_the_routed_one_is_not_raised_for_a_value():
    values = {"shop.warehouses": frozenset({"tamsin cove"}), "zoo.sites": frozenset({"tamsin cove"})}
    sources = {"shop.warehouses": "shop", "zoo.sites": "zoo"}
    confidence = {"shop.warehouses": 0.03, "zoo.sites": 0.03}
    raised = named_floor(confidence, value_holders(frozenset({"tamsin cove"}), values), 0.12, sources, home="shop")
    assert raised == {"shop.warehouses": 0.12, "zoo.sites": 0.03}


def test_the_catalog_keeps_each_tables_values_through_json_and_an_update():
    orders = Table("orders", pd.DataFrame({"status": ["Shipped", "Cancelled"]}))
    catalog = Catalog(texts={"orders": "orders"}, values={"orders": table_values(orders)})
    back = Catalog.from_dict(catalog.to_dict())
    assert back.values == {"orders": frozenset({"shipped", "cancelled"})}
    back.change(["orders"], [], {"films": "films"}, [], values={"films": ["comedy"]})
    assert back.values == {"films": frozenset({"comedy"})}


def test_a_catalog_written_before_values_were_kept_reads_with_none():
    data = Catalog(texts={"orders": "orders"}).to_dict()
    data.pop("values")
    assert Catalog.from_dict(data).values == {}


def test_values_of_a_table_the_catalog_does_not_list_are_an_error():
    data = Catalog(texts={"orders": "orders"}).to_dict()
    data["values"] = {"films": ["comedy"]}
    with pytest.raises(ValueError, match="values"):
        Catalog.from_dict(data)


# ----------------------------------------------------------------- the set, the real encoder
SITES = [f"Depot {letter}" for letter in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"] + [
    *("Quarry Hill", "Elm Park", "Fenwick", "Marlow", "Kestrel Bay", "Ashby", "Dunmore", "Harrowgate"),
    *("Lindqvist", "Oakridge", "Pellham", "Rosslare", "Tamsin Cove", "Wexley"),
]


@pytest.fixture(scope="module")
def shop(minilm) -> PearlTableIndex:
    """A shop whose orders are sent from warehouses no question word names; "Tamsin Cove" lies far past the rows
    a unit shows of its table."""

    def table(name: str, columns: dict) -> Table:
        return Table(name, pd.DataFrame(columns))

    six = [1, 2, 1, 2, 1, 2]
    tables = [
        table(
            "orders",
            {
                "order_id": [1, 2, 3, 4, 5, 6],
                "customer_id": [1, 2, 3, 1, 2, 3],
                "employee_id": six,
                "shipper_id": six,
                "status_code": [10, 60, 70, 10, 60, 10],
                "warehouse_id": [1, 39, 2, 3, 39, 4],
                "order_date": ["2024-01-02", "2024-01-05", "2024-02-01", "2024-02-11", "2024-03-01", "2024-03-09"],
            },
        ),
        table(
            "order_lines",
            {
                "order_id": [1, 1, 2, 3, 4, 5, 6],
                "product_id": [1, 2, 3, 1, 2, 3, 1],
                "quantity": [2, 1, 5, 1, 3, 2, 4],
                "unit_price": [9.5, 3.0, 1.25, 9.5, 3.0, 1.25, 9.5],
            },
        ),
        table(
            "order_status",
            {
                "status_code": [10, 20, 30, 40, 50, 60, 70, 80],
                "label": ["Shipped", "Pending", "Packed", "Returned", "Refunded", "Disputed", "Lost", "Held"],
            },
        ),
        table(
            "customers",
            {
                "customer_id": [1, 2, 3],
                "name": ["Ann Lee", "Bo Chan", "Cy Diaz"],
                "city": ["Oslo", "Rome", "Lima"],
                "tier_id": [1, 5, 6],
            },
        ),
        table(
            "tiers",
            {"tier_id": [1, 2, 3, 4, 5, 6], "tier_name": ["Bronze", "Silver", "Gold", "Platinum", "Jade", "Onyx"]},
        ),
        table("products", {"product_id": [1, 2, 3], "product_name": ["Tea", "Mug", "Spoon"], "supplier_id": [1, 2, 1]}),
        table("suppliers", {"supplier_id": [1, 2], "company": ["Acme", "Zenith"], "country": ["Norway", "Italy"]}),
        table("employees", {"employee_id": [1, 2], "first_name": ["Eve", "Max"], "title": ["Sales Rep", "Manager"]}),
        table("shippers", {"shipper_id": [1, 2], "company_name": ["Speedy", "Federal"], "phone": ["555-1", "555-2"]}),
        table("warehouses", {"warehouse_id": list(range(1, len(SITES) + 1)), "site": SITES}),
    ]
    return PearlTableIndex.from_tables(tables, embed_model=minilm)


def _in_set(index: PearlTableIndex, question: str) -> dict[str, float]:
    return set_confidences(index, question, 8)


def test_the_table_holding_a_value_the_question_names_is_in_the_set(shop):
    chosen = _in_set(shop, "Which customers had orders sent from Tamsin Cove?")
    assert chosen.get("warehouses", 0.0) >= SetRule().maybe


def test_without_a_value_named_the_same_table_stays_out(shop):
    assert "tamsin cove" in shop.revisions.state().values["warehouses"]
    assert "warehouses" not in _in_set(shop, "Which customers had orders sent?")


def test_a_loaded_index_holds_the_values_it_was_built_with(built, hashing_embedding):
    index, folder = built
    loaded = PearlTableIndex.load(folder, embed_model=hashing_embedding)
    assert loaded.revisions.state().values == index.revisions.state().values
    assert any(loaded.revisions.state().values.values())


def test_an_inserted_table_brings_its_values_and_a_deleted_one_takes_them(shop, minilm):
    index = PearlTableIndex.from_tables(list(shop.tables.values())[:3], embed_model=minilm)
    index.insert_tables([Table("regions", pd.DataFrame({"region_id": [1, 2], "region": ["Nordics", "Iberia"]}))])
    assert index.revisions.state().values["regions"] == frozenset({"nordics", "iberia"})
    index.delete_table("regions")
    assert "regions" not in index.revisions.state().values
