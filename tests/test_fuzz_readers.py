"""Property-based fuzzing of everything PEARL reads: CSV files, DataFrames, and an index folder's JSON at load.

Nothing may raise anything but the documented ``ValueError``, on one line, naming the file (and the table or
column where there is one); what reads must read back the same, and a persisted index loads to the same answers.

Bounded for CI: each test runs a fixed, derandomized set of examples (``max_examples`` below; no deadline, as
two shared cores make timings noisy). Examples each ran, measured with ``pytest tests/test_fuzz_readers.py
-p no:cacheprovider --hypothesis-show-statistics``: see each test's docstring.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import os
import shutil
import string
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from embeddings import HashingEmbedding
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llama_index_pearl import PearlTableIndex, load_tables
from llama_index_pearl.storage.integrity import file_digests
from llama_index_pearl.tables.inputs import read_table_file

EXAMPLES = int(os.environ.get("PEARL_FUZZ_EXAMPLES", "40"))  # CI: 40; a deeper run sets more
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
FEWER = settings(FUZZ, max_examples=max(1, EXAMPLES * 3 // 8))  # each example builds and persists an index


def _one_line_naming(exc: BaseException, *names: str) -> None:
    message = str(exc)
    assert "\n" not in message.strip(), message
    assert any(name in message for name in names), message


# ---------------------------------------------------------------------------------------------------- CSV files
@given(data=st.binary(max_size=3000))
@FUZZ
def test_any_bytes_named_csv_read_or_are_refused_naming_the_file(data):
    """40 examples."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "export.csv"
        path.write_bytes(data)
        try:
            table = read_table_file(path)
        except ValueError as exc:
            _one_line_naming(exc, str(path))
        else:
            assert table.id == "export" and len(table.df.columns) >= 1


@given(data=st.binary(min_size=1, max_size=3000))
@FUZZ
def test_a_folder_with_any_bytes_as_a_csv_still_indexes_its_good_files_with_one_warning_at_most(data):
    """40 examples."""
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "export.csv").write_bytes(data)
        (Path(folder) / "good.csv").write_text("good_id,name\n1,Ann\n2,Bob\n")
        records: list[logging.LogRecord] = []
        handler = logging.Handler()
        handler.emit = records.append  # type: ignore[method-assign]
        logger = logging.getLogger("llama_index_pearl")
        logger.addHandler(handler)
        try:
            ids = sorted(t.id for t in load_tables(folder))
        finally:
            logger.removeHandler(handler)
        assert "good" in ids
        skipped = [r for r in records if r.levelno >= logging.WARNING and "Skipped" in r.getMessage()]
        assert len(skipped) == (0 if "export" in ids else 1)


_HEADER = st.text(alphabet=string.ascii_letters + string.digits + "_ ", min_size=1, max_size=12).filter(
    lambda s: s.strip() != ""
)
_ENCODINGS = ("utf-8", "utf-8-sig", "utf-16", "cp1252", "latin-1")


@st.composite
def _csv_tables(draw):
    encoding = draw(st.sampled_from(_ENCODINGS))
    delimiter = draw(st.sampled_from([",", ";", "\t", "|"]))
    n_columns = draw(st.integers(2, 5))
    header = draw(st.lists(_HEADER, min_size=n_columns, max_size=n_columns, unique_by=lambda h: h.strip().lower()))
    codec = {"utf-8-sig": "utf-8", "utf-16": "utf-8"}.get(encoding, encoding)  # Unicode codecs write any text
    cell = st.text(st.characters(codec=codec, exclude_categories=("Cs",), exclude_characters="\x00\r"), max_size=15)
    rows = draw(st.lists(st.lists(cell, min_size=n_columns, max_size=n_columns), min_size=1, max_size=8))
    return encoding, delimiter, [h.strip() for h in header], rows


@given(table=_csv_tables())
@FUZZ
def test_a_csv_written_in_any_dialect_reads_back_cell_for_cell(table):
    """40 examples: encodings (UTF-8 with and without BOM, UTF-16, cp1252, Latin-1) x delimiters x cells of any text."""
    encoding, delimiter, header, rows = table
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rows.csv"
        path.write_bytes(buffer.getvalue().encode(encoding))
        read = read_table_file(path, csv_options={"encoding": encoding, "delimiter": delimiter})
    assert read.df.columns.tolist() == header
    assert read.df.values.tolist() == rows


@given(table=_csv_tables())
@FUZZ
def test_the_delimiter_of_a_utf8_csv_is_found_when_no_cell_holds_another_candidate(table):
    """40 examples."""
    _, delimiter, header, rows = table
    rows = [["".join(ch for ch in c if ch not in ',;\t|"\n') for c in row] for row in rows]
    text = "\n".join(delimiter.join(r) for r in [header, *rows]) + "\n"
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rows.csv"
        path.write_text(text, encoding="utf-8")
        read = read_table_file(path)
    assert read.df.columns.tolist() == header


# ---------------------------------------------------------------------------------------------------- DataFrames
_NAME = st.text(alphabet=string.ascii_lowercase + "_", min_size=1, max_size=8)
_VALUES = st.one_of(
    st.lists(st.integers(-(2**80), 2**80), min_size=1, max_size=6),
    st.lists(st.integers(0, 2**64 - 1).map(np.uint64), min_size=1, max_size=6),
    st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=6),
    st.lists(st.text(max_size=30), min_size=1, max_size=6),
    st.lists(st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=10)), min_size=1, max_size=6),
    st.lists(st.datetimes(), min_size=1, max_size=6),
)


@st.composite
def _frames(draw):
    names = draw(st.lists(_NAME, min_size=1, max_size=3, unique=True))
    tables = {}
    for name in names:
        columns = draw(st.lists(_NAME, min_size=1, max_size=4, unique=True))
        values = [draw(_VALUES) for _ in columns]
        n = min(len(v) for v in values)
        frame = pd.DataFrame({c: pd.Series(v[:n], dtype=object) for c, v in zip(columns, values)})
        tables[name] = frame.infer_objects()
    return tables


def _answers(index, questions):
    return [
        [(n.node.metadata["table_id"], round(n.score, 5)) for n in index.as_retriever(similarity_top_k=3).retrieve(q)]
        for q in questions
    ]


@given(tables=_frames())
@FEWER
def test_dataframes_of_mixed_types_build_persist_and_load_to_the_same_answers(tables):
    """15 examples: ints past 64 bits, uint64, NaN and infinities, any text, mixed objects, datetimes."""
    try:
        index = PearlTableIndex.from_tables(tables, embed_model=HashingEmbedding())
    except ValueError as exc:
        _one_line_naming(exc, *tables)
        return
    questions = [" ".join(tables), " ".join(c for f in tables.values() for c in f.columns)]
    with tempfile.TemporaryDirectory() as folder:
        index.persist(Path(folder) / "idx")
        loaded = PearlTableIndex.load(Path(folder) / "idx", embed_model=HashingEmbedding())
        assert _answers(loaded, questions) == _answers(index, questions)
        assert {t: loaded.tables[t].text_rows() for t in loaded.tables} == {
            t: index.tables[t].text_rows() for t in index.tables
        }


# ---------------------------------------------------------------------------------------------------- index JSON
@pytest.fixture(scope="module")
def persisted(tmp_path_factory, music_tables_module):
    folder = tmp_path_factory.mktemp("fuzz") / "idx"
    index = PearlTableIndex.from_tables(music_tables_module, embed_model=HashingEmbedding())
    index.persist(folder)
    return index, folder


@pytest.fixture(scope="module")
def music_tables_module():
    return {
        "singer": pd.DataFrame({"singer_id": [1, 2, 3], "name": ["Joe Sharp", "Ann Lee", "Rosa Park"]}),
        "concert": pd.DataFrame({"concert_id": [10, 11], "singer_id": [2, 3], "stadium_id": [7, 8]}),
        "stadium": pd.DataFrame({"stadium_id": [7, 8], "stadium_name": ["Wembley", "Maracana"]}),
    }


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def _paths(value, prefix=()):
    """Every path to a value inside ``value`` (dict keys and list positions)."""
    yield prefix
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _paths(inner, (*prefix, key))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield from _paths(inner, (*prefix, i))


def _replaced(value, path, new):
    if not path:
        return new
    copy = value.copy()
    copy[path[0]] = _replaced(value[path[0]], path[1:], new)
    return copy


def _load_everything(folder):
    """Load and read every file (tables, units, BM25) and query: what a service would do."""
    loaded = PearlTableIndex.load(folder, embed_model=HashingEmbedding())
    list(loaded.tables.values())
    assert loaded.units
    answers = _answers(loaded, ["Wembley capacity", "singer concert"])
    loaded.join_paths  # noqa: B018 - the stored paths, parsed
    return answers


def _fuzz_file(persisted, name, data, reseal):
    _, folder = persisted
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(shutil.copytree(folder, Path(tmp) / "idx"))
        (copy / name).write_text(json.dumps(data))
        if reseal:  # as if persist had written it: past the digests, into the readers
            manifest = json.loads((copy / "pearl.json").read_text())
            manifest["files"] = file_digests(copy, manifest["files"])
            (copy / "pearl.json").write_text(json.dumps(manifest))
        try:
            answers = _load_everything(copy)
        except ValueError as exc:
            _one_line_naming(exc, str(copy))  # the file at fault (or, for the encoder and version, the folder)
            return None
        return answers


@pytest.mark.parametrize("name", ["join_graph.json", "pearl.json"])
def test_random_json_in_place_of_the_graph_or_the_manifest_is_refused_naming_the_file(persisted, name):
    """40 examples each, of any JSON, sealed into the manifest (the graph) or as the manifest."""

    @given(data=_JSON)
    @FUZZ
    def check(data):
        assert _fuzz_file(persisted, name, data, reseal=name != "pearl.json") is None or isinstance(data, dict)

    check()


@pytest.mark.parametrize("name", ["join_graph.json", "pearl.json", "catalog.json"])
def test_one_value_changed_anywhere_in_the_graph_manifest_or_catalog_is_refused_or_loads_whole(persisted, name):
    """40 examples each: one value of the real file, anywhere in it, replaced by any JSON and sealed."""
    _, folder = persisted
    original = json.loads((folder / name).read_text())

    @given(path=st.sampled_from(list(_paths(original))), new=_JSON)
    @FUZZ
    def check(path, new):
        _fuzz_file(persisted, name, _replaced(original, path, new), reseal=name != "pearl.json")

    check()


def test_a_persisted_index_loads_to_the_same_answers(persisted):
    index, folder = persisted
    assert _load_everything(folder) == _answers(index, ["Wembley capacity", "singer concert"])
