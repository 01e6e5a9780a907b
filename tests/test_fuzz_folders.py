"""Property-based fuzzing of a persisted index folder as someone else may hand it over (README, "Guarantees").

Each example changes one file of a persisted folder (an exact store's, or an HNSW graph's) and reseals the
manifest's sizes and digests to match, as whoever can write the folder would: the file is cut short, a bit of
it flipped, a size or shape in it made to claim something else (a FAISS dimension, count or graph field, a
BM25 array's shape, a JSON count, JSON nested 50,000 deep), or it is replaced by a link to a copy outside the
folder or by a named pipe. A worker process (``tests/load_worker.py``) loads it, reads every file and queries
it under a memory bound (``RLIMIT_AS``, :data:`MEMORY` over what it held after loading the intact folders).
Each example is refused with one ``ValueError`` on one line naming the folder's file, or loads whole; it never
hangs (the worker answers within :data:`TIMEOUT` seconds), never exceeds the bound (a ``MemoryError`` is a
crash) and opens no file outside the folder.

Bounded for CI as ``tests/test_fuzz_readers.py`` is: a fixed, derandomized set of examples per store
(``PEARL_FUZZ_EXAMPLES``, 40 by default, times two).
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
import pytest
from embeddings import HashingEmbedding
from folders import GIB, faiss_fields, npz_claiming, patch, reseal
from hypothesis import given, settings
from hypothesis import strategies as st
from test_fuzz_readers import EXAMPLES
from test_fuzz_readers import FUZZ as READERS_FUZZ

from llama_index_pearl import PearlTableIndex

FUZZ = settings(READERS_FUZZ, max_examples=2 * EXAMPLES)  # each example is one load: twice as many
MEMORY = GIB  # what a load may allocate beyond what the worker held after loading the intact folders
TIMEOUT = 60  # seconds a load may take before the worker counts as hung (a load of these folders takes ~0.1 s)

# Claims by field layout: what a header or count may say instead of the truth.
_CLAIMS = {
    "i": [0, 1, -1, 2, 63, 65, 2**31 - 1, -(2**31)],
    "q": [0, 1, -1, 2**31, 2**33, 2**62, -(2**63)],
    "Q": [0, 1, 2**31 - 1, 2**32, 2**33, 2**40, 2**62, 2**64 - 1],
}
_JSON_CLAIMS = [0, 1, -1, 2**31 - 1, 2**62, 10**30, 1.5, "12", None]
_SHAPES = [(), (0,), (1,), (3, 7), (2**20, 2**20), (2**34,)]  # (2**34,) of float32: 64 GiB
_NPZ_MEMBERS = ["data", "indices", "indptr", "vocabulary", "n_docs"]
_BINARY = ["faiss.index"] * 6 + ["lexical.npz"] * 3
# a JSON count a file holds: (file, path of keys to it); files without one are claimed by nesting
_JSON_COUNTS = {
    "pearl.json": [("n_units",), ("n_tables",), ("dimension",), ("files", "catalog.json", "bytes")],
    "id_map.json": [("next_id",)],
}


def _tables() -> dict[str, pd.DataFrame]:
    return {
        "singer": pd.DataFrame({"singer_id": [1, 2, 3], "name": ["Joe Sharp", "Ann Lee", "Rosa Park"]}),
        "concert": pd.DataFrame({"concert_id": [10, 11], "singer_id": [2, 3], "stadium_id": [7, 8]}),
        "stadium": pd.DataFrame({"stadium_id": [7, 8], "stadium_name": ["Wembley", "Maracana"]}),
    }


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    """The folders of an exact and an HNSW store, and a worker that has loaded both."""
    root = tmp_path_factory.mktemp("fuzz-folders")
    folders = {"exact": root / "exact", "graph": root / "graph"}
    PearlTableIndex.from_tables(_tables(), embed_model=HashingEmbedding()).persist(folders["exact"])
    graph = PearlTableIndex.from_tables(_tables(), embed_model=HashingEmbedding(), approximate_from=1, hnsw_m=2)
    graph.persist(folders["graph"])
    errors = (root / "worker.err").open("w")
    worker = subprocess.Popen(
        [sys.executable, str(Path(__file__).parent / "load_worker.py"), str(MEMORY), *map(str, folders.values())],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=errors,
        text=True,
    )
    try:
        assert "ready" in _reply(worker, root / "worker.err"), "the worker did not load the intact folders"
        yield folders, worker, root / "worker.err"
    finally:
        worker.kill()
        worker.wait(TIMEOUT)
        errors.close()


def _reply(worker: subprocess.Popen, errors: Path) -> dict:
    """The worker's next line, within :data:`TIMEOUT` seconds (else the test fails: it hung)."""
    ready, _, _ = select.select([worker.stdout], [], [], TIMEOUT)
    if not ready:
        worker.kill()
        pytest.fail(f"the worker hung past {TIMEOUT} s: {errors.read_text()[-2000:]}")
    line = worker.stdout.readline()
    assert line, f"the worker died: {errors.read_text()[-2000:]}"
    return json.loads(line)


@st.composite
def _changes(draw, folder: Path):
    """One change to one file of ``folder``: ``(file, kind, what)``."""
    files = [*sorted(json.loads((folder / "pearl.json").read_text())["files"]), "pearl.json"]
    name = draw(st.sampled_from(files + _BINARY))  # the binary files, whose sizes FAISS and NumPy trust, more often
    data = (folder / name).read_bytes()
    kind = draw(st.sampled_from(["truncate", "flip", "flip", "claim", "claim", "link", "pipe"]))
    if kind == "truncate":
        return name, kind, draw(st.integers(0, len(data) - 1))
    if kind == "flip":
        return name, kind, (draw(st.integers(0, len(data) - 1)), draw(st.integers(0, 7)))
    if kind != "claim":
        return name, kind, None
    if name == "faiss.index":
        offset, layout = draw(st.sampled_from(sorted(faiss_fields(data).values())))
        return name, "field", (offset, layout, draw(st.sampled_from(_CLAIMS[layout])))
    if name == "lexical.npz":
        return name, "shape", (draw(st.sampled_from(_NPZ_MEMBERS)), draw(st.sampled_from(_SHAPES)))
    if name in _JSON_COUNTS:
        return name, "count", (draw(st.sampled_from(_JSON_COUNTS[name])), draw(st.sampled_from(_JSON_CLAIMS)))
    return name, "nesting", 50_000


def _apply(folder: Path, elsewhere: Path, change: tuple) -> None:
    name, kind, what = change
    path = folder / name
    if kind == "link":  # the same bytes outside: only where it is differs
        shutil.copyfile(path, elsewhere / name)
        path.unlink()
        path.symlink_to(elsewhere / name)
        return
    if kind == "pipe":
        path.unlink()
        os.mkfifo(path)
        return
    data = path.read_bytes()
    if kind == "truncate":
        path.write_bytes(data[:what])
    elif kind == "flip":
        path.write_bytes(data[: what[0]] + bytes([data[what[0]] ^ (1 << what[1])]) + data[what[0] + 1 :])
    elif kind == "field":
        patch(path, *what)
    elif kind == "shape":
        path.write_bytes(npz_claiming(data, *what))
    elif kind == "count":
        document = json.loads(data)
        *keys, last = what[0]
        target = document
        for key in keys:
            target = target[key]
        target[last] = what[1]
        path.write_text(json.dumps(document))
    else:
        path.write_text("[" * what + "]" * what)
    if name != "pearl.json":
        reseal(folder)


def _check(stores, store: str, change: tuple) -> None:
    folders, worker, errors = stores
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(shutil.copytree(folders[store], Path(tmp) / "idx"))
        (Path(tmp) / "elsewhere").mkdir()
        _apply(copy, Path(tmp) / "elsewhere", change)
        worker.stdin.write(f"{copy}\n")
        worker.stdin.flush()
        said = _reply(worker, errors)
    assert "crash" not in said, (change, said)
    assert said["outside"] == [], (change, said)
    if change[1] in ("link", "pipe"):  # reading through either reads what is not the folder's own file
        assert "error" in said, (change, said)
    if os.environ.get("PEARL_FUZZ_LOG"):
        with open(os.environ["PEARL_FUZZ_LOG"], "a") as log:
            log.write(json.dumps([store, change[0], change[1], "error" in said, said.get("error", "")[:150]]) + "\n")
    if "error" in said:
        message = said["error"]
        assert "\n" not in message.strip() and str(copy) in message, (change, message)


@given(data=st.data())
@FUZZ
def test_a_changed_file_of_an_exact_store_is_refused_naming_it_or_loads_whole_within_bounds(stores, data):
    """80 examples: cuts, bit flips, claims, links and pipes in any file of the folder, resealed."""
    _check(stores, "exact", data.draw(_changes(stores[0]["exact"])))


@given(data=st.data())
@FUZZ
def test_a_changed_file_of_a_graph_store_is_refused_naming_it_or_loads_whole_within_bounds(stores, data):
    """80 examples, over an HNSW graph's folder: its faiss.index holds the graph's levels and neighbours too."""
    _check(stores, "graph", data.draw(_changes(stores[0]["graph"])))
