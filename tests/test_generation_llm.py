"""LLMQueryGenerator against a real OpenAILike client and a scripted fake server."""

from __future__ import annotations

import json
import logging

import pandas as pd
import pytest
from llama_index.llms.openai_like import OpenAILike

from llama_index_pearl.generation import LLMQueryGenerator, PathRequest, SingleTableRequest
from llama_index_pearl.joins.paths import ColumnPair, JoinKind, JoinPath
from llama_index_pearl.tables.table import Table

try:
    from fake_openai import FakeOpenAIServer, Reply, delayed, fenced_answer, http_error, text
except ImportError:  # tests/ became a package
    from tests.fake_openai import FakeOpenAIServer, Reply, delayed, fenced_answer, http_error, text


def concert() -> Table:
    return Table(
        "concert",
        pd.DataFrame(
            {
                "concert_ID": [1, 2, 3],
                "concert_Name": ["Auditions", "Super bootcamp", "Home Visits"],
                "Theme": ["Free choice", "Free choice 2", "Bleeding Love"],
                "Stadium_ID": [1, 2, 2],
            }
        ),
    )


def stadium() -> Table:
    return Table(
        "stadium",
        pd.DataFrame({"Stadium_ID": [1, 2], "Name": ["Stark's Park", "Glebe Park"], "Capacity": [10104, 4125]}),
    )


def path_request() -> PathRequest:
    pair = ColumnPair("concert", "Stadium_ID", "stadium", "Stadium_ID")
    path = JoinPath(("concert", "stadium"), ((pair,),), JoinKind.EXPLICIT, 1.0)
    return PathRequest(path, {"concert": concert(), "stadium": stadium()})


def make_generator(server: FakeOpenAIServer, *, timeout: float = 30.0, is_chat_model: bool = True, **kwargs):
    llm = OpenAILike(
        model="fake",
        api_base=server.base_url,
        api_key="x",
        is_chat_model=is_chat_model,
        max_retries=0,
        timeout=timeout,
    )
    return LLMQueryGenerator(llm, timeout=timeout, backoff=0.0, **kwargs)


def answer(question="Which stadium hosted the concert Super bootcamp?", t1=("concert_Name",), t2=("Name",)) -> str:
    return json.dumps({"question": question, "relevant_columns_t1": list(t1), "relevant_columns_t2": list(t2)})


async def test_valid_answer_gives_one_query_with_columns_per_table():
    with FakeOpenAIServer([text(answer(t1=["concert_Name", "Stadium_ID"]))]) as server:
        result = await make_generator(server).agenerate(path_request())
    assert result.ok and result.attempts == 1
    assert result.queries[0].question == "Which stadium hosted the concert Super bootcamp?"
    assert result.queries[0].columns == {"concert": ["concert_Name", "Stadium_ID"], "stadium": ["Name"]}


async def test_token_counts_come_from_the_servers_usage_field():
    with FakeOpenAIServer() as server:
        result = await make_generator(server).agenerate(path_request())
    assert result.ok and not result.tokens_estimated
    sent = "\n".join(m["content"] for m in server.requests[0]["messages"])
    assert result.prompt_tokens == len(sent) // 4
    assert result.completion_tokens > 0


async def test_openai_like_chat_model_is_asked_for_json_mode():
    with FakeOpenAIServer() as server:
        await make_generator(server).agenerate(path_request())
    assert server.requests[0]["response_format"] == {"type": "json_object"}
    assert [m["role"] for m in server.requests[0]["messages"]] == ["system", "user"]


async def test_completion_model_uses_the_completions_endpoint():
    with FakeOpenAIServer() as server:
        result = await make_generator(server, is_chat_model=False).agenerate(path_request())
    assert result.ok
    assert server.paths == ["/v1/completions"]
    assert "response_format" not in server.requests[0]


async def test_answer_in_code_fences_is_accepted_first_time():
    with FakeOpenAIServer([fenced_answer()]) as server:
        result = await make_generator(server).agenerate(path_request())
    assert result.ok and result.attempts == 1


async def test_garbage_then_valid_answer_succeeds_on_the_corrective_retry():
    with FakeOpenAIServer([text("I cannot help with tables today.")]) as server:
        result = await make_generator(server).agenerate(path_request())
    assert result.ok and result.attempts == 2
    retry = server.requests[1]["messages"]
    assert [m["role"] for m in retry] == ["system", "user", "assistant", "user"]
    assert "could not be used" in retry[-1]["content"]


async def test_garbage_twice_skips_the_path_with_a_warning_naming_it(caplog):
    request = path_request()
    with FakeOpenAIServer(default=text("no json here")) as server, caplog.at_level(logging.WARNING):
        result = await make_generator(server).agenerate(request)
    assert not result.ok and result.attempts == 2 and server.request_count == 2
    assert "rejected answer" in result.skipped_reason
    assert request.path.path_id in caplog.text and "concert -> stadium" in caplog.text


async def test_hallucinated_column_is_dropped():
    with FakeOpenAIServer([text(answer(t2=["Name", "Roof_Type"]))]) as server:
        result = await make_generator(server).agenerate(path_request())
    assert result.queries[0].columns["stadium"] == ["Name"]


async def test_only_hallucinated_columns_for_a_table_is_rejected_then_retried():
    with FakeOpenAIServer([text(answer(t2=["Roof_Type"]))]) as server:
        result = await make_generator(server).agenerate(path_request())
    assert result.ok and result.attempts == 2
    assert "stadium" in server.requests[1]["messages"][-1]["content"]


async def test_last_answer_without_columns_for_a_table_falls_back_to_its_join_columns():
    with FakeOpenAIServer(default=text(answer(t2=["Roof_Type"]))) as server:
        result = await make_generator(server).agenerate(path_request())
    assert result.ok and result.attempts == 2
    assert result.queries[0].columns == {"concert": ["concert_Name"], "stadium": ["Stadium_ID"]}


async def test_single_table_answer_without_columns_is_still_skipped():
    reply = json.dumps({"questions": [{"question": "Which stadium is largest?", "relevant_columns": ["Roof"]}]})
    with FakeOpenAIServer(default=text(reply)) as server:
        result = await make_generator(server).agenerate(SingleTableRequest(stadium(), n_questions=1))
    assert not result.ok and "no valid column" in result.skipped_reason


async def test_column_named_under_the_wrong_table_is_moved_to_its_table():
    with FakeOpenAIServer([text(answer(t1=["concert_Name", "Capacity"], t2=["Name"]))]) as server:
        result = await make_generator(server).agenerate(path_request())
    assert result.queries[0].columns == {"concert": ["concert_Name"], "stadium": ["Name", "Capacity"]}


async def test_null_question_is_rejected_and_retried():
    with FakeOpenAIServer([text(json.dumps({"question": None, "thought": "needs 3 tables"}))]) as server:
        result = await make_generator(server).agenerate(path_request())
    assert result.ok and result.attempts == 2


async def test_http_500_counts_as_an_attempt_and_is_retried():
    with FakeOpenAIServer([http_error(500)]) as server:
        result = await make_generator(server).agenerate(path_request())
    assert result.ok and result.attempts == 2 and server.request_count == 2


async def test_http_500_on_every_attempt_skips_without_raising():
    with FakeOpenAIServer(default=http_error(500)) as server:
        result = await make_generator(server).agenerate(path_request())
    assert not result.ok and "LLM call failed" in result.skipped_reason
    assert server.request_count == 2  # max_retries=0: our two attempts are the only calls


async def test_reply_slower_than_the_timeout_counts_as_an_attempt():
    # the retry's timely reply must fit the timeout on a loaded 2-core CI machine (0.5 s did not, once)
    with FakeOpenAIServer([delayed(30.0)]) as server:
        result = await make_generator(server, timeout=3.0).agenerate(path_request())
    assert result.ok and result.attempts == 2


async def test_dropped_connection_is_a_failed_attempt():
    with FakeOpenAIServer([Reply(drop=True)]) as server:
        result = await make_generator(server).agenerate(path_request())
    assert result.ok and result.attempts == 2


async def test_unreachable_server_skips_the_path():
    server = FakeOpenAIServer().start()
    server.stop()
    result = await make_generator(server, max_attempts=1).agenerate(path_request())
    assert not result.ok and result.attempts == 1


async def test_single_table_request_returns_several_questions():
    questions = [{"question": f"Q{i} about Glebe Park?", "relevant_columns": ["Name", "Capacity"]} for i in range(5)]
    with FakeOpenAIServer([text(json.dumps({"questions": questions}))]) as server:
        result = await make_generator(server).agenerate(SingleTableRequest(stadium(), n_questions=5))
    assert [q.question for q in result.queries] == [f"Q{i} about Glebe Park?" for i in range(5)]
    assert all(q.columns == {"stadium": ["Name", "Capacity"]} for q in result.queries)
    assert "Write exactly 5 questions" in server.requests[0]["messages"][1]["content"]


def test_sync_generate_wraps_agenerate():
    with FakeOpenAIServer() as server:
        result = make_generator(server).generate(path_request())
    assert result.ok


def test_model_name_defaults_to_the_llm_model():
    with FakeOpenAIServer() as server:
        assert make_generator(server).model_name == "fake"


@pytest.mark.parametrize("attempts", [0, -1])
def test_max_attempts_must_be_positive(attempts):
    with FakeOpenAIServer() as server, pytest.raises(ValueError):
        make_generator(server, max_attempts=attempts)
