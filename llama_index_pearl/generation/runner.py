"""Drive a generator over many requests: bounded concurrency, cache, progress, cost report.

Retries happen once, inside the generator (see ``LLMQueryGenerator``); this driver
only bounds how many requests are in flight, serves and fills the cache, and turns
anything unexpected into a skipped request so one path never stops a build. Many
failing paths do: past the generator's ``max_failed_share`` the run raises
:class:`GenerationFailed` (every accepted answer is in the cache by then).

Pipeline step: generation (docs/architecture.md).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from tqdm.auto import tqdm

from llama_index_pearl.config import DEFAULT_CONCURRENCY
from llama_index_pearl.generation.base import QueryGenerator, run_sync
from llama_index_pearl.generation.cache import GenerationCache
from llama_index_pearl.generation.prompts import build_messages
from llama_index_pearl.generation.requests import GenerationRequest, GenerationResult
from llama_index_pearl.text.serialization import DEFAULT_MAX_ROWS, TokenCounter, approximate_token_count

__all__ = [
    "GenerationFailed",
    "GenerationReport",
    "GenerationRun",
    "agenerate_all",
    "estimate_prompt_tokens",
    "generate_all",
]

logger = logging.getLogger(__name__)


@dataclass
class GenerationReport:
    """What a generation run did and cost.

    Args:
        requests: Requests given (paths and single-hop tables).
        generated: Requests answered by the generator in this run.
        cached: Requests served from the cache (no call).
        skipped: ``(request_id, reason)`` for every request given up.
        prompt_tokens: Prompt tokens spent in this run (cached requests cost none).
        completion_tokens: Completion tokens spent in this run.
        tokens_estimated: Some counts were estimated rather than reported.
        seconds: Wall time of the run.
    """

    requests: int = 0
    generated: int = 0
    cached: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tokens_estimated: bool = False
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["skipped"] = [{"request_id": r, "reason": why} for r, why in self.skipped]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GenerationReport:
        """Inverse of :meth:`to_dict`.

        Raises:
            TypeError: A key that is no field.
        """
        skipped = [(str(s["request_id"]), str(s["reason"])) for s in data.get("skipped", [])]
        return cls(**{**data, "skipped": skipped})


class GenerationFailed(RuntimeError):
    """Too many requests failed for the result to be worth an index; ``report`` says which and why."""

    def __init__(self, message: str, report: GenerationReport) -> None:
        super().__init__(message)
        self.report = report


def check_failures(generator: QueryGenerator, report: GenerationReport, cache: GenerationCache | None) -> None:
    """Raise :class:`GenerationFailed` when the generator's ``max_failed_share`` is reached."""
    share = generator.max_failed_share
    failed = len(report.skipped)
    if share is None or not failed or failed < share * report.requests:
        return
    reasons = sorted({why for _, why in report.skipped})
    kept = f"; the {report.generated} accepted answer(s) are kept in {cache.path}" if cache is not None else ""
    raise GenerationFailed(
        f"Query generation with {generator.model_name!r} failed for {failed} of {report.requests} request(s) "
        f"(max_failed_share={share:g}), e.g. {reasons[0]}"
        f"{f' (+{len(reasons) - 1} other reason(s))' if len(reasons) > 1 else ''}{kept}. "
        "Check the LLM server and build again: cached answers are not requested again.",
        report,
    )


@dataclass
class GenerationRun:
    """Results aligned with the requests, and the run's report."""

    results: list[GenerationResult]
    report: GenerationReport

    @property
    def by_id(self) -> dict[str, GenerationResult]:
        return {r.request_id: r for r in self.results}


def _as_cache(cache: GenerationCache | str | os.PathLike[str] | None) -> GenerationCache | None:
    if cache is None or isinstance(cache, GenerationCache):
        return cache
    return GenerationCache(cache)


async def agenerate_all(
    generator: QueryGenerator,
    requests: Sequence[GenerationRequest],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    cache: GenerationCache | str | os.PathLike[str] | None = None,
    show_progress: bool = False,
) -> GenerationRun:
    """Generate for every request, at most ``concurrency`` at a time.

    Args:
        generator: The query generator.
        requests: Path and/or single-table requests.
        concurrency: Requests in flight at once (match the server's parallel slots).
        cache: A cache, or a file/directory for one; accepted results are
            appended as they arrive and cached requests make no call.
        show_progress: Show a tqdm progress bar.

    Returns:
        Results in request order, and a report. Never raises for a single
        failing request: it is skipped with a warning naming it.

    Raises:
        GenerationFailed: At least ``generator.max_failed_share`` of the requests
            failed (for an LLM generator by default: all of them).
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    started = time.perf_counter()
    store = _as_cache(cache)
    _announce(generator, requests, store)
    semaphore = asyncio.Semaphore(concurrency)
    # the generation stage's bar (the build names each bar after its stage), one tick per request
    bar = tqdm(total=len(requests), disable=not show_progress, desc="generation", unit="request")

    async def tracked(request: GenerationRequest) -> GenerationResult:
        result = await _serve(generator, request, store, semaphore)
        bar.update(1)
        return result

    try:
        results = list(await asyncio.gather(*(tracked(r) for r in requests)))
    finally:
        bar.close()
    report = _tally(results)
    report.seconds = time.perf_counter() - started
    logger.info(
        "Query generation: %d requests, %d generated, %d cached, %d skipped, %d prompt + %d completion tokens, %.1fs",
        report.requests,
        report.generated,
        report.cached,
        len(report.skipped),
        report.prompt_tokens,
        report.completion_tokens,
        report.seconds,
    )
    check_failures(generator, report, store)
    return GenerationRun(results, report)


def _announce(generator: QueryGenerator, requests: Sequence[GenerationRequest], store: GenerationCache | None) -> None:
    """Say what a paid generator is about to be sent (requests, prompt tokens), before anything is sent."""
    if generator.cost_per_path <= 0 or not requests:
        return
    to_send = [r for r in requests if store is None or store.lookup(generator, r) is None]
    estimate = estimate_prompt_tokens(to_send, generator=generator)
    logger.info(
        "Query generation with %r: %d request(s) to send (%d of %d cached), about %d prompt tokens",
        generator.model_name,
        len(to_send),
        len(requests) - len(to_send),
        len(requests),
        estimate["prompt_tokens"],
    )


async def _serve(
    generator: QueryGenerator,
    request: GenerationRequest,
    store: GenerationCache | None,
    semaphore: asyncio.Semaphore,
) -> GenerationResult:
    """One request: from the cache, else from the generator within its time limit; never raises."""
    limit = generator.time_limit()
    try:
        key = generator.cache_key(request) if store is not None else None
        hit = store.get(key) if store is not None and key is not None else None
        if hit is not None:
            return hit
        async with semaphore:
            result = await asyncio.wait_for(generator.agenerate(request), limit)
        if store is not None and key is not None and result.ok:
            store.put(key, result, model_name=generator.model_name, prompt_version=generator.prompt_version)
        return result
    except asyncio.TimeoutError:
        reason = f"generation timed out (limit {limit}s)"
    except Exception as exc:  # one broken request must not stop the build
        reason = f"{type(exc).__name__}: {str(exc)[:200]}"
    logger.warning("Skipping %s: %s", request.describe(), reason)
    return GenerationResult(request_id=request.request_id, skipped_reason=reason)


def _tally(results: Sequence[GenerationResult]) -> GenerationReport:
    """Counts and tokens of a run; cached results cost nothing in it."""
    report = GenerationReport(requests=len(results))
    for result in results:
        if result.cached:
            report.cached += 1
            continue
        report.prompt_tokens += result.prompt_tokens
        report.completion_tokens += result.completion_tokens
        report.tokens_estimated |= result.tokens_estimated
        if result.ok:
            report.generated += 1
        else:
            report.skipped.append((result.request_id, result.skipped_reason or "no query"))
    return report


def generate_all(generator: QueryGenerator, requests: Sequence[GenerationRequest], **options: Any) -> GenerationRun:
    """:func:`agenerate_all` from synchronous code: the same body, on ``asyncio.run`` (inside a running event loop,
    on a worker thread of its own, :func:`~llama_index_pearl.generation.base.run_sync`).

    Args:
        generator: The query generator.
        requests: Path and/or single-table requests.
        **options: :func:`agenerate_all`'s keyword arguments (``concurrency``, ``cache``, ``show_progress``).

    Returns:
        As :func:`agenerate_all`.
    """
    return run_sync(lambda: agenerate_all(generator, requests, **options))


def estimate_prompt_tokens(
    requests: Sequence[GenerationRequest],
    *,
    generator: QueryGenerator | None = None,
    count_tokens: TokenCounter = approximate_token_count,
    max_rows: int = DEFAULT_MAX_ROWS,
) -> dict[str, float]:
    """Build every prompt without calling an LLM and count its tokens (a dry run).

    Args:
        requests: The requests a build would send.
        generator: Its :meth:`~QueryGenerator.build_prompt` builds each prompt.
        count_tokens: Batch token counter; ~4 characters a token by default.
        max_rows: Rows per table when no generator is given.

    Returns:
        ``{"requests": n, "prompt_tokens": total, "per_path_avg": avg, "max_prompt_tokens": max}``.
    """
    texts = [
        (generator.build_prompt(r) if generator is not None else build_messages(r, max_rows=max_rows)).text()
        for r in requests
    ]
    counts = count_tokens(texts) if texts else []
    total = int(sum(counts))
    return {
        "requests": len(requests),
        "prompt_tokens": total,
        "per_path_avg": total / len(requests) if requests else 0.0,
        "max_prompt_tokens": max(counts, default=0),
    }
