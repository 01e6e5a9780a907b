"""Table provenance: where each source kind sets it, how it persists, and how join discovery uses it."""

from __future__ import annotations

import json
import sqlite3

import pandas as pd
import pytest
from embeddings import TrigramEmbedding

from llama_index_pearl import PearlTableIndex, Table, load_tables
from llama_index_pearl.evaluation.benchmark import load_benchmark
from llama_index_pearl.joins import TAU_2, discover_join_paths, scoring, sources
from llama_index_pearl.joins.profiles import profile_column
from llama_index_pearl.tables.table import same_source

EMB = TrigramEmbedding()


def test_folder_tables_are_read_recursively_with_the_sub_folder_as_source(tmp_path):
    (tmp_path / "crm").mkdir()
    (tmp_path / "crm" / "customers.csv").write_text("customer_id,email\n1,a@x.org\n")
    (tmp_path / "notes.csv").write_text("note\nhello\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "junk.csv").write_text("x\n1\n")
    tables = {t.id: t for t in load_tables(tmp_path)}
    assert set(tables) == {"crm/customers", "notes"}
    assert (tables["crm/customers"].source, tables["crm/customers"].name) == ("crm", "customers")
    assert tables["notes"].source is None


def test_sql_tables_carry_database_and_schema_as_source(tmp_path):
    connection = sqlite3.connect(tmp_path / "shop.db")
    connection.executescript("CREATE TABLE orders (order_id INTEGER PRIMARY KEY); INSERT INTO orders VALUES (1);")
    connection.commit()
    connection.close()
    (table,) = load_tables(f"sqlite:///{tmp_path / 'shop.db'}")
    assert table.source == "shop.main"


def test_tables_given_directly_keep_the_source_the_caller_set():
    tables = load_tables({"orders": Table("orders", pd.DataFrame({"x": [1]}), source="erp")})
    assert tables[0].source == "erp"


def test_a_source_that_is_not_a_string_is_rejected_naming_the_table():
    with pytest.raises(ValueError, match="'orders': source must be a string"):
        Table("orders", pd.DataFrame({"x": [1]}), source=3)  # type: ignore[arg-type]


def test_benchmark_loader_takes_the_db_field_unless_provenance_is_off(tmp_path):
    (tmp_path / "tables").mkdir()
    (tmp_path / "tables" / "shop__orders.csv").write_text("order_id\n1\n")
    (tmp_path / "tables_meta.jsonl").write_text(json.dumps({"id": "shop__orders", "db": "shop", "table": "orders"}))
    (tmp_path / "queries.jsonl").write_text("")
    assert load_benchmark(tmp_path).tables[0].source == "shop"
    assert load_benchmark(tmp_path, provenance=False).tables[0].source is None


def test_unknown_provenance_never_separates_tables():
    assert same_source(None, "crm") and same_source("crm", "crm") and not same_source("crm", "erp")


def test_source_is_persisted_with_the_index(tmp_path):
    tables = [Table("orders", pd.DataFrame({"order_id": [1, 2], "item": ["pen", "ink"]}), source="erp")]
    index = PearlTableIndex.from_tables(tables, embed_model=EMB, augment=False)
    index.persist(tmp_path / "idx")
    loaded = PearlTableIndex.load(tmp_path / "idx", embed_model=EMB)
    assert loaded.tables["orders"].source == "erp"


def ids(n: int, table: str, name: str = "customer_id"):
    return profile_column(table, name, [str(i) for i in range(1, n + 1)], source=table.split("/")[0])


def test_chance_overlap_of_dense_1_to_n_ids_across_sources_is_no_evidence():
    a, b = ids(50, "shop_a/customers"), ids(80, "shop_b/customers")
    _, c_ab, c_ba, shared = scoring.value_overlap(a, b)
    assert c_ab == 1.0 and shared == 50  # every id of one is in the other ...
    assert not sources.cross_source_evidence(a, b, c_ab, c_ba, shared)  # ... and that is what chance gives


def test_prefixed_counters_are_dense_ids_too():
    a = profile_column("a/orders", "order_ref", [f"ORD-{i:04d}" for i in range(1, 41)], source="a")
    b = profile_column("b/orders", "order_ref", [f"ORD-{i:04d}" for i in range(1, 61)], source="b")
    _, c_ab, c_ba, shared = scoring.value_overlap(a, b)
    assert not sources.cross_source_evidence(a, b, c_ab, c_ba, shared)


EMAILS = [f"{name}{i}@example.org" for i, name in enumerate(["ann", "bob", "cid", "dee", "eve", "fay", "gus"] * 4)]


def test_a_shared_email_key_across_sources_is_evidence():
    customers = profile_column("crm/customers", "email", EMAILS, source="crm")
    subscribers = profile_column("news/subscribers", "subscriber_email", EMAILS[:12], source="news")
    _, c_ab, c_ba, shared = scoring.value_overlap(subscribers, customers)
    assert sources.cross_source_evidence(subscribers, customers, c_ab, c_ba, shared)


def test_a_few_shared_values_between_two_large_name_columns_are_not_evidence():
    left = profile_column("a/people", "name", [f"person {i}" for i in range(100)], source="a")
    right = profile_column("b/people", "name", [f"person {i}" for i in range(95, 300)], source="b")
    _, c_ab, c_ba, shared = scoring.value_overlap(left, right)
    assert shared == 5 and not sources.cross_source_evidence(left, right, c_ab, c_ba, shared)


def two_shops() -> list[Table]:
    """Two sources with the same schema and 1..n ids, and a real email link from one to the other."""
    tables = []
    for source, n in (("shop_a", 30), ("shop_b", 40)):
        customers = pd.DataFrame({"customer_id": range(1, n + 1), "email": [f"{source}{i}@mail.org" for i in range(n)]})
        orders = pd.DataFrame({"order_id": range(1, 2 * n + 1), "customer_id": [1 + i % n for i in range(2 * n)]})
        tables += [
            Table(f"{source}/customers", customers, source=source),
            Table(f"{source}/orders", orders, source=source),
        ]
    newsletter = pd.DataFrame({"subscriber_email": [f"shop_a{i}@mail.org" for i in range(0, 30, 2)]})
    return [*tables, Table("news/subscribers", newsletter, source="news")]


def explicit_pairs(tables: list[Table], policy: str = "evidence") -> set[frozenset[str]]:
    result = discover_join_paths(tables, EMB, cross_source_joins=policy)
    return {frozenset(e.tables) for e in result.edges if e.explicit and e.score >= TAU_2}


def test_discovery_keeps_in_source_keys_and_the_email_link_but_not_same_named_ids_across_sources():
    pairs = explicit_pairs(two_shops())
    assert pairs == {frozenset({"shop_a/orders", "shop_a/customers"}), frozenset({"shop_b/orders", "shop_b/customers"})}
    # the customers' emails key no table (customer_id does): the subscribers join them by shared values only
    graph = discover_join_paths(two_shops(), EMB).graph
    assert graph.has_edge("news/subscribers", "shop_a/customers")
    assert not any(len({t.split("/")[0] for t in edge}) > 1 and "news/subscribers" not in edge for edge in graph.edges)


def test_never_drops_every_cross_source_join_and_always_ignores_provenance():
    assert frozenset({"news/subscribers", "shop_a/customers"}) not in explicit_pairs(two_shops(), "never")
    unified = explicit_pairs(two_shops(), "always")
    assert frozenset({"shop_a/customers", "shop_b/customers"}) in unified  # same-named 1..n keys meet again


def test_an_unknown_cross_source_policy_is_rejected_before_any_work():
    with pytest.raises(ValueError, match="cross_source_joins must be one of"):
        PearlTableIndex.from_tables(two_shops(), embed_model=EMB, cross_source_joins="sometimes")
