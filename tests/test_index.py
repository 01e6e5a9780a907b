"""PearlTableIndex build, retrieval by max-pooling, model resolution, engines and async."""

from __future__ import annotations

import pandas as pd
import pytest
from indexes import with_units
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine

from llama_index_pearl import HeuristicQueryGenerator, PearlRetriever, PearlTableIndex
from llama_index_pearl.corpus.units import UnitKind, make_unit, original_unit
from llama_index_pearl.retrieval.search.lexical import DEFAULT_LEXICAL_WEIGHT


def test_whole_table_build_has_one_original_unit_per_table(music_tables, hashing_embedding):
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding, augment=False)
    assert sorted(u.metadata["table_ids"][0] for u in index.units) == ["concert", "singer", "stadium"]
    assert {u.metadata["kind"] for u in index.units} == {"original"}
    assert index.report.units_by_kind == {"original": 3}


def test_unit_metadata_is_not_embedded(music_tables, hashing_embedding):
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)
    unit = index.units[0]
    assert "table_ids" not in unit.get_content(metadata_mode="embed")
    assert unit.get_content(metadata_mode="embed") == unit.text


def test_retriever_returns_one_node_per_table_with_table_text(music_tables, hashing_embedding):
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)
    nodes = index.as_retriever(similarity_top_k=2).retrieve("stadium name capacity Wembley")
    assert nodes[0].node.metadata["table_id"] == "stadium"
    assert "Columns: stadium_id | stadium_name | capacity" in nodes[0].node.text
    assert nodes[0].node.metadata["matched_kind"] in {"original", "schema"}  # a unit of the table alone
    assert len({n.node.metadata["table_id"] for n in nodes}) == 2


def test_as_retriever_is_a_pearl_retriever(music_tables, hashing_embedding):
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)
    assert isinstance(index.as_retriever(), PearlRetriever)


def _index_with_units(tables, embedding, extra_units):
    index = PearlTableIndex.from_tables(tables, embed_model=embedding, augment=False)
    units = [original_unit(t, index.serializer) for t in index.tables.values()] + extra_units(index)
    return with_units(index, units)


def test_joined_unit_lifts_every_table_it_names(music_tables, hashing_embedding):
    def joined(index):
        views = [index.serializer.view(index.tables[t]) for t in ("singer", "concert")]
        return [make_unit(UnitKind.EXPLICIT, views, index.serializer, question="zebra quokka", path_id="p1")]

    index = _index_with_units(music_tables, hashing_embedding, joined)
    nodes = index.as_retriever(similarity_top_k=2).retrieve("zebra quokka")
    assert {n.node.metadata["table_id"] for n in nodes} == {"singer", "concert"}
    assert nodes[0].score == pytest.approx(nodes[1].score)
    assert nodes[0].node.metadata["matched_kind"] == "explicit"
    assert nodes[0].node.metadata["matched_question"] == "zebra quokka"


def test_overfetch_finds_k_tables_when_one_table_owns_the_top_units(hashing_embedding):
    tables = {f"t{i}": pd.DataFrame({"col": [f"word{i}"]}) for i in range(6)}

    def many_views_of_t0(index):
        view = index.serializer.view(index.tables["t0"])
        return [
            make_unit(UnitKind.SINGLE_HOP, [view], index.serializer, question=f"alpha beta {i}", key=str(i))
            for i in range(40)
        ]

    index = _index_with_units(tables, hashing_embedding, many_views_of_t0)
    retriever = index.as_retriever(similarity_top_k=4, fetch_k=2)
    nodes = retriever.retrieve("alpha beta")
    assert len(nodes) == 4 and nodes[0].node.metadata["table_id"] == "t0"
    exact = PearlRetriever(index, similarity_top_k=4, fetch_k=len(index.units)).retrieve("alpha beta")
    assert [(n.node.metadata["table_id"], round(n.score, 6)) for n in nodes] == [
        (n.node.metadata["table_id"], round(n.score, 6)) for n in exact
    ]


def test_asking_for_more_tables_than_exist_returns_all(music_tables, hashing_embedding):
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)
    assert len(index.as_retriever(similarity_top_k=10).retrieve("anything")) == 3


async def test_async_retrieval_matches_sync(music_tables, hashing_embedding):
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)
    retriever = index.as_retriever(similarity_top_k=3)
    sync = [(n.node.metadata["table_id"], n.score) for n in retriever.retrieve("singer name Ann")]
    asynchronous = [(n.node.metadata["table_id"], n.score) for n in await retriever.aretrieve("singer name Ann")]
    assert asynchronous == sync


def test_retriever_works_inside_a_query_engine_with_mock_llm(music_tables, hashing_embedding):
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)
    engine = RetrieverQueryEngine.from_args(index.as_retriever(similarity_top_k=2), llm=MockLLM())
    response = engine.query("Which stadium is Wembley?")
    assert response.source_nodes[0].node.metadata["table_id"] == "stadium"


def test_query_and_chat_engines_give_the_llm_the_retrieved_tables(music_tables, hashing_embedding):
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)
    # MockLLM answers with the prompt it was sent: the tables' texts are in it
    answer = index.as_query_engine(llm=MockLLM(), similarity_top_k=1).query("Wembley capacity")
    assert [n.node.metadata["table_id"] for n in answer.source_nodes] == ["stadium"] and "Wembley" in str(answer)
    chat = index.as_chat_engine(llm=MockLLM(), similarity_top_k=1).chat("Wembley capacity")
    assert "Columns: stadium_id | stadium_name | capacity" in str(chat)


def test_a_build_given_no_llm_writes_heuristic_questions(music_tables, hashing_embedding):
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)
    assert isinstance(index.generator, HeuristicQueryGenerator) and index.generator_name.startswith("heuristic")


def test_user_vector_store_is_honoured(music_tables, hashing_embedding):
    from llama_index.core import StorageContext
    from llama_index.core.vector_stores import SimpleVectorStore

    store = SimpleVectorStore()
    index = PearlTableIndex.from_tables(
        music_tables, embed_model=hashing_embedding, storage_context=StorageContext.from_defaults(vector_store=store)
    )
    assert index.vector_index.vector_store is store
    assert index.as_retriever(similarity_top_k=1).retrieve("Wembley Maracana")[0].node.metadata["table_id"] == "stadium"


def test_header_only_table_is_indexed_by_schema(hashing_embedding):
    index = PearlTableIndex.from_tables(
        {"empty_orders": pd.DataFrame(columns=["order_id", "customer"]), "x": pd.DataFrame({"y": [1]})},
        embed_model=hashing_embedding,
    )
    top = index.as_retriever(similarity_top_k=1).retrieve("order customer")[0]
    assert top.node.metadata["table_id"] == "empty_orders"


def test_real_minilm_ranks_the_obvious_table_first(music_tables, minilm):
    index = PearlTableIndex.from_tables(music_tables, embed_model=minilm)
    nodes = index.as_retriever(similarity_top_k=3).retrieve("What is the capacity of Wembley stadium?")
    assert nodes[0].node.metadata["table_id"] == "stadium"
    scores = [n.score for n in nodes]
    assert scores == sorted(scores, reverse=True)
    for node in nodes:  # a table's score: its matched unit's cosine, plus at most the lexical weight
        cosine = node.node.metadata["cosine"]
        assert 0.0 < cosine <= 1.0 + 1e-6 and cosine <= node.score <= cosine + DEFAULT_LEXICAL_WEIGHT + 1e-6


def test_a_result_nodes_text_fits_table_text_chars_and_an_inserted_tables_too(music_tables, hashing_embedding):
    wide = pd.DataFrame([[f"v{r}_{c}" for c in range(500)] for r in range(10)], columns=[f"c{c}" for c in range(500)])
    index = PearlTableIndex.from_tables({"wide": wide}, embed_model=hashing_embedding, table_text_chars=1000)
    index.insert_tables({"wider": wide.add_prefix("w")})
    nodes = index.as_retriever(similarity_top_k=2).retrieve("c1 v0_1")
    assert {n.node.metadata["table_id"] for n in nodes} == {"wide", "wider"}
    assert all(len(n.node.text) <= 1000 and "more columns)" in n.node.text for n in nodes)


# ---------------------------------------------------------------- questions with nothing to rank by
@pytest.mark.parametrize("question", ["", "   ", "\t\n"])
def test_an_empty_or_blank_question_is_one_value_error_saying_so(music_tables, hashing_embedding, question):
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)
    with pytest.raises(ValueError, match=r"^The question is empty"):
        index.as_retriever().retrieve(question)


def test_a_question_holding_a_lone_surrogate_is_one_value_error_naming_its_position(music_tables, hashing_embedding):
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)
    with pytest.raises(ValueError, match=r"is not text: a lone surrogate at position 8"):
        index.as_retriever().retrieve("Wembley \ud800")


async def test_async_and_batch_retrieval_refuse_an_empty_question_alike(music_tables, hashing_embedding):
    retriever = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding).as_retriever()
    with pytest.raises(ValueError, match=r"^The question is empty"):
        await retriever.aretrieve("")
    with pytest.raises(ValueError, match=r"^The question is empty"):
        retriever.retrieve_many(["Wembley", ""])


def test_a_blank_question_with_its_own_embedding_is_ranked_by_it(music_tables, hashing_embedding):
    from llama_index.core.schema import QueryBundle

    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)
    vector = hashing_embedding.get_query_embedding("stadium Wembley")
    nodes = index.as_retriever(similarity_top_k=1).retrieve(QueryBundle(query_str="", embedding=vector))
    assert nodes[0].node.metadata["table_id"] == "stadium"
