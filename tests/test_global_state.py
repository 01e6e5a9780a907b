"""A library leaves its host's global state alone: environment, garbage collector, LlamaIndex's Settings."""

from __future__ import annotations

import gc
import logging
import os

import pandas as pd
import pytest
from embeddings import HashingEmbedding, TrigramEmbedding
from fake_openai import FakeOpenAIServer, valid_answer
from llama_index.core import Settings
from llama_index.core.llms import MockLLM
from llama_index.llms.openai_like import OpenAILike

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.text.models import default_embed_model, embed_model_name

CHAIN = {
    "singer": pd.DataFrame({"singer_id": [1, 2, 3, 4], "singer_name": ["Joe Sharp", "Ann Lee", "Rosa Park", "Tim"]}),
    "performance": pd.DataFrame(
        {"performance_id": [10, 11, 12, 13], "singer_id": [1, 2, 3, 4], "stadium": [7, 8, 7, 9]}
    ),
}


class GcWatchingEmbedding(HashingEmbedding):
    """Records whether the garbage collector was on each time it embedded (discovery and units)."""

    gc_states: list = []  # noqa: RUF012 - one list per instance, given by the test

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        self.gc_states.append(gc.isenabled())
        return [self._vector(t) for t in texts]


def test_a_build_never_switches_the_garbage_collector_off(music_tables):
    model = GcWatchingEmbedding(gc_states=[])
    PearlTableIndex.from_tables(music_tables, embed_model=model)
    assert model.gc_states and all(model.gc_states)


def test_loading_the_bundled_encoder_sets_no_environment_variable(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    before = dict(os.environ)
    default_embed_model.cache_clear()
    default_embed_model()
    assert dict(os.environ) == before


@pytest.fixture
def settings_llm(monkeypatch):
    """``Settings.llm`` set through LlamaIndex's public setter, put back afterwards."""
    monkeypatch.setattr(Settings, "_llm", None)  # restored by monkeypatch; the test sets it publicly
    Settings.llm = MockLLM()
    return Settings.llm


def test_a_build_pays_for_no_llm_it_was_not_given(music_tables, hashing_embedding, settings_llm):
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)
    assert index.generator_name.startswith("heuristic")


def test_engines_answer_with_settings_llm_as_llamaindexs_own_do(music_tables, hashing_embedding, settings_llm):
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)
    assert index.as_query_engine().query("Wembley capacity").source_nodes


def test_a_paid_build_says_what_it_will_send_before_sending_it(tmp_path, caplog):
    with FakeOpenAIServer(default=valid_answer("Which stadium did Ann Lee play?")) as server:
        sent_when_told: list[int] = []

        class Listener(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                if "to send" in record.getMessage():
                    sent_when_told.append(len(server.requests))

        listener = Listener(level=logging.INFO)
        logger = logging.getLogger("llama_index_pearl.generation")  # the glossary's and the questions' runs
        logger.addHandler(listener)
        previous = logger.level
        logger.setLevel(logging.INFO)
        try:
            llm = OpenAILike(model="fake", api_base=server.base_url, api_key="x", is_chat_model=True, max_retries=0)
            PearlTableIndex.from_tables(CHAIN, embed_model=HashingEmbedding(), llm=llm, cache_dir=tmp_path)
        finally:
            logger.removeHandler(listener)
            logger.setLevel(previous)
        assert server.requests  # it paid
    assert sent_when_told and sent_when_told[0] == 0


def _first_table(index: PearlTableIndex, question: str) -> str:
    return index.as_retriever(similarity_top_k=1).retrieve(question)[0].node.metadata["table_id"]


@pytest.fixture
def settings_encoder(monkeypatch):
    """``Settings.embed_model`` set through LlamaIndex's public setter to a small encoder, put back afterwards."""
    monkeypatch.setattr(Settings, "_embed_model", None)  # restored by monkeypatch; the test sets it publicly
    Settings.embed_model = TrigramEmbedding()
    return Settings.embed_model


def test_a_build_given_no_encoder_embeds_with_settings_embed_model(music_tables, settings_encoder):
    index = PearlTableIndex.from_tables(music_tables)
    assert index.embed_model is settings_encoder
    assert _first_table(index, "Wembley capacity") == "stadium"


def test_an_encoder_given_to_the_build_wins_over_settings_embed_model(music_tables, settings_encoder):
    given = HashingEmbedding()
    assert PearlTableIndex.from_tables(music_tables, embed_model=given).embed_model is given


def test_with_settings_embed_model_never_set_the_build_uses_the_bundled_minilm_not_openai(music_tables, monkeypatch):
    monkeypatch.setattr(Settings, "_embed_model", None)
    index = PearlTableIndex.from_tables(music_tables)
    assert embed_model_name(index.embed_model) == "sentence-transformers/all-MiniLM-L6-v2"
    assert Settings._embed_model is None  # LlamaIndex's OpenAI default was never resolved


def test_an_index_built_with_settings_embed_model_loads_with_it(music_tables, settings_encoder, tmp_path):
    PearlTableIndex.from_tables(music_tables).persist(tmp_path / "idx")
    loaded = PearlTableIndex.load(tmp_path / "idx")
    assert loaded.embed_model is settings_encoder
    assert _first_table(loaded, "Wembley capacity") == "stadium"


def test_a_loaded_index_keeps_its_own_encoder_when_settings_embed_model_changed(
    music_tables, minilm, settings_encoder, tmp_path, caplog
):
    PearlTableIndex.from_tables(music_tables, embed_model=minilm).persist(tmp_path / "idx")
    with caplog.at_level(logging.WARNING, logger="llama_index_pearl.storage.persistence"):
        loaded = PearlTableIndex.load(tmp_path / "idx")
    assert embed_model_name(loaded.embed_model) == "sentence-transformers/all-MiniLM-L6-v2"
    warned = [r.getMessage() for r in caplog.records]
    assert any("Settings.embed_model" in m and "TrigramEmbedding" in m for m in warned)


def test_loading_an_index_whose_encoder_settings_does_not_hold_names_both(music_tables, settings_encoder, tmp_path):
    PearlTableIndex.from_tables(music_tables, embed_model=HashingEmbedding()).persist(tmp_path / "idx")
    with pytest.raises(ValueError, match=r"HashingEmbedding.*Settings\.embed_model is TrigramEmbedding"):
        PearlTableIndex.load(tmp_path / "idx")
