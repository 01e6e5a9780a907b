"""PEARL as the table retriever of LlamaIndex's text-to-SQL engines, over a real SQLite database.

The engines are LlamaIndex's own (``NLSQLRetriever``, ``SQLTableRetrieverQueryEngine``); the LLM is the
fake OpenAI-compatible server on loopback, answering with SQL.
"""

from __future__ import annotations

import pandas as pd
import pytest
import sqlalchemy as sa
from fake_openai import FakeOpenAIServer, prompt_text, text
from llama_index.core import Settings, SQLDatabase
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.indices.struct_store.sql_query import BaseSQLTableQueryEngine
from llama_index.core.objects import SQLTableSchema
from llama_index.core.prompts import PromptTemplate
from llama_index.core.query_engine import SQLTableRetrieverQueryEngine
from llama_index.core.retrievers import NLSQLRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from llama_index.llms.openai_like import OpenAILike

from llama_index_pearl import PearlTableIndex

WEMBLEY_SINGERS = (
    "SELECT singer.name FROM singer JOIN concert ON concert.singer_id = singer.singer_id "
    "JOIN stadium ON concert.stadium_id = stadium.stadium_id WHERE stadium.stadium_name = 'Wembley'"
)


@pytest.fixture
def sql_database(music_tables, tmp_path) -> SQLDatabase:
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'music.sqlite'}")
    with engine.begin() as connection:
        for name, frame in music_tables.items():
            frame.to_sql(name, connection, index=False)
    return SQLDatabase(engine)


@pytest.fixture
def index(sql_database, hashing_embedding) -> PearlTableIndex:
    return PearlTableIndex.from_tables(sql_database, embed_model=hashing_embedding)


def _llm(server: FakeOpenAIServer) -> OpenAILike:
    return OpenAILike(
        model="fake", api_base=server.base_url, api_key="x", is_chat_model=True, max_retries=0, timeout=10
    )


def _nl_sql(index, sql_database, server, embed_model, k: int, **kwargs) -> NLSQLRetriever:
    """LlamaIndex's NLSQLRetriever with PEARL's top-k tables and the fake server's LLM."""
    table_retriever = index.as_sql_table_retriever(sql_database, similarity_top_k=k)
    return NLSQLRetriever(
        sql_database, table_retriever=table_retriever, llm=_llm(server), embed_model=embed_model, **kwargs
    )


def test_retrieve_returns_sql_table_schemas_in_pearls_order(index, sql_database):
    question = "Which singer performed at Wembley stadium?"
    schemas = index.as_sql_table_retriever(sql_database, similarity_top_k=3).retrieve(question)
    ranked = [n.node.metadata["table_id"] for n in index.as_retriever(similarity_top_k=3).retrieve(question)]
    assert all(isinstance(s, SQLTableSchema) for s in schemas)
    assert [s.table_name for s in schemas] == ranked


def test_every_retrieved_table_gets_its_joins_to_the_others_as_sql(index, sql_database):
    schemas = index.as_sql_table_retriever(sql_database, similarity_top_k=3).retrieve("singers at Wembley stadium")
    context = {s.table_name: s.context_str for s in schemas}
    assert context["singer"] == "JOIN concert ON singer.singer_id = concert.singer_id"
    assert context["stadium"] == "JOIN concert ON stadium.stadium_id = concert.stadium_id"
    assert sorted(context["concert"].split("; ")) == [
        "JOIN singer ON concert.singer_id = singer.singer_id",
        "JOIN stadium ON concert.stadium_id = stadium.stadium_id",
    ]


def test_tables_joined_through_an_unretrieved_table_get_the_join_through_it_and_are_told_so(index, sql_database):
    # ranked by score alone: the set would bring concert in, as the bridge that joins them
    retriever = index.as_sql_table_retriever(sql_database, similarity_top_k=2, set_rule=None)
    schemas = retriever.retrieve("singer Joe Sharp stadium capacity")
    assert [s.table_name for s in schemas] == ["singer", "stadium"]
    assert [s.context_str for s in schemas] == [
        "JOIN concert ON singer.singer_id = concert.singer_id JOIN stadium ON concert.stadium_id = stadium.stadium_id"
        " (concert is not among the tables shown)",
        "JOIN concert ON stadium.stadium_id = concert.stadium_id JOIN singer ON concert.singer_id = singer.singer_id"
        " (concert is not among the tables shown)",
    ]


def test_identifiers_are_quoted_where_the_databases_dialect_needs_it_and_the_join_runs(tmp_path, hashing_embedding):
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'games.sqlite'}")
    with engine.begin() as connection:
        pd.DataFrame({"team.key": [1, 2], "name": ["Hawks", "Owls"]}).to_sql("team", connection, index=False)
        pd.DataFrame({"game_id": [7, 8], "team.key": [1, 2]}).to_sql("order", connection, index=False)
    sql_database = SQLDatabase(engine)
    index = PearlTableIndex.from_tables(sql_database, embed_model=hashing_embedding)
    schemas = index.as_sql_table_retriever(sql_database, similarity_top_k=2).retrieve("games of the Hawks")
    context = {s.table_name: s.context_str for s in schemas}
    assert context["team"] == 'JOIN "order" ON team."team.key" = "order"."team.key"'
    with engine.connect() as connection:
        rows = connection.execute(sa.text(f"SELECT game_id, name FROM team {context['team']}")).fetchall()
    assert sorted(rows) == [(7, "Hawks"), (8, "Owls")]


def test_a_lone_table_has_no_join_keys_to_show(index, sql_database):
    (schema,) = index.as_sql_table_retriever(sql_database, similarity_top_k=1).retrieve("Wembley capacity")
    assert schema == SQLTableSchema(table_name="stadium", context_str=None)


def test_without_join_keys_a_schema_is_what_an_object_index_gives(index, sql_database):
    schemas = index.as_sql_table_retriever(sql_database, similarity_top_k=3, join_keys=False).retrieve("Wembley")
    assert [s.context_str for s in schemas] == [None, None, None]


def test_descriptions_come_before_the_join_keys(index, sql_database):
    retriever = index.as_sql_table_retriever(sql_database, 3, context_strs={"concert": "One row per concert."})
    concert = next(s for s in retriever.retrieve("concerts at Wembley stadium") if s.table_name == "concert")
    assert concert.context_str is not None
    assert concert.context_str.startswith("One row per concert. JOIN ")


def test_descriptions_of_tables_the_database_lacks_are_refused(index, sql_database):
    with pytest.raises(ValueError, match=r"context_strs names 'singers'.*database's table names"):
        index.as_sql_table_retriever(sql_database, context_strs={"singers": "typo"})


def test_an_index_table_the_database_does_not_hold_is_an_error_naming_it(music_tables, sql_database, hashing_embedding):
    tables = {**music_tables, "festival": pd.DataFrame({"festival_id": [1], "title": ["Glastonbury"]})}
    index = PearlTableIndex.from_tables(tables, embed_model=hashing_embedding)
    with pytest.raises(ValueError, match=r"Table 'festival' of the PEARL index is not a table of SQLDatabase sqlite"):
        index.as_sql_table_retriever(sql_database)


def test_a_table_inserted_later_that_the_database_lacks_is_an_error_naming_it(index, sql_database):
    retriever = index.as_sql_table_retriever(sql_database, similarity_top_k=4)
    index.insert_tables({"festival": pd.DataFrame({"festival_id": [1], "title": ["Glastonbury"]})})
    with pytest.raises(ValueError, match=r"Table 'festival' of the PEARL index is not a table of"):
        retriever.retrieve("Glastonbury festival title")


async def test_aretrieve_returns_what_retrieve_returns(index, sql_database):
    retriever = index.as_sql_table_retriever(sql_database, similarity_top_k=3)
    question = "Which singer performed at Wembley stadium?"
    assert await retriever.aretrieve(question) == retriever.retrieve(question)


def test_nl_sql_retriever_prompts_with_the_schemas_and_join_keys_and_runs_the_llms_sql(
    index, sql_database, hashing_embedding
):
    with FakeOpenAIServer(default=text(WEMBLEY_SINGERS)) as server:
        retriever = _nl_sql(index, sql_database, server, hashing_embedding, 3)
        _, metadata = retriever.retrieve_with_metadata("Which singer performed at Wembley stadium?")
        prompt = prompt_text(server.requests[0])
    assert "Table 'concert' has columns: concert_id" in prompt
    assert "The table description is: JOIN concert ON stadium.stadium_id = concert.stadium_id" in prompt
    assert metadata["sql_query"] == WEMBLEY_SINGERS
    assert metadata["result"] == [("Ann Lee",)]


def test_llamaindex_rows_retrievers_find_rows_by_the_schema_names(index, sql_database, hashing_embedding):
    class StadiumRows(BaseRetriever):
        def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
            return [NodeWithScore(node=TextNode(text="(7, 'Wembley', 90)"))]

    with FakeOpenAIServer(default=text("SELECT capacity FROM stadium")) as server:
        retriever = _nl_sql(
            index, sql_database, server, hashing_embedding, 1, rows_retrievers={"stadium": StadiumRows()}
        )
        retriever.retrieve("Wembley capacity")
        prompt = prompt_text(server.requests[0])
    assert "Here are some relevant example rows" in prompt and "(7, 'Wembley', 90)" in prompt


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_sql_table_retriever_query_engine_takes_it_as_its_table_retriever(
    index, sql_database, hashing_embedding, monkeypatch, mode
):
    monkeypatch.setattr(Settings, "_embed_model", hashing_embedding)
    with FakeOpenAIServer(default=text(WEMBLEY_SINGERS)) as server:
        engine = SQLTableRetrieverQueryEngine(
            sql_database,
            table_retriever=index.as_sql_table_retriever(sql_database, similarity_top_k=3),
            llm=_llm(server),
            synthesize_response=False,
        )
        question = "Which singer performed at Wembley stadium?"
        response = engine.query(question) if mode == "sync" else await engine.aquery(question)
    assert response.metadata["result"] == [("Ann Lee",)]


def test_as_sql_query_engine_answers_from_the_result_of_the_llms_sql(index, sql_database):
    with FakeOpenAIServer(behaviours=[text(WEMBLEY_SINGERS), text("Ann Lee sang there.")]) as server:
        engine = index.as_sql_query_engine(sql_database, llm=_llm(server), similarity_top_k=3)
        response = engine.query("Which singer performed at Wembley stadium?")
        synthesis = prompt_text(server.requests[1])
    assert isinstance(engine, BaseSQLTableQueryEngine)  # SQLTableRetrieverQueryEngine's base, built like it
    assert str(response) == "Ann Lee sang there."
    assert response.metadata["sql_query"] == WEMBLEY_SINGERS
    assert "Ann Lee" in synthesis


def test_as_sql_query_engine_hands_llamaindexs_text_to_sql_arguments_to_its_retriever(index, sql_database):
    prompt = PromptTemplate("Tables: {schema}\nDialect: {dialect}\nQ: {query_str}\nSQL:")
    with FakeOpenAIServer(default=text(WEMBLEY_SINGERS)) as server:
        engine = index.as_sql_query_engine(
            sql_database, llm=_llm(server), text_to_sql_prompt=prompt, sql_only=True, synthesize_response=False
        )
        response = engine.query("Which singer performed at Wembley stadium?")
        sent = prompt_text(server.requests[0])
    assert sent.startswith("Tables: Table 'stadium' has columns") and "Dialect: sqlite" in sent
    assert str(response) == WEMBLEY_SINGERS  # sql_only: the SQL, not run


def test_as_sql_query_engine_honours_the_retrievers_filters(index, sql_database):
    from llama_index.core.vector_stores.types import FilterOperator, MetadataFilter, MetadataFilters

    stadium_only = MetadataFilters(
        filters=[MetadataFilter(key="table_id", value=["stadium"], operator=FilterOperator.IN)]
    )
    with FakeOpenAIServer(default=text("SELECT capacity FROM stadium")) as server:
        engine = index.as_sql_query_engine(sql_database, llm=_llm(server), filters=stadium_only, sql_only=True)
        engine.query("Which singer performed at Wembley stadium?")
        sent = prompt_text(server.requests[0])
    assert "Table 'stadium'" in sent and "Table 'singer'" not in sent and "Table 'concert'" not in sent


def test_as_sql_query_engine_refuses_an_argument_nothing_takes_by_name(index, sql_database):
    with (
        FakeOpenAIServer(default=text(WEMBLEY_SINGERS)) as server,
        pytest.raises(TypeError, match="'similarity_top_kk'"),
    ):
        index.as_sql_query_engine(sql_database, llm=_llm(server), similarity_top_kk=3)


def test_as_sql_query_engine_without_any_llm_says_how_to_give_one(index, sql_database):
    with pytest.raises(ValueError, match=r"as_sql_query_engine\(\) needs an LLM.*Settings\.llm"):
        index.as_sql_query_engine(sql_database)


def test_a_composite_key_is_one_on_and_an_alternative_its_own_join():
    from llama_index_pearl.retrieval.sql_tables import join_keys_text

    composite = {
        "left_table": "flights",
        "right_table": "weather",
        "column_pairs": [["origin", "origin"], ["time_hour", "time_hour"]],
        "kind": "explicit",
        "declared": False,
    }
    alternative = {**composite, "column_pairs": [["dest", "origin"], ["time_hour", "time_hour"]]}
    hint = {"tables": ["weather", "flights"], "via": None, "joins": [composite], "alternatives": [alternative]}
    assert join_keys_text("flights", [hint]) == (
        "JOIN weather ON flights.origin = weather.origin AND flights.time_hour = weather.time_hour"
        " or JOIN weather ON flights.dest = weather.origin AND flights.time_hour = weather.time_hour"
    )
    assert join_keys_text("weather", [hint]).startswith("JOIN flights ON weather.origin = flights.origin AND ")
