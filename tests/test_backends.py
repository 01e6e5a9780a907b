"""Vector store backends: Qdrant (local mode), top-n stores, the deletable FAISS default, dimension checks."""

from __future__ import annotations

import uuid

import pandas as pd
import pytest
from embeddings import HashingEmbedding
from indexes import lexical_scorer
from llama_index.core import StorageContext
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores import SimpleVectorStore
from llama_index.core.vector_stores.types import VectorStoreQuery

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.retrieval.retriever import embed_query
from llama_index_pearl.retrieval.search.lexical import DEFAULT_LEXICAL_WEIGHT
from llama_index_pearl.retrieval.search.pooling import UnitHit, max_pool
from llama_index_pearl.store.any_store import store_dimension
from llama_index_pearl.store.faiss_store import PearlFaissStore, new_faiss_store
from llama_index_pearl.tables.table import Table

QUESTIONS = ("Wembley capacity", "singer Ann Lee", "concert Gala at Maracana", "stadium name of the Fest concert")


def _qdrant_store(collection: str = "units"):
    from llama_index.vector_stores.qdrant import QdrantVectorStore
    from qdrant_client import QdrantClient

    return QdrantVectorStore(client=QdrantClient(location=":memory:"), collection_name=collection)


def _ranked(index, question, k=3, **kwargs):
    nodes = index.as_retriever(similarity_top_k=k, **kwargs).retrieve(question)
    return [(n.node.metadata["table_id"], n.score) for n in nodes]


def _same(a, b):
    assert [t for t, _ in a] == [t for t, _ in b]
    assert [s for _, s in a] == pytest.approx([s for _, s in b], abs=1e-5)


@pytest.fixture
def faiss_index(music_tables):
    return PearlTableIndex.from_tables(music_tables, embed_model=HashingEmbedding())


def test_qdrant_local_mode_retrieves_like_the_faiss_default(music_tables, faiss_index):
    store = _qdrant_store()
    index = PearlTableIndex.from_tables(
        music_tables, embed_model=HashingEmbedding(), storage_context=StorageContext.from_defaults(vector_store=store)
    )
    assert index.vector_index.vector_store is store
    for question in QUESTIONS:
        _same(_ranked(index, question), _ranked(faiss_index, question))


def test_unit_ids_are_uuids_as_qdrant_requires(faiss_index):
    for unit in faiss_index.units:
        assert str(uuid.UUID(unit.node_id)) == unit.node_id


def test_qdrant_index_persists_and_loads_with_its_store(music_tables, tmp_path):
    store = _qdrant_store()
    index = PearlTableIndex.from_tables(
        music_tables, embed_model=HashingEmbedding(), storage_context=StorageContext.from_defaults(vector_store=store)
    )
    index.persist(tmp_path / "idx")
    storage = StorageContext.from_defaults(vector_store=store, persist_dir=str(tmp_path / "idx"))
    loaded = PearlTableIndex.load(tmp_path / "idx", embed_model=HashingEmbedding(), storage_context=storage)
    for question in QUESTIONS:
        _same(_ranked(loaded, question), _ranked(index, question))


def test_qdrant_index_supports_insert_and_delete(music_tables):
    first = {k: music_tables[k] for k in ("singer", "concert")}
    storage = StorageContext.from_defaults(vector_store=_qdrant_store())
    index = PearlTableIndex.from_tables(first, embed_model=HashingEmbedding(), storage_context=storage, budget=10)
    index.insert_tables({"stadium": music_tables["stadium"]})
    rebuilt = PearlTableIndex.from_tables(music_tables, embed_model=HashingEmbedding(), budget=10)
    for question in QUESTIONS:
        _same(_ranked(index, question), _ranked(rebuilt, question))
    index.delete_table("stadium")
    assert all(t != "stadium" for t, _ in _ranked(index, "Wembley stadium"))


def test_external_store_of_another_dimension_fails_fast_on_load_with_both_dimensions(music_tables, tmp_path):
    from llama_index.vector_stores.qdrant import QdrantVectorStore
    from qdrant_client import QdrantClient, models

    index = PearlTableIndex.from_tables(music_tables, embed_model=HashingEmbedding())
    index.persist(tmp_path / "idx")
    client = QdrantClient(location=":memory:")
    client.create_collection("small", vectors_config=models.VectorParams(size=32, distance=models.Distance.COSINE))
    store = QdrantVectorStore(client=client, collection_name="small")
    storage = StorageContext.from_defaults(vector_store=store, persist_dir=str(tmp_path / "idx"))
    with pytest.raises(ValueError, match=r"dimension 32.*dimension 64"):
        PearlTableIndex.load(tmp_path / "idx", embed_model=HashingEmbedding(), storage_context=storage)


def test_store_dimension_reads_faiss_qdrant_and_embed_dim_attributes(music_tables):
    assert store_dimension(new_faiss_store(12)) == 12
    storage = StorageContext.from_defaults(vector_store=_qdrant_store())
    PearlTableIndex.from_tables(music_tables, embed_model=HashingEmbedding(), storage_context=storage)
    assert store_dimension(storage.vector_store) == 64

    class PgLike(SimpleVectorStore):
        embed_dim: int = 384

    assert store_dimension(PgLike()) == 384
    assert store_dimension(SimpleVectorStore()) is None


REQUESTED: list[int] = []


class TopNStore(SimpleVectorStore):
    """Returns exactly the top-n units asked for, and records each n in REQUESTED (like any ANN store)."""

    def query(self, query: VectorStoreQuery, **kwargs):
        REQUESTED.append(query.similarity_top_k)
        return super().query(query, **kwargs)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_over_fetch_on_a_top_n_store_equals_exact_pooling(music_tables, k):
    store = TopNStore()
    index = PearlTableIndex.from_tables(
        music_tables, embed_model=HashingEmbedding(), storage_context=StorageContext.from_defaults(vector_store=store)
    )
    n_units = len(index.units)
    for question in QUESTIONS:
        embedding = embed_query(index.embed_model, question)
        everything = store.query(VectorStoreQuery(query_embedding=embedding, similarity_top_k=n_units))
        lexical = lexical_scorer(index).scores(question)
        exact = max_pool(
            [
                UnitHit(i, index.catalog.units[i].table_ids, s + DEFAULT_LEXICAL_WEIGHT * lexical.get(i, 0.0))
                for i, s in zip(everything.ids, everything.similarities)
            ],
            k,
        )
        REQUESTED.clear()
        got = _ranked(index, question, k=k, fetch_k=1, set_rule=None)
        _same(got, [(h.table_id, h.score) for h in exact])
        assert REQUESTED[0] == 1  # it started from the top-1 unit and over-fetched from there


def test_faiss_default_never_reuses_an_id_after_a_delete():
    store = new_faiss_store(2)
    store.add([TextNode(id_="a", text="a", embedding=[1.0, 0.0]), TextNode(id_="b", text="b", embedding=[0.0, 1.0])])
    store.delete_nodes(["a"])
    store.add([TextNode(id_="c", text="c", embedding=[0.6, 0.8])])
    result = store.query(VectorStoreQuery(query_embedding=[0.0, 1.0], similarity_top_k=5))
    assert result.ids == ["b", "c"]
    assert result.similarities == pytest.approx([1.0, 0.8])


def test_faiss_default_round_trips_its_id_counter_as_json(tmp_path):
    store = new_faiss_store(2)
    store.add([TextNode(id_="a", text="a", embedding=[1.0, 0.0]), TextNode(id_="b", text="b", embedding=[0.0, 1.0])])
    store.delete_nodes(["b"])
    store.persist(str(tmp_path / "default__vector_store.json"))
    loaded = PearlFaissStore.from_files(str(tmp_path / "default__vector_store.json"), str(tmp_path / "id_map.json"))
    loaded.add([TextNode(id_="c", text="c", embedding=[0.0, 1.0])])
    result = loaded.query(VectorStoreQuery(query_embedding=[0.0, 1.0], similarity_top_k=5))
    assert result.ids == ["c", "a"]


def test_corrupted_faiss_id_map_is_reported(faiss_index, tmp_path):
    faiss_index.persist(tmp_path / "idx")
    (tmp_path / "idx" / "id_map.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"Corrupted .*id_map\.json"):
        PearlTableIndex.load(tmp_path / "idx", embed_model=HashingEmbedding())


def test_retrieve_many_on_another_store_equals_retrieve(music_tables):
    index = PearlTableIndex.from_tables(
        music_tables,
        embed_model=HashingEmbedding(),
        storage_context=StorageContext.from_defaults(vector_store=TopNStore()),
    )
    retriever = index.as_retriever(similarity_top_k=2)
    many = retriever.retrieve_many(list(QUESTIONS))
    for question, nodes in zip(QUESTIONS, many):
        _same([(n.node.metadata["table_id"], n.score) for n in nodes], _ranked(index, question, k=2))


# ------------------------------------------------------------------------------ ties: the answer is the store's not
def _twin_shops() -> list[Table]:
    """Two databases holding the same tables and rows: every unit of one ties with its twin of the other."""
    tables = []
    for shop in ("north", "south"):
        customers = pd.DataFrame({"customer_id": [1, 2], "customer_name": ["Ann Lee", "Bo Kim"]})
        orders = pd.DataFrame({"order_id": [7, 8, 9], "customer_id": [1, 2, 1], "total": [5.0, 7.5, 2.0]})
        tables += [
            Table(f"{shop}.customers", customers, source=shop, name="customers"),
            Table(f"{shop}.orders", orders, source=shop, name="orders"),
        ]
    return tables


def _answer(index, question, **kwargs):
    nodes = index.as_retriever(similarity_top_k=4, **kwargs).retrieve(question)
    return [(n.node.metadata["table_id"], n.node.metadata["set_tier"], n.node.metadata["set_reason"]) for n in nodes]


TWIN_QUESTIONS = ("What did Ann Lee order?", "customers", "Bo Kim")


@pytest.fixture
def twin_shops():
    """The twin shops on the default store and on LlamaIndex's SimpleVectorStore."""
    simple = StorageContext.from_defaults(vector_store=SimpleVectorStore())
    return (
        PearlTableIndex.from_tables(_twin_shops(), embed_model=HashingEmbedding()),
        PearlTableIndex.from_tables(_twin_shops(), embed_model=HashingEmbedding(), storage_context=simple),
    )


@pytest.mark.parametrize("question", TWIN_QUESTIONS)
def test_on_a_tie_another_store_answers_with_the_set_and_tiers_of_the_default_store(twin_shops, question):
    default, simple = twin_shops
    assert _answer(simple, question) == _answer(default, question)


@pytest.mark.parametrize("question", TWIN_QUESTIONS)
def test_a_tie_at_the_last_unit_fetched_is_settled_as_the_default_store_settles_it(twin_shops, question):
    default, simple = twin_shops
    _same(_ranked(simple, question, k=1, fetch_k=1, set_rule=None), _ranked(default, question, k=1, set_rule=None))
