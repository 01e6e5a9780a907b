"""An index folder is a unit: atomic persist, and load() verifies every file before use."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from embeddings import HashingEmbedding, TrigramEmbedding
from folders import reseal
from test_persistence import load_and_read

from llama_index_pearl import PearlTableIndex


def _ranked(index, question="Wembley capacity"):
    return [(n.node.metadata["table_id"], n.score) for n in index.as_retriever(similarity_top_k=3).retrieve(question)]


def _load(folder, **kwargs):
    return PearlTableIndex.load(folder, embed_model=kwargs.pop("embed_model", HashingEmbedding()), **kwargs)


def _edit_lines(path: Path, edit) -> None:
    lines = path.read_text().splitlines()
    path.write_text("\n".join(edit(lines)) + "\n")


def _edit_json(path: Path, edit) -> None:
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


# ---------------------------------------------------------------- encoder identity
def test_another_encoder_of_the_same_dimension_is_refused_naming_both(built):
    _, folder = built
    with pytest.raises(ValueError, match=r"Encoder mismatch.*HashingEmbedding.*TrigramEmbedding"):
        _load(folder, embed_model=TrigramEmbedding())


def test_allow_encoder_change_loads_with_another_encoder(built, caplog):
    caplog.set_level(logging.WARNING)  # a CLI test before may have raised the root level
    _, folder = built
    loaded = _load(folder, embed_model=TrigramEmbedding(), allow_encoder_change=True)
    assert len(loaded.units) > 0 and "allow_encoder_change" in caplog.text


def test_without_an_encoder_an_unrebuildable_one_is_asked_for(built):
    _, folder = built
    with pytest.raises(ValueError, match=r"built with encoder HashingEmbedding.*pass embed_model="):
        PearlTableIndex.load(folder)


def test_the_manifest_records_the_encoder_class_and_model_name(built):
    _, folder = built
    manifest = json.loads((folder / "pearl.json").read_text())
    assert manifest["encoder"] == {"class": "HashingEmbedding", "model_name": "unknown"}
    assert manifest["format_version"] == 6


def test_an_earlier_format_version_is_refused_with_a_rebuild_asked_for(built):
    _, folder = built
    manifest = json.loads((folder / "pearl.json").read_text())
    manifest["format_version"] = 5
    (folder / "pearl.json").write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match=r"format version 5.*reads version 6\. Rebuild the index"):
        _load(folder)


def test_a_config_option_this_version_does_not_know_is_refused_naming_it(built):
    _, folder = built
    manifest = json.loads((folder / "pearl.json").read_text())
    manifest["config"]["random_views"] = True
    (folder / "pearl.json").write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match=r"pearl\.json.*unknown build option\(s\) \['random_views'\]"):
        _load(folder)


# ---------------------------------------------------------------- cross-checks
def test_an_edited_file_is_reported_as_modified_after_persist(built):
    _, folder = built
    _edit_lines(folder / "tables.jsonl", lambda lines: lines[:-1])
    with pytest.raises(ValueError, match=r"tables\.jsonl.*modified after persist"):
        _load(folder)


def test_a_missing_table_line_is_reported_against_the_manifest_count_when_the_tables_are_read(built):
    _, folder = built
    _edit_lines(folder / "tables.jsonl", lambda lines: lines[:-1])
    reseal(folder)
    index = _load(folder)  # a query reads no table's rows
    assert len(index.tables) == 3
    with pytest.raises(ValueError, match=r"tables\.jsonl.*holds 2 tables, the manifest lists 3"):
        list(index.tables.values())


def test_a_unit_naming_an_absent_table_is_reported_at_load(built):
    _, folder = built
    _edit_json(folder / "catalog.json", lambda catalog: catalog["units"]["tables"].__setitem__(0, 3))
    reseal(folder)
    with pytest.raises(ValueError, match=r"catalog\.json.*unit .* names tables \[3\], the catalog lists 3"):
        _load(folder)


def test_units_that_differ_from_the_catalog_are_reported_when_first_read(built):
    _, folder = built

    def ask_another_question(docstore):
        unit = next(iter(docstore["docstore/data"].values()))["__data__"]
        unit["metadata"]["question"] = "A question the catalog does not hold?"

    _edit_json(folder / "docstore.json", ask_another_question)
    reseal(folder)
    with pytest.raises(ValueError, match=r"docstore\.json.*not the one catalog\.json lists"):
        load_and_read(folder)


def test_a_lexical_index_of_other_units_is_reported_when_first_used(built):
    import numpy as np

    _, folder = built
    _rewrite_npz(folder / "lexical.npz", lambda kept: kept.update(n_docs=np.asarray(int(kept["n_docs"]) + 1)))
    with pytest.raises(ValueError, match=r"lexical\.npz.*documents, the catalog lists"):
        load_and_read(folder)


def test_a_vector_mapped_to_no_unit_is_reported(built):
    _, folder = built
    id_map = json.loads((folder / "id_map.json").read_text())
    mapping = id_map["node_id_to_faiss_id_map"]
    first = next(iter(mapping))
    mapping["not-a-unit"] = mapping.pop(first)
    (folder / "id_map.json").write_text(json.dumps(id_map))
    reseal(folder)
    with pytest.raises(ValueError, match=r"id_map\.json.*map to no unit"):
        _load(folder)


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("docstore.json", '{"docstore/data": {'),  # truncated
        ("docstore.json", "[]"),
        ("docstore.json", "{}"),
        ("pearl_index_store.json", "[1, 2]"),
        ("join_graph.json", '{"nodes": 3}'),
        ("join_graph.json", "[" * 100_000 + "]" * 100_000),  # RecursionError in the decoder
        ("tables.jsonl", '["a list, not a table"]\n'),
        ("tables.jsonl", '{"id": "x", "columns": ["a"], "rows": [[1, 2]]}\n'),
        ("id_map.json", "[]"),
        ("catalog.json", '{"texts": {}}'),
        ("lexical.npz", "not numpy"),
        ("pearl.json", "not json"),
    ],
)
def test_malformed_or_wrong_json_is_one_value_error_naming_the_file(built, name, content):
    _, folder = built
    (folder / name).write_text(content)
    if name != "pearl.json":
        reseal(folder)
    with pytest.raises(ValueError, match=name.replace(".", r"\.")):
        load_and_read(folder)


@pytest.mark.parametrize(("field", "value"), [("dimension", "64"), ("n_units", None), ("config", []), ("report", 3)])
def test_a_manifest_field_of_the_wrong_type_is_named(built, field, value):
    _, folder = built
    manifest = json.loads((folder / "pearl.json").read_text())
    manifest[field] = value
    (folder / "pearl.json").write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match=rf"pearl\.json.*{field}"):
        _load(folder)


# ---------------------------------------------------------------- atomic persist
def test_persist_refuses_to_replace_a_folder_that_is_not_an_index(built, tmp_path):
    index, _ = built
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(ValueError, match="not a PEARL index"):
        index.persist(tmp_path / "mine")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"


def test_persist_over_an_index_replaces_it_and_leaves_no_temporary_folder(built, music_tables, tmp_path):
    _, folder = built
    smaller = PearlTableIndex.from_tables({"singer": music_tables["singer"]}, embed_model=HashingEmbedding())
    smaller.persist(folder)
    assert set(_load(folder).tables) == {"singer"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]


def test_an_error_mid_persist_leaves_the_old_index_loading_identically(built, music_tables, monkeypatch, tmp_path):
    index, folder = built
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    import llama_index_pearl.storage.persistence as persistence

    def explode(tables, path):
        path.write_text('{"id": "half-written')
        raise OSError("disk full")

    monkeypatch.setattr(persistence, "write_tables_file", explode)
    with pytest.raises(OSError, match="disk full"):
        PearlTableIndex.from_tables({"singer": music_tables["singer"]}, embed_model=HashingEmbedding()).persist(folder)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert _ranked(_load(folder)) == _ranked(index)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]


def test_a_process_killed_mid_persist_leaves_the_old_index_loading_identically(built, tmp_path):
    index, folder = built
    _killed_persist(folder)
    assert _ranked(_load(folder)) == _ranked(index)


def test_a_crash_between_the_fallback_renames_still_loads_the_previous_index(built, tmp_path):
    index, folder = built
    folder.rename(tmp_path / ".idx.pearl-old-1234abcd")
    assert _ranked(_load(folder)) == _ranked(index)


def test_units_are_checked_against_the_tables_they_name(tmp_path):
    from llama_index.core.schema import TextNode

    from llama_index_pearl.storage.integrity import check_units

    unit = TextNode(id_="u1", text="x", metadata={"table_ids": ["singer", "ghost"]})
    with pytest.raises(ValueError, match=r"docstore\.json.*u1.*ghost"):
        check_units(tmp_path / "docstore.json", [unit], {"singer"}, expected=1)
    with pytest.raises(ValueError, match=r"holds 1 units, the manifest lists 2"):
        check_units(tmp_path / "docstore.json", [TextNode(id_="u2", metadata={"table_ids": ["singer"]})], {"singer"}, 2)


def test_without_an_atomic_exchange_persist_renames_aside_and_cleans_up(built, music_tables, monkeypatch, tmp_path):
    import llama_index_pearl.storage.atomic as atomic

    _, folder = built
    monkeypatch.setattr(atomic, "_exchange", lambda a, b: False)
    PearlTableIndex.from_tables({"singer": music_tables["singer"]}, embed_model=HashingEmbedding()).persist(folder)
    assert set(_load(folder).tables) == {"singer"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]


def test_pearl_query_uses_the_encoder_recorded_in_the_manifest(music_tables, minilm, tmp_path, capsys, monkeypatch):
    from llama_index.core import Settings

    from llama_index_pearl.cli import main

    PearlTableIndex.from_tables(music_tables, embed_model=minilm).persist(tmp_path / "idx")
    monkeypatch.setattr(Settings, "_embed_model", TrigramEmbedding())  # another encoder set globally
    assert main(["query", str(tmp_path / "idx"), "Which stadium holds 90?", "-k", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["table_id"] == "stadium"


def test_pearl_query_on_an_index_of_an_unrebuildable_encoder_says_what_to_pass(built, capsys):
    from llama_index_pearl.cli import main

    _, folder = built
    assert main(["query", str(folder), "Wembley"]) == 2
    assert "pass embed_model=" in capsys.readouterr().err


def test_persist_to_a_symlinked_folder_replaces_the_folder_it_points_to(built, tmp_path):
    index, folder = built
    link = tmp_path / "link"
    link.symlink_to(folder)
    index.persist(link)
    assert link.is_symlink() and _ranked(_load(link)) == _ranked(index)


def test_persist_to_the_current_folder_names_it(built, tmp_path, monkeypatch):
    index, _ = built
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    index.persist(".")
    assert _ranked(_load(tmp_path / "here")) == _ranked(index)


def test_persist_refuses_a_folder_whose_pearl_json_is_not_a_pearl_manifest(built, tmp_path):
    index, _ = built
    project = tmp_path / "project"
    project.mkdir()
    (project / "pearl.json").write_text('{"name": "my project", "version": 2}')
    (project / "notes.txt").write_text("keep me")
    with pytest.raises(ValueError, match=r"project.*not a PEARL index \(its pearl\.json is not a llama-index-pearl"):
        index.persist(project)
    assert sorted(p.name for p in project.iterdir()) == ["notes.txt", "pearl.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx", "project"]


def test_persist_refuses_an_index_folder_holding_a_file_of_the_user_naming_it(built):
    index, folder = built
    (folder / "notes.txt").write_text("keep me")
    with pytest.raises(ValueError, match=r"1 file\(s\) the manifest does not list, e.g. 'notes\.txt'"):
        index.persist(folder)
    assert (folder / "notes.txt").read_text() == "keep me"


def test_persist_refuses_an_index_folder_holding_a_symbolic_link_of_the_user_naming_it(built, tmp_path):
    index, folder = built
    (tmp_path / "mine.txt").write_text("keep me")
    (folder / "latest").symlink_to(tmp_path / "mine.txt")
    with pytest.raises(ValueError, match=r"1 file\(s\) the manifest does not list, e.g. 'latest'"):
        index.persist(folder)
    assert (folder / "latest").is_symlink() and (tmp_path / "mine.txt").read_text() == "keep me"


def _killed_persist(folder: Path) -> None:
    """A process killed mid-persist (``os._exit``: no cleanup runs), as in the test above."""
    script = textwrap.dedent(
        f"""
        import os, sys
        sys.path[:0] = {[str(Path(__file__).parent)]!r}
        import pandas as pd
        from embeddings import HashingEmbedding
        import llama_index_pearl.storage.persistence as persistence
        from llama_index_pearl import PearlTableIndex

        def crash(tables, path):
            path.write_text('{{"id": "half')
            os._exit(9)

        persistence.write_tables_file = crash
        index = PearlTableIndex.from_tables({{"x": pd.DataFrame({{"a": [1]}})}}, embed_model=HashingEmbedding())
        index.persist({str(folder)!r})
        """
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", script], env=env, timeout=120, capture_output=True, text=True)
    assert done.returncode == 9, done.stderr


def test_the_temporary_folder_a_killed_persist_left_is_removed_by_the_next_persist(built, tmp_path):
    index, folder = built
    _killed_persist(folder)
    left = [p.name for p in tmp_path.iterdir() if ".pearl-tmp-" in p.name]
    assert len(left) == 1
    index.persist(folder)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]
    assert _ranked(_load(folder)) == _ranked(index)


def test_a_temporary_folder_a_live_persist_holds_is_left_alone(built, tmp_path):
    import fcntl

    index, folder = built
    live = tmp_path / ".idx.pearl-tmp-0badc0de"
    live.mkdir()
    (live / "tables.jsonl").write_text("{}")
    fd = os.open(live, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as a writer in another process holds its folder
        index.persist(folder)
        assert (live / "tables.jsonl").read_text() == "{}"
    finally:
        os.close(fd)
    index.persist(folder)  # no longer held: a killed writer's
    assert not live.exists()


def test_a_folder_that_only_looks_like_a_temporary_one_is_left_alone(built, tmp_path):
    index, folder = built
    (tmp_path / ".other.pearl-tmp-12345678").mkdir()  # beside another index
    (tmp_path / ".idx.pearl-tmp-file").write_text("a file, not a folder")
    index.persist(folder)
    assert (tmp_path / ".other.pearl-tmp-12345678").is_dir() and (tmp_path / ".idx.pearl-tmp-file").is_file()


def test_pearl_graph_draws_an_index_of_a_custom_encoder_without_it(built, tmp_path, capsys):
    from llama_index_pearl.cli import main

    _, folder = built
    page = tmp_path / "graph.html"
    assert main(["graph", str(folder), "--html", str(page)]) == 0, capsys.readouterr().err
    html = page.read_text(encoding="utf-8")
    assert all(name in html for name in ("singer", "concert", "stadium", "Wembley"))
    assert "3 tables" in capsys.readouterr().out


def test_a_manifest_that_lists_no_digest_of_a_file_the_format_needs_is_refused_naming_it(built):
    _, folder = built
    _edit_json(folder / "pearl.json", lambda manifest: manifest["files"].pop("tables.jsonl"))
    with pytest.raises(ValueError, match=r"pearl\.json.*'files' lists no digest of tables\.jsonl"):
        _load(folder)


def test_a_folder_listed_as_a_file_in_the_manifest_is_refused_naming_it(built):
    _, folder = built
    (folder / "extra").mkdir()
    _edit_json(folder / "pearl.json", lambda manifest: manifest["files"].update(extra={"bytes": 0, "sha256": "0"}))
    with pytest.raises(ValueError, match=r"extra.*not a file"):
        _load(folder)


def _drop_joins(graph):
    graph["graph"]["paths"][0]["joins"] = []


def _score_in_words(graph):
    graph["links"][0]["score"] = "high"


@pytest.mark.parametrize(
    ("spoil", "problem"),
    [
        (_drop_joins, r"path 0: ValueError: Path .* needs \d joins, got 0"),
        (_score_in_words, r"the edge of '\w+' and '\w+'"),
    ],
)
def test_a_stored_join_that_would_fail_a_query_or_an_insert_is_refused_at_load_naming_the_graph_file(
    built, spoil, problem
):
    _, folder = built
    _edit_json(folder / "join_graph.json", spoil)
    reseal(folder)
    with pytest.raises(ValueError, match=rf"join_graph\.json.*{problem}"):
        _load(folder)


def test_column_vectors_of_another_shape_are_reported_naming_the_file(built):
    _, folder = built
    _rewrite_npz(folder / "columns.npz", lambda kept: kept.update(vectors=kept["vectors"][:-1]))
    with pytest.raises(ValueError, match=r"columns\.npz.*vectors holds"):
        _load(folder)


def test_column_vectors_that_are_not_finite_are_reported_naming_the_file(built):
    import numpy as np

    _, folder = built
    _rewrite_npz(folder / "columns.npz", lambda kept: kept["word_vectors"].__setitem__((0, 0), np.nan))
    with pytest.raises(ValueError, match=r"columns\.npz.*not finite"):
        _load(folder)


def test_a_catalog_naming_columns_without_their_vectors_is_reported(built):
    _, folder = built
    (folder / "columns.npz").unlink()
    manifest = json.loads((folder / "pearl.json").read_text())
    del manifest["files"]["columns.npz"]
    (folder / "pearl.json").write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match=r"catalog\.json.*columns\.npz"):
        _load(folder)


def _rewrite_npz(path: Path, change: Callable[[dict], None]) -> None:
    """Change the arrays of an ``.npz`` file in place, then reseal its folder's manifest."""
    import numpy as np

    with np.load(path) as arrays:
        kept = {name: np.array(arrays[name]) for name in arrays.files}
    change(kept)
    with path.open("wb") as handle:
        np.savez(handle, **kept)
    reseal(path.parent)
