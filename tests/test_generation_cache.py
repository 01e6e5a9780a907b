"""GenerationCache: durable JSONL of accepted generations, tolerant of a crash mid-write."""

from __future__ import annotations

import pandas as pd

from llama_index_pearl.generation import (
    CACHE_FILENAME,
    GeneratedQuery,
    GenerationCache,
    GenerationResult,
    HeuristicQueryGenerator,
    SingleTableRequest,
)
from llama_index_pearl.tables.table import Table


def result(request_id: str = "p1", question: str = "Q?") -> GenerationResult:
    return GenerationResult(request_id, [GeneratedQuery(question, {"t": ["a"]})], prompt_tokens=10, attempts=1)


def test_put_then_reload_returns_the_result_marked_cached(tmp_path):
    GenerationCache(tmp_path / "c.jsonl").put("k1", result())
    loaded = GenerationCache(tmp_path / "c.jsonl").get("k1")
    assert loaded is not None and loaded.cached
    assert loaded.queries == result().queries and loaded.prompt_tokens == 10


def test_a_directory_gets_the_default_file_name(tmp_path):
    cache = GenerationCache(tmp_path)
    cache.put("k", result())
    assert (tmp_path / CACHE_FILENAME).exists()


def test_skipped_results_are_not_cached(tmp_path):
    cache = GenerationCache(tmp_path / "c.jsonl")
    cache.put("k", GenerationResult("p", skipped_reason="timeout"))
    assert len(cache) == 0 and not (tmp_path / "c.jsonl").exists()


def test_truncated_last_line_is_ignored_and_later_appends_survive(tmp_path):
    path = tmp_path / "c.jsonl"
    GenerationCache(path).put("k1", result(question="first"))
    with path.open("a") as handle:
        handle.write('{"key": "k2", "result": {"request_id": "p2", "que')  # killed mid-write
    cache = GenerationCache(path)
    assert len(cache) == 1
    cache.put("k3", result(question="third"))
    reloaded = GenerationCache(path)
    assert {k for k in ("k1", "k2", "k3") if k in reloaded} == {"k1", "k3"}


def test_each_entry_is_on_disk_as_soon_as_put_returns(tmp_path):
    cache = GenerationCache(tmp_path / "c.jsonl")
    cache.put("k1", result())
    cache.put("k2", result())
    assert len((tmp_path / "c.jsonl").read_text().splitlines()) == 2


def test_key_changes_when_shown_content_or_model_changes():
    table = Table("t", pd.DataFrame({"a": ["x", "y"]}))
    changed = Table("t", pd.DataFrame({"a": ["x", "z"]}))
    generator = HeuristicQueryGenerator()
    key = generator.cache_key(SingleTableRequest(table))
    assert key == HeuristicQueryGenerator().cache_key(SingleTableRequest(table))
    assert key != generator.cache_key(SingleTableRequest(changed))
    assert key != generator.cache_key(SingleTableRequest(table, n_questions=3))
    assert key != HeuristicQueryGenerator(n_single=3).cache_key(SingleTableRequest(table))
