"""An LLM writes questions for explicit join paths by default; the free heuristic writes the implicit ones."""

from __future__ import annotations

import pytest
from fake_openai import FakeOpenAIServer
from llama_index.llms.openai_like import OpenAILike

from llama_index_pearl import HeuristicQueryGenerator, LLMQueryGenerator, PearlTableIndex
from llama_index_pearl.corpus.units_step import split_for_generator
from llama_index_pearl.joins import ColumnPair, JoinKind, JoinPath


def _path(a: str, b: str, kind: JoinKind) -> JoinPath:
    return JoinPath((a, b), ((ColumnPair(a, "k", b, "k"),),), kind, 1.2)


PATHS = [
    _path("a", "b", JoinKind.EXPLICIT),
    _path("b", "c", JoinKind.IMPLICIT),
    _path("c", "d", JoinKind.EXPLICIT),
    _path("d", "e", JoinKind.IMPLICIT),
]


@pytest.fixture
def llm():
    with FakeOpenAIServer() as server:
        yield OpenAILike(model="fake", api_base=server.base_url, api_key="x", is_chat_model=True, max_retries=0)


def test_the_llm_gets_the_explicit_paths_and_its_fallback_the_implicit_ones(llm):
    paid, free = split_for_generator(PATHS, None, LLMQueryGenerator(llm))
    assert [p.kind for p in paid] == [JoinKind.EXPLICIT, JoinKind.EXPLICIT]
    assert [p.kind for p in free] == [JoinKind.IMPLICIT, JoinKind.IMPLICIT]


def test_the_budget_caps_the_paths_the_llm_writes_per_pool(llm):
    paid, free = split_for_generator(PATHS, 1, LLMQueryGenerator(llm))
    assert paid == [PATHS[0]] and set(free) == set(PATHS[1:])


def test_every_kind_can_go_to_the_llm_as_in_the_paper(llm):
    paid, free = split_for_generator(PATHS, None, LLMQueryGenerator(llm, path_kinds=None))
    assert paid == PATHS and free == []


def test_the_heuristic_writes_every_kind():
    assert split_for_generator(PATHS, None, HeuristicQueryGenerator()) == (PATHS, [])


def test_unknown_path_kinds_are_refused(llm):
    with pytest.raises(ValueError, match="path_kinds must name some of"):
        LLMQueryGenerator(llm, path_kinds=["joined"])


def test_path_kinds_round_trip_through_the_spec(llm):
    params = LLMQueryGenerator(llm).spec_params()
    assert params["path_kinds"] == ["explicit"]
    assert LLMQueryGenerator.from_params(params, llm).path_kinds == {"explicit"}
    every_kind = LLMQueryGenerator(llm, path_kinds=None).spec_params()
    assert LLMQueryGenerator.from_params(every_kind, llm).path_kinds is None


def test_the_cost_estimate_says_which_path_kinds_the_llm_writes(llm, hashing_embedding, music_tables):
    estimate = PearlTableIndex.estimate_cost(music_tables, embed_model=hashing_embedding, llm=llm)
    assert estimate["path_kinds"] == ["explicit"]
