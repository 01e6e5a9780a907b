"""The retriever as a LlamaIndex user plugs it in: bundles, settable k, scores, tracing, one body for sync and async."""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.span_handlers import SimpleSpanHandler
from llama_index.core.schema import QueryBundle
from llama_index.core.storage import StorageContext
from llama_index.core.vector_stores import SimpleVectorStore

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.retrieval.retriever import embed_query
from llama_index_pearl.retrieval.search.faiss_search import FaissSearch


@pytest.fixture
def index(music_tables, hashing_embedding) -> PearlTableIndex:
    return PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)


def _tables(nodes) -> list[str]:
    return [n.node.metadata["table_id"] for n in nodes]


def test_custom_embedding_strs_are_embedded_instead_of_the_query_str(index):
    retriever = index.as_retriever(similarity_top_k=1, lexical_weight=0, set_rule=None)  # the ranking as embedded
    bundle = QueryBundle(query_str="concert Gala", custom_embedding_strs=["Wembley stadium capacity"])
    assert _tables(retriever.retrieve(bundle)) == _tables(retriever.retrieve("Wembley stadium capacity"))
    assert _tables(retriever.retrieve(bundle)) != _tables(retriever.retrieve("concert Gala"))


def test_several_custom_embedding_strs_are_averaged_as_llamaindex_does(index, hashing_embedding):
    strings = ["Wembley stadium", "singer Ann Lee"]
    mean = np.asarray(hashing_embedding.get_agg_embedding_from_queries(strings))
    given = QueryBundle(query_str="x", embedding=(mean / np.linalg.norm(mean)).tolist())
    retriever = index.as_retriever(similarity_top_k=3, lexical_weight=0)
    custom = retriever.retrieve(QueryBundle(query_str="x", custom_embedding_strs=strings))
    expected = retriever.retrieve(given)
    assert [n.node.node_id for n in custom] == [n.node.node_id for n in expected]
    assert [n.score for n in custom] == pytest.approx([n.score for n in expected])


def test_similarity_top_k_can_be_set_on_a_retriever(index):
    retriever = index.as_retriever(similarity_top_k=3)
    retriever.similarity_top_k = 1
    assert len(retriever.retrieve("Wembley capacity")) == 1
    with pytest.raises(ValueError, match="similarity_top_k"):
        retriever.similarity_top_k = 0


def test_the_node_keeps_the_raw_cosine_of_its_matched_unit_beside_the_fused_score(index):
    question = "Wembley capacity"
    query = np.asarray(embed_query(index.embed_model, question))
    for node in index.as_retriever(similarity_top_k=3).retrieve(question):
        unit = node.node.metadata["matched_unit_id"]
        cosine = float(index.vector_index.vector_store.vectors_of([unit])[0] @ query)
        assert node.node.metadata["cosine"] == pytest.approx(cosine, abs=1e-6)
        assert node.score >= node.node.metadata["cosine"] - 1e-6  # lexical evidence only adds


def test_without_lexical_evidence_the_score_is_the_cosine(index):
    nodes = index.as_retriever(similarity_top_k=3, lexical_weight=0).retrieve("Wembley capacity")
    assert [n.score for n in nodes] == [n.node.metadata["cosine"] for n in nodes]


def test_an_unknown_retriever_argument_is_an_error_naming_it(index):
    with pytest.raises(TypeError, match="similarity_top_kk"):
        index.as_retriever(similarity_top_kk=3)


@pytest.mark.parametrize("store", ["faiss", "generic"])
async def test_sync_and_async_retrieval_return_the_same_nodes(music_tables, hashing_embedding, store):
    context = None if store == "faiss" else StorageContext.from_defaults(vector_store=SimpleVectorStore())
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding, storage_context=context)
    retriever = index.as_retriever(similarity_top_k=3)
    for question in ["Wembley capacity", "singer Ann Lee", "Which concert was at Maracana?"]:
        sync = retriever.retrieve(question)
        asynchronous = await retriever.aretrieve(question)
        assert [(n.node.node_id, n.score, n.node.metadata) for n in sync] == [
            (n.node.node_id, n.score, n.node.metadata) for n in asynchronous
        ]


async def test_async_retrieval_searches_off_the_event_loop(index, monkeypatch):
    threads: list[threading.Thread] = []
    search = FaissSearch.search_many

    def recording(self, *args, **kwargs):
        threads.append(threading.current_thread())
        return search(self, *args, **kwargs)

    monkeypatch.setattr(FaissSearch, "search_many", recording)
    await index.as_retriever().aretrieve("Wembley capacity")
    assert threads and threads[0] is not threading.current_thread()


async def test_the_bundled_encoder_embeds_async_queries_off_the_event_loop(minilm, monkeypatch):
    threads: list[threading.Thread] = []
    embed = type(minilm)._get_query_embedding

    def recording(self, query):
        threads.append(threading.current_thread())
        return embed(self, query)

    monkeypatch.setattr(type(minilm), "_get_query_embedding", recording)
    await minilm.aget_query_embedding("Wembley capacity")
    assert threads and threads[0] is not threading.current_thread()


@pytest.fixture
def spans():
    """Names (``Class.method``) of the spans LlamaIndex's instrumentation sees while the test runs."""
    handler = SimpleSpanHandler()
    root = get_dispatcher()
    root.add_span_handler(handler)
    yield lambda: {span.id_.split("-")[0] for span in handler.completed_spans}
    root.span_handlers.remove(handler)


async def test_pearl_traces_its_own_spans_through_llamaindex_instrumentation(music_tables, hashing_embedding, spans):
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)
    retriever = index.as_retriever(similarity_top_k=2)
    retriever.retrieve("Wembley capacity")
    await retriever.aretrieve("singer Ann Lee")
    retriever.retrieve_many(["Wembley capacity"])
    index.insert_tables({"album": pd.DataFrame({"album_id": [1], "title": ["Quokka"]})})
    index.delete_table("album")
    assert {
        "PearlTableIndex.from_tables",
        "PearlRetriever._retrieve",
        "PearlRetriever._aretrieve",
        "PearlRetriever.retrieve_many",
        "PearlTableIndex.insert_tables",
        "PearlTableIndex.delete_table",
    } <= spans()
