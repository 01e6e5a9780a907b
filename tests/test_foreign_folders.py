"""An index folder from someone else: each way it is wrong is one ``ValueError`` naming the file, decided before
anything large is allocated, without reading outside the folder or waiting on it (README, "Guarantees").

Each case writes the folder as an attacker who can write it would, the manifest's sizes and digests updated to
match (``reseal``), so that the check at fault is the one after the digests.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import threading

import faiss
import numpy as np
import pytest
from embeddings import HashingEmbedding
from folders import GIB, faiss_fields, memory_bound, npz_claiming, patch, reseal, unblock_pipe
from test_persistence import load_and_read

from llama_index_pearl import PearlTableIndex

QUESTION = "Wembley capacity"


def _load(folder):
    return PearlTableIndex.load(folder, embed_model=HashingEmbedding())


def _answers(index):
    return [(n.node.metadata["table_id"], round(n.score, 5)) for n in index.as_retriever().retrieve(QUESTION)]


def _load_and_query(folder):
    return _answers(_load(folder))


# ---------------------------------------------------------------- what the folder's files are
@pytest.mark.parametrize("name", ["catalog.json", "tables.jsonl", "docstore.json"])
def test_a_listed_file_that_links_outside_the_folder_is_refused_naming_it(built, tmp_path, name):
    _, folder = built
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (folder / name).rename(elsewhere / name)
    (folder / name).symlink_to(elsewhere / name)  # the same bytes: its size and digest are the recorded ones
    with pytest.raises(ValueError, match=rf"{re.escape(name)}.*symbolic link"):
        load_and_read(folder)


@pytest.mark.parametrize("name", ["pearl.json", "graph_store.json", "catalog.json"])  # LlamaIndex's, and ours
def test_a_listed_file_that_is_a_named_pipe_is_refused_at_once_naming_it(built, name):
    _, folder = built
    (folder / name).unlink()
    os.mkfifo(folder / name)
    outcome: dict[str, BaseException] = {}

    def load():
        try:
            _load(folder)
        except BaseException as exc:
            outcome["error"] = exc

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(timeout=60)
    waited = worker.is_alive()
    unblock_pipe(folder / name)  # a load blocked on the pipe goes on, so the test leaves no thread behind
    worker.join(timeout=60)
    assert not waited, "load() waited for a writer of the named pipe"
    error = outcome.get("error")
    assert isinstance(error, ValueError) and name in str(error) and "named pipe" in str(error), outcome


# ---------------------------------------------------------------- what the files claim
def test_an_id_map_nested_100_000_deep_is_refused_naming_it(built):
    _, folder = built
    (folder / "id_map.json").write_text("[" * 100_000 + "]" * 100_000)
    reseal(folder)
    with pytest.raises(ValueError, match=r"id_map\.json"):
        _load(folder)


@pytest.mark.parametrize(
    ("field", "claim"),
    [("vectors", 16 * GIB // 4), ("ids", 2**33)],  # 16 GiB of floats; 2^33 ids (64 GiB)
)
def test_a_faiss_file_claiming_more_than_it_holds_is_refused_before_anything_is_allocated(built, field, claim):
    _, folder = built
    path = folder / "faiss.index"
    patch(path, faiss_fields(path.read_bytes())[field][0], "Q", claim)
    reseal(folder)
    with memory_bound(), pytest.raises(ValueError, match=r"faiss\.index.*claims"):
        _load(folder)


def test_faiss_ids_far_from_zero_answer_as_ids_from_zero_do_within_a_memory_bound(built):
    index, folder = built
    shift = 2_000_000_000
    path = folder / "faiss.index"
    data = path.read_bytes()
    at = faiss_fields(data)["ids"][0] + 8
    path.write_bytes(data[:at] + (np.frombuffer(data[at:], dtype="<i8") + shift).tobytes())
    id_map = json.loads((folder / "id_map.json").read_text())
    id_map["node_id_to_faiss_id_map"] = {u: i + shift for u, i in id_map["node_id_to_faiss_id_map"].items()}
    id_map["next_id"] += shift
    (folder / "id_map.json").write_text(json.dumps(id_map))
    reseal(folder)
    with memory_bound():
        assert _load_and_query(folder) == _answers(index)


def test_a_bm25_array_claiming_64_gib_is_refused_naming_the_file_at_the_first_query(built):
    _, folder = built
    path = folder / "lexical.npz"
    path.write_bytes(npz_claiming(path.read_bytes(), "data", (16 * GIB,)))  # float32: 64 GiB
    reseal(folder)
    with memory_bound(), pytest.raises(ValueError, match=r"lexical\.npz.*claims"):
        _load_and_query(folder)


@pytest.mark.parametrize(("option", "value"), [("hnsw_m", 2**24), ("hnsw_ef_search", 2**31 - 1)])
def test_a_persisted_option_past_its_bound_is_refused_at_load_naming_the_manifest(built, option, value):
    _, folder = built
    manifest = json.loads((folder / "pearl.json").read_text())
    manifest["config"].update({"approximate_from": 1, option: value})  # a graph from the first unit on
    (folder / "pearl.json").write_text(json.dumps(manifest))
    with memory_bound(), pytest.raises(ValueError, match=rf"pearl\.json.*{option}"):
        _load_and_query(folder)


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_a_vector_that_is_not_finite_is_refused_naming_the_faiss_file(built, value):
    _, folder = built
    vectors = faiss_fields((folder / "faiss.index").read_bytes())["vectors"][0]
    patch(folder / "faiss.index", vectors + 8 + 4 * 5, "f", value)  # the sixth float of the first vector
    reseal(folder)
    with pytest.raises(ValueError, match=r"faiss\.index.*not finite"):
        _load_and_query(folder)


def test_an_id_map_around_an_index_pearl_never_writes_is_refused_naming_the_faiss_file(built):
    _, folder = built
    path = folder / "faiss.index"
    store = faiss.read_index(str(path))
    foreign = faiss.IndexIDMap2(faiss.IndexLSH(store.d, 16))
    foreign.add_with_ids(store.index.reconstruct_n(0, store.ntotal), faiss.vector_to_array(store.id_map))
    faiss.write_index(foreign, str(path))
    reseal(folder)
    with pytest.raises(ValueError, match=r"faiss\.index.*wraps the type IndexLSH"):
        _load_and_query(folder)


# ---------------------------------------------------------------- the process around a failed load
@pytest.fixture(scope="module")
def damaged_minilm_index(tmp_path_factory, minilm):
    """A folder of the bundled encoder's index whose catalog was appended to after persist."""
    import pandas as pd

    folder = tmp_path_factory.mktemp("damaged") / "idx"
    tables = {"stadium": pd.DataFrame({"stadium_id": [7, 8], "name": ["Wembley", "Maracana"]})}
    PearlTableIndex.from_tables(tables, embed_model=minilm).persist(folder)
    with (folder / "catalog.json").open("a", encoding="utf-8") as handle:
        handle.write(" ")
    return folder


RUNS = 5  # the process aborted in 11 of 12 runs before (the encoder's thread was alive at exit)


def test_pearl_query_on_a_damaged_index_exits_2_with_one_line_every_time(damaged_minilm_index):
    command = [sys.executable, "-m", "llama_index_pearl.cli", "query", str(damaged_minilm_index), QUESTION]
    for _ in range(RUNS):
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
        assert (done.returncode, done.stderr.count("\n")) == (2, 1), done.stderr
        assert "catalog.json" in done.stderr


def test_a_program_whose_load_fails_exits_with_its_own_status_every_time(damaged_minilm_index):
    script = textwrap.dedent(
        f"""
        import sys
        from llama_index_pearl import PearlTableIndex
        try:
            PearlTableIndex.load({str(damaged_minilm_index)!r})
        except ValueError:
            sys.exit(2)
        """
    )
    for _ in range(RUNS):
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
        assert done.returncode == 2, done.stderr
