"""Faults from outside: a build killed mid-generation, a broken encoder, bad arguments."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
from embeddings import HashingEmbedding
from fake_openai import FakeOpenAIServer, Reply, answer_for, prompt_text
from llama_index.llms.openai_like import OpenAILike

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.generation import CACHE_FILENAME, LLMQueryGenerator

ANSWERED_BEFORE_KILL = 2
TABLES = {
    "artist": {"artist_id": [1, 2, 3, 4], "artist_name": ["Ann Lee", "Joe Sharp", "Rosa Park", "Tim Cole"]},
    "album": {"album_id": [10, 11, 12, 13], "artist_id": [1, 2, 3, 4], "label_id": [5, 6, 5, 7]},
    "label": {"label_id": [5, 6, 7], "label_name": ["Northwind", "Blue Note", "Harbor"], "city_id": [1, 2, 1]},
    "city": {"city_id": [1, 2], "city_name": ["Oslo", "Rome"], "country": ["Norway", "Italy"]},
    "track": {"track_id": [100, 101, 102, 103], "album_id": [10, 11, 12, 13], "title": ["Up", "Down", "In", "Out"]},
}
_BUILD = """
import sys
sys.path[:0] = {paths!r}
import pandas as pd
from embeddings import HashingEmbedding
from llama_index.llms.openai_like import OpenAILike
from llama_index_pearl import PearlTableIndex
from llama_index_pearl.generation import LLMQueryGenerator

llm = OpenAILike(model="fake", api_base={base_url!r}, api_key="x", is_chat_model=True, max_retries=0, timeout=120)
tables = {{name: pd.DataFrame(columns) for name, columns in {tables!r}.items()}}
PearlTableIndex.from_tables(
    tables, embed_model=HashingEmbedding(), generator=LLMQueryGenerator(llm, timeout=120, backoff=0),
    cache_dir={cache!r}, concurrency=1, budget=10, glossary=False,
)
"""


def _build(server: FakeOpenAIServer, cache: Path) -> PearlTableIndex:
    llm = OpenAILike(model="fake", api_base=server.base_url, api_key="x", is_chat_model=True, max_retries=0,
                     timeout=120)  # fmt: skip
    return PearlTableIndex.from_tables(
        {name: pd.DataFrame(columns) for name, columns in TABLES.items()},
        embed_model=HashingEmbedding(),
        generator=LLMQueryGenerator(llm, timeout=120, backoff=0),
        cache_dir=cache,
        concurrency=1,
        budget=10,
        glossary=False,  # the requests counted are the questions'
    )


def _cache_lines(cache: Path) -> int:
    path = cache / CACHE_FILENAME
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_a_build_killed_with_sigkill_mid_generation_resumes_without_repeating_a_request(tmp_path):
    cache = tmp_path / "cache"
    answered: list[str] = []
    held = threading.Event()

    def first_run(body):
        if len(answered) < ANSWERED_BEFORE_KILL:
            answered.append(prompt_text(body))
            return Reply(answer_for(body))
        held.wait(60)  # the next request hangs until the build is dead
        return Reply(answer_for(body))

    with FakeOpenAIServer(default=first_run) as server:
        script = _BUILD.format(
            paths=[str(Path(__file__).parent), os.getcwd()], base_url=server.base_url, tables=TABLES, cache=str(cache)
        )
        build = subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)], stderr=subprocess.PIPE)
        deadline = time.monotonic() + 180
        while not (server.request_count > ANSWERED_BEFORE_KILL and _cache_lines(cache) == ANSWERED_BEFORE_KILL):
            assert build.poll() is None, build.stderr.read().decode()[-2000:]
            assert time.monotonic() < deadline, "the build never reached the held request"
            time.sleep(0.05)
        os.kill(build.pid, signal.SIGKILL)
        build.wait(timeout=30)
        held.set()
        asked_again: list[str] = []
        server.default = lambda body: (asked_again.append(prompt_text(body)), Reply(answer_for(body)))[1]
        resumed = _build(server, cache)
    assert build.returncode == -signal.SIGKILL
    generation = resumed.report.generation
    assert generation["cached"] == ANSWERED_BEFORE_KILL and not generation["skipped"]
    assert len(asked_again) == generation["generated"] >= 1
    assert set(asked_again).isdisjoint(answered)  # no answered (paid) request is sent twice


def test_a_non_finite_query_embedding_is_a_value_error_not_an_empty_result(music_tables):
    class Broken(HashingEmbedding):
        def _get_query_embedding(self, query: str) -> list[float]:
            return [float("nan")] * self.dim

    index = PearlTableIndex.from_tables(music_tables, embed_model=Broken())
    with pytest.raises(ValueError, match="non-finite .*embedding for the query 'Wembley'"):
        index.as_retriever().retrieve("Wembley")


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
async def test_a_non_finite_embedding_given_in_the_query_bundle_is_the_same_value_error(
    music_tables, hashing_embedding, bad
):
    from llama_index.core.schema import QueryBundle

    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)
    bundle = QueryBundle(query_str="Wembley", embedding=[bad] * hashing_embedding.dim)
    retriever = index.as_retriever()
    for attempt in (retriever.retrieve, retriever.aretrieve, lambda b: retriever.retrieve_many([b])):
        with pytest.raises(ValueError, match="non-finite .*embedding for the query 'Wembley'"):
            result = attempt(bundle)
            if hasattr(result, "__await__"):
                await result


@pytest.mark.parametrize("k", [2.5, "3", 0, True])
def test_a_bad_k_is_refused_when_the_retriever_is_made(music_tables, hashing_embedding, k):
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)
    with pytest.raises(ValueError, match="similarity_top_k must be an integer"):
        index.as_retriever(similarity_top_k=k)


@pytest.mark.parametrize("margin", [False, True, 0.0, 1.0, -1])
def test_set_margin_refuses_bools_and_floats_alike(music_tables, hashing_embedding, margin):
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)
    with pytest.raises(ValueError, match="set_margin must be an integer >= 0 or None"):
        index.as_retriever(set_margin=margin)
