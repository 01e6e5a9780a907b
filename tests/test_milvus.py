"""A real Milvus server on loopback as the index's vector store, through LlamaIndex's ``MilvusVectorStore``.

The server is the one ``.ci/run`` starts (``PEARL_TEST_MILVUS_URL``), else one this module starts from the
``milvus-lite`` wheel's server binary (``milvus_server.py``). Outside CI the tests skip, saying why, when
neither is possible; with ``CI=true`` or ``PEARL_REQUIRE_MILVUS`` set, a missing server is a failure.

Milvus groups search results by a scalar field; a unit stands for a list of tables, so PEARL fetches top-n
units from the server and max-pools them itself, over-fetching until the ranking is final, as with any store.
"""

from __future__ import annotations

import json
import uuid

import pytest
from embeddings import HashingEmbedding
from llama_index.core import StorageContext
from loopback_servers import loopback_server
from milvus_server import close_clients, start, stop

from llama_index_pearl import PearlTableIndex

QUESTIONS = ("Wembley capacity", "singer Ann Lee", "concert Gala at Maracana", "stadium name of the Fest concert")


@pytest.fixture(scope="session")
def milvus_url():
    client = "llama_index.vector_stores.milvus"
    yield from loopback_server("Milvus", "PEARL_TEST_MILVUS_URL", start, stop, client, "PEARL_REQUIRE_MILVUS")


@pytest.fixture
def milvus_store(milvus_url):
    """A store on a new collection of the server (dropped afterwards)."""
    from llama_index.vector_stores.milvus import MilvusVectorStore

    name = f"t_{uuid.uuid4().hex[:12]}"
    try:
        store = MilvusVectorStore(uri=milvus_url, collection_name=name, dim=64, overwrite=True)
    except Exception as exc:  # a channel an earlier test left idle, answered GOAWAY: once more on a new one
        if "ping" not in str(exc).lower():
            raise
        close_clients()
        store = MilvusVectorStore(uri=milvus_url, collection_name=name, dim=64, overwrite=True)
    yield store
    store.client.drop_collection(store.collection_name)
    close_clients()


def _on(store, tables, **kwargs) -> PearlTableIndex:
    storage = StorageContext.from_defaults(vector_store=store)
    return PearlTableIndex.from_tables(tables, embed_model=HashingEmbedding(), storage_context=storage, **kwargs)


def _ranked(index, question, k=3):
    return [(n.node.metadata["table_id"], n.score) for n in index.as_retriever(similarity_top_k=k).retrieve(question)]


def _same(a, b):
    assert [t for t, _ in a] == [t for t, _ in b]
    assert [s for _, s in a] == pytest.approx([s for _, s in b], abs=1e-5)


def test_an_index_on_the_server_retrieves_the_tables_and_scores_of_the_faiss_default(music_tables, milvus_store):
    index = _on(milvus_store, music_tables)
    faiss_index = PearlTableIndex.from_tables(music_tables, embed_model=HashingEmbedding())
    assert milvus_store.client.get_collection_stats(milvus_store.collection_name)["row_count"] == len(index.units)
    for question in QUESTIONS:
        _same(_ranked(index, question), _ranked(faiss_index, question))


def test_persist_writes_no_vectors_and_the_manifest_names_the_server_and_collection(
    music_tables, milvus_store, milvus_url, tmp_path
):
    _on(milvus_store, music_tables).persist(tmp_path / "idx")
    manifest = json.loads((tmp_path / "idx" / "pearl.json").read_text())
    assert manifest["vector_store"] == "external"
    assert manifest["vectors_at"] == {
        "store": "MilvusVectorStore",
        "server": milvus_url,
        "collection": milvus_store.collection_name,
    }
    assert not (tmp_path / "idx" / "faiss.index").exists()


def test_loading_without_the_store_says_which_server_and_collection_hold_the_vectors(
    music_tables, milvus_store, milvus_url, tmp_path
):
    _on(milvus_store, music_tables).persist(tmp_path / "idx")
    with pytest.raises(ValueError, match=rf"MilvusVectorStore on {milvus_url}.*{milvus_store.collection_name}"):
        PearlTableIndex.load(tmp_path / "idx", embed_model=HashingEmbedding())


def test_an_index_loaded_with_its_server_store_retrieves_as_before(music_tables, milvus_store, milvus_url, tmp_path):
    from llama_index.vector_stores.milvus import MilvusVectorStore

    index = _on(milvus_store, music_tables)
    index.persist(tmp_path / "idx")
    reopened = MilvusVectorStore(uri=milvus_url, collection_name=milvus_store.collection_name, dim=64)
    storage = StorageContext.from_defaults(vector_store=reopened, persist_dir=str(tmp_path / "idx"))
    loaded = PearlTableIndex.load(tmp_path / "idx", embed_model=HashingEmbedding(), storage_context=storage)
    for question in QUESTIONS:
        _same(_ranked(loaded, question), _ranked(index, question))


def test_inserts_and_deletes_reach_the_server(music_tables, milvus_store):
    first = {k: music_tables[k] for k in ("singer", "concert")}
    index = _on(milvus_store, first, budget=10)
    index.insert_tables({"stadium": music_tables["stadium"]})
    rebuilt = PearlTableIndex.from_tables(music_tables, embed_model=HashingEmbedding(), budget=10)
    for question in QUESTIONS:
        _same(_ranked(index, question), _ranked(rebuilt, question))
    index.delete_table("stadium")
    rows = milvus_store.client.query(milvus_store.collection_name, filter="", output_fields=["id"], limit=1000)
    assert {r["id"] for r in rows} == {u.node_id for u in index.units}
    assert all(t != "stadium" for t, _ in _ranked(index, "Wembley stadium"))
