"""Paid LLM work is never thrown away: failing cache writes, bad cache lines, capped text, dead servers."""

from __future__ import annotations

import json
import logging

import pandas as pd
import pytest
from llama_index.llms.openai_like import OpenAILike

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.generation import (
    MAX_QUESTION_CHARS,
    GeneratedQuery,
    GenerationCache,
    GenerationFailed,
    LLMQueryGenerator,
    generate_all,
)

try:
    from fake_openai import FakeOpenAIServer, Reply, answer_for, http_error
except ImportError:  # tests/ became a package
    from tests.fake_openai import FakeOpenAIServer, Reply, answer_for, http_error

try:
    from test_generation_runner import requests
except ImportError:
    from tests.test_generation_runner import requests


def _generator(server: FakeOpenAIServer, **kwargs) -> LLMQueryGenerator:
    llm = OpenAILike(model="fake", api_base=server.base_url, api_key="x", is_chat_model=True, max_retries=0,
                     timeout=30)  # fmt: skip
    return LLMQueryGenerator(llm, backoff=0.0, **kwargs)


@pytest.fixture
def chain_tables() -> dict[str, pd.DataFrame]:
    return {
        "singer": pd.DataFrame({"singer_id": [1, 2, 3], "singer_name": ["Joe Sharp", "Ann Lee", "Rosa Park"]}),
        "performance": pd.DataFrame({"performance_id": [10, 11, 12], "singer_id": [1, 2, 3], "stadium_id": [7, 8, 7]}),
        "stadium": pd.DataFrame({"stadium_id": [7, 8], "stadium_name": ["Wembley", "Maracana"]}),
    }


def test_answers_survive_a_cache_folder_that_cannot_be_created(tmp_path, caplog):
    (tmp_path / "afile").write_text("not a folder")
    with FakeOpenAIServer() as server, caplog.at_level(logging.WARNING):
        run = generate_all(_generator(server), requests(4), cache=tmp_path / "afile" / "sub")
    assert run.report.generated == 4 and run.report.skipped == []
    assert all(r.ok for r in run.results)
    warnings = [r for r in caplog.records if "Cannot write generation cache" in r.getMessage()]
    assert len(warnings) == 1 and "afile" in warnings[0].getMessage()


def test_an_index_built_over_a_broken_cache_folder_holds_the_generated_questions(
    chain_tables, hashing_embedding, tmp_path
):
    (tmp_path / "afile").write_text("not a folder")
    with FakeOpenAIServer(default=lambda body: Reply(answer_for(body, "Which stadium hosted Ann Lee?"))) as server:
        index = PearlTableIndex.from_tables(
            chain_tables, embed_model=hashing_embedding, llm=_generator(server).llm, cache_dir=tmp_path / "afile/sub"
        )
    assert index.report.generation["generated"] >= 1 and not index.report.generation["skipped"]
    assert "Which stadium hosted Ann Lee?" in {u.metadata.get("question") for u in index.units}


def test_a_cache_line_without_a_question_is_a_miss(tmp_path):
    path = tmp_path / "c.jsonl"
    line = {"key": "k", "result": {"request_id": "p", "queries": []}}
    no_text = {"key": "k2", "result": {"request_id": "p", "queries": [{"question": " ", "columns": {"t": ["a"]}}]}}
    wrong_type = {"key": "k3", "result": {"request_id": "p", "queries": [{"question": None, "columns": {"t": ["a"]}}]}}
    path.write_text("".join(json.dumps(e) + "\n" for e in (line, no_text, wrong_type)))
    cache = GenerationCache(path)
    assert len(cache) == 0 and cache.get("k") is None and cache.get("k2") is None and cache.get("k3") is None


def test_a_cache_line_without_queries_is_asked_again(tmp_path):
    cache_file = tmp_path / "gen.jsonl"
    with FakeOpenAIServer() as server:
        generate_all(_generator(server), requests(2), cache=cache_file)
        entries = [json.loads(line) for line in cache_file.read_text().splitlines()]
        del entries[0]["result"]["queries"]
        cache_file.write_text("".join(json.dumps(e) + "\n" for e in entries))
        server.requests.clear()
        run = generate_all(_generator(server), requests(2), cache=cache_file)
    assert run.report.cached == 1 and run.report.generated == 1 and len(server.requests) == 1


def test_a_huge_generated_question_is_capped():
    question = "Which stadium " + "is very big " * 40_000 + "?"
    query = GeneratedQuery(question, {"t": ["a"]})
    assert len(query.question) <= MAX_QUESTION_CHARS and query.question.startswith("Which stadium is very big")
    assert not query.question.endswith(" ")


def test_a_huge_llm_answer_reaches_the_cache_capped(tmp_path):
    huge = "Which stadium " + "x" * 400_000
    with FakeOpenAIServer(default=lambda body: Reply(answer_for(body, huge))) as server:
        run = generate_all(_generator(server), requests(1), cache=tmp_path)
    assert len(run.results[0].queries[0].question) <= MAX_QUESTION_CHARS
    assert (tmp_path / "generation_cache.jsonl").stat().st_size < 10 * MAX_QUESTION_CHARS


def test_every_llm_request_failing_raises_naming_the_count_and_reason(chain_tables, hashing_embedding, tmp_path):
    with FakeOpenAIServer(default=http_error(500)) as server, pytest.raises(GenerationFailed) as caught:
        PearlTableIndex.from_tables(
            chain_tables, embed_model=hashing_embedding, generator=_generator(server), cache_dir=tmp_path
        )
    message = str(caught.value)
    assert "failed for" in message and "max_failed_share=1" in message and "500" in message
    assert caught.value.report.requests == len(caught.value.report.skipped) >= 1


def test_a_lower_failure_share_raises_on_partial_failure_and_the_cache_keeps_the_rest(tmp_path):
    reqs = requests(4)

    def half(body):
        return http_error(500) if "person_0" in body["messages"][1]["content"] else Reply(answer_for(body))

    with FakeOpenAIServer(default=half) as server:
        with pytest.raises(GenerationFailed, match="1 of 4"):
            generate_all(_generator(server, max_failed_share=0.25), reqs, cache=tmp_path)
        assert len(GenerationCache(tmp_path)) == 3
        run = generate_all(_generator(server, max_failed_share=0.5), reqs, cache=tmp_path)
    assert run.report.cached == 3 and len(run.report.skipped) == 1


def test_failure_share_outside_zero_to_one_is_rejected():
    with FakeOpenAIServer() as server, pytest.raises(ValueError, match="max_failed_share"):
        _generator(server, max_failed_share=1.5)
