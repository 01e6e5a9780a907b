"""Prompts for instructional query generation (paper appendix F, rewritten compactly).

Four families: an explicit key chain (2 or 3 tables), an implicit pair, an
implicit 3-table chain with the middle table as value bridge, and single-hop
(several questions per table). The paper's prompts run ~2,400 tokens a path;
these keep the same constraints in a few sentences and show only the rows that
matter (join-overlapping rows first, cells clipped, a token budget for the data).
Bump :data:`PROMPT_VERSION` whenever the wording or the data layout changes: it is
part of the generation cache key, so cached answers to old prompts are not reused.

Pipeline step: generation (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from llama_index_pearl.generation.requests import GenerationRequest, PathRequest, SingleTableRequest
from llama_index_pearl.generation.rows import shown_rows
from llama_index_pearl.joins.paths import JoinKind, JoinPath
from llama_index_pearl.tables.table import Table
from llama_index_pearl.text.serialization import DEFAULT_MAX_ROWS, TableView, TokenCounter, serialize_views

__all__ = [
    "DEFAULT_CELL_CHARS",
    "DEFAULT_DATA_TOKENS",
    "PROMPT_VERSION",
    "PromptMessages",
    "build_messages",
    "corrective_message",
    "table_label",
]

PROMPT_VERSION = "pearl-gen-2"
DEFAULT_CELL_CHARS = 40
# data rows get this many tokens per prompt; rows are filled round-robin across
# the path's tables and never cut mid-row
DEFAULT_DATA_TOKENS = 600


def dense_token_estimate(lines: Sequence[str]) -> list[int]:
    """Tokens of table rows for BPE chat models: ~2 characters a token.

    Digits, dates and separators tokenize far denser than prose, so the usual
    4-characters rule under-counts table rows by about half (benchmarks/README.md, "Constants").
    """
    return [max(1, (len(line) + 1) // 2) for line in lines]


DESCRIPTION_CHARS = 200

_COMMON_RULES = """Rules for the question:
- One self-contained sentence, phrased the way a person would ask a database.
- Anchor it on concrete values copied from the rows (names, titles, places, dates).
- Never write raw column names such as "stadium_id"; say what they mean in plain words.
- No pronouns pointing outside the question; no "this table", "the data", "these tables", "connected to".
Column lists: for each table, the fewest exact column names (spelled as listed) needed to answer, including the \
column that links it; every table needs at least one.
Reply with the JSON object only."""

_EXPLICIT = """You write retrieval questions for a relational database.
The {n} tables below form a chain joined by foreign keys (see Joins). Write ONE question that can only be answered \
by following every join in order: start from a specific value in T1 (or T{n}), turn each join into a real-world \
relation (e.g. "the album released by the artist"), and ask for a detail that only the table at the other end holds. \
Removing any table must make the question unanswerable.{middle}

{rules}"""

_EXPLICIT_MIDDLE = " T2 must appear in the question as the relation between the two ends, not be skipped."

_IMPLICIT_PAIR = """You write retrieval questions over data tables.
The 2 tables below have no declared key; they describe the same real-world entities under differently named columns \
(see Joins, matched by value). Write ONE question that pins down an entity with a detail found in T1 and asks for a \
fact found only in T2. It should read like a plain factual lookup. If no such question needs exactly these two \
tables, set "question" to null.

{rules}"""

_IMPLICIT_CHAIN = """You write retrieval questions over data tables.
The 3 tables below have no declared keys; they share values (see Joins). T2 is the bridge: T1 matches T2 and T2 \
matches T3 by value, while T1 and T3 share nothing directly. Write ONE question that starts from a specific value in \
T1 (or T3), goes through the T2 entity and asks for a detail of the table at the other end; without T2 it must be \
unanswerable. Do not hint that several tables are involved.

{rules}"""

_SINGLE = """You write retrieval questions that single out one table among thousands of similar tables.
Write {n} different questions that only the table below answers, each naming specific values from its rows \
(names, titles, dates). Vary them: {focus}
Never write "this table" or "the data"; no raw column names with underscores.
For each question list the fewest exact column names (spelled as listed) needed to answer it.
Reply with the JSON object only."""

_SINGLE_FOCUS = (
    "a main entity and its most notable fact",
    "a date or period and what happened then",
    'a superlative or total ("highest", "first", "how many") that names the subject',
    "a question combining several columns",
    "a detailed question whose attributes together identify exactly one row",
)


@dataclass(frozen=True)
class PromptMessages:
    """A system and a user message; :meth:`text` joins them for completion-only models."""

    system: str
    user: str

    def text(self) -> str:
        return f"{self.system}\n\n{self.user}"


def table_label(index: int) -> str:
    """The label of the table at ``index`` (0-based) in prompts and answers: T1, T2, T3."""
    return f"T{index + 1}"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _prompt_table(table: Table, rows: list[int], label: str, cell_chars: int) -> Table:
    """A copy of the shown rows with cells clipped, so the shared serializer renders it compactly."""
    frame = table.df.iloc[rows].reset_index(drop=True)
    frame = frame.apply(lambda col: col.map(lambda v: _clip(str(v), cell_chars) if isinstance(v, str) else v))
    description = _clip(table.description.strip(), DESCRIPTION_CHARS) if table.description else None
    title = _clip(table.title, DESCRIPTION_CHARS) if table.title else None
    return Table(id=table.id, df=frame, title=title, description=description, name=f"{label} {table.name}")


def _joins_line(path: JoinPath) -> str:
    links = []
    for i, pairs in enumerate(path.joins):
        left, right = table_label(i), table_label(i + 1)
        links.extend(f"{left}.{p.left_column} = {right}.{p.right_column}" for p in pairs)
    return "Joins: " + "; ".join(links)


def _path_answer_format(n: int) -> str:
    cols = ", ".join(f'"relevant_columns_t{i + 1}": ["..."]' for i in range(n))
    return '{"thought": "<why each table is needed, one sentence>", "question": "...", ' + cols + "}"


def _data_block(
    tables: list[Table], rows: Mapping[str, list[int]], cell_chars: int, data_tokens: int | None, count: TokenCounter
) -> str:
    views = []
    for i, table in enumerate(tables):
        shown = rows[table.id]
        views.append(TableView(_prompt_table(table, shown, table_label(i), cell_chars), max_rows=len(shown)))
    return serialize_views(views, max_tokens=data_tokens, count_tokens=count)


def build_messages(
    request: GenerationRequest,
    *,
    max_rows: int = DEFAULT_MAX_ROWS,
    cell_chars: int = DEFAULT_CELL_CHARS,
    data_tokens: int | None = DEFAULT_DATA_TOKENS,
    count_tokens: TokenCounter = dense_token_estimate,
) -> PromptMessages:
    """The prompt for one request.

    Args:
        request: A path or single-table request; the path kind and length pick the family.
        max_rows: Most rows shown per table (join-overlapping rows first).
        cell_chars: Longer cells are clipped to this many characters.
        data_tokens: Token budget for the serialized tables; ``None`` for no limit.
        count_tokens: Token counter used for the budget.

    Returns:
        The system and user messages.
    """
    rows = shown_rows(request, max_rows)
    tables = request.table_list
    data = _data_block(tables, rows, cell_chars, data_tokens, count_tokens)
    if isinstance(request, SingleTableRequest):
        n = request.n_questions
        focus = "; ".join(f"({i + 1}) {_SINGLE_FOCUS[i % len(_SINGLE_FOCUS)]}" for i in range(n)) + "."
        system = _SINGLE.format(n=n, focus=focus)
        answer = '{"questions": [{"question": "...", "relevant_columns": ["..."]}]}'
        user = f"{data}\n\nAnswer format: {answer}\nWrite exactly {n} questions."
        return PromptMessages(system, user)
    assert isinstance(request, PathRequest)
    path = request.path
    n = len(path.tables)
    if path.kind is JoinKind.EXPLICIT:
        system = _EXPLICIT.format(n=n, middle=_EXPLICIT_MIDDLE if n >= 3 else "", rules=_COMMON_RULES)
    elif n == 2:
        system = _IMPLICIT_PAIR.format(rules=_COMMON_RULES)
    else:
        system = _IMPLICIT_CHAIN.format(rules=_COMMON_RULES)
    user = f"{_joins_line(path)}\n\n{data}\n\nAnswer format: {_path_answer_format(n)}"
    return PromptMessages(system, user)


def corrective_message(reason: str) -> str:
    """The follow-up sent after a rejected answer."""
    return (
        f"That reply could not be used: {reason}. Answer again with only the JSON object in the requested format, "
        "a non-empty question, and column names spelled exactly as listed."
    )
