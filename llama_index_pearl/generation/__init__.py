"""Instructional query generation (PEARL paper section 3.1.2, appendices E and F).

For each selected join path, ask for one question that needs every table of the
path plus the minimal columns per table to answer it; for single-hop tables, ask
for several questions per table. :class:`LLMQueryGenerator` uses any LlamaIndex
LLM; :class:`HeuristicQueryGenerator` needs none and is the default without one.
:func:`agenerate_all` / :func:`generate_all` run a generator over many requests
with bounded concurrency, a crash-safe cache and a token report. With an LLM, :func:`glossary_writer` has it write
each table's and column's business words once (:mod:`~llama_index_pearl.generation.glossary`).

Pipeline step: generation (docs/architecture.md).
"""

from llama_index_pearl.generation.base import (
    IndexGenerator,
    QueryGenerator,
    generator_from_spec,
    register_generator,
    restore_generator,
    run_sync,
)
from llama_index_pearl.generation.cache import CACHE_FILENAME, GenerationCache, cache_for, paid_work_cache
from llama_index_pearl.generation.glossary import (
    Glossary,
    GlossaryReport,
    GlossaryWriter,
    estimate_glossary,
    glossary_writer,
)
from llama_index_pearl.generation.heuristic import HEURISTIC_VERSION, HeuristicQueryGenerator, humanize
from llama_index_pearl.generation.llm import LLMQueryGenerator, supports_json_mode
from llama_index_pearl.generation.parsing import ParseRejection, extract_json, parse_answer, validate_columns
from llama_index_pearl.generation.prompts import PROMPT_VERSION, PromptMessages, build_messages
from llama_index_pearl.generation.requests import (
    DEFAULT_SINGLE_QUESTIONS,
    MAX_QUESTION_CHARS,
    GeneratedQuery,
    GenerationRequest,
    GenerationResult,
    PathRequest,
    SingleTableRequest,
)
from llama_index_pearl.generation.rows import reorder_rows_for_path, shown_rows
from llama_index_pearl.generation.runner import (
    GenerationFailed,
    GenerationReport,
    GenerationRun,
    agenerate_all,
    estimate_prompt_tokens,
    generate_all,
)

__all__ = [
    "CACHE_FILENAME",
    "DEFAULT_SINGLE_QUESTIONS",
    "HEURISTIC_VERSION",
    "MAX_QUESTION_CHARS",
    "PROMPT_VERSION",
    "GeneratedQuery",
    "GenerationCache",
    "GenerationFailed",
    "GenerationReport",
    "GenerationRequest",
    "GenerationResult",
    "GenerationRun",
    "Glossary",
    "GlossaryReport",
    "GlossaryWriter",
    "HeuristicQueryGenerator",
    "IndexGenerator",
    "LLMQueryGenerator",
    "ParseRejection",
    "PathRequest",
    "PromptMessages",
    "QueryGenerator",
    "SingleTableRequest",
    "agenerate_all",
    "build_messages",
    "cache_for",
    "estimate_glossary",
    "estimate_prompt_tokens",
    "extract_json",
    "generate_all",
    "generator_from_spec",
    "glossary_writer",
    "humanize",
    "paid_work_cache",
    "parse_answer",
    "register_generator",
    "reorder_rows_for_path",
    "restore_generator",
    "run_sync",
    "shown_rows",
    "supports_json_mode",
    "validate_columns",
]
