"""LLM-backed query generation: one call per join path (paper section 3.1.2).

Any LlamaIndex LLM works; the expected one is ``OpenAILike`` pointed at a local
vLLM / Ollama / llama.cpp server. Retries live here and only here: construct the
LLM with ``max_retries=0``: ``OpenAILike`` hands ``max_retries`` both to its own
tenacity retry decorator and to the openai client it builds, so with the default
of 3 one dead path costs up to 3 x 4 HTTP calls (each up to the client timeout,
with sleeps between them) before our ``max_attempts`` even start counting.

Example::

    llm = OpenAILike(model="qwen2.5-7b-instruct", api_base="http://localhost:8000/v1",
                     api_key="x", is_chat_model=True, max_retries=0, timeout=60)
    generator = LLMQueryGenerator(llm)

Pipeline step: generation (docs/architecture.md).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.llms import LLM

from llama_index_pearl.generation.base import QueryGenerator, generator_from_spec, register_generator
from llama_index_pearl.generation.heuristic import HeuristicQueryGenerator
from llama_index_pearl.generation.parsing import ParseRejection, parse_answer
from llama_index_pearl.generation.prompts import (
    DEFAULT_CELL_CHARS,
    DEFAULT_DATA_TOKENS,
    PROMPT_VERSION,
    PromptMessages,
    build_messages,
    corrective_message,
)
from llama_index_pearl.generation.requests import GenerationRequest, GenerationResult
from llama_index_pearl.text.serialization import DEFAULT_MAX_ROWS

__all__ = ["Asked", "Asker", "LLMQueryGenerator", "ask_until_read", "call_llm", "supports_json_mode"]

logger = logging.getLogger(__name__)

JSON_RESPONSE_FORMAT = {"type": "json_object"}
_OPENAI_CLASSES = {"OpenAI", "OpenAILike", "AzureOpenAI"}


def supports_json_mode(llm: LLM) -> bool:
    """Whether ``response_format={"type": "json_object"}`` can be passed to ``achat``.

    The openai-family LLMs forward extra ``achat`` keyword arguments into the
    request body; other integrations may reject unknown arguments, so they get
    plain prompting (the parser copes with prose and code fences anyway).
    """
    if not any(cls.__name__ in _OPENAI_CLASSES for cls in type(llm).__mro__):
        return False
    try:
        return bool(llm.metadata.is_chat_model)
    except Exception:
        return False


def _estimate(text: str) -> int:
    return max(1, (len(text) + 3) // 4)


def _reported_usage(response: Any) -> tuple[int, int] | None:
    """(prompt, completion) tokens as the server reported them, if it did."""
    raw = getattr(response, "raw", None)
    usage = raw.get("usage") if isinstance(raw, Mapping) else getattr(raw, "usage", None)
    if usage is None:
        extra = getattr(response, "additional_kwargs", None) or {}
        usage = extra if "prompt_tokens" in extra else None
    if usage is None:
        return None
    get = usage.get if isinstance(usage, Mapping) else lambda k: getattr(usage, k, None)
    prompt, completion = get("prompt_tokens"), get("completion_tokens")
    if not isinstance(prompt, int) or not isinstance(completion, int):
        return None
    return prompt, completion


async def call_llm(llm: LLM, messages: list[ChatMessage], json_mode: bool) -> tuple[str, int, int, bool]:
    """One call of ``llm`` -> (text, prompt tokens, completion tokens, whether the counts are estimated).

    Chat models get the messages; others one completion prompt of their texts. ``json_mode`` asks for a JSON object.
    """
    kwargs: dict[str, Any] = {"response_format": JSON_RESPONSE_FORMAT} if json_mode else {}
    if llm.metadata.is_chat_model:
        response: Any = await llm.achat(messages, **kwargs)
        text = response.message.content or ""
        prompt_text = "\n".join(m.content or "" for m in messages)
    else:
        prompt_text = "\n\n".join(m.content or "" for m in messages)
        response = await llm.acomplete(prompt_text, **kwargs)
        text = response.text or ""
    usage = _reported_usage(response)
    if usage is None:
        return text, _estimate(prompt_text), _estimate(text), True
    return text, usage[0], usage[1], False


class Asker(Protocol):
    """Who asks an LLM until its answer reads: the question generator and the glossary writer."""

    llm: LLM
    json_mode: bool
    timeout: float
    max_attempts: int
    backoff: float
    model_name: str


@dataclass
class Asked:
    """What :func:`ask_until_read` got (``value``, ``None`` when no answer read) and what it cost."""

    value: Any = None
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False
    reason: str = "no attempt made"


async def ask_until_read(
    asker: Asker,
    messages: list[ChatMessage],
    read: Callable[[str, bool], Any],
    corrective: Callable[[str], str],
) -> Asked:
    """Ask ``asker.llm`` at most ``asker.max_attempts`` times until ``read(text, last_attempt)`` accepts an answer.

    Never raises for a failing LLM or a bad answer. A timeout or a transport error is one failed attempt, followed
    by a backoff wait (``asker.backoff`` doubling); a server that rejects ``response_format`` turns the asker's JSON
    mode off; an answer ``read`` rejects (:class:`ParseRejection`) is sent back with ``corrective(reason)``.
    """
    asked = Asked()
    for attempt in range(1, asker.max_attempts + 1):
        asked.attempts = attempt
        try:
            text, p_tokens, c_tokens, estimated = await asyncio.wait_for(
                call_llm(asker.llm, messages, asker.json_mode), asker.timeout
            )
        except asyncio.TimeoutError:
            asked.reason = f"LLM call timed out after {asker.timeout:g}s"
        except Exception as exc:  # any transport/server error is one failed attempt, not a crash
            asked.reason = f"LLM call failed: {type(exc).__name__}: {str(exc)[:200]}"
            if asker.json_mode and "response_format" in str(exc):
                logger.info("%s rejected response_format; continuing without JSON mode", asker.model_name)
                asker.json_mode = False
        else:
            asked.prompt_tokens += p_tokens
            asked.completion_tokens += c_tokens
            asked.estimated |= estimated
            try:
                asked.value = read(text, attempt == asker.max_attempts)
                return asked
            except ParseRejection as rejection:
                asked.reason = f"rejected answer: {rejection.reason}"
                messages = [
                    *messages[:2],
                    ChatMessage(role=MessageRole.ASSISTANT, content=text[:2000]),
                    ChatMessage(role=MessageRole.USER, content=corrective(rejection.reason)),
                ]
                continue
        if attempt < asker.max_attempts and asker.backoff > 0:
            await asyncio.sleep(asker.backoff * 2 ** (attempt - 1))
    return asked


# The join path kinds an LLM writes questions for by default; the heuristic writes the rest for free. An implicit unit
# holds one table, and a small LLM's question names one or two tables of its path where the heuristic's names them
# all (benchmarks/README.md, "Constants": generation.llm.DEFAULT_LLM_PATH_KINDS).
DEFAULT_LLM_PATH_KINDS = ("explicit",)
PATH_KINDS = ("explicit", "implicit")


def _path_kinds(kinds: Iterable[str] | None) -> frozenset[str] | None:
    if kinds is None:
        return None
    chosen = frozenset(str(k) for k in ([kinds] if isinstance(kinds, str) else kinds))
    unknown = sorted(chosen - set(PATH_KINDS))
    if unknown or not chosen:
        raise ValueError(f"path_kinds must name some of {PATH_KINDS} (or be None for all), got {sorted(chosen)}")
    return chosen


@register_generator("llm")
class LLMQueryGenerator(QueryGenerator):
    """Generates PEARL questions and column subsets with an LLM.

    Args:
        llm: Any LlamaIndex LLM; chat models get a system and a user message,
            others one completion prompt.
        timeout: Seconds one LLM call may take before it counts as a failed attempt.
        max_attempts: LLM calls per request at most. A rejected answer is followed
            by a short corrective message; HTTP errors and timeouts resend.
        max_rows: Rows shown per table.
        json_mode: Ask for a JSON object response; ``None`` decides from the LLM
            class (openai-family chat models).
        backoff: Seconds to wait after a failed call, doubling per attempt.
        cell_chars: Cells longer than this are clipped in the prompt.
        data_tokens: Token budget for the rows in one prompt; ``None`` for no limit.
        model_name: Overrides the name used in the cache key.
        fallback: Generator for candidate paths beyond the LLM budget and paths the
            LLM skipped: ``"heuristic"`` (default, free templated questions), another
            generator, or ``None`` (such paths get no units, as in the paper).
        max_failed_share: A run raises ``GenerationFailed`` when at least this share
            of its requests fail; ``1.0`` (default): only when every one fails (a dead
            server must not pass for a build); ``None``: never.
        path_kinds: The path kinds the LLM writes questions for (default: explicit paths
            only, see :data:`DEFAULT_LLM_PATH_KINDS`); the other paths go to ``fallback``.
            ``None``: every kind (the paper).
    """

    prompt_version = PROMPT_VERSION

    def __init__(
        self,
        llm: LLM,
        *,
        timeout: float = 60.0,
        max_attempts: int = 2,
        max_rows: int = DEFAULT_MAX_ROWS,
        json_mode: bool | None = None,
        backoff: float = 1.0,
        cell_chars: int = DEFAULT_CELL_CHARS,
        data_tokens: int | None = DEFAULT_DATA_TOKENS,
        model_name: str | None = None,
        fallback: QueryGenerator | str | None = "heuristic",
        max_failed_share: float | None = 1.0,
        path_kinds: Iterable[str] | None = DEFAULT_LLM_PATH_KINDS,
    ) -> None:
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {max_attempts}")
        if max_failed_share is not None and not 0.0 <= max_failed_share <= 1.0:
            raise ValueError(f"max_failed_share must be in [0, 1] or None, got {max_failed_share}")
        self.max_failed_share = max_failed_share
        self.path_kinds = _path_kinds(path_kinds)
        self.llm = llm
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.max_rows = max_rows
        self.json_mode = supports_json_mode(llm) if json_mode is None else json_mode
        self.backoff = backoff
        self.cell_chars = cell_chars
        self.data_tokens = data_tokens
        self.model_name = model_name or str(getattr(llm, "model", None) or llm.metadata.model_name)
        # paths beyond the LLM budget (or skipped) still get templated questions: they cost nothing
        self.fallback = HeuristicQueryGenerator(max_rows=max_rows) if fallback == "heuristic" else fallback

    def build_prompt(self, request: GenerationRequest) -> PromptMessages:
        """The prompt this generator sends for ``request`` (no LLM call)."""
        return build_messages(request, max_rows=self.max_rows, cell_chars=self.cell_chars, data_tokens=self.data_tokens)

    def time_limit(self) -> float:
        """Every attempt timing out, plus the backoff waits between them, plus slack."""
        return self.timeout * self.max_attempts + self.backoff * (2**self.max_attempts) + 5.0

    def spec_params(self) -> dict[str, Any]:
        """Everything but the LLM, which ``load`` is given again (its name is in the spec's ``model_name``)."""
        return {
            "timeout": self.timeout,
            "max_attempts": self.max_attempts,
            "max_rows": self.max_rows,
            "json_mode": self.json_mode,
            "backoff": self.backoff,
            "cell_chars": self.cell_chars,
            "data_tokens": self.data_tokens,
            "fallback": self.fallback.to_spec() if self.fallback is not None else None,
            "max_failed_share": self.max_failed_share,
            "path_kinds": sorted(self.path_kinds) if self.path_kinds is not None else None,
        }

    @classmethod
    def from_params(cls, params: Mapping[str, Any], llm: LLM | None) -> LLMQueryGenerator:
        """Rebuild over ``llm``.

        Raises:
            ValueError: ``llm`` is ``None``.
        """
        if llm is None:
            raise ValueError("The index was built with an LLM generator; pass llm= to PearlTableIndex.load()")
        fallback = params.get("fallback")
        return cls(llm, **{**params, "fallback": generator_from_spec(fallback) if fallback else None})

    async def agenerate(self, request: GenerationRequest) -> GenerationResult:
        """Generate for one request; never raises for a failing LLM or a bad answer.

        Args:
            request: A path or single-table request.

        Returns:
            The accepted queries, or a result whose ``skipped_reason`` says why not.
        """
        prompt = self.build_prompt(request)
        messages = [
            ChatMessage(role=MessageRole.SYSTEM, content=prompt.system),
            ChatMessage(role=MessageRole.USER, content=prompt.user),
        ]
        result = GenerationResult(request_id=request.request_id)

        # A good question whose answer leaves a table without columns is retried once;
        # the last attempt keeps it with that table's join columns rather than losing the path.
        def read(text: str, last: bool) -> Any:
            return parse_answer(
                text,
                request.table_list,
                expected=request.expected_questions,
                fallback_columns=request.fallback_columns if last else None,
            )

        asked = await ask_until_read(self, messages, read, corrective_message)
        result.attempts = asked.attempts
        result.prompt_tokens += asked.prompt_tokens
        result.completion_tokens += asked.completion_tokens
        result.tokens_estimated |= asked.estimated
        if asked.value is not None:
            result.queries = asked.value
            return result
        result.skipped_reason = asked.reason
        logger.warning("Skipping %s after %d attempt(s): %s", request.describe(), result.attempts, asked.reason)
        return result
