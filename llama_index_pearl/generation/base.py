"""The query-generation interface: requests in, generated questions and column subsets out.

PEARL (paper section 3.1.2) asks one question per selected join path and, with it,
the minimal columns of each table needed to answer it. The single-hop variant
(appendix E) asks several questions per table. Both go through
:class:`QueryGenerator`, whose implementations are the LLM-backed
:class:`~llama_index_pearl.generation.llm.LLMQueryGenerator` and the LLM-free
:class:`~llama_index_pearl.generation.heuristic.HeuristicQueryGenerator`.

A generator owns its rules: what a path costs, how many questions a table gets,
whether its answers are cached by default, its cache key, its prompt, its time
limit per request, and how it is written down (:meth:`QueryGenerator.to_spec`)
and rebuilt (:func:`generator_from_spec`, through :func:`register_generator`).
The build, the runner and persistence call these methods and never inspect the class.

Pipeline step: generation (docs/architecture.md).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import json
import logging
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ClassVar, TypeVar

from llama_index.core.llms import LLM

from llama_index_pearl.generation.prompts import PromptMessages, build_messages
from llama_index_pearl.generation.requests import DEFAULT_SINGLE_QUESTIONS, GenerationRequest, GenerationResult
from llama_index_pearl.generation.rows import shown_rows
from llama_index_pearl.joins.paths import JoinPath
from llama_index_pearl.text.serialization import DEFAULT_MAX_ROWS

__all__ = [
    "IndexGenerator",
    "QueryGenerator",
    "generator_from_spec",
    "register_generator",
    "restore_generator",
    "run_sync",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")
QG = TypeVar("QG", bound="QueryGenerator")

_REGISTRY: dict[str, type[QueryGenerator]] = {}


class QueryGenerator(ABC):
    """Turns a :data:`GenerationRequest` into a :class:`GenerationResult`.

    Implementations never raise for one bad request: they return a result with
    ``skipped_reason`` set, so a build goes on without that path.

    Attributes:
        model_name: Identifies the model; part of the cache key.
        prompt_version: Version of the prompts or rules; part of the cache key.
        max_rows: Rows shown per table; the rows shown are part of the cache key.
        cost_per_path: What one path request costs (LLM calls); ``0`` means free,
            and a free generator gets every candidate path by default
            (:func:`~llama_index_pearl.joins.selection.resolve_budget`).
        questions_per_table: Questions asked per single-hop table when the build's
            ``single_hop_questions`` is not set (the paper asks an LLM for 5).
        caches_by_default: Its answers go to the generation cache even when the
            build names no ``cache_dir`` (they cost money or minutes).
        fallback: A free generator for the candidate paths beyond this one's budget
            and for the paths it had to skip, so that a paid budget caps spending,
            not coverage; ``None``: those paths get no units.
        max_failed_share: A build raises :class:`GenerationFailed` when at least this
            share of the requests sent to this generator fail (``1.0``: only when all
            of them do); ``None`` never raises. Free generators default to ``None``.
            See :func:`~llama_index_pearl.generation.runner.agenerate_all`.
        spec_type: The name it is registered under (:func:`register_generator`);
            ``None``: not registered, so a loaded index cannot rebuild it.
        path_kinds: The join path kinds (``"explicit"``, ``"implicit"``) it writes questions
            for; paths of other kinds go to its ``fallback`` (``None``: every kind).
    """

    model_name: str = "unknown"
    prompt_version: str = "0"
    max_rows: int = DEFAULT_MAX_ROWS
    cost_per_path: float = 1.0
    questions_per_table: int = DEFAULT_SINGLE_QUESTIONS
    caches_by_default: bool = True
    fallback: QueryGenerator | None = None
    max_failed_share: float | None = None
    spec_type: ClassVar[str | None] = None
    path_kinds: frozenset[str] | None = None

    def writes(self, path: JoinPath) -> bool:
        """Whether this generator writes the question of ``path`` (else its fallback does, if it has one)."""
        return self.path_kinds is None or path.kind.value in self.path_kinds

    @abstractmethod
    async def agenerate(self, request: GenerationRequest) -> GenerationResult:
        """Generate for one request.

        Args:
            request: A :class:`PathRequest` or :class:`SingleTableRequest`.

        Returns:
            The accepted queries, or a result with ``skipped_reason``.
        """

    def generate(self, request: GenerationRequest) -> GenerationResult:
        """Synchronous :meth:`agenerate`; works inside a running event loop too."""
        return run_sync(lambda: self.agenerate(request))

    def build_prompt(self, request: GenerationRequest) -> PromptMessages:
        """The prompt an LLM would be sent for ``request`` (cost estimates count its tokens)."""
        return build_messages(request, max_rows=self.max_rows)

    def time_limit(self) -> float | None:
        """Seconds one request may take in all (its attempts and waits) before the runner gives up on it."""
        return None

    def cache_key_parts(self, request: GenerationRequest) -> list[Any]:
        """What the answer to ``request`` depends on: structure, shown content, prompt version, model."""
        shown = shown_rows(request, self.max_rows)
        content = [[t.id, t.columns, t.text_rows(shown[t.id])] for t in request.table_list]
        return [request.request_id, content, self.prompt_version, self.model_name]

    def cache_key(self, request: GenerationRequest) -> str:
        """The cache key of ``request``: a digest of :meth:`cache_key_parts`."""
        payload = json.dumps(self.cache_key_parts(request), ensure_ascii=False, default=str)
        return hashlib.sha256(payload.encode()).hexdigest()

    def spec_params(self) -> dict[str, Any]:
        """The JSON-able constructor arguments that rebuild this generator (``cls(**params)``)."""
        return {}

    def to_spec(self) -> dict[str, Any]:
        """What ``persist`` writes: ``{"type", "model_name", "params"}``; see :func:`generator_from_spec`."""
        return {"type": self.spec_type, "model_name": self.model_name, "params": self.spec_params()}

    @classmethod
    def from_params(cls, params: Mapping[str, Any], llm: LLM | None) -> QueryGenerator:
        """Rebuild from :meth:`spec_params` (``llm``: the LLM given to ``load``, for generators that need one)."""
        return cls(**params)


def register_generator(name: str) -> Callable[[type[QG]], type[QG]]:
    """Class decorator: persisted indexes built with this generator rebuild it on load.

    Args:
        name: The ``type`` written in the spec; unique.

    Raises:
        ValueError: ``name`` is taken by another class.
    """

    def register(cls: type[QG]) -> type[QG]:
        if _REGISTRY.get(name, cls) is not cls:
            raise ValueError(f"Generator name {name!r} is already registered for {_REGISTRY[name].__name__}")
        _REGISTRY[name] = cls
        cls.spec_type = name
        return cls

    return register


def restore_generator(spec: Mapping[str, Any], llm: LLM | None) -> QueryGenerator:
    """:func:`generator_from_spec`, warning when an LLM generator now runs another model than the build's."""
    generator = generator_from_spec(spec, llm)
    if generator.model_name != spec.get("model_name"):
        logger.warning("Index built with generator %r, new paths use %r", spec.get("model_name"), generator.model_name)
    return generator


class IndexGenerator:
    """An index's query generator: its build's, or rebuilt from the spec its folder recorded when first needed.

    Args:
        generator: The generator (``None``: rebuilt from ``spec``, or none for a whole-table index).
        spec: What :meth:`QueryGenerator.to_spec` wrote, when ``generator`` is not built yet.
        llm: The LLM an LLM generator is rebuilt over.
    """

    def __init__(self, generator: QueryGenerator | None, spec: Mapping[str, Any] | None, llm: LLM | None) -> None:
        self.built = generator
        self.spec = spec
        self._llm = llm

    def get(self) -> QueryGenerator | None:
        """The generator, rebuilt on first use after a load (see ``PearlTableIndex.generator``)."""
        if self.built is None and self.spec is not None:
            self.built = restore_generator(self.spec, self._llm)
        return self.built

    @property
    def name(self) -> str:
        """Its ``model_name`` (``"none"``: no generator)."""
        if self.built is not None:
            return self.built.model_name
        return str((self.spec or {}).get("model_name", "none"))


def generator_from_spec(spec: Mapping[str, Any], llm: LLM | None = None) -> QueryGenerator:
    """Rebuild the generator :meth:`QueryGenerator.to_spec` wrote.

    Args:
        spec: The written spec.
        llm: The LLM for a generator that needs one.

    Raises:
        ValueError: The type is not registered (a custom generator: register it, or pass
            ``generator=`` to ``PearlTableIndex.load``), or it needs an LLM and got none.
    """
    cls = _REGISTRY.get(spec.get("type") or "")
    if cls is None:
        raise ValueError(
            f"The index was built with generator {spec.get('model_name')!r}, whose class is not registered "
            f"(type {spec.get('type')!r}); decorate it with @register_generator(name), or pass generator= "
            "to PearlTableIndex.load()"
        )
    return cls.from_params(spec.get("params", {}), llm)


def run_sync(factory: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine to completion from synchronous code.

    With no event loop running this is ``asyncio.run``; inside a running loop
    (Jupyter, an async web handler) blocking that loop would deadlock, so the
    coroutine runs on its own loop in a worker thread instead.

    Args:
        factory: Builds the coroutine; called on the thread that runs it.

    Returns:
        The coroutine's result.
    """

    async def main() -> T:
        return await factory()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as executor:
        return executor.submit(asyncio.run, main()).result()
