"""persist/load round-trips without pickle; bad folders fail clearly."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from embeddings import HashingEmbedding

from llama_index_pearl import HeuristicQueryGenerator, PearlTableIndex
from llama_index_pearl.storage.integrity import file_digests


def reseal(folder):
    """Record the folder's current file digests in its manifest, as if persist had written the edit."""
    manifest = json.loads((folder / "pearl.json").read_text())
    manifest["files"] = file_digests(folder, manifest["files"])
    (folder / "pearl.json").write_text(json.dumps(manifest))


def load_and_read(folder, embed_model=None, **kwargs):
    """Load an index and read every file of it: what a query reads at load, the rest (tables, units, BM25) now."""
    index = PearlTableIndex.load(folder, embed_model=embed_model or HashingEmbedding(), **kwargs)
    list(index.tables.values())
    assert index.units
    index.lexical_scorer()
    return index


@pytest.fixture
def built(music_tables, hashing_embedding, tmp_path):
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)
    index.persist(tmp_path / "idx")
    return index, tmp_path / "idx"


def _ranked(index, question):
    return [(n.node.metadata["table_id"], n.score) for n in index.as_retriever(similarity_top_k=3).retrieve(question)]


def test_round_trip_gives_identical_scores(built, hashing_embedding):
    index, folder = built
    loaded = PearlTableIndex.load(folder, embed_model=hashing_embedding)
    for question in ("Wembley capacity", "singer Ann Lee", "concert Gala"):
        assert _ranked(loaded, question) == _ranked(index, question)


def test_built_and_loaded_vector_indexes_keep_units_whole_without_a_node_parser(built, hashing_embedding):
    from llama_index.core.schema import TextNode

    index, folder = built
    loaded = PearlTableIndex.load(folder, embed_model=hashing_embedding)
    long_unit = TextNode(text="Table: t\nColumns: a | b\n" + "1 | word word word word\n" * 400)
    for vector_index in (index.vector_index, loaded.vector_index):
        (transformation,) = vector_index._transformations  # not LlamaIndex's default SentenceSplitter
        assert transformation([long_unit]) == [long_unit]


def test_round_trip_keeps_tables_config_and_graph(built, hashing_embedding):
    index, folder = built
    loaded = PearlTableIndex.load(folder, embed_model=hashing_embedding)
    assert loaded.tables["stadium"].columns == index.tables["stadium"].columns
    assert loaded.table_text("stadium") == index.table_text("stadium")
    assert loaded.config == index.config
    assert set(loaded.join_graph.nodes) == {"singer", "concert", "stadium"}


def test_folder_holds_no_pickle(built):
    _, folder = built
    for path in folder.iterdir():
        assert not path.read_bytes().startswith(b"\x80"), f"{path.name} looks like a pickle"


def test_missing_folder_is_reported(tmp_path, hashing_embedding):
    with pytest.raises(ValueError, match="does not exist"):
        PearlTableIndex.load(tmp_path / "nope", embed_model=hashing_embedding)


def test_folder_without_manifest_is_not_an_index(tmp_path, hashing_embedding):
    (tmp_path / "x").mkdir()
    with pytest.raises(ValueError, match="pearl.json is missing"):
        PearlTableIndex.load(tmp_path / "x", embed_model=hashing_embedding)


def test_partial_folder_names_the_missing_file(built, hashing_embedding):
    _, folder = built
    (folder / "docstore.json").unlink()
    with pytest.raises(ValueError, match="missing docstore.json"):
        PearlTableIndex.load(folder, embed_model=hashing_embedding)


def test_other_format_version_is_refused(built, hashing_embedding):
    _, folder = built
    manifest = json.loads((folder / "pearl.json").read_text())
    manifest["format_version"] = 99
    (folder / "pearl.json").write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match="format version 99"):
        PearlTableIndex.load(folder, embed_model=hashing_embedding)


def test_other_embedding_dimension_is_refused_with_both_dimensions(built):
    _, folder = built
    with pytest.raises(ValueError, match=r"dimension 64.*dimension 32"):
        PearlTableIndex.load(folder, embed_model=HashingEmbedding(dim=32))


def test_corrupted_tables_file_names_file_and_line_when_the_tables_are_first_read(built, hashing_embedding):
    _, folder = built
    (folder / "tables.jsonl").write_text('{"id": "x"\n')
    reseal(folder)  # past the digest check, to the parser
    with pytest.raises(ValueError, match=r"tables.jsonl.*line 1"):
        load_and_read(folder, hashing_embedding)


def test_corrupted_faiss_file_is_reported(built, hashing_embedding):
    _, folder = built
    (folder / "faiss.index").write_bytes(b"garbage")
    reseal(folder)
    with pytest.raises(ValueError, match="Corrupted FAISS file"):
        PearlTableIndex.load(folder, embed_model=hashing_embedding)


def test_storage_context_route_round_trips(built, hashing_embedding):
    from llama_index.core import StorageContext

    from llama_index_pearl.corpus.stores import PearlFaissStore

    index, folder = built
    store = PearlFaissStore.from_files(str(folder / "faiss.index"), str(folder / "id_map.json"))
    storage = StorageContext.from_defaults(vector_store=store, persist_dir=str(folder))
    loaded = PearlTableIndex.load(folder, embed_model=hashing_embedding, storage_context=storage)
    assert _ranked(loaded, "Wembley capacity") == _ranked(index, "Wembley capacity")


def test_load_index_from_storage_on_a_pearl_folder_says_to_use_pearl_table_index_load(built):
    from llama_index.core import StorageContext, load_index_from_storage

    _, folder = built
    with pytest.raises(KeyError, match=r"PearlTableIndex\.load"):
        load_index_from_storage(StorageContext.from_defaults(persist_dir=str(folder)))


def test_a_loaded_index_rebuilds_its_generator_from_the_recorded_spec(music_tables, hashing_embedding, tmp_path):
    index = PearlTableIndex.from_tables(
        music_tables, embed_model=hashing_embedding, generator=HeuristicQueryGenerator(seed=3)
    )
    index.persist(tmp_path / "idx")
    loaded = PearlTableIndex.load(tmp_path / "idx", embed_model=hashing_embedding)
    assert isinstance(loaded.generator, HeuristicQueryGenerator) and loaded.generator.seed == 3


# written by tests/fixtures/make_index_format6.py: a folder this version wrote, kept to catch a format change
FORMAT_6 = Path(__file__).parent / "fixtures" / "index_format6"


def test_an_index_folder_of_format_6_on_disk_loads_retrieves_and_takes_an_insert(tmp_path):
    import shutil

    folder = shutil.copytree(FORMAT_6, tmp_path / "idx")
    index = PearlTableIndex.load(folder)
    assert set(index.tables) == {"singer", "concert", "stadium"}
    assert len(index.units) == 9 and index.join_graph.has_edge("concert", "stadium")
    hits = index.as_retriever(similarity_top_k=3).retrieve("Which stadium hosted concerts by Ann Lee?")
    assert {h.node.metadata["table_id"] for h in hits} == {"singer", "concert", "stadium"}
    index.insert_tables({"tour": pd.DataFrame({"tour_id": [1], "singer_id": [2]})})
    assert "tour" in index.tables


def test_a_query_on_a_loaded_index_reads_neither_units_nor_table_rows(built, hashing_embedding, monkeypatch):
    import llama_index_pearl.storage.persistence as persistence
    import llama_index_pearl.storage.table_records as table_records

    index, folder = built

    def refuse(*args, **kwargs):
        raise AssertionError("read at query time")

    monkeypatch.setattr(persistence, "load_index_from_storage", refuse)
    monkeypatch.setattr(table_records, "read_tables_file", refuse)
    loaded = PearlTableIndex.load(folder, embed_model=hashing_embedding)
    assert _ranked(loaded, "Wembley capacity") == _ranked(index, "Wembley capacity")
    hits = loaded.as_retriever(similarity_top_k=3).retrieve("Wembley capacity")
    assert [h.node.text for h in hits] == [index.table_text(h.node.metadata["table_id"]) for h in hits]
