"""What a generator is asked and what it answers: path and single-table requests, generated queries, results.

Pipeline step: generation (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Union

from llama_index_pearl.joins.paths import JoinPath
from llama_index_pearl.tables.table import Table

__all__ = [
    "DEFAULT_SINGLE_QUESTIONS",
    "MAX_QUESTION_CHARS",
    "GeneratedQuery",
    "GenerationRequest",
    "GenerationResult",
    "PathRequest",
    "SingleTableRequest",
]

DEFAULT_SINGLE_QUESTIONS = 5
# A question is a sentence or two; a model stuck in a loop can send hundreds of kilobytes,
# which would be embedded, stored and shown in join hints as is.
MAX_QUESTION_CHARS = 1000


@dataclass(frozen=True)
class PathRequest:
    """Ask for one question over a join path.

    Args:
        path: The join path (2 or 3 tables).
        tables: The path's tables by id; extra tables are ignored.

    Raises:
        ValueError: a table of the path is missing from ``tables``.
    """

    path: JoinPath
    tables: Mapping[str, Table]

    def __post_init__(self) -> None:
        missing = [t for t in self.path.tables if t not in self.tables]
        if missing:
            raise ValueError(f"Path {self.path.path_id} {self.path.tables}: no Table given for {missing}")

    @property
    def request_id(self) -> str:
        return self.path.path_id

    @property
    def table_list(self) -> list[Table]:
        """The path's tables, in path order."""
        return [self.tables[t] for t in self.path.tables]

    @property
    def expected_questions(self) -> int:
        return 1

    @property
    def fallback_columns(self) -> dict[str, list[str]]:
        """Columns a table gets when the final answer names none for it: its join columns."""
        return {t: self.path.join_columns(t) for t in self.path.tables}

    def describe(self) -> str:
        return f"path {self.path.path_id} ({' -> '.join(self.path.tables)})"


@dataclass(frozen=True)
class SingleTableRequest:
    """Ask for ``n_questions`` questions of different granularity over one table.

    Args:
        table: The table.
        n_questions: How many questions to ask for (the paper uses 5).
    """

    table: Table
    n_questions: int = DEFAULT_SINGLE_QUESTIONS

    def __post_init__(self) -> None:
        if self.n_questions < 1:
            raise ValueError(f"n_questions must be >= 1, got {self.n_questions}")

    @property
    def request_id(self) -> str:
        return f"single:{self.table.id}:{self.n_questions}"

    @property
    def table_list(self) -> list[Table]:
        return [self.table]

    @property
    def expected_questions(self) -> int:
        return self.n_questions

    @property
    def fallback_columns(self) -> dict[str, list[str]]:
        """None: a single-table question without columns has nothing to fall back on."""
        return {}

    def describe(self) -> str:
        return f"table {self.table.id} (single-hop, {self.n_questions} questions)"


GenerationRequest = Union[PathRequest, SingleTableRequest]


@dataclass
class GeneratedQuery:
    """One generated question and the columns (per table id) needed to answer it.

    A question longer than :data:`MAX_QUESTION_CHARS` is cut at the last word boundary before it.
    """

    question: str
    columns: dict[str, list[str]]

    def __post_init__(self) -> None:
        if len(self.question) > MAX_QUESTION_CHARS:
            cut = self.question[:MAX_QUESTION_CHARS]
            self.question = cut.rsplit(" ", 1)[0] if " " in cut else cut

    def to_dict(self) -> dict[str, Any]:
        return {"question": self.question, "columns": {k: list(v) for k, v in self.columns.items()}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GeneratedQuery:
        question = data["question"]
        if not isinstance(question, str):
            raise TypeError(f"question must be a string, got {type(question).__name__}")
        return cls(question, {str(k): [str(c) for c in v] for k, v in data["columns"].items()})


@dataclass
class GenerationResult:
    """What one request produced.

    Args:
        request_id: ``path_id`` for a path, ``single:<table>:<n>`` for a table.
        queries: Accepted questions; empty when skipped.
        prompt_tokens: Prompt tokens over all attempts (as reported, else estimated).
        completion_tokens: Completion tokens over all attempts.
        tokens_estimated: Some count was estimated (~4 characters a token).
        attempts: LLM calls made (HTTP errors and timeouts included).
        skipped_reason: Why the request was given up; ``None`` when accepted.
        cached: Served from the generation cache, no call made in this run.
    """

    request_id: str
    queries: list[GeneratedQuery] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tokens_estimated: bool = False
    attempts: int = 0
    skipped_reason: str | None = None
    cached: bool = False

    @property
    def ok(self) -> bool:
        return self.skipped_reason is None and bool(self.queries)

    def to_dict(self) -> dict[str, Any]:
        return {
            "request_id": self.request_id,
            "queries": [q.to_dict() for q in self.queries],
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "tokens_estimated": self.tokens_estimated,
            "attempts": self.attempts,
            "skipped_reason": self.skipped_reason,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GenerationResult:
        return cls(
            request_id=str(data["request_id"]),
            queries=[GeneratedQuery.from_dict(q) for q in data.get("queries", [])],
            prompt_tokens=int(data.get("prompt_tokens", 0)),
            completion_tokens=int(data.get("completion_tokens", 0)),
            tokens_estimated=bool(data.get("tokens_estimated", False)),
            attempts=int(data.get("attempts", 0)),
            skipped_reason=data.get("skipped_reason"),
        )
