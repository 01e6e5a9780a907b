"""persist/load round-trips without pickle; bad folders fail clearly."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from embeddings import HashingEmbedding
from folders import reseal
from indexes import lexical_scorer

from llama_index_pearl import HeuristicQueryGenerator, PearlTableIndex


def load_and_read(folder, embed_model=None, **kwargs):
    """Load an index and read every file of it: what a query reads at load, the rest (tables, units, BM25) now."""
    index = PearlTableIndex.load(folder, embed_model=embed_model or HashingEmbedding(), **kwargs)
    list(index.tables.values())
    assert index.units
    lexical_scorer(index)
    return index


def _ranked(index, question):
    return [(n.node.metadata["table_id"], n.score) for n in index.as_retriever(similarity_top_k=3).retrieve(question)]


def test_round_trip_gives_identical_scores(built, hashing_embedding):
    index, folder = built
    loaded = PearlTableIndex.load(folder, embed_model=hashing_embedding)
    for question in ("Wembley capacity", "singer Ann Lee", "concert Gala"):
        assert _ranked(loaded, question) == _ranked(index, question)


def test_built_and_loaded_vector_indexes_keep_a_long_text_whole(built, hashing_embedding):
    from llama_index.core import Document

    index, folder = built
    loaded = PearlTableIndex.load(folder, embed_model=hashing_embedding)
    long_text = "Table: t\nColumns: a | b\n" + "1 | word word word word\n" * 400  # LlamaIndex's splitter cuts it
    for vector_index in (index.vector_index, loaded.vector_index):
        before = set(vector_index.docstore.docs)
        vector_index.insert(Document(text=long_text))  # through the index's own transformations
        (added,) = [vector_index.docstore.docs[i] for i in set(vector_index.docstore.docs) - before]
        assert added.get_content() == long_text


def test_round_trip_keeps_tables_config_and_graph(built, hashing_embedding):
    index, folder = built
    loaded = PearlTableIndex.load(folder, embed_model=hashing_embedding)
    assert loaded.tables["stadium"].columns == index.tables["stadium"].columns
    assert loaded.table_text("stadium") == index.table_text("stadium")
    assert loaded.config == index.config
    assert set(loaded.join_graph.nodes) == {"singer", "concert", "stadium"}


def test_the_folder_holds_json_numpy_arrays_without_objects_and_faiss_binary_only(built):
    import faiss
    import numpy as np

    _, folder = built
    kinds = {}
    for path in folder.iterdir():
        if path.suffix in (".json", ".jsonl"):
            text = path.read_text(encoding="utf-8")
            documents = text.splitlines() if path.suffix == ".jsonl" else [text]
            assert all(json.loads(document) is not None for document in documents if document.strip())
            kinds[path.name] = "json"
        elif path.suffix == ".npz":
            with np.load(path, allow_pickle=False) as arrays:  # an object array would raise here
                assert all(arrays[name].dtype != object for name in arrays.files)
            kinds[path.name] = "numpy"
        else:
            assert faiss.read_index(str(path)).ntotal > 0
            kinds[path.name] = "faiss"
    assert kinds["faiss.index"] == "faiss" and kinds["lexical.npz"] == "numpy"
    assert sorted(name for name, kind in kinds.items() if kind == "faiss") == ["faiss.index"]


def test_load_and_every_lazy_read_run_without_unpickling(built, hashing_embedding, monkeypatch):
    import pickle

    import numpy as np

    def refuse(*args, **kwargs):
        raise AssertionError("pickle was called")

    real_np_load = np.load

    def np_load_without_pickle(*args, **kwargs):
        if kwargs.get("allow_pickle"):
            raise AssertionError("numpy.load(allow_pickle=True) was called")
        return real_np_load(*args, **kwargs)

    for name in ("load", "loads", "Unpickler"):
        monkeypatch.setattr(pickle, name, refuse)
    monkeypatch.setattr(np, "load", np_load_without_pickle)
    index, folder = built
    loaded = load_and_read(folder, hashing_embedding)  # load, then the tables, the units and BM25
    assert _ranked(loaded, "Wembley capacity") == _ranked(index, "Wembley capacity")


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

    from llama_index_pearl.store.faiss_store import PearlFaissStore

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
    import llama_index_pearl.storage.table_records as table_records
    import llama_index_pearl.storage.unit_stores as unit_stores

    index, folder = built

    def refuse(*args, **kwargs):
        raise AssertionError("read at query time")

    monkeypatch.setattr(unit_stores, "load_index_from_storage", refuse)
    monkeypatch.setattr(table_records, "read_tables_file", refuse)
    loaded = PearlTableIndex.load(folder, embed_model=hashing_embedding)
    assert _ranked(loaded, "Wembley capacity") == _ranked(index, "Wembley capacity")
    hits = loaded.as_retriever(similarity_top_k=3).retrieve("Wembley capacity")
    assert [h.node.text for h in hits] == [index.table_text(h.node.metadata["table_id"]) for h in hits]


def test_an_index_of_non_latin_names_persists_and_loads_where_the_default_encoding_is_ascii(tmp_path):
    """Every text file is written and read as UTF-8, whatever the platform's default encoding."""
    import os
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(
        f"""
        import locale, sys
        sys.path[:0] = {[str(Path(__file__).parent)]!r}
        assert locale.getpreferredencoding(False) == "ANSI_X3.4-1968", locale.getpreferredencoding(False)
        import pandas as pd
        from embeddings import HashingEmbedding
        from llama_index_pearl import PearlTableIndex
        tables = {{"顧客": pd.DataFrame({{"顧客_id": [1, 2], "名前": ["山田", "Zoë"]}})}}
        PearlTableIndex.from_tables(tables, embed_model=HashingEmbedding()).persist({str(tmp_path / "idx")!r})
        loaded = PearlTableIndex.load({str(tmp_path / "idx")!r}, embed_model=HashingEmbedding())
        print(ascii((sorted(loaded.tables), loaded.tables["顧客"].text_rows())))
        """
    )
    # the C locale without Python's UTF-8 mode or locale coercion: ASCII, as on a platform whose default is not UTF-8
    env = {**os.environ, "LC_ALL": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"}
    env["PYTHONPATH"] = os.pathsep.join([os.getcwd(), env.get("PYTHONPATH", "")])
    script_file = tmp_path / "persist.py"
    script_file.write_text(script, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-X", "utf8=0", str(script_file)], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ascii((["顧客"], [["1", "山田"], ["2", "Zoë"]]))


def test_column_vectors_survive_persist_and_load(built):
    import numpy as np

    index, folder = built
    loaded = PearlTableIndex.load(folder, embed_model=index.embed_model)
    before, after = index.catalog.columns, loaded.catalog.columns
    assert after.table_ids == before.table_ids and after.columns == before.columns and after.words == before.words
    assert np.array_equal(after.vectors, before.vectors) and np.array_equal(after.word_vectors, before.word_vectors)


def test_an_index_without_column_vectors_writes_no_column_file_and_answers(music_tables, hashing_embedding, tmp_path):
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding, column_vectors=False)
    index.persist(tmp_path / "idx")
    assert not (tmp_path / "idx" / "columns.npz").exists()
    loaded = PearlTableIndex.load(tmp_path / "idx", embed_model=hashing_embedding)
    assert loaded.as_retriever(similarity_top_k=2).retrieve("Which albums did each artist release?")
