"""``pearl graph``: a self-contained join-graph page, drawn by a real headless Chromium."""

from __future__ import annotations

import os
import re

import pandas as pd
import pytest

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.cli import main
from llama_index_pearl.presentation.graph_page import graph_page_data, join_graph_mermaid, render_graph_page
from llama_index_pearl.presentation.headless import dump_dom, find_chromium


@pytest.fixture
def index(music_tables, hashing_embedding) -> PearlTableIndex:
    return PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)


def _data(index: PearlTableIndex) -> dict:
    return graph_page_data(index.join_graph, index.tables.values(), index.join_paths)


def test_nodes_carry_rows_columns_and_sample_rows(index):
    nodes = {n["id"]: n for n in _data(index)["nodes"]}
    assert set(nodes) == {"singer", "concert", "stadium"}
    assert nodes["singer"]["rows"] == 3
    assert nodes["stadium"]["columns"] == ["stadium_id", "stadium_name", "capacity"]
    assert nodes["stadium"]["sample"][0] == ["7", "Wembley", "90"]


def test_edges_carry_kind_column_pair_label_and_selection(index):
    edges = _data(index)["edges"]
    assert len(edges) == index.join_graph.number_of_edges() >= 2
    stadium = next(e for e in edges if {e["source"], e["target"]} == {"concert", "stadium"})
    assert stadium["label"] == "stadium_id = stadium_id"
    assert stadium["kind"] == "explicit" and stadium["declared"] is False and stadium["selected"] is True


def test_mermaid_draws_each_join_from_its_referencing_table(index):
    lines = join_graph_mermaid(index.join_graph).splitlines()
    assert lines[0] == "graph LR"
    assert '    concert ==>|"stadium_id = stadium_id (explicit ✓)"| stadium' in lines


def test_selected_paths_are_listed(index):
    paths = _data(index)["paths"]
    assert paths and all(p["kind"] in {"explicit", "implicit"} and len(p["tables"]) >= 2 for p in paths)


def test_page_loads_nothing_from_the_network(index):
    page = render_graph_page(_data(index))
    assert not re.search(r"<script[^>]+src=|<link[^>]+href=|@import|<iframe", page)
    assert "cytoscape" in page and "/*PEARL_DATA*/" not in page


def test_cells_cannot_close_the_data_script(hashing_embedding):
    tables = {"t": pd.DataFrame({"a": ["</script><script>alert(1)</script>"]})}
    page = render_graph_page(_data(PearlTableIndex.from_tables(tables, embed_model=hashing_embedding)))
    assert page.count("</script>") == 3  # data, library, page script: no cell closes one


def test_graph_refuses_a_folder_as_html_target(index, tmp_path):
    from llama_index_pearl.presentation.graph_page import write_graph_page

    with pytest.raises(ValueError, match="is a folder"):
        write_graph_page(index, tmp_path)


needs_chromium = pytest.mark.skipif(
    find_chromium() is None and not os.environ.get("PEARL_REQUIRE_CHROMIUM"),
    reason="Chromium is not installed (.ci/run installs it and sets PEARL_REQUIRE_CHROMIUM)",
)


@pytest.fixture(scope="module")
def built_index(tmp_path_factory):
    folder = tmp_path_factory.mktemp("graph")
    tables = folder / "tables"
    tables.mkdir()
    (tables / "singer.csv").write_text("singer_id,name\n1,Joe\n2,Ann\n3,Rosa\n")
    (tables / "concert.csv").write_text("concert_id,singer_id,stadium_id\n10,1,7\n11,2,8\n12,3,7\n")
    (tables / "stadium.csv").write_text("stadium_id,stadium_name,capacity\n7,Wembley,90000\n8,Maracana,78000\n")
    assert main(["index", str(tables), "--out", str(folder / "idx"), "-q"]) == 0
    return folder / "idx"


@needs_chromium
def test_chromium_draws_every_table_and_join(built_index, tmp_path):
    page = tmp_path / "graph.html"
    assert main(["graph", str(built_index), "--html", str(page), "-q"]) == 0
    body = re.search(r"<body([^>]*)>", dump_dom(page)).group(1)
    drawn = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', body))
    index = PearlTableIndex.load(built_index)
    assert drawn["ready"] == "true"
    assert int(drawn["nodes"]) == int(drawn["rendered-nodes"]) == 3
    assert int(drawn["edges"]) == index.join_graph.number_of_edges() >= 2
    assert int(drawn["painted-pixels"]) > 1000  # the canvas holds the drawing, not a blank page


@needs_chromium
def test_png_screenshot_of_the_page(built_index, tmp_path):
    png = tmp_path / "graph.png"
    assert main(["graph", str(built_index), "--png", str(png), "-q"]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    assert not png.with_suffix(".html").exists()


def test_png_alone_leaves_the_users_page_of_the_same_name_untouched_even_when_the_browser_fails(
    built_index, tmp_path, monkeypatch, capsys
):
    mine = tmp_path / "graph.html"
    mine.write_text("my own page")
    monkeypatch.setenv("CHROMIUM", "false")  # a browser that fails at once
    assert main(["graph", str(built_index), "--png", str(tmp_path / "graph.png"), "-q"]) == 2
    assert "--png: Chromium exited with 1" in capsys.readouterr().err
    assert mine.read_text() == "my own page"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["graph.html"]


@needs_chromium
def test_png_alone_writes_the_png_and_nothing_else(built_index, tmp_path):
    mine = tmp_path / "graph.html"
    mine.write_text("my own page")
    assert main(["graph", str(built_index), "--png", str(tmp_path / "graph.png"), "-q"]) == 0
    assert mine.read_text() == "my own page"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["graph.html", "graph.png"]


HOSTILE = "<!--<script>"


@needs_chromium
def test_names_and_cells_that_open_a_script_comment_still_leave_a_drawn_page(hashing_embedding, tmp_path):
    from llama_index_pearl.presentation.graph_page import write_graph_page

    tables = {
        f"singer{HOSTILE}": pd.DataFrame({"singer_id": ["1", "2"], f"name{HOSTILE}": [HOSTILE, "Ann"]}),
        "concert": pd.DataFrame({"concert_id": ["10", "11"], "singer_id": ["1", "2"]}),
    }
    index = PearlTableIndex.from_tables(tables, embed_model=hashing_embedding)
    page = write_graph_page(index, tmp_path / "graph.html")
    body = re.search(r"<body([^>]*)>", dump_dom(page)).group(1)
    drawn = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', body))
    assert drawn["ready"] == "true"
    assert int(drawn["nodes"]) == int(drawn["rendered-nodes"]) == 2
    assert int(drawn["painted-pixels"]) > 1000


def test_the_embedded_json_holds_no_angle_bracket_or_ampersand(hashing_embedding):
    tables = {"t": pd.DataFrame({f"a{HOSTILE}": [f"{HOSTILE} & </script>"]})}
    page = render_graph_page(_data(PearlTableIndex.from_tables(tables, embed_model=hashing_embedding)))
    payload = re.search(r'<script id="pearl-data" type="application/json">(.*?)</script>', page, re.S).group(1)
    assert not set("<>&") & set(payload)
    assert HOSTILE in payload.encode().decode("unicode_escape")


def _drawn(page) -> dict[str, str]:
    body = re.search(r"<body([^>]*)>", dump_dom(page)).group(1)
    return dict(re.findall(r'data-([a-z-]+)="([^"]*)"', body))


@needs_chromium
def test_at_the_fit_zoom_every_label_is_drawn_at_12_pixels_or_more(tmp_path):
    from llama_index_pearl import example_data

    assert main(["index", str(example_data()), "--out", str(tmp_path / "idx"), "-q"]) == 0
    assert main(["graph", str(tmp_path / "idx"), "--html", str(tmp_path / "graph.html"), "-q"]) == 0
    assert float(_drawn(tmp_path / "graph.html")["label-pixels"]) >= 12


@needs_chromium
def test_a_long_table_name_wraps_inside_the_sidebar(tmp_path):
    tables = tmp_path / "tables"
    tables.mkdir()
    long = "warehouse_inventory_snapshots_by_region_and_quarter"
    (tables / f"{long}.csv").write_text("snapshot_id,region_id\n1,7\n2,8\n3,7\n")
    (tables / "region.csv").write_text("region_id,region_name\n7,North\n8,South\n")
    assert main(["index", str(tables), "--out", str(tmp_path / "idx"), "-q"]) == 0
    assert main(["graph", str(tmp_path / "idx"), "--html", str(tmp_path / "graph.html"), "-q"]) == 0
    drawn = _drawn(tmp_path / "graph.html")
    assert int(drawn["edges"]) >= 1 and int(drawn["side-overflow"]) == 0
