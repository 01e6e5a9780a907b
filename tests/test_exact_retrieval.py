"""The retriever's direct FAISS path ranks tables exactly as brute-force max-pooling over every stored unit.

Encoder-only scores (``lexical_weight=0``); the fused lexical scores are tested in tests/test_lexical.py.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from embeddings import WORDS, DyadicEmbedding
from indexes import with_units

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.corpus.units import UnitKind, make_unit, original_unit
from llama_index_pearl.retrieval.retriever import embed_query
from llama_index_pearl.retrieval.search.pooling import UnitHit, max_pool


def _corpus(seed: int, storage_context=None) -> PearlTableIndex:
    """Random tables, identical copies in a second database, explicit units and per-table questions."""
    rng = np.random.default_rng(seed)
    embedding = DyadicEmbedding()
    frames = {f"db1.t{i}": pd.DataFrame({"v": list(rng.choice(WORDS, 2))}) for i in range(int(rng.integers(2, 7)))}
    for table_id in list(frames)[: int(rng.integers(0, 3))]:
        frames[table_id.replace("db1", "db2")] = frames[table_id].copy()  # the same table in another database
    index = PearlTableIndex.from_tables(frames, embed_model=embedding, augment=False)
    for table in index.tables.values():
        table.name = table.id.split(".")[1]  # identical copies serialize identically
    serializer = index.serializer
    units = [original_unit(t, serializer) for t in index.tables.values()]
    ids = list(index.tables)
    for i in range(int(rng.integers(0, 6))):
        chosen = list(rng.choice(ids, size=min(len(ids), int(rng.integers(1, 4))), replace=False))
        views = [serializer.view(index.tables[t]) for t in chosen]
        question = " ".join(rng.choice(WORDS, 2))
        kind = UnitKind.EXPLICIT if len(views) > 1 else UnitKind.SINGLE_HOP
        units.append(make_unit(kind, views, serializer, question=question, key=str(i)))
    return with_units(index, units, storage_context)


def _brute_force(index: PearlTableIndex, question: str, k: int) -> list[tuple[str, float, str]]:
    store = index.vector_index.vector_store
    query = np.asarray(embed_query(index.embed_model, question), dtype=np.float32)
    hits = [
        UnitHit(node_id, index.catalog.units[node_id].table_ids, float(store.client.reconstruct(fid) @ query))
        for node_id, fid in sorted(store.id_map().items(), key=lambda item: item[1])
    ]
    return [(t.table_id, t.score, t.unit_id) for t in max_pool(hits, k)]


def _retrieved(index: PearlTableIndex, question: str, k: int, **kwargs) -> list[tuple[str, float, str]]:
    nodes = index.as_retriever(similarity_top_k=k, lexical_weight=0, set_rule=None, **kwargs).retrieve(question)
    return [(n.node.metadata["table_id"], n.score, n.node.metadata["matched_unit_id"]) for n in nodes]


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("fetch_k", [1, 3, None])
def test_direct_faiss_retrieval_equals_brute_force_pooling_with_ties(seed, fetch_k):
    index = _corpus(seed)
    for question in ("red cat", "blue dog fish", "city year", "green"):
        for k in (1, 2, 4):
            assert _retrieved(index, question, k, fetch_k=fetch_k) == _brute_force(index, question, k)


def test_tables_of_one_explicit_unit_are_ordered_by_their_own_units_without_a_second_search(monkeypatch):
    embedding = DyadicEmbedding()
    frames = {"a": pd.DataFrame({"v": ["red"]}), "b": pd.DataFrame({"v": ["dog"]}), "c": pd.DataFrame({"v": ["fish"]})}
    frames.update({f"filler{i}": pd.DataFrame({"v": ["year"]}) for i in range(40)})
    index = PearlTableIndex.from_tables(frames, embed_model=embedding, augment=False)
    serializer = index.serializer
    joined = make_unit(
        UnitKind.EXPLICIT, [serializer.view(index.tables[t]) for t in "abc"], serializer, question="red dog fish"
    )
    units = [original_unit(t, serializer) for t in index.tables.values()] + [joined]
    index = with_units(index, units)
    store = index.vector_index.vector_store
    searches = []
    search = store.client.search
    monkeypatch.setattr(store.client, "search", lambda *a, **kw: searches.append(a[1]) or search(*a, **kw))
    got = _retrieved(index, "red dog fish", 3, fetch_k=2)
    assert got == _brute_force(index, "red dog fish", 3)
    assert searches == [2]  # one top-2 search; the tie was settled from the stored vectors


async def test_async_direct_retrieval_matches_sync():
    index = _corpus(3)
    retriever = index.as_retriever(similarity_top_k=3, lexical_weight=0)
    sync = [(n.node.metadata["table_id"], n.score) for n in retriever.retrieve("red cat")]
    assert [(n.node.metadata["table_id"], n.score) for n in await retriever.aretrieve("red cat")] == sync


def _tables(results):
    return [[(n.node.metadata["table_id"], round(n.score, 5)) for n in nodes] for nodes in results]


@pytest.mark.parametrize("seed", range(5))
def test_retrieve_many_equals_retrieve_on_each_question(seed):
    index = _corpus(seed)
    retriever = index.as_retriever(similarity_top_k=3, lexical_weight=0)
    questions = ["red cat", "blue dog fish", "city year", "green", "red cat"]
    assert _tables(retriever.retrieve_many(questions, batch_size=2)) == _tables(
        [retriever.retrieve(q) for q in questions]
    )


async def test_aretrieve_many_equals_retrieve_many():
    retriever = _corpus(1).as_retriever(similarity_top_k=2, lexical_weight=0)
    questions = ["red cat", "city year"]
    assert _tables(await retriever.aretrieve_many(questions)) == _tables(retriever.retrieve_many(questions))


def test_retrieve_many_with_the_real_encoder_batches_queries_and_ranks_like_retrieve(music_tables, minilm):
    index = PearlTableIndex.from_tables(music_tables, embed_model=minilm)
    retriever = index.as_retriever(similarity_top_k=3, lexical_weight=0)
    questions = ["Which stadium holds the most people?", "Who sang at the Gala concert?", "singer names"]
    many = retriever.retrieve_many(questions)
    for question, nodes in zip(questions, many):
        one = retriever.retrieve(question)
        assert [n.node.metadata["table_id"] for n in nodes] == [n.node.metadata["table_id"] for n in one]
        assert [n.score for n in nodes] == pytest.approx([n.score for n in one], abs=1e-5)


def test_after_an_insert_the_state_keeps_the_texts_of_unchanged_tables_and_finds_the_new_table(music_tables):
    from embeddings import HashingEmbedding

    index = PearlTableIndex.from_tables(music_tables, embed_model=HashingEmbedding())
    retriever = index.as_retriever(similarity_top_k=1, lexical_weight=0)
    retriever.retrieve("Wembley capacity")
    before = index.revisions.state().nodes.text("stadium")
    index.insert_tables({"album": pd.DataFrame({"album_id": [1], "title": ["Quokka Zebra Songs"]})})
    assert retriever.retrieve("Quokka Zebra Songs")[0].node.metadata["table_id"] == "album"
    assert index.revisions.state().nodes.text("stadium") is before
