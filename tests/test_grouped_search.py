"""Qdrant pools on the server: one grouped search per retrieval, the same tables and scores as the FAISS default."""

from __future__ import annotations

import pytest
from llama_index.core import StorageContext
from test_exact_retrieval import _corpus

QUESTIONS = ("red cat", "blue dog fish", "city year", "green")


def _qdrant_context():
    from llama_index.vector_stores.qdrant import QdrantVectorStore
    from qdrant_client import QdrantClient

    store = QdrantVectorStore(client=QdrantClient(location=":memory:"), collection_name="units")
    return StorageContext.from_defaults(vector_store=store)


def _ranked(nodes):
    return [(n.node.metadata["table_id"], n.score) for n in nodes]


def _above_last(ranked):
    """Tables scoring above the last returned score, as sets per score."""
    last = ranked[-1][1]
    return {
        round(s, 5): sorted(t for t, u in ranked if round(u, 5) == round(s, 5)) for _, s in ranked if s > last + 1e-6
    }


def _counting(client, monkeypatch):
    calls = {"query_points_groups": 0, "query_points": 0}
    for name in calls:
        original = getattr(client, name)

        def counted(*args, _name=name, _original=original, **kwargs):
            calls[_name] += 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(client, name, counted)
    return calls


@pytest.mark.parametrize("seed", range(12))
def test_qdrant_grouped_search_ranks_like_the_faiss_default_with_one_query(seed, monkeypatch):
    faiss_index = _corpus(seed)
    qdrant_index = _corpus(seed, _qdrant_context())
    calls = _counting(qdrant_index.vector_index.vector_store.client, monkeypatch)
    for question in QUESTIONS:
        for k in (1, 2, 4):
            before = dict(calls)
            # the ranking, as pooled: a set also reads each table's own units, which a store search cannot score
            got = _ranked(
                qdrant_index.as_retriever(similarity_top_k=k, lexical_weight=0, set_rule=None).retrieve(question)
            )
            want = _ranked(
                faiss_index.as_retriever(similarity_top_k=k, lexical_weight=0, set_rule=None).retrieve(question)
            )
            assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=1e-5)
            # above the k-th score the tables are determined (fully tied copies may swap places); at it, a cut tie
            assert _above_last(got) == _above_last(want)
            assert calls["query_points_groups"] - before["query_points_groups"] == 1
            assert calls["query_points"] == before["query_points"]


def test_tables_of_a_joined_entry_are_ordered_by_their_next_best_unit_on_the_server(music_tables, monkeypatch):
    from embeddings import HashingEmbedding

    from llama_index_pearl import PearlTableIndex

    faiss_index = PearlTableIndex.from_tables(music_tables, embed_model=HashingEmbedding())
    qdrant_index = PearlTableIndex.from_tables(
        music_tables, embed_model=HashingEmbedding(), storage_context=_qdrant_context()
    )
    calls = _counting(qdrant_index.vector_index.vector_store.client, monkeypatch)
    question = "What is the name of the singer for the concert Fest"
    got = qdrant_index.as_retriever(similarity_top_k=3, lexical_weight=0).retrieve(question)
    want = faiss_index.as_retriever(similarity_top_k=3, lexical_weight=0).retrieve(question)
    assert got[0].score == pytest.approx(got[1].score) and got[0].node.metadata["matched_kind"] == "explicit"
    assert [t for t, _ in _ranked(got)] == [t for t, _ in _ranked(want)]
    assert [s for _, s in _ranked(got)] == pytest.approx([s for _, s in _ranked(want)], abs=1e-5)
    assert calls == {"query_points_groups": 1, "query_points": 0}


async def test_qdrant_grouped_search_works_async_and_in_batches():
    index = _corpus(2, _qdrant_context())
    retriever = index.as_retriever(similarity_top_k=3, lexical_weight=0)
    sync = [_ranked(retriever.retrieve(q)) for q in QUESTIONS]
    assert [_ranked(await retriever.aretrieve(q)) for q in QUESTIONS] == sync
    assert [_ranked(nodes) for nodes in retriever.retrieve_many(list(QUESTIONS))] == sync
