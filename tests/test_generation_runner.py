"""agenerate_all / generate_all: concurrency, cache resume, skipping, report, dry run."""

from __future__ import annotations

import asyncio
import json
import logging

import pandas as pd
from llama_index.llms.openai_like import OpenAILike

from llama_index_pearl.generation import (
    HeuristicQueryGenerator,
    LLMQueryGenerator,
    PathRequest,
    agenerate_all,
    estimate_prompt_tokens,
    generate_all,
)
from llama_index_pearl.joins.paths import ColumnPair, JoinKind, JoinPath
from llama_index_pearl.tables.table import Table

try:
    from fake_openai import FakeOpenAIServer, Reply, answer_for, delayed, text
except ImportError:  # tests/ became a package
    from tests.fake_openai import FakeOpenAIServer, Reply, answer_for, delayed, text


def requests(n: int) -> list[PathRequest]:
    """``n`` distinct 2-table paths: person_i.city_id -> city_i.city_id."""
    out = []
    for i in range(n):
        person = Table(f"person_{i}", pd.DataFrame({"name": [f"Ann {i}", f"Bob {i}"], "city_id": [1, 2]}))
        city = Table(f"city_{i}", pd.DataFrame({"city_id": [1, 2], "city": ["Oslo", "Rome"]}))
        pair = ColumnPair(person.id, "city_id", city.id, "city_id")
        path = JoinPath((person.id, city.id), ((pair,),), JoinKind.EXPLICIT, 1.0)
        out.append(PathRequest(path, {person.id: person, city.id: city}))
    return out


def generator_for(server: FakeOpenAIServer, timeout: float = 30.0, **kwargs) -> LLMQueryGenerator:
    llm = OpenAILike(model="fake", api_base=server.base_url, api_key="x", is_chat_model=True, max_retries=0,
                     timeout=timeout)  # fmt: skip
    return LLMQueryGenerator(llm, timeout=timeout, backoff=0.0, **kwargs)


async def test_all_paths_are_generated_and_tokens_summed_in_the_report():
    with FakeOpenAIServer() as server:
        run = await agenerate_all(generator_for(server), requests(5))
    assert [r.request_id for r in run.results] == [r.request_id for r in requests(5)]
    assert run.report.requests == 5 and run.report.generated == 5 and run.report.skipped == []
    assert run.report.prompt_tokens == sum(r.prompt_tokens for r in run.results) > 0
    assert run.report.completion_tokens > 0 and run.report.seconds > 0


async def test_concurrency_bounds_requests_in_flight():
    with FakeOpenAIServer(default=delayed(0.2)) as server:
        await agenerate_all(generator_for(server), requests(8), concurrency=3)
    assert 2 <= server.max_in_flight <= 3  # bounded, yet actually concurrent


async def test_failing_path_is_skipped_and_reported_while_others_succeed(caplog):
    reqs = requests(3)
    bad = reqs[1].path.path_id

    def behave(body):
        return text("garbage") if "person_1" in body["messages"][1]["content"] else Reply(answer_for(body))

    with FakeOpenAIServer(default=behave) as server, caplog.at_level(logging.WARNING):
        run = await agenerate_all(generator_for(server), reqs, concurrency=2)
    assert run.report.generated == 2
    assert [path_id for path_id, _ in run.report.skipped] == [bad]
    assert "rejected answer" in run.report.skipped[0][1]
    assert bad in caplog.text and "person_1 -> city_1" in caplog.text


async def test_rerun_with_cache_makes_no_llm_call(tmp_path):
    with FakeOpenAIServer() as server:
        first = await agenerate_all(generator_for(server), requests(4), cache=tmp_path)
        second = await agenerate_all(generator_for(server), requests(4), cache=tmp_path)
    assert server.request_count == 4
    assert second.report.cached == 4 and second.report.generated == 0 and second.report.prompt_tokens == 0
    assert [r.queries for r in second.results] == [r.queries for r in first.results]


async def test_build_killed_mid_way_resumes_from_cache_calling_the_llm_only_for_the_rest(tmp_path):
    total, done_before_crash = 6, 4
    server = FakeOpenAIServer()

    def die_after_n(body):
        if server.request_count > done_before_crash:
            server.stop_soon()
            return Reply(drop=True)
        return Reply(answer_for(body))

    server.default = die_after_n
    server.start()
    try:
        first = await agenerate_all(generator_for(server, max_attempts=1), requests(total), concurrency=1,
                                    cache=tmp_path / "gen.jsonl")  # fmt: skip
        assert first.report.generated == done_before_crash
        assert len(first.report.skipped) == total - done_before_crash
        server.requests.clear()
        server.default = lambda body: Reply(answer_for(body))
        server.start()
        second = await agenerate_all(generator_for(server), requests(total), cache=tmp_path / "gen.jsonl")
    finally:
        server.stop()
    assert server.request_count == total - done_before_crash
    assert second.report.cached == done_before_crash and second.report.generated == total - done_before_crash
    assert all(r.ok for r in second.results)


async def test_cache_line_lost_in_a_crash_is_regenerated(tmp_path):
    cache_file = tmp_path / "gen.jsonl"
    with FakeOpenAIServer() as server:
        await agenerate_all(generator_for(server), requests(3), cache=cache_file)
        lines = cache_file.read_text().splitlines()
        cache_file.write_text("\n".join(lines[:2]) + "\n" + lines[2][: len(lines[2]) // 2])
        run = await agenerate_all(generator_for(server), requests(3), cache=cache_file)
    assert server.request_count == 4 and run.report.cached == 2


async def test_generator_exception_becomes_a_skip_not_a_crash():
    class Exploding(HeuristicQueryGenerator):
        async def agenerate(self, request):
            raise RuntimeError("boom")

    run = await agenerate_all(Exploding(), requests(2))
    assert run.report.generated == 0 and [why for _, why in run.report.skipped] == ["RuntimeError: boom"] * 2


def test_generate_all_works_without_an_event_loop():
    run = generate_all(HeuristicQueryGenerator(), requests(3), show_progress=True)
    assert run.report.generated == 3


async def test_generate_all_works_inside_a_running_event_loop():
    run = generate_all(HeuristicQueryGenerator(), requests(2))
    assert run.report.generated == 2
    await asyncio.sleep(0)


def test_report_serialises_to_json():
    run = generate_all(HeuristicQueryGenerator(), requests(1))
    data = json.loads(json.dumps(run.report.to_dict()))
    assert data["requests"] == 1 and data["skipped"] == []


def test_dry_run_counts_prompt_tokens_without_calling_anything():
    estimate = estimate_prompt_tokens(requests(3))
    assert estimate["requests"] == 3 and 0 < estimate["per_path_avg"] < 1000
    assert estimate["prompt_tokens"] == round(estimate["per_path_avg"] * 3)
