"""PEARL in LlamaIndex's text-to-SQL engine over a real PostgreSQL database with two schemas.

A LlamaIndex ``SQLDatabase`` serves one schema under bare table names and qualifies them when it runs
SQL; PEARL names a table outside the default schema ``schema.table``. The database is the ``crm`` +
``sales`` warehouse of ``tests/test_postgres.py`` on the same server (``PEARL_TEST_POSTGRES_URL``, else
one started locally; skipped outside CI when neither is possible).
"""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from embeddings import HashingEmbedding
from fake_openai import FakeOpenAIServer, prompt_text, text
from llama_index.core import SQLDatabase
from llama_index.llms.openai_like import OpenAILike
from test_postgres import SAMPLE, postgres_url, warehouse  # noqa: F401  (the fixtures)

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.tables.sql import tables_from_sql

LINES_OF_ORDER_7 = (
    "SELECT count(*) FROM order_lines JOIN orders ON order_lines.order_id = orders.order_id WHERE orders.order_id = 7"
)


@pytest.fixture(scope="module")
def sales(warehouse) -> SQLDatabase:  # noqa: F811
    """LlamaIndex's database of the sales schema."""
    return SQLDatabase(sa.create_engine(warehouse), schema="sales")


@pytest.fixture(scope="module")
def sales_index(warehouse) -> PearlTableIndex:  # noqa: F811
    tables = tables_from_sql(warehouse, schemas=["sales"], max_rows_read=SAMPLE)
    return PearlTableIndex.from_tables(tables, embed_model=HashingEmbedding())


def test_schema_qualified_tables_are_named_as_the_schemas_sqldatabase_names_them(sales, sales_index):
    assert set(sales_index.tables) == {"sales.orders", "sales.order_lines"}
    schemas = sales_index.as_sql_table_retriever(sales, similarity_top_k=2).retrieve("order lines of order 7")
    assert {s.table_name for s in schemas} == {"orders", "order_lines"}
    assert "JOIN orders ON order_lines.order_id = orders.order_id" in " ".join(s.context_str or "" for s in schemas)


def test_the_engine_runs_the_llms_join_in_the_schema(sales, sales_index):
    with FakeOpenAIServer(default=text(LINES_OF_ORDER_7)) as server:
        llm = OpenAILike(
            model="fake", api_base=server.base_url, api_key="x", is_chat_model=True, max_retries=0, timeout=10
        )
        engine = sales_index.as_sql_query_engine(sales, llm=llm, similarity_top_k=2, synthesize_response=False)
        response = engine.query("How many order lines does order 7 have?")
        prompt = prompt_text(server.requests[0])
    assert "Table 'order_lines' has columns" in prompt
    assert response.metadata["result"] == [(200,)]


def test_an_index_over_both_schemas_names_the_tables_a_one_schema_database_lacks(warehouse, sales):  # noqa: F811
    index = PearlTableIndex.from_tables(warehouse, embed_model=HashingEmbedding(), max_rows_read=SAMPLE)
    with pytest.raises(ValueError, match=r"Tables 'crm.contacts', 'crm.customers' of the PEARL index are not tables"):
        index.as_sql_table_retriever(sales)
