"""Append-only JSONL cache of accepted generations.

LLM calls are the expensive, slow part of a build. Each accepted answer is
appended as one line, flushed and fsynced before the next is written, so a build
killed at path 37 of 40 keeps 36 answers, and a rebuild (or a re-run with another
embedding model) asks the LLM only for the rest. The key covers what the answer
depends on -- path structure, the columns and rows shown, the prompt version and
the model -- and nothing else (not the embedding model).

A failing write (disk full, the folder under a file) never costs an answer: the
entry stays in memory for this run, one warning names the file and the error,
and later writes are not attempted. A line is used only if it holds an accepted
answer with a non-empty question for every query; anything else is a miss.

Pipeline step: generation (docs/architecture.md).
"""

from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path
from typing import Any

from llama_index_pearl.generation.base import QueryGenerator
from llama_index_pearl.generation.requests import GenerationRequest, GenerationResult

__all__ = ["CACHE_FILENAME", "GenerationCache", "cache_for", "paid_work_cache"]

logger = logging.getLogger(__name__)

CACHE_FILENAME = "generation_cache.jsonl"


class GenerationCache:
    """Accepted generations by key, persisted to a JSONL file.

    Args:
        path: The JSONL file, or a directory to hold ``generation_cache.jsonl``.
            Created on first write.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        target = Path(path)
        if target.is_dir() or (not target.suffix and not target.exists()):
            target = target / CACHE_FILENAME
        self.path = target
        self._entries: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self.write_error: OSError | None = None
        self._load()

    def _load(self) -> None:
        if not self.path.exists():
            return
        with self.path.open("r", encoding="utf-8", errors="replace") as handle:
            lines = handle.read().split("\n")
        bad = 0
        last = len(lines) - 1  # "" when the file ends with a newline, else a possibly cut line
        for number, line in enumerate(lines):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                key = entry["key"]
                usable = _usable_glossary(entry["glossary"]) if "glossary" in entry else _usable_entry(entry)
            except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
                # a crash mid-write leaves a truncated last line; anything earlier is corruption
                bad += number != last
                continue
            if not isinstance(key, str) or not usable:
                bad += 1
                continue
            self._entries[key] = entry
        if bad:
            logger.warning("Ignored %d unreadable line(s) in generation cache %s", bad, self.path)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def get(self, key: str) -> GenerationResult | None:
        """The cached result for ``key`` (marked ``cached``, zero tokens spent), or ``None``."""
        entry = self._entries.get(key)
        if entry is None or "result" not in entry:
            return None
        result = GenerationResult.from_dict(entry["result"])
        result.cached = True
        return result

    def lookup(self, generator: QueryGenerator, request: GenerationRequest) -> GenerationResult | None:
        """The cached result of ``generator`` for ``request``, if any."""
        return self.get(generator.cache_key(request))

    def put(self, key: str, result: GenerationResult, *, model_name: str = "", prompt_version: str = "") -> None:
        """Append an accepted result durably; skipped results are not cached (a later run retries them).

        If the file cannot be written the result is still kept in memory (so this
        run uses it), a warning names the file and the error, and no later write
        is attempted.

        Args:
            key: From :meth:`QueryGenerator.cache_key`.
            result: The accepted result.
            model_name: Recorded for humans reading the file.
            prompt_version: Recorded for humans reading the file.
        """
        if result.ok:
            self._keep({"key": key, "model": model_name, "prompt_version": prompt_version, "result": result.to_dict()})

    def get_glossary(self, key: str) -> dict[str, Any] | None:
        """The cached glossary of a table (:class:`~llama_index_pearl.generation.glossary.Glossary` as a dict)."""
        entry = self._entries.get(key)
        return entry["glossary"] if entry is not None and "glossary" in entry else None

    def put_glossary(
        self, key: str, glossary: dict[str, Any], *, model_name: str = "", prompt_version: str = ""
    ) -> None:
        """Append a table's glossary durably, as :meth:`put` appends a result."""
        if _usable_glossary(glossary):
            self._keep({"key": key, "model": model_name, "prompt_version": prompt_version, "glossary": glossary})

    def _keep(self, entry: dict[str, Any]) -> None:
        key = entry["key"]
        line = json.dumps(entry, ensure_ascii=False) + "\n"
        with self._lock:
            self._entries[key] = entry  # first: a paid answer outlives a failing disk
            if self.write_error is not None:
                return
            try:
                self._append(line)
            except OSError as exc:
                self.write_error = exc
                logger.warning(
                    "Cannot write generation cache %s (%s); answers of this run are kept in memory only, "
                    "no further cache writes are attempted",
                    self.path,
                    exc,
                )

    def _append(self, line: str) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        needs_newline = self._ends_without_newline()
        with self.path.open("a", encoding="utf-8") as handle:
            if needs_newline:
                # a truncated last line must not swallow this entry
                handle.write("\n")
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())

    def store(self, generator: QueryGenerator, request: GenerationRequest, result: GenerationResult) -> None:
        """Append ``result`` under ``generator``'s key for ``request``."""
        self.put(
            generator.cache_key(request),
            result,
            model_name=generator.model_name,
            prompt_version=generator.prompt_version,
        )

    def _ends_without_newline(self) -> bool:
        if not self.path.exists() or self.path.stat().st_size == 0:
            return False
        with self.path.open("rb") as handle:
            handle.seek(-1, os.SEEK_END)
            return handle.read(1) != b"\n"


def _usable_entry(entry: dict[str, Any]) -> bool:
    return _usable(GenerationResult.from_dict(entry["result"]))


def _usable_glossary(glossary: Any) -> bool:
    """A glossary with a row text or a column meaning, every text a string."""
    if not isinstance(glossary, dict) or not isinstance(glossary.get("columns", {}), dict):
        return False
    texts = [glossary.get("row", ""), *glossary.get("terms", []), *glossary.get("columns", {}).values()]
    return all(isinstance(t, str) for t in texts) and bool(glossary.get("row") or glossary.get("columns"))


def _usable(result: GenerationResult) -> bool:
    """An accepted answer whose every query has a question and some columns."""
    return result.ok and all(q.question.strip() and any(q.columns.values()) for q in result.queries)


def cache_for(generator: QueryGenerator | None, cache_dir: str | os.PathLike[str] | None) -> GenerationCache | None:
    """The cache a build uses: ``cache_dir`` when given, else the user cache for a generator that caches by default.

    A generator whose ``caches_by_default`` is false (the heuristic: regenerating is cheaper) gets none.
    """
    if cache_dir is None and (generator is None or not generator.caches_by_default):
        return None
    return paid_work_cache(cache_dir)


def paid_work_cache(cache_dir: str | os.PathLike[str] | None = None) -> GenerationCache:
    """The cache of LLM answers: ``cache_dir``, else ``$PEARL_CACHE_DIR`` or ``~/.cache/llama-index-pearl``."""
    if cache_dir is not None:
        return GenerationCache(Path(cache_dir))
    default = Path(os.environ.get("PEARL_CACHE_DIR", Path.home() / ".cache" / "llama-index-pearl"))
    default.mkdir(parents=True, exist_ok=True)
    return GenerationCache(default)
