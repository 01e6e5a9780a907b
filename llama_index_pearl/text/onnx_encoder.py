"""The bundled all-MiniLM-L6-v2 on ONNX Runtime: the same vectors as sentence-transformers, without torch at query time.

The graph (BERT, mean pooling over the attention mask, L2 normalisation) is
exported once from the bundled weights with ``torch.onnx`` (offline, needs the
``onnx`` package) into a user cache folder, then loaded with ``onnxruntime``. The
export's warnings (torch's ``TracerWarning`` ones) are logged, not shown. Beside the
export, the cache keeps the graph as ONNX Runtime optimises it, with its weights in a
file ONNX Runtime maps into memory (once per ONNX Runtime version), so that a process
loads it ready to run, and the weights' SHA-256 by their file's size and modification
time, so that a process does not hash 90 MB to find its export.
Tokenisation uses the model's own ``tokenizer.json`` (truncated to the model's
256-token window, as sentence-transformers does). Single queries run on one
thread (no thread team to wake on a busy machine); batches use ONNX Runtime's
default threads. Each session is made on first use, once per encoder.

Pipeline step: text (docs/architecture.md).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import shutil
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.bridge.pydantic import PrivateAttr

__all__ = ["OnnxMiniLMEmbedding", "export_onnx", "export_target", "onnx_cache_dir"]

logger = logging.getLogger(__name__)

INPUTS = ("input_ids", "attention_mask", "token_type_ids")
ENCODE_BATCH = 64  # texts per ONNX run at most; LlamaIndex hands over embed_batch_size texts, sorted by length
# Padded tokens per ONNX run: a run's activations then stay in the CPU caches, long units run faster and short texts
# still run 64 to a batch (benchmarks/README.md, "Constants": text.onnx_encoder.TOKENS_PER_RUN).
TOKENS_PER_RUN = 1024


def onnx_cache_dir() -> Path:
    """``$LLAMA_INDEX_PEARL_CACHE/onnx``, default ``~/.cache/llama-index-pearl/onnx``."""
    root = os.environ.get("LLAMA_INDEX_PEARL_CACHE") or Path.home() / ".cache" / "llama-index-pearl"
    return Path(root) / "onnx"


def _weights_digest(model_dir: Path, cache_dir: Path) -> str:
    """The weights' SHA-256 (16 hex digits), remembered in the cache by the file's path, size and mtime."""
    weights = model_dir / "model.safetensors"
    stat = weights.stat()
    key = f"{weights.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"
    known = cache_dir / "digests.json"
    try:
        digests = json.loads(known.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        digests = {}
    if isinstance(digests, dict) and isinstance(digests.get(key), str):
        return digests[key]
    digest = hashlib.sha256()
    with weights.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    value = digest.hexdigest()[:16]
    try:  # best effort: a read-only cache only costs the hash next time
        cache_dir.mkdir(parents=True, exist_ok=True)
        partial = known.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps({**(digests if isinstance(digests, dict) else {}), key: value}), encoding="utf-8")
        partial.replace(known)
    except OSError:
        pass
    return value


def export_target(model_dir: str | Path, cache_dir: str | Path | None = None) -> Path:
    """Where :func:`export_onnx` keeps the export of a model folder (the file need not exist yet).

    Args:
        model_dir: The model folder.
        cache_dir: Where exports are kept (default :func:`onnx_cache_dir`).
    """
    model_dir = Path(model_dir)
    cache = Path(cache_dir or onnx_cache_dir())
    return cache / f"{model_dir.name}-{_weights_digest(model_dir, cache)}.onnx"


def export_onnx(model_dir: str | Path, cache_dir: str | Path | None = None) -> Path:
    """The ONNX file of a sentence-transformers BERT model folder, exported on first use (offline).

    Args:
        model_dir: The model folder (``config.json``, ``model.safetensors``, ``tokenizer.json``).
        cache_dir: Where exports are kept (default :func:`onnx_cache_dir`); named by the weights' hash.

    Raises:
        ImportError: The export needs ``torch``, ``transformers`` and ``onnx``.
    """
    model_dir = Path(model_dir)
    target = export_target(model_dir, cache_dir)
    if target.is_file():
        return target
    logger.info("Exporting %s to ONNX once (into %s)", model_dir.name, target)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _export(model_dir, target)
    for warning in caught:  # torch's TracerWarnings: about the trace, nothing for a user to act on
        logger.info("ONNX export of %s: %s: %s", model_dir.name, warning.category.__name__, warning.message)
    return target


def _export(model_dir: Path, target: Path) -> None:
    import torch
    from transformers import AutoModel

    class _MeanPooled(torch.nn.Module):
        def __init__(self, model: Any) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            hidden = self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    model = _MeanPooled(AutoModel.from_pretrained(str(model_dir), local_files_only=True).eval())
    example = tuple(torch.ones((2, 8), dtype=torch.int64) for _ in INPUTS)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.tmp")
    axes = {name: {0: "batch", 1: "tokens"} for name in INPUTS}
    with torch.no_grad():
        torch.onnx.export(
            model,
            example,
            str(partial),
            input_names=list(INPUTS),
            output_names=["embedding"],
            dynamic_axes={**axes, "embedding": {0: "batch"}},
            opset_version=17,
            dynamo=False,
        )
    partial.replace(target)  # atomic: a concurrent export never leaves a half-written file behind


def _optimized(onnx_path: Path) -> Path | None:
    """The graph as ONNX Runtime optimises it, saved once beside the export, its weights in a file of their own.

    Extended optimisation only (portable across CPUs); a session then loads it with optimisation off, and
    ONNX Runtime maps the weights file into memory instead of copying 90 MB, so a session is made in a
    fraction of the time (benchmarks/README.md, "Constants"). One folder per ONNX Runtime version,
    written under a temporary name and renamed whole. ``None`` when it cannot be written (a read-only cache):
    sessions then optimise the export at load, as before.
    """
    import onnxruntime

    folder = onnx_path.with_name(f"{onnx_path.stem}.ort-{onnxruntime.__version__}")
    target = folder / "model.onnx"
    if target.is_file():
        return target
    partial = folder.with_name(f"{folder.name}.{os.getpid()}.tmp")
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.log_severity_level = 3  # ONNX Runtime writes its notes to stderr itself: errors only
    options.optimized_model_filepath = str(partial / "model.onnx")
    options.add_session_config_entry("session.optimized_model_external_initializers_file_name", "model.data")
    options.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")
    try:
        partial.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a read-only cache
        logger.info("Could not save the optimised ONNX graph (%s); sessions optimise it at load", exc)
        return None
    try:
        onnxruntime.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
        partial.rename(folder)
    except Exception as exc:  # ONNX Runtime's errors have classes of their own
        shutil.rmtree(partial, ignore_errors=True)
        if target.is_file():  # another process renamed its copy first
            return target
        # the export itself may be what failed (a crashed run's file): then it raises here, for the caller
        onnxruntime.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
        logger.info("Could not save the optimised ONNX graph (%s); sessions optimise it at load", exc)
        return None
    return target


class _Encoder:
    """What the rest of the package reads off a sentence-transformers model: tokenizer, window, ``encode``."""

    def __init__(self, model_dir: Path, onnx_path: Path) -> None:
        from tokenizers import Tokenizer

        config = json.loads((model_dir / "sentence_bert_config.json").read_text(encoding="utf-8"))
        self.max_seq_length = int(config.get("max_seq_length", 256))
        self.tokenizer = _TokenCounter(model_dir / "tokenizer.json")
        self._fast = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._fast.enable_truncation(self.max_seq_length)
        self._fast.no_padding()  # each batch is padded to its own longest text
        self._onnx_path = onnx_path
        # made (from the export) now, not at first use: a broken export must fail the constructor, where
        # default_embed_model falls back to torch
        optimized = _optimized(onnx_path)
        self._graph = (optimized, True) if optimized is not None else (onnx_path, False)
        # each session is made on first use: a query never needs the batch one, a build never the single one
        self._single: Any = None
        self._batch: Any = None
        self._making = threading.Lock()
        model_config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
        self.dimension = int(model_config.get("hidden_size", 384))

    def _session(self, options: Any) -> Any:
        import onnxruntime

        path, ready = self._graph
        if ready:
            options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
        return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def _single_session(self) -> Any:
        """The session for one text at a time (queries): one thread, so there is no thread team to wake."""
        with self._making:
            if self._single is None:
                import onnxruntime

                options = onnxruntime.SessionOptions()
                options.intra_op_num_threads = 1
                options.inter_op_num_threads = 1
                self._single = self._session(options)
            return self._single

    def _batch_session(self) -> Any:
        with self._making:
            if self._batch is None:
                import onnxruntime

                options = onnxruntime.SessionOptions()
                # spinning threads starve a busy machine
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                self._batch = self._session(options)
            return self._batch

    def encode(self, texts: Sequence[str], batch_size: int = 64, **_: Any) -> np.ndarray:
        """Normalised embeddings, one row per text.

        Texts are batched by length, as sentence-transformers does: at most ``batch_size``
        texts and ``TOKENS_PER_RUN`` padded tokens per run (one text per run if it is longer).
        """
        encodings = self._fast.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: -len(encodings[i].ids))
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        start = 0
        while start < len(order):
            width = len(encodings[order[start]].ids)  # the longest left: texts are in descending length
            rows = max(1, min(batch_size, TOKENS_PER_RUN // max(width, 1)))
            chunk, start = order[start : start + rows], start + rows
            feed = {name: np.zeros((len(chunk), width), dtype=np.int64) for name in INPUTS}
            for row, i in enumerate(chunk):
                for name in INPUTS:
                    values = getattr(encodings[i], _FIELD[name])
                    feed[name][row, : len(values)] = values
            session = self._single_session() if len(texts) == 1 else self._batch_session()
            out[chunk] = session.run(None, feed)[0]
        return out


_FIELD = {"input_ids": "ids", "attention_mask": "attention_mask", "token_type_ids": "type_ids"}


class _TokenCounter:
    """The model's ``tokenizer.json`` answering as a Hugging Face tokenizer does for token counting.

    Serialization counts tokens per line to fit units in the window; loading
    ``transformers.AutoTokenizer`` for that imported transformers and torch, a fourth of a spider build
    (benchmarks/README.md, "Constants"). The same ``tokenizer.json`` through ``tokenizers`` gives the
    same ids (``tests/test_encoders.py`` checks it on every unit of a build).
    """

    def __init__(self, path: Path) -> None:
        self._path = path
        self._tokenizer: Any = None  # read on first use: a query counts no tokens

    def __call__(self, lines: Sequence[str], add_special_tokens: bool = True, **_: Any) -> dict[str, list[list[int]]]:
        if self._tokenizer is None:
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(str(self._path))
            tokenizer.no_truncation()
            tokenizer.no_padding()
            self._tokenizer = tokenizer
        encoded = self._tokenizer.encode_batch(list(lines), add_special_tokens=add_special_tokens)
        return {"input_ids": [e.ids for e in encoded]}


class OnnxMiniLMEmbedding(BaseEmbedding):
    """A sentence-transformers BERT model folder (default: the bundled all-MiniLM-L6-v2) on ONNX Runtime.

    Args:
        model_name: The model folder.
        cache_dir: Where the ONNX export is kept (default :func:`onnx_cache_dir`).
        embed_batch_size: Texts LlamaIndex passes per call when building; they are sorted by length and
            encoded 64 at a time, so a large value pads less.
    """

    cache_dir: str | None = None
    _model: _Encoder = PrivateAttr()

    def __init__(self, model_name: str, cache_dir: str | None = None, embed_batch_size: int = 2048, **kwargs: Any):
        super().__init__(model_name=model_name, cache_dir=cache_dir, embed_batch_size=embed_batch_size, **kwargs)
        self._model = _Encoder(Path(model_name), export_onnx(model_name, cache_dir))

    @classmethod
    def class_name(cls) -> str:
        return "OnnxMiniLMEmbedding"

    def prepare(self, batches: bool = True, background: bool = False) -> None:
        """Make an ONNX Runtime session now rather than on first use.

        A build makes the batch session where it times its encoder; a load makes the single-query
        session on a thread of its own while it reads the index (ONNX Runtime releases the GIL while
        it loads a session), and its first query waits for it if need be.

        Args:
            batches: The session for batches (a build's); ``False``: the one for single queries.
            background: Make it on a thread of its own (which the process waits for at exit); a failure there
                is left to the first use to raise.
        """
        make = self._model._batch_session if batches else self._model._single_session
        if not background:
            make()
            return

        def quietly() -> None:
            try:
                make()
            except Exception:  # the session is made again, and its error raised, on first use
                logger.debug("Making the ONNX Runtime session in the background failed", exc_info=True)

        # Not a daemon: Python waits for it at exit. A daemon thread left inside ONNX Runtime's C++ while the
        # process exits (a load that failed at once, then exit) met the runtime's static objects being destroyed:
        # "terminate called without an active exception", exit 134 instead of the program's own status.
        threading.Thread(target=quietly, name="pearl-onnx-session", daemon=False).start()

    def _embed(self, texts: list[str], prompt_name: str | None = None) -> list[list[float]]:
        """Batch call with the signature ``HuggingFaceEmbedding`` has (this model has no prompts)."""
        return self._model.encode(texts, batch_size=ENCODE_BATCH).tolist()

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._embed([query])[0]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        # CPU-bound: a worker thread, as HuggingFaceEmbedding does, so the event loop goes on meanwhile
        return await asyncio.to_thread(self._get_query_embedding, query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._embed([text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._embed(texts)
