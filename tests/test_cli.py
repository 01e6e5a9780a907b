"""The pearl command line on a tiny benchmark folder (real MiniLM, real FAISS)."""

from __future__ import annotations

import json

import pytest

from llama_index_pearl.cli import full_parser, main

try:
    from fake_openai import FakeOpenAIServer
except ImportError:  # tests/ became a package
    from tests.fake_openai import FakeOpenAIServer

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
        "db": "music",
        "sql": "SELECT T3.stadium_name FROM singer AS T1 JOIN concert AS T2 ON T1.singer_id = T2.singer_id "
        "JOIN stadium AS T3 ON T2.stadium_id = T3.stadium_id WHERE T1.name = 'Ann Lee'",
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
    assert set(result["metrics"]) == {"all", "1 table", "3 tables", "multi"}
    slot = set() if method == "bm25" else {"SlotR@1", "SlotR@2"}  # BM25 ranks tables, it has no units
    slot |= (
        {"Set", "SetPrecision", "SetSize", "GoldSize", "NeededPrecision", "ECE", "Source@1", "Copy@1"}
        if method == "pearl"
        else set()
    )
    assert set(result["metrics"]["all"]) == {"n", "R@1", "R@2", "C@1", "C@2", "C@G+2", "PaperR@1", "PaperR@2"} | slot
    assert result["metrics"]["all"]["n"] == 3
    assert 0.0 <= result["metrics"]["all"]["R@2"] <= 100.0
    assert "R@1" in capsys.readouterr().out


def test_pearl_eval_reports_llm_and_unit_kinds(bench, tmp_path):
    out = tmp_path / "p.json"
    main(["eval", str(bench), "--method", "pearl", "--json", str(out)])
    result = json.loads(out.read_text())
    assert {"model", "paths", "prompt_tokens", "completion_tokens", "skipped"} <= set(result["llm"])
    assert result["units_by_kind"]["original"] == 4


def test_pearl_eval_scores_join_hints_against_the_gold_sql(bench, tmp_path, capsys):
    out = tmp_path / "p.json"
    assert main(["eval", str(bench), "--ks", "3,4", "--json", str(out)]) == 0
    hints = json.loads(out.read_text())["join_hints"]
    assert set(hints) == {"@3", "@4"}
    assert hints["@4"]["questions"] == 1 and hints["@4"]["n"] == 1  # 4 tables: every gold table is in the top 4
    assert hints["@4"]["recall"] == 100.0  # singer-concert and concert-stadium are discovered
    assert "join hints vs gold SQL joins" in capsys.readouterr().out


@pytest.fixture
def bench_of_databases(bench):
    """The tiny benchmark with every table and question in its database (its db field), as Spider writes them."""
    meta = [json.loads(line) for line in (bench / "tables_meta.jsonl").read_text().splitlines()]
    for m in meta:
        m["db"] = m["id"].split("__")[0]
    (bench / "tables_meta.jsonl").write_text("\n".join(json.dumps(m) for m in meta))
    queries = [{**q, "db": q["gold_tables"][0].split("__")[0]} for q in QUERIES]
    (bench / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries))
    return bench


@pytest.mark.parametrize("method", ["pearl", "llamaindex", "bm25"])
def test_eval_per_database_ranks_each_question_within_its_databases_tables(bench_of_databases, tmp_path, method):
    out = tmp_path / "db.json"
    args = ["eval", str(bench_of_databases), "--per-database", "--method", method, "--ks", "1,2", "--json", str(out)]
    assert main(args) == 0
    result = json.loads(out.read_text())
    assert result["per_database"] is True
    # the zoo question has one table in its database: the top 1 is its table whatever ranks it
    assert result["metrics"]["all"]["n"] == 3 and result["metrics"]["1 table"]["C@1"] == 100.0


def test_eval_per_database_needs_every_question_in_a_database(bench, capsys):
    assert main(["eval", str(bench), "--per-database"]) == 2
    assert "gives some questions no db" in capsys.readouterr().err


def test_eval_per_database_refuses_a_question_whose_db_names_no_database_of_the_tables(bench_of_databases, capsys):
    queries = [json.loads(line) for line in (bench_of_databases / "queries.jsonl").read_text().splitlines()]
    queries[0]["db"] = "muisc"
    (bench_of_databases / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries))
    assert main(["eval", str(bench_of_databases), "--per-database"]) == 2
    assert "names databases no table has: 'muisc' (1 question); the tables' databases: 'music', 'zoo'" in (
        capsys.readouterr().err
    )


def test_eval_reports_the_sets_precision_beside_its_completeness(bench_of_databases, tmp_path):
    out = tmp_path / "p.json"
    assert main(["eval", str(bench_of_databases), "--per-database", "--json", str(out)]) == 0
    row = json.loads(out.read_text())["metrics"]["3 tables"]
    assert row["Set"] == 100.0 and row["SetPrecision"] == 100.0 and row["SetSize"] == row["GoldSize"] == 3.0


def test_eval_json_holds_the_fields_of_the_eval_result_in_order_its_figures_in_their_place(bench, tmp_path):
    import dataclasses

    from llama_index_pearl.evaluation.eval_result import EvalResult, RunFigures

    out = tmp_path / "result.json"
    assert main(["eval", str(bench), "--anchor", "--ks", "1,2", "--json", str(out)]) == 0
    fields = [f.name for f in dataclasses.fields(EvalResult)]
    at = fields.index("figures")
    figures = [f.name for f in dataclasses.fields(RunFigures)]
    assert list(json.loads(out.read_text())) == [*fields[:at], *figures, *fields[at + 1 :]]


def test_eval_anchor_sets_objectindex_beside_pearl(bench, tmp_path, capsys):
    out = tmp_path / "p.json"
    assert main(["eval", str(bench), "--anchor", "--ks", "1,2", "--json", str(out)]) == 0
    anchor = json.loads(out.read_text())["anchor"]
    assert anchor["method"] == "llamaindex"
    assert set(anchor["metrics"]["all"]) == {"n", "R@1", "R@2", "C@1", "C@2", "C@G+2"}
    assert "beside LlamaIndex's ObjectIndex (PEARL / ObjectIndex):" in capsys.readouterr().out


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """One index of the tiny benchmark's tables, built by ``pearl index``, shared by the query tests."""
    folder = tmp_path_factory.mktemp("built")
    tables = folder / "tables"
    tables.mkdir()
    for table_id, csv in TABLES.items():
        (tables / f"{table_id}.csv").write_text(csv)
    assert main(["index", str(tables), "--out", str(folder / "idx"), "--quiet"]) == 0
    return folder / "idx"


def test_query_json_lists_tables_with_scores(built, capsys):
    main(["query", str(built), "Who keeps the zebra?", "-k", "2", "--json"])
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


def test_query_says_what_the_score_is_and_that_the_matched_question_was_generated(built, capsys):
    assert main(["query", str(built), "Which stadium hosted concerts by Ann Lee?", "-k", "3"]) == 0
    out = capsys.readouterr().out
    assert "Score: cosine similarity in meaning between the question and the best text\nindexed for the table" in out
    assert "plus up to 0.075 when they share words" in out
    assert "matched a question PEARL generated" in out
    assert "= similarity " in out and " + shared words " in out  # the score's parts, when words added to it


def test_query_shows_the_set_first_and_only_the_joins_that_connect_it(built, capsys):
    assert main(["query", str(built), "Which stadium hosted concerts by Ann Lee?", "-k", "3"]) == 0
    out = capsys.readouterr().out
    assert "Needed: 3 tables the question needs (confidence: how surely)" in out
    joins = out.split("How they join (the fewest joins that connect them;")[1].splitlines()[1:]
    assert sorted(joins) == [
        "  music__concert.singer_id = music__singer.singer_id  [explicit]",
        "  music__concert.stadium_id = music__stadium.stadium_id  [explicit]",
    ]


def test_query_cut_at_k_says_how_large_the_set_is_and_which_k_shows_it_whole(built, capsys):
    assert main(["query", str(built), "Which stadium hosted concerts by Ann Lee?", "-k", "1"]) == 0
    out = capsys.readouterr().out
    assert "The set holds 3 tables: the 2 that came into it last are left out here (-k 3 shows the whole set)." in out


def test_query_showing_the_whole_set_says_nothing_was_left_out(built, capsys):
    assert main(["query", str(built), "Which stadium hosted concerts by Ann Lee?", "-k", "3"]) == 0
    assert "left out here" not in capsys.readouterr().out


def test_query_of_one_table_among_unjoined_ones_says_no_join_connects_them(built, capsys):
    assert main(["query", str(built), "Who keeps the zebra?", "-k", "1"]) == 0
    out = capsys.readouterr().out
    assert "How these tables join" not in out and "No known join" not in out


def test_query_shows_the_other_candidates_after_the_set(built, capsys):
    assert main(["query", str(built), "Who keeps the zebra?", "-k", "3"]) == 0
    out = capsys.readouterr().out
    assert out.index("Needed: the table the question needs (confidence: how surely)") < out.index("Other candidates:")
    assert "1. zoo__animal" in out.split("Other candidates:")[0]


def test_query_source_asks_within_that_sources_tables(tmp_path, capsys):
    for db, table_id in [("music", "music__singer"), ("music", "music__concert"), ("zoo", "zoo__animal")]:
        (tmp_path / "tables" / db).mkdir(parents=True, exist_ok=True)
        (tmp_path / "tables" / db / f"{table_id}.csv").write_text(TABLES[table_id])
    assert main(["index", str(tmp_path / "tables"), "--out", str(tmp_path / "idx"), "--quiet"]) == 0
    assert main(["query", str(tmp_path / "idx"), "Who keeps the zebra?", "--source", "music", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["table_id"] for r in rows} == {"music/music__singer", "music/music__concert"}
    assert {r["source"] for r in rows} == {"music"}


def test_query_of_a_source_no_table_has_names_the_sources_there_are(built, capsys):
    assert main(["query", str(built), "Who keeps the zebra?", "--source", "zoo"]) == 2
    assert "no table of source 'zoo'" in capsys.readouterr().err


def test_query_without_the_set_ranks_by_score_alone(built, capsys):
    assert main(["query", str(built), "Which stadium hosted concerts by Ann Lee?", "-k", "3", "--no-table-set"]) == 0
    out = capsys.readouterr().out
    assert "The answer" not in out and "How these tables join" in out


def test_every_argument_of_every_command_has_help():
    import argparse

    for name, parser in full_parser()._subparsers._group_actions[0].choices.items():
        for action in parser._actions:
            if not isinstance(action, argparse._HelpAction):
                assert action.help and action.help != argparse.SUPPRESS, (name, action.dest)


def test_no_augment_says_what_turning_it_off_does():
    index = full_parser()._subparsers._group_actions[0].choices["index"]
    (action,) = [a for a in index._actions if "--no-augment" in a.option_strings]
    assert action.help.startswith("index whole tables only")


def test_index_prints_a_human_summary_not_json(bench, tmp_path, capsys):
    assert main(["index", str(bench / "tables"), "--out", str(tmp_path / "idx")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Indexed 4 tables into ")
    assert "join graph:" in out and "explicit: a key" in out
    assert "written by the heuristic generator (free, no LLM)" in out.split("questions: ")[1]
    assert "{" not in out.splitlines()[0]


def test_the_build_summary_times_the_whole_build_the_encoder_and_writing_included(bench, tmp_path, capsys):
    assert main(["index", str(bench / "tables"), "--out", str(tmp_path / "idx")]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    stages = first.split(" s (")[1].rstrip(")").split(", ")
    assert [s.rsplit(" ", 1)[0] for s in stages][:2] == ["reading tables", "encoder"]
    assert stages[-1].startswith("writing the index ")


def test_the_build_summary_prints_no_line_of_zeros(bench, tmp_path, capsys):
    import re

    assert main(["index", str(bench / "tables"), "--out", str(tmp_path / "idx")]) == 0
    out = capsys.readouterr().out
    assert not re.search(r"\b0 (requests|LLM calls|cached|skipped|prompt tokens)", out)


def test_index_skips_a_file_it_cannot_read_and_the_summary_counts_it(bench, tmp_path, capsys):
    (bench / "tables" / "broken.csv").write_bytes(bytes(64))
    assert main(["index", str(bench / "tables"), "--out", str(tmp_path / "idx")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Indexed 4 tables into ")
    assert "skipped 1 file that could not be read (warned above): " in out and "broken.csv" in out


def test_index_strict_stops_at_the_file_it_cannot_read(bench, tmp_path, capsys):
    (bench / "tables" / "broken.csv").write_bytes(bytes(64))
    assert main(["index", str(bench / "tables"), "--out", str(tmp_path / "idx"), "--strict"]) == 2
    assert "broken.csv" in capsys.readouterr().err
    assert not (tmp_path / "idx").exists()


def test_index_json_prints_the_build_report(bench, tmp_path, capsys):
    assert main(["index", str(bench / "tables"), "--out", str(tmp_path / "idx"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["n_tables"] == 4 and report["units_by_kind"]["original"] == 4


def test_index_estimate_is_a_dry_run_with_the_llm_options(bench, tmp_path, capsys):
    with FakeOpenAIServer() as server:
        argv = ["index", str(bench / "tables"), "--estimate", "--json", "--llm-base", server.base_url]
        assert main([*argv, "--cache-dir", str(tmp_path / "cache"), "--budget", "5"]) == 0
        assert server.request_count == 0
    estimate = json.loads(capsys.readouterr().out)
    assert estimate["tables"] == 4 and estimate["paths"] >= 1
    assert estimate["requests"] == estimate["paths"] and estimate["prompt_tokens"] > 0
    assert estimate["cached_requests"] == 0
    assert estimate["glossary_tables"] == 0  # off by default
    assert not (tmp_path / "idx").exists()


def test_index_estimate_says_in_words_what_the_glossary_would_send(bench, tmp_path, capsys):
    with FakeOpenAIServer() as server:
        argv = ["index", str(bench / "tables"), "--estimate", "--llm-base", server.base_url, "--glossary"]
        assert main([*argv, "--cache-dir", str(tmp_path / "cache")]) == 0
        assert server.request_count == 0
    assert "glossary: 4 tables to send, 0 cached, about " in capsys.readouterr().out


def test_no_llm_questions_has_the_llm_write_the_glossary_only(bench, tmp_path, capsys):
    with FakeOpenAIServer() as server:
        argv = ["index", str(bench / "tables"), "--out", str(tmp_path / "idx"), "--llm-base", server.base_url]
        assert main([*argv, "--glossary", "--no-llm-questions", "--cache-dir", str(tmp_path / "cache")]) == 0
        assert server.request_count == 4  # one per table
    out = capsys.readouterr().out
    assert "written by the heuristic generator" in out and "glossary: 4 tables written by the LLM" in out


def test_index_with_an_llm_base_builds_through_the_server(bench, tmp_path, capsys):
    with FakeOpenAIServer() as server:
        argv = ["index", str(bench / "tables"), "--out", str(tmp_path / "idx"), "--llm-base", server.base_url]
        assert main([*argv, "--llm-model", "fake", "--cache-dir", str(tmp_path / "cache")]) == 0
        calls = server.request_count
    assert calls >= 1
    assert f"{calls} LLM call{'s' if calls > 1 else ''}" in capsys.readouterr().out
    assert json.loads((tmp_path / "idx" / "pearl.json").read_text())["generator"]["type"] == "llm"


def test_index_and_eval_accept_the_same_build_options():
    subcommands = full_parser()._subparsers._group_actions[0].choices

    def options(name):
        return {o for a in subcommands[name]._actions for o in a.option_strings}

    build = {"--llm-base", "--llm-model", "--embed-model", "--budget", "--cache-dir", "--no-provenance"}
    build |= {"--cross-source-joins", "--single-hop", "--no-fallback", "--concurrency"}
    assert build <= options("index") and build <= options("eval")
    assert options("index") - options("eval") == {"--out", "--estimate"}
    assert options("eval") - options("index") >= {"--explicit-only", "--random-view", "--no-originals"}  # ablations


@pytest.mark.parametrize("where", ["before", "after"])
def test_verbose_and_quiet_work_before_or_after_the_subcommand(where):
    for flag, attr in (("-v", "verbose"), ("--quiet", "quiet")):
        argv = [flag, "query", "idx", "q"] if where == "before" else ["query", "idx", "q", flag]
        assert getattr(full_parser().parse_args(argv), attr) is True


def test_out_pointing_at_a_file_is_an_error_without_traceback(bench, tmp_path, capsys):
    target = tmp_path / "taken.txt"
    target.write_text("x")
    assert main(["index", str(bench / "tables"), "--out", str(target)]) == 2
    err = capsys.readouterr().err
    assert "--out" in err and "is a file" in err and "Traceback" not in err


def test_k_zero_is_a_usage_error(built, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["query", str(built), "q", "-k", "0"])
    assert exit_info.value.code == 2
    assert "-k: must be at least 1" in capsys.readouterr().err


def test_query_on_a_missing_index_is_a_clear_error(tmp_path, capsys):
    assert main(["query", str(tmp_path / "nothing"), "q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pearl query: error:") and "Traceback" not in err


@pytest.mark.parametrize(("question", "problem"), [("", "The question is empty"), ("\udcff", "lone surrogate")])
def test_query_of_an_empty_or_undecodable_question_is_one_line_and_exit_2(built, capsys, question, problem):
    assert main(["query", str(built), question]) == 2  # "\udcff": a byte of the command line not in its encoding
    err = capsys.readouterr().err
    assert err.startswith("pearl query: error:") and problem in err and err.count("\n") == 1


def test_joins_on_a_plain_folder_lists_the_discovered_edges(bench, capsys):
    assert main(["joins", str(bench / "tables")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Join graph: 4 tables")
    assert "music__concert.singer_id = music__singer.singer_id" in out


def test_joins_json_on_a_folder_without_gold_joins_writes_the_discovered_joins(bench, tmp_path):
    out = tmp_path / "j.json"
    assert main(["joins", str(bench / "tables"), "--json", str(out)]) == 0
    pairs = {tuple(sorted(r["tables"])): r for r in json.loads(out.read_text())["joins"]}
    concert_singer = pairs["music__concert", "music__singer"]
    assert concert_singer["kind"] == "explicit" and concert_singer["joins"][0]["column_pairs"] == [
        ["singer_id", "singer_id"]
    ]


def test_joins_of_an_index_folder_lists_the_joins_it_holds_as_hints_and_the_graph_page_do(built, tmp_path, capsys):
    from llama_index_pearl import PearlTableIndex
    from llama_index_pearl.presentation.graph_page import graph_page_data

    out = tmp_path / "j.json"
    assert main(["joins", str(built), "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"Join graph of {built}: 4 tables")
    assert "music__concert.stadium_id = music__stadium.stadium_id" in text
    records = json.loads(out.read_text())["joins"]
    index = PearlTableIndex.load(built)
    page = graph_page_data(index.join_graph, index.tables.values(), index.join_paths)
    assert sorted(p for e in page["edges"] for p in e["pairs"]) == sorted(
        " AND ".join(f"{j['left_table']}.{a} = {j['right_table']}.{b}" for a, b in j["column_pairs"])
        for r in records
        for j in r["joins"]
    )


def test_joins_on_a_folder_with_joins_jsonl_scores_it(bench, tmp_path, capsys):
    folder = tmp_path / "lake"
    folder.mkdir()
    for table_id, csv in TABLES.items():
        (folder / f"{table_id}.csv").write_text(csv)
    (folder / "joins.jsonl").write_text((bench / "joins.jsonl").read_text())
    out_json = tmp_path / "j.json"
    assert main(["joins", str(folder), "--json", str(out_json)]) == 0
    assert "Scored against joins.jsonl" in capsys.readouterr().out
    assert json.loads(out_json.read_text())["table_pairs"]["recall"] == 1.0


def test_demo_explains_each_answer(capsys):
    assert main(["demo", "-k", "4"]) == 0
    out = capsys.readouterr().out
    assert out.count("\nQ: ") == 3
    assert "matched a question PEARL generated" in out  # the unit that matched, in words
    assert "concerts.venue_id = venues.venue_id  [explicit]" in out
    assert "matched the same text as" in out  # tables of one joined unit share its score
    assert "through" not in out  # no join repeated through a retrieved middle table


def test_every_config_field_but_csv_options_has_a_build_flag():
    from llama_index_pearl.config import option_fields

    args = full_parser().parse_args(["index", "tables/", "--out", "idx"])
    assert {f.name for f in option_fields()} - set(vars(args)) == {"csv_options"}


def test_build_flags_become_the_config_the_library_builds_with():
    from llama_index_pearl.cli.options import config_from_args
    from llama_index_pearl.config import PearlConfig

    argv = ["index", "tables/", "--out", "idx", "--budget", "3", "--no-titles", "--no-star-units"]
    argv += ["--lambda-div", "0.2"]
    config = config_from_args(full_parser().parse_args(argv))
    assert config == PearlConfig(budget=3, include_titles=False, star_units=False, lambda_div=0.2)


ESC_NAME = "sing\x1b]0;pwned\x07er"  # sets the terminal's title and rings its bell when printed raw


@pytest.fixture
def hostile_folder(tmp_path):
    folder = tmp_path / "hostile"
    folder.mkdir()
    singers = "".join(f"{i},{name}\n" for i, name in enumerate(["Joe", "Ann", "Bo", "Cy", "Di"], 1))
    (folder / f"{ESC_NAME}.csv").write_text("singer_id,name\x1b[2J\n" + singers)
    (folder / "concert.csv").write_text("concert_id,singer_id\n10,1\n11,2\n12,2\n13,5\n")
    return folder


def _assert_escaped(text: str) -> None:
    assert "\x1b" not in text and "\x07" not in text
    assert "\\x1b" in text


def test_index_summary_and_query_print_control_characters_escaped(hostile_folder, tmp_path, capsys):
    assert main(["index", str(hostile_folder), "--out", str(tmp_path / "idx")]) == 0
    capsys.readouterr()
    assert main(["query", str(tmp_path / "idx"), "Which singer played concert 10?", "-k", "2"]) == 0
    out = capsys.readouterr().out
    _assert_escaped(out)
    assert "sing\\x1b]0;pwned\\x07er" in out


def test_joins_print_control_characters_escaped(hostile_folder, capsys):
    assert main(["joins", str(hostile_folder)]) == 0
    _assert_escaped(capsys.readouterr().out)


def test_log_lines_print_control_characters_escaped():
    import subprocess
    import sys

    code = (
        "import logging; from llama_index_pearl.cli.terminal import configure_output; "
        "configure_output(False, False); logging.getLogger('pearl.test').warning('file %s.csv', NAME)"
    )
    done = subprocess.run(
        [sys.executable, "-c", f"NAME = {ESC_NAME!r}; {code}"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    _assert_escaped(done.stderr)


def test_terminal_text_escapes_all_but_newlines():
    from llama_index_pearl.cli.terminal import terminal_text

    assert terminal_text("a\x1b[31mb\x07\nc\u202ed\te") == "a\\x1b[31mb\\x07\nc\\u202ed\\te"
    assert terminal_text("Blue Lantern Hall – Oslo ✓") == "Blue Lantern Hall – Oslo ✓"


def test_eval_llamaindex_ranks_with_llamaindexs_object_index_over_a_sqlite_pool(bench, tmp_path):
    out = tmp_path / "anchor.json"
    assert main(["eval", str(bench), "--method", "llamaindex", "--ks", "1,2", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["method"] == "llamaindex" and result["n_units"] == len(TABLES)
    assert result["metrics"]["all"]["R@2"] > 0 and "PaperR@2" in result["metrics"]["all"]


def test_query_output_shows_a_composite_key_whole_and_an_alternative_on_its_own_line():
    from llama_index_pearl.cli.output import format_ranked
    from llama_index_pearl.joins.graph import Join
    from llama_index_pearl.retrieval.answer.join_hints import JoinHint

    pairs = (("origin", "origin"), ("time_hour", "time_hour"))
    key = Join("flights", "weather", pairs, "explicit", False)
    other = Join("flights", "weather", (("dest", "origin"), ("time_hour", "time_hour")), "explicit", False)
    text = format_ranked("q", [], [JoinHint(("flights", "weather"), (key,), alternatives=(other,))])
    assert text.splitlines()[-2:] == [
        "  flights.origin = weather.origin AND flights.time_hour = weather.time_hour  [explicit]",
        "    or flights.dest = weather.origin AND flights.time_hour = weather.time_hour  [explicit]",
    ]


def result_node(table_id, **meta):
    """A result node of ``table_id`` whose metadata holds every key of ``ResultMetadata``: a table outside any set,
    matched by its own original unit, ``meta`` over that."""
    from typing import get_type_hints

    from llama_index.core.schema import NodeWithScore, TextNode

    from llama_index_pearl.retrieval.answer.result_nodes import ResultMetadata

    record = {
        "table_id": table_id,
        "source": None,
        "matched_unit_id": f"unit-{table_id}",
        "matched_kind": "original",
        "matched_table_ids": [table_id],
        "matched_question": None,
        "cosine": 0.5,
        "in_set": False,
        "set_tier": None,
        "set_reason": None,
        "set_confidence": None,
        "set_source": None,
        "set_size": 0,
        "routed_source": None,
        "route_confidence": None,
        "route_rivals": [],
        "route_rival_confidences": [],
        "route_twins": [],
        "join_hints": [],
        **meta,
    }
    assert set(record) == set(get_type_hints(ResultMetadata))
    return NodeWithScore(node=TextNode(text=table_id, metadata=record), score=0.5)


def test_query_output_shows_the_sets_joins_then_how_the_other_candidates_join_it():
    from llama_index_pearl.cli.output import format_ranked
    from llama_index_pearl.joins.graph import Join
    from llama_index_pearl.retrieval.answer.join_hints import JoinHint

    def node(table_id, reason):
        return result_node(table_id, in_set=reason is not None, set_reason=reason)

    nodes = [node("gig", "matched"), node("venue", "matched"), node("artist", None)]
    hints = [
        JoinHint(("gig", "venue"), (Join("gig", "venue", (("venue_id", "venue_id"),), "explicit", False),)),
        JoinHint(("gig", "artist"), (Join("gig", "artist", (("artist_id", "artist_id"),), "explicit", False),)),
    ]
    text = format_ranked("q", nodes, hints)
    set_part, others = text.split("Other candidates:")
    assert "How they join (" in set_part and "gig.venue_id = venue.venue_id" in set_part
    assert "gig.artist_id" not in set_part
    assert others.splitlines()[-2:] == [
        "How they join the set and each other:",
        "  gig.artist_id = artist.artist_id  [explicit]",
    ]


def test_query_output_lists_the_may_be_needed_tier_of_a_question_in_one_database_under_its_heading():
    from llama_index_pearl.cli.output import format_ranked

    def node(table_id, tier, in_set=True):
        return result_node(table_id, in_set=in_set, set_tier=tier, set_reason="matched" if in_set else None)

    text = format_ranked("q", [node("gig", "needed"), node("venue", "may_be_needed"), node("city", None, False)], [])
    may, others = text.split("May be needed")[1].split("Other candidates:")
    assert "venue" in may and "city" not in may and "city" in others


@pytest.mark.parametrize(
    ("needed", "table", "reason", "said"),
    [
        ("diagnoses_icd", "d_icd_diagnoses", "lookup", "a lookup: it names what the needed tables hold only codes of"),
        ("store", "staff", "role", "a role: a needed table's key calls it by the role the question asks for"),
        ("order_lines", "orders", "date", "a date: the question names a period, and this table holds"),
    ],
)
def test_query_output_says_why_a_table_a_needed_table_references_is_in_the_set(needed, table, reason, said):
    from llama_index_pearl.cli.output import format_ranked

    nodes = [
        result_node(needed, in_set=True, set_tier="needed", set_reason="matched"),
        result_node(table, in_set=True, set_tier="may_be_needed", set_reason=reason),
    ]
    assert said in format_ranked("q", nodes, []).split(f"{table} ")[1]
