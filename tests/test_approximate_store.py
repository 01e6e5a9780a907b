"""The default store past ``PearlConfig.approximate_from`` units: an HNSW graph over the same vectors."""

from __future__ import annotations

import faiss
import numpy as np
import pytest
from embeddings import HashingEmbedding
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import VectorStoreQuery

from llama_index_pearl import PearlConfig, PearlTableIndex
from llama_index_pearl.store.faiss_store import PearlFaissStore, new_faiss_store
from llama_index_pearl.store.hnsw import HnswSettings, graph_of

QUESTIONS = ("Wembley capacity", "singer Ann Lee", "concert Gala at Maracana", "stadium name of the Fest concert")
SMALL = HnswSettings(from_units=4, m=8, ef_construction=40, ef_search=64)


def _ranked(index, question, k=3):
    return [(n.node.metadata["table_id"], n.score) for n in index.as_retriever(similarity_top_k=k).retrieve(question)]


def _same(a, b):
    assert [t for t, _ in a] == [t for t, _ in b]
    assert [s for _, s in a] == pytest.approx([s for _, s in b], abs=1e-5)


def _nodes(vectors: np.ndarray, prefix: str = "u") -> list[TextNode]:
    return [TextNode(id_=f"{prefix}{i}", text="", embedding=v.tolist()) for i, v in enumerate(vectors)]


def _unit_vectors(n: int, dim: int = 8, seed: int = 0) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_below_the_threshold_the_default_store_is_the_exact_flat_index(music_tables):
    index = PearlTableIndex.from_tables(music_tables, embed_model=HashingEmbedding())
    assert len(index.units) < PearlConfig().approximate_from
    store = index.vector_store
    assert isinstance(faiss.downcast_index(store.client.index), faiss.IndexFlatIP)
    assert graph_of(store.client) is None


def test_at_the_threshold_the_store_becomes_a_graph_and_retrieves_the_exact_tables(music_tables):
    exact = PearlTableIndex.from_tables(music_tables, embed_model=HashingEmbedding())
    index = PearlTableIndex.from_tables(music_tables, embed_model=HashingEmbedding(), approximate_from=4, hnsw_m=8)
    assert isinstance(graph_of(index.vector_store.client), faiss.IndexHNSWFlat)
    for question in QUESTIONS:  # a graph over a handful of vectors finds every one of them
        _same(_ranked(index, question), _ranked(exact, question))


def test_the_store_turns_into_a_graph_when_an_add_reaches_the_threshold():
    store = new_faiss_store(8, SMALL)
    vectors = _unit_vectors(6)
    store.add(_nodes(vectors[:3]))
    assert graph_of(store.client) is None
    store.add(_nodes(vectors[3:], prefix="v"))
    assert graph_of(store.client) is not None
    assert store.vectors_of(["u0", "v2"]) == pytest.approx(vectors[[0, 5]])


def test_a_deleted_unit_stays_in_the_graph_as_a_tombstone_never_returned():
    store = new_faiss_store(8, SMALL)
    vectors = _unit_vectors(10)
    store.add(_nodes(vectors))
    store.delete_nodes(["u0", "u1"])
    assert store.tombstones() == 2
    result = store.query(VectorStoreQuery(query_embedding=vectors[0].tolist(), similarity_top_k=8))
    assert len(result.ids) == 8 and not {"u0", "u1"} & set(result.ids)
    view = store.view()
    _, units = view.top(vectors[:1], 8)
    assert sorted(view.unit_ids[u] for u in units[0]) == [f"u{i}" for i in range(2, 10)]


def test_tombstones_that_outnumber_the_units_are_dropped_by_a_rebuild():
    store = new_faiss_store(8, SMALL)
    vectors = _unit_vectors(10)
    store.add(_nodes(vectors))
    store.delete_nodes([f"u{i}" for i in range(6)])
    assert store.tombstones() == 0 and store.client.ntotal == 4
    assert store.vectors_of(["u9"]) == pytest.approx(vectors[[9]])


def test_a_graph_store_persists_as_a_faiss_file_and_reads_back_with_its_tombstones(tmp_path):
    store = new_faiss_store(8, SMALL)
    vectors = _unit_vectors(10)
    store.add(_nodes(vectors))
    store.delete_nodes(["u3"])
    store.persist(str(tmp_path / "default__vector_store.json"))
    loaded = PearlFaissStore.from_files(str(tmp_path / "default__vector_store.json"), str(tmp_path / "id_map.json"))
    assert graph_of(loaded.client) is not None and loaded.tombstones() == 1
    loaded.add(_nodes(vectors[:1], prefix="w"))  # a new id: never one the tombstone holds
    assert loaded.id_map()["w0"] == 10


def test_a_persisted_index_past_the_threshold_loads_and_retrieves_as_before(music_tables, tmp_path):
    index = PearlTableIndex.from_tables(music_tables, embed_model=HashingEmbedding(), approximate_from=4)
    index.persist(tmp_path / "idx")
    loaded = PearlTableIndex.load(tmp_path / "idx", embed_model=HashingEmbedding())
    assert graph_of(loaded.vector_store.client) is not None
    for question in QUESTIONS:
        _same(_ranked(loaded, question), _ranked(index, question))


def test_deleting_a_table_from_a_graph_store_drops_it_from_results(music_tables):
    index = PearlTableIndex.from_tables(music_tables, embed_model=HashingEmbedding(), approximate_from=4)
    index.delete_table("stadium")
    assert all(t != "stadium" for t, _ in _ranked(index, "Wembley stadium capacity"))


def test_the_threshold_and_graph_parameters_are_checked_and_persisted():
    with pytest.raises(ValueError, match="approximate_from must be >= 1"):
        PearlConfig(approximate_from=0)
    with pytest.raises(ValueError, match="hnsw_m must be >= 2"):
        PearlConfig(hnsw_m=1)
    config = PearlConfig(approximate_from=None, hnsw_ef_search=200)
    assert HnswSettings.of(config) is None
    assert PearlConfig.from_dict(config.to_dict()) == config
