"""Generators own their rules and round-trip through persist/load as specs."""

from __future__ import annotations

import json

import pytest
from fake_openai import FakeOpenAIServer
from llama_index.llms.openai_like import OpenAILike

from llama_index_pearl import HeuristicQueryGenerator, LLMQueryGenerator, PearlTableIndex, register_generator
from llama_index_pearl.generation import GenerationRequest, GenerationResult, QueryGenerator, generator_from_spec


@register_generator("test-echo")
class EchoGenerator(QueryGenerator):
    """A user-defined generator: the heuristic's questions, its own settings."""

    cost_per_path = 0.0
    caches_by_default = False

    def __init__(self, prefix: str = "echo") -> None:
        self.prefix = prefix
        self.model_name = f"echo({prefix})"
        self._inner = HeuristicQueryGenerator()

    async def agenerate(self, request: GenerationRequest) -> GenerationResult:
        return await self._inner.agenerate(request)

    def spec_params(self) -> dict[str, str]:
        return {"prefix": self.prefix}


class UnregisteredGenerator(EchoGenerator):
    spec_type = None


def _llm(server: FakeOpenAIServer) -> OpenAILike:
    return OpenAILike(model="fake", api_base=server.base_url, api_key="x", is_chat_model=True, max_retries=0)


def test_the_heuristic_spec_rebuilds_the_same_generator():
    spec = HeuristicQueryGenerator(n_single=3, seed=7).to_spec()
    rebuilt = generator_from_spec(json.loads(json.dumps(spec)))
    assert isinstance(rebuilt, HeuristicQueryGenerator) and rebuilt.model_name == "heuristic(n_single=3,seed=7)"


def test_the_heuristic_asks_no_more_questions_per_table_than_it_writes():
    assert HeuristicQueryGenerator(n_single=3).questions_per_table == 3


def test_an_llm_spec_keeps_its_settings_and_needs_the_llm_again():
    with FakeOpenAIServer() as server:
        generator = LLMQueryGenerator(_llm(server), timeout=9.0, max_attempts=3, fallback=None)
        spec = json.loads(json.dumps(generator.to_spec()))
        with pytest.raises(ValueError, match="pass llm="):
            generator_from_spec(spec)
        rebuilt = generator_from_spec(spec, _llm(server))
    assert (rebuilt.timeout, rebuilt.max_attempts, rebuilt.fallback) == (9.0, 3, None)


def test_an_llm_time_limit_covers_every_attempt_and_its_backoff():
    with FakeOpenAIServer() as server:
        generator = LLMQueryGenerator(_llm(server), timeout=10.0, max_attempts=2, backoff=1.0)
    assert generator.time_limit() == 10.0 * 2 + 1.0 * 4 + 5.0
    assert HeuristicQueryGenerator().time_limit() is None


def test_a_registered_custom_generator_round_trips_through_persist_and_load(music_tables, hashing_embedding, tmp_path):
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding, generator=EchoGenerator("x"))
    index.persist(tmp_path / "idx")
    loaded = PearlTableIndex.load(tmp_path / "idx", embed_model=hashing_embedding)
    assert isinstance(loaded.generator, EchoGenerator) and loaded.generator.prefix == "x"


def test_an_unregistered_generator_says_how_to_restore_it(music_tables, hashing_embedding, tmp_path):
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding, generator=UnregisteredGenerator())
    index.persist(tmp_path / "idx")
    loaded = PearlTableIndex.load(tmp_path / "idx", embed_model=hashing_embedding)
    with pytest.raises(ValueError, match="register_generator"):
        _ = loaded.generator
    given = PearlTableIndex.load(tmp_path / "idx", embed_model=hashing_embedding, generator=EchoGenerator())
    assert isinstance(given.generator, EchoGenerator)


def test_a_name_taken_by_another_class_cannot_be_registered_again():
    with pytest.raises(ValueError, match="already registered"):
        register_generator("heuristic")(EchoGenerator)
