"""The pearl command line on a tiny benchmark folder (real MiniLM, real FAISS)."""

from __future__ import annotations

import json

import pytest

from llama_index_pearl.cli import main

TABLES = {
    "music__singer": "singer_id,name,country\n1,Joe Sharp,France\n2,Ann Lee,Canada\n3,Rosa Park,Chile\n",
    "music__concert": "concert_id,singer_id,stadium_id,year\n10,1,7,2014\n11,2,8,2015\n12,3,7,2016\n",
    "music__stadium": "stadium_id,stadium_name,capacity\n7,Wembley,90000\n8,Maracana,78000\n",
    "zoo__animal": "animal_id,species,keeper\n1,zebra,Tom\n2,lion,Sue\n",
}
QUERIES = [
    {"id": "q1", "question": "Which countries are singers from?", "gold_tables": ["music__singer"], "hops": 1},
    {
        "id": "q2",
        "question": "Which stadium hosted concerts by Ann Lee?",
        "gold_tables": ["music__singer", "music__concert", "music__stadium"],
        "hops": 3,
    },
    {"id": "q3", "question": "Who keeps the zebra?", "gold_tables": ["zoo__animal"], "hops": 1},
]


@pytest.fixture
def bench(tmp_path):
    folder = tmp_path / "tiny"
    (folder / "tables").mkdir(parents=True)
    meta = []
    for table_id, csv in TABLES.items():
        (folder / "tables" / f"{table_id}.csv").write_text(csv)
        meta.append({"id": table_id, "table": table_id.split("__")[1], "columns": csv.split("\n")[0].split(",")})
    (folder / "tables_meta.jsonl").write_text("\n".join(json.dumps(m) for m in meta))
    (folder / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in QUERIES))
    joins = [
        {"left": "music__concert.singer_id", "right": "music__singer.singer_id"},
        {"left": "music__concert.stadium_id", "right": "music__stadium.stadium_id"},
    ]
    (folder / "joins.jsonl").write_text("\n".join(json.dumps(j) for j in joins))
    return folder


@pytest.mark.parametrize("method", ["whole-table", "bm25", "pearl"])
def test_eval_writes_the_documented_json_shape(bench, tmp_path, method, capsys):
    out = tmp_path / f"{method}.json"
    assert main(["eval", str(bench), "--method", method, "--ks", "1,2", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert {"bench", "method", "n_tables", "n_units", "index_seconds", "query_latency_ms", "metrics"} <= set(result)
    assert set(result["query_latency_ms"]) == {"p50", "p95"}
    assert set(result["metrics"]) == {"all", "1hop", "3hop", "multi"}
    slot = set() if method == "bm25" else {"SlotR@1", "SlotR@2"}  # BM25 ranks tables, it has no units
    assert set(result["metrics"]["all"]) == {"n", "R@1", "R@2", "C@1", "C@2"} | slot
    assert result["metrics"]["all"]["n"] == 3
    assert 0.0 <= result["metrics"]["all"]["R@2"] <= 100.0
    assert "R@1" in capsys.readouterr().out


def test_pearl_eval_reports_llm_and_unit_kinds(bench, tmp_path):
    out = tmp_path / "p.json"
    main(["eval", str(bench), "--method", "pearl", "--json", str(out)])
    result = json.loads(out.read_text())
    assert {"model", "paths", "prompt_tokens", "completion_tokens", "skipped"} <= set(result["llm"])
    assert result["units_by_kind"]["original"] == 4


def test_query_json_lists_tables_with_scores(bench, tmp_path, capsys):
    out = tmp_path / "idx"
    main(["index", str(bench / "tables"), "--out", str(out)])
    capsys.readouterr()
    main(["query", str(out), "Who keeps the zebra?", "-k", "2", "--json"])
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["table_id"] == "zoo__animal"
    assert len(rows) == 2 and rows[0]["score"] >= rows[1]["score"]


def test_joins_scores_discovery_against_declared_keys(bench, tmp_path):
    out = tmp_path / "joins.json"
    assert main(["joins", str(bench), "--json", str(out)]) == 0
    with_provenance, unified = json.loads(out.read_text())
    assert (with_provenance["provenance"], unified["provenance"]) == (True, False)
    for result in (with_provenance, unified):
        assert {"table_pairs", "column_pairs", "selected", "seconds"} <= set(result)
        assert result["table_pairs"]["n_gold"] == 2
        assert result["table_pairs"]["recall"] == 1.0


def test_joins_without_provenance_scores_only_the_unified_pool(bench, tmp_path):
    out = tmp_path / "joins.json"
    assert main(["joins", str(bench), "--no-provenance", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["provenance"] is False


def test_bad_benchmark_folder_is_a_clear_error(tmp_path, capsys):
    assert main(["eval", str(tmp_path)]) == 2
    assert "is not a benchmark folder" in capsys.readouterr().err
