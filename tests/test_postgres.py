"""A real PostgreSQL source: two schemas (schema = provenance), declared keys within and across them, a
million-row table read as a bounded sample, and insert_tables from the server.

The server is the one ``.ci/run`` starts (``PEARL_TEST_POSTGRES_URL``), else one this module starts from the
local PostgreSQL binaries. Outside CI the tests skip, saying why, when neither is possible; with ``CI=true``
a missing server is a failure.
"""

from __future__ import annotations

import uuid

import pytest
import sqlalchemy as sa
from loopback_servers import loopback_server
from postgres_server import start, stop

from llama_index_pearl import PearlTableIndex, load_tables
from llama_index_pearl.tables.sql import tables_from_sql

SAMPLE = 2_000
LINES = 1_000_000
SCHEMA = """
CREATE SCHEMA crm;
CREATE SCHEMA sales;
CREATE TABLE crm.customers (customer_id integer PRIMARY KEY, full_name text, country_code text);
CREATE TABLE crm.contacts (contact_id integer PRIMARY KEY, customer_id integer REFERENCES crm.customers, email text);
CREATE TABLE sales.orders (order_id integer PRIMARY KEY, customer_id integer REFERENCES crm.customers, ordered_on date);
CREATE TABLE sales.order_lines (
    line_id bigint PRIMARY KEY, order_id integer REFERENCES sales.orders, product text, quantity integer
);
INSERT INTO crm.customers
    SELECT g, 'Customer ' || g, (ARRAY['FR', 'DE', 'JP'])[1 + mod(g, 3)] FROM generate_series(1, 200) g;
INSERT INTO crm.contacts SELECT g, 1 + mod(g, 200), 'c' || g || '@example.com' FROM generate_series(1, 300) g;
INSERT INTO sales.orders SELECT g, 1 + mod(g, 200), date '2024-01-01' + mod(g, 300) FROM generate_series(1, 5000) g;
INSERT INTO sales.order_lines
    SELECT g, 1 + mod(g, 5000), 'P-' || mod(g, 97), 1 + mod(g, 5) FROM generate_series(1, {lines}) g;
ANALYZE;
"""


@pytest.fixture(scope="session")
def postgres_url():
    yield from loopback_server("PostgreSQL", "PEARL_TEST_POSTGRES_URL", start, stop, "psycopg")


@pytest.fixture(scope="module")
def warehouse(postgres_url):
    """A fresh database holding the crm and sales schemas; its URL."""
    name = f"pearl_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(postgres_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(sa.text(f"CREATE DATABASE {name}"))
    url = sa.engine.make_url(postgres_url).set(database=name)
    engine = sa.create_engine(url)
    with engine.begin() as connection:
        connection.exec_driver_sql(SCHEMA.format(lines=LINES))
    engine.dispose()
    yield url.render_as_string(hide_password=False)
    with admin.connect() as connection:
        connection.execute(sa.text(f"DROP DATABASE {name} WITH (FORCE)"))
    admin.dispose()


def test_tables_of_both_schemas_are_read_with_the_schema_as_provenance(warehouse):
    tables = {t.id: t for t in load_tables(warehouse, max_rows_read=SAMPLE)}
    assert set(tables) == {"crm.customers", "crm.contacts", "sales.orders", "sales.order_lines"}
    database = sa.engine.make_url(warehouse).database
    assert {t.source for t in tables.values()} == {f"{database}.crm", f"{database}.sales"}
    assert tables["crm.customers"].name == "customers" and tables["crm.customers"].n_rows == 200


def test_declared_foreign_keys_within_and_across_schemas_name_schema_qualified_tables(warehouse):
    tables = {t.id: t for t in load_tables(warehouse, max_rows_read=SAMPLE)}
    keys = {(t.id, fk.column, fk.ref_table, fk.ref_column) for t in tables.values() for fk in t.foreign_keys}
    assert keys == {
        ("crm.contacts", "customer_id", "crm.customers", "customer_id"),
        ("sales.orders", "customer_id", "crm.customers", "customer_id"),
        ("sales.order_lines", "order_id", "sales.orders", "order_id"),
    }


def test_a_million_row_table_is_read_as_a_bounded_sample_limited_by_the_server(warehouse):
    engine = sa.create_engine(warehouse)
    statements: list[str] = []
    sa.event.listen(engine, "before_cursor_execute", lambda *args: statements.append(args[2]))
    lines = next(t for t in load_tables(engine, max_rows_read=SAMPLE) if t.id == "sales.order_lines")
    engine.dispose()
    assert lines.n_rows == SAMPLE and lines.total_rows == LINES
    reads = [s for s in statements if "FROM sales.order_lines" in s and "count" not in s.lower()]
    assert reads and all("LIMIT" in s for s in reads)


def test_an_index_over_the_warehouse_joins_across_schemas(warehouse, hashing_embedding, tmp_path):
    index = PearlTableIndex.from_tables(warehouse, embed_model=hashing_embedding, max_rows_read=SAMPLE)
    assert index.join_graph.has_edge("sales.orders", "crm.customers")
    assert index.join_graph.has_edge("sales.order_lines", "sales.orders")
    index.persist(tmp_path / "idx")
    loaded = PearlTableIndex.load(tmp_path / "idx", embed_model=hashing_embedding)
    assert loaded.tables["sales.order_lines"].n_rows == SAMPLE
    assert loaded.tables["sales.order_lines"].row_count == LINES


def test_insert_tables_from_the_warehouse_adds_a_schema_and_its_cross_schema_joins(warehouse, hashing_embedding):
    index = PearlTableIndex.from_tables(
        tables_from_sql(warehouse, schemas=["crm"]), embed_model=hashing_embedding, max_rows_read=SAMPLE
    )
    assert set(index.tables) == {"crm.customers", "crm.contacts"}
    report = index.insert_tables(tables_from_sql(warehouse, schemas=["sales"], max_rows_read=SAMPLE))
    assert set(report.added_tables) == {"sales.orders", "sales.order_lines"} and report.new_units > 0
    assert index.join_graph.has_edge("sales.orders", "crm.customers")
    hits = index.as_retriever(similarity_top_k=2, lexical_weight=0).retrieve("order lines product quantity")
    assert "sales.order_lines" in {h.node.metadata["table_id"] for h in hits}  # the encoder alone finds it
