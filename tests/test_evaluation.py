"""Benchmark metrics: R@k, C@k and the paper's Slot R@k."""

from __future__ import annotations

import pytest

from llama_index_pearl.evaluation.benchmark import BenchQuery, evaluate_slot_rankings, recall_at_k, slot_rankings

# units: an explicit unit naming A, B and C; A's and B's own originals; C has no unit of its own but the explicit unit
TABLES = [["C", "B", "A"], ["A"], ["B"], ["D"]]
SCORES = [0.9, 0.5, 0.7, 0.6]


def test_recall_at_k_counts_gold_tables_in_the_top_k():
    assert recall_at_k(["A", "B"], ["A", "X", "B"], 2) == 0.5


def test_slot_ranking_reranks_the_top_k_units_tables_by_their_own_best_unit():
    ranked = slot_rankings(SCORES, TABLES, ks=(1, 2))
    # top-1 unit is the explicit unit: its tables re-ranked by own units (B 0.7, A 0.5), C by the explicit unit itself
    assert ranked[1] == ["C", "B", "A"]
    assert ranked[2] == ["C", "B", "A"]  # the 2nd unit (B, 0.7) adds no table


def test_slot_recall_credits_each_gold_table_only_for_its_own_rank():
    query = BenchQuery("q", "?", ("A", "B"), 2)
    at = {k: evaluate_slot_rankings([query], [slot_rankings(SCORES, TABLES, ks=(k,))], ks=(k,)) for k in (1, 3)}
    # the explicit unit at rank 1 names A and B, but C (scored by the explicit unit) outranks both
    assert at[1]["all"]["SlotR@1"] == pytest.approx(0.0)
    # top-3 units add D (0.6), which outranks A's own 0.5: only B makes the top 3
    assert at[3]["all"]["SlotR@3"] == pytest.approx(50.0)


def test_paper_recall_divides_by_k_when_the_question_has_more_gold_tables_than_k():
    from llama_index_pearl.evaluation.benchmark import paper_recall_at_k

    gold, ranked = ["A", "B", "C"], ["A", "B", "X"]
    assert recall_at_k(gold, ranked, 2) == pytest.approx(2 / 3)
    assert paper_recall_at_k(gold, ranked, 2) == 1.0
    assert paper_recall_at_k(gold, ranked, 5) == pytest.approx(2 / 3)


def test_eval_reports_both_normalisations_per_group_of_table_count():
    from llama_index_pearl.evaluation.benchmark import evaluate_rankings

    queries = [BenchQuery("q1", "?", ("A", "B", "C"), 3), BenchQuery("q2", "?", ("D",), 1)]
    metrics = evaluate_rankings(queries, [["A", "B"], ["X", "D"]], ks=(2,))
    assert metrics["3 tables"]["R@2"] == pytest.approx(66.67) and metrics["3 tables"]["PaperR@2"] == 100.0
    assert metrics["1 table"]["R@2"] == metrics["1 table"]["PaperR@2"] == 100.0


def test_questions_of_four_or_more_tables_have_their_group_and_are_judged_within_two_spare_tables():
    from llama_index_pearl.evaluation.benchmark import BenchQuery, evaluate_rankings, ranking_depth

    tables = ("a", "b", "c", "d")
    queries = [BenchQuery("q1", "?", tables, 4), BenchQuery("q2", "?", ("a",), 1)]
    ranked = [["x", "a", "b", "c", "y", "d"], ["z", "a"]]
    metrics = evaluate_rankings(queries, ranked, ks=(1, 2))
    assert metrics["4+ tables"]["n"] == 1 and metrics["4+ tables"]["C@G+2"] == 100.0  # d is 6th of |G| + 2 = 6
    assert metrics["1 table"]["C@G+2"] == 100.0 and ranking_depth(queries, (1, 2)) == 6


def test_a_set_is_judged_complete_by_every_gold_table_and_its_needed_tier_by_precision():
    from llama_index_pearl.evaluation.benchmark import evaluate_sets

    queries = [BenchQuery("1", "q", ("a", "b"), 2), BenchQuery("2", "q", ("c",), 1)]
    sets = [["a", "b", "x"], ["d"]]
    needed = [["a", "x"], ["d"]]
    metrics = evaluate_sets(queries, sets, needed)
    assert metrics["all"]["Set"] == 50.0
    assert metrics["2 tables"]["SetPrecision"] == pytest.approx(66.67)
    assert metrics["all"]["NeededPrecision"] == 25.0
    assert metrics["all"]["SetSize"] == 2.0


def test_the_calibration_of_the_confidences_is_judged_by_group():
    from llama_index_pearl.evaluation.benchmark import evaluate_sets

    queries = [BenchQuery("1", "q", ("a",), 1), BenchQuery("2", "q", ("b", "c"), 2)]
    confidences = [[("a", 0.95), ("z", 0.05)], [("b", 0.95), ("y", 0.95)]]
    metrics = evaluate_sets(queries, [["a"], ["b", "y"]], confidences=confidences)
    assert metrics["1 table"]["ECE"] == pytest.approx(0.05)
    assert metrics["2 tables"]["ECE"] == pytest.approx(0.45)


def test_source_at_1_is_whether_the_set_lies_within_the_questions_database():
    from llama_index_pearl.evaluation.benchmark import evaluate_sets

    queries = [BenchQuery("1", "q", ("a",), 1, db="shop"), BenchQuery("2", "q", ("b",), 1, db="shop")]
    sources = {"a": "shop", "b": "shop", "z": "zoo"}
    metrics = evaluate_sets(queries, [["a"], ["b", "z"]], sources=sources)
    assert metrics["all"]["Source@1"] == 50.0


def test_copy_at_1_counts_a_set_within_a_copy_the_answer_names_of_the_questions_database():
    from llama_index_pearl.evaluation.benchmark import evaluate_sets

    queries = [BenchQuery("1", "q", ("shop.a",), 1, db="shop"), BenchQuery("2", "q", ("shop.a",), 1, db="shop")]
    sources = {"shop.a": "shop", "copy.a": "shop_copy", "zoo.z": "zoo"}
    metrics = evaluate_sets(queries, [["copy.a"], ["zoo.z"]], sources=sources, copies=[["shop"], []])
    assert (metrics["all"]["Source@1"], metrics["all"]["Copy@1"]) == (0.0, 50.0)


def test_a_benchmark_table_file_holding_a_link_path_is_read_from_the_file_it_names(tmp_path):
    """A symbolic link that a copy wrote as text (business_words links real_schemas' tables)."""
    from llama_index_pearl.evaluation.benchmark import load_benchmark

    (tmp_path / "schema").mkdir()
    (tmp_path / "schema" / "shop__orders.csv").write_text("order_id,customer_id\n", encoding="utf-8")
    bench = tmp_path / "bench"
    (bench / "tables").mkdir(parents=True)
    (bench / "tables" / "shop__orders.csv").write_text("../../schema/shop__orders.csv", encoding="utf-8")
    (bench / "tables_meta.jsonl").write_text(
        '{"id": "shop__orders", "db": "shop", "table": "orders", "columns": ["order_id", "customer_id"],'
        ' "column_types": ["integer", "integer"]}\n',
        encoding="utf-8",
    )
    (bench / "queries.jsonl").write_text(
        '{"id": "q1", "question": "How many orders?", "gold_tables": ["shop__orders"], "db": "shop"}\n',
        encoding="utf-8",
    )
    (table,) = load_benchmark(bench).tables
    assert table.id == "shop__orders" and table.columns == ["order_id", "customer_id"]
    assert [str(t) for t in table.df.dtypes] == ["Int64", "Int64"]


def test_an_eval_results_json_leaves_out_what_its_method_did_not_measure_and_keeps_its_nones():
    from llama_index_pearl.evaluation.eval_result import EvalResult, RunFigures

    figures = RunFigures(n_units=4, index_seconds=0.1, query_latency_ms={"p50": 1.0, "p95": 2.0})
    result = EvalResult("tiny", "bm25", False, True, True, None, False, 4, figures, {"all": {"n": 3, "R@1": 50.0}})
    data = result.to_json()
    assert data["lexical_weight"] is None and data["batch_ms_per_query"] is None and data["n_units"] == 4
    assert not {"figures", "ablations", "llm", "join_hints", "anchor"} & set(data)


def test_an_eval_results_table_names_the_bench_and_a_row_per_group_of_questions():
    from llama_index_pearl.evaluation.eval_result import EvalResult, RunFigures

    figures = RunFigures(n_units=4, index_seconds=0.1, query_latency_ms={"p50": 1.0, "p95": 2.0})
    metrics = {"all": {"n": 3, "R@1": 50.0}, "1 table": {"n": 2, "R@1": 75.0}}
    lines = EvalResult("tiny", "bm25", False, True, True, None, False, 4, figures, metrics).table().splitlines()
    assert lines[0].startswith("bench=tiny method=bm25 tables=4 units=4")
    assert lines[1].split() == ["group", "n", "R@1"]
    assert [line.split() for line in lines[2:]] == [["all", "3", "50.00"], ["1", "table", "2", "75.00"]]
