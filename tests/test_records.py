"""Each record written as a dict reads back as itself: ``from_dict(to_dict(x)) == x``."""

from __future__ import annotations

from llama_index_pearl.corpus.build import BuildReport
from llama_index_pearl.corpus.updates import UpdateReport
from llama_index_pearl.generation.runner import GenerationReport
from llama_index_pearl.joins.graph import Join
from llama_index_pearl.tables.inputs import SkippedFile


def test_a_build_report_round_trips():
    report = BuildReport(
        n_tables=2,
        n_units=5,
        n_paths=1,
        units_by_kind={"original": 2, "explicit": 1},
        seconds={"load": 0.5, "total": 2.0},
        generation={"requests": 1, "fallback_paths": 0},
        skipped=[{"path": "bad.csv", "reason": "no header"}],
    )
    assert BuildReport.from_dict(report.to_dict()) == report


def test_an_update_report_round_trips():
    report = UpdateReport(added_tables=["orders"], new_paths=["p1"], new_units=3, cached=1, seconds={"embed": 0.1})
    assert UpdateReport.from_dict(report.to_dict()) == report


def test_a_generation_report_round_trips_its_skipped_requests_as_pairs():
    report = GenerationReport(requests=3, generated=1, cached=1, skipped=[("r3", "timed out")], prompt_tokens=90)
    assert report.to_dict()["skipped"] == [{"request_id": "r3", "reason": "timed out"}]
    assert GenerationReport.from_dict(report.to_dict()) == report


def test_a_skipped_file_round_trips():
    skipped = SkippedFile("tables/bad.csv", "ValueError: no columns")
    assert SkippedFile.from_dict(skipped.to_dict()) == skipped


def test_a_composite_join_round_trips_with_its_pairs_as_tuples():
    join = Join("flights", "weather", (("origin", "origin"), ("hour", "hour")), "explicit", True)
    assert join.to_dict()["column_pairs"] == [["origin", "origin"], ["hour", "hour"]]
    assert Join.from_dict(join.to_dict()) == join
