"""A glossary of each table and column, written once by an LLM at build time (issue 56, the paper's front-loading).

Analysts ask in business words ("revenue", "staff", "premium members") that no table or column spells. With an LLM
configured, each table is shown once (its name, its columns with their kinds and a few values) and the LLM writes
what one row records, a few business terms for the table, and each column's business meaning. The glossary fills
the table's ``description`` and the ``column_descriptions`` the user did not give, so it is embedded and matched
like any description: in the table's units, its BM25 text and its column vectors. Nothing at query time changes.

Each answer is cached in the generation cache under a key of what the prompt shows, the prompt version and the
model, so a rebuild pays only for new or changed tables; a table whose answer cannot be read keeps its own text.

Pipeline step: generation (docs/architecture.md).
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import logging
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.llms import LLM

from llama_index_pearl.config import PearlConfig
from llama_index_pearl.generation.base import QueryGenerator, run_sync
from llama_index_pearl.generation.cache import GenerationCache, paid_work_cache
from llama_index_pearl.generation.llm import LLMQueryGenerator, ask_until_read, supports_json_mode
from llama_index_pearl.generation.parsing import ParseRejection, extract_json
from llama_index_pearl.tables.table import Table

__all__ = [
    "GLOSSARY_PROMPT_VERSION",
    "Glossary",
    "GlossaryReport",
    "GlossaryWriter",
    "estimate_glossary",
    "glossary_messages",
    "glossary_writer",
    "parse_glossary",
    "with_glossary",
]

logger = logging.getLogger(__name__)

GLOSSARY_PROMPT_VERSION = "pearl-glossary-1"
# what one answer may hold: a row sentence, a handful of terms, a short meaning per column
ROW_CHARS = 160
TERM_CHARS = 40
MAX_TERMS = 8
COLUMN_CHARS = 80
VALUES_SHOWN = 3
VALUE_CHARS = 30

_SYSTEM = (
    "You write a glossary for business analysts: the words they use for a table's data, which its names may not "
    "say. Answer with one JSON object: "
    '{"row": "<what one row records, at most 12 words>", "terms": [<3 to 6 business words for this data>], '
    '"columns": {"<column name>": "<its business meaning, at most 6 words>", ...}}, naming every column exactly '
    "as given.\n"
    "Example. Table: inv_items; columns: item_id, inv_id, prod_id, qty, price.\n"
    '{"row": "one product sold on a customer invoice", "terms": ["sales", "revenue", "purchases", "line items"], '
    '"columns": {"item_id": "invoice line id", "inv_id": "the invoice, the sale", "prod_id": "product sold", '
    '"qty": "units sold", "price": "price charged per unit; revenue is price times units"}}'
)


@dataclass(frozen=True)
class Glossary:
    """What an LLM wrote for one table.

    Args:
        row: What one row records.
        terms: Business words for the table's data.
        columns: Column name -> its business meaning (only columns of the table).
    """

    row: str = ""
    terms: tuple[str, ...] = ()
    columns: Mapping[str, str] = field(default_factory=dict)

    def description(self) -> str:
        """The table's description: ``one product sold on an invoice (sales, revenue)``."""
        terms = f" ({', '.join(self.terms)})" if self.terms else ""
        return f"{self.row}{terms}".strip()

    def to_dict(self) -> dict[str, Any]:
        return {"row": self.row, "terms": list(self.terms), "columns": dict(self.columns)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Glossary:
        return cls(
            str(data.get("row") or ""), tuple(map(str, data.get("terms") or ())), dict(data.get("columns") or {})
        )


def _kind(table: Table, column: str) -> str:
    """A column's kind as an analyst reads it: number, date, yes/no or text."""
    dtype = table.df[column].dtype
    return {"i": "number", "u": "number", "f": "number", "M": "date", "m": "duration", "b": "yes/no"}.get(
        dtype.kind, "text"
    )


def _values(table: Table, column: str) -> list[str]:
    """A few distinct values of the rows read, clipped: what a code or a status column holds."""
    seen: list[str] = []
    for value in table.df[column].dropna().astype(str):
        text = " ".join(value.split())[:VALUE_CHARS]
        if text and text not in seen:
            seen.append(text)
        if len(seen) == VALUES_SHOWN:
            break
    return seen


def glossary_messages(table: Table) -> tuple[str, str]:
    """The (system, user) messages that ask for ``table``'s glossary; the user message is all the key covers."""
    lines = [f"Table: {table.name or table.id}"]
    if table.title:
        lines.append(f"Title: {table.title}")
    lines.append("Columns:")
    for column in table.df.columns:
        values = _values(table, column)
        shown = f": {', '.join(values)}" if values else ""
        lines.append(f"- {column} ({_kind(table, column)}){shown}")
    return _SYSTEM, "\n".join(lines)


def _prompt_tokens(prompts: Iterable[tuple[str, str]]) -> int:
    """About how many tokens ``prompts`` (:func:`glossary_messages`) send: four characters a token, as prose."""
    return sum((len(system) + len(user) + 3) // 4 for system, user in prompts)


def _corrective(reason: str) -> str:
    """The follow-up sent after an answer that cannot be read."""
    return f"{reason}. Reply with the JSON object only."


def _clip(text: Any, limit: int) -> str:
    """One line of plain text: an LLM's answer is data, so control characters (a terminal's escapes) are dropped."""
    if not isinstance(text, (str, int, float)):
        return ""
    printable = "".join(c for c in str(text) if c.isprintable() or c.isspace())
    return " ".join(printable.split())[:limit]


_PAIR = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:\s*"((?:[^"\\]|\\.)*)"')
_TERMS = re.compile(r'"terms"\s*:\s*\[([^\]]*)\]')


def _cut_answer(text: str) -> dict[str, Any]:
    """What an answer cut at the LLM's token limit still says: its complete ``"name": "text"`` pairs."""
    pairs = {json.loads(f'"{k}"'): json.loads(f'"{v}"') for k, v in _PAIR.findall(text)}
    terms = _TERMS.search(text)
    return {
        "row": pairs.pop("row", ""),
        "terms": re.findall(r'"((?:[^"\\]|\\.)*)"', terms.group(1)) if terms else [],
        "columns": pairs,
    }


def parse_glossary(text: str, columns: Sequence[str]) -> Glossary:
    """Read an LLM's answer for a table of ``columns``.

    Column names are matched exactly, then ignoring case; a name that is no column is dropped. An answer cut
    short (a wide table, the LLM's token limit) keeps its complete pairs.

    Raises:
        ParseRejection: The answer says nothing of the table or any column.
    """
    try:
        data = extract_json(text)
    except ParseRejection:
        data = None
    if not isinstance(data, dict):  # a cut answer's first whole JSON value is its list of terms
        data = _cut_answer(text if isinstance(text, str) else "")
    by_lower = {c.lower(): c for c in columns}
    named: dict[str, str] = {}
    raw_columns = data.get("columns")
    for name, meaning in raw_columns.items() if isinstance(raw_columns, dict) else ():
        column = name if name in columns else by_lower.get(str(name).lower())
        clipped = _clip(meaning, COLUMN_CHARS)
        if column is not None and clipped:
            named[column] = clipped
    raw_terms = data.get("terms")
    terms = [_clip(t, TERM_CHARS) for t in raw_terms] if isinstance(raw_terms, list) else []
    row = _clip(data.get("row", ""), ROW_CHARS)
    if not row and not named:
        raise ParseRejection("the answer names no column and says nothing of a row")
    return Glossary(row, tuple(dict.fromkeys(t for t in terms if t))[:MAX_TERMS], named)


def with_glossary(table: Table, glossary: Glossary) -> Table:
    """``table`` with the glossary filling the description and column descriptions it lacks (the user's stay)."""
    description = table.description or glossary.description() or None
    columns = {**dict(glossary.columns), **table.column_descriptions}
    return dataclasses.replace(table, description=description, column_descriptions=columns)


@dataclass
class GlossaryReport:
    """What a glossary run did and cost.

    Args:
        tables: Tables given.
        written: Tables the LLM answered in this run.
        cached: Tables served from the cache (no call).
        skipped: ``(table id, reason)`` for every table left with its own text.
        prompt_tokens: Prompt tokens spent in this run.
        completion_tokens: Completion tokens spent in this run.
        seconds: Wall time of the run.
    """

    tables: int = 0
    written: int = 0
    cached: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "skipped": [list(s) for s in self.skipped]}


class GlossaryWriter:
    """Writes each table's glossary with an LLM, through the generation cache.

    Args:
        llm: Any LlamaIndex LLM (an ``OpenAILike`` at a local server is the expected one).
        timeout: Seconds one LLM call may take.
        max_attempts: Calls per table at most; an unreadable answer is sent back once with the reason.
        concurrency: Tables in flight at once (match the server's parallel slots).
        model_name: Overrides the LLM's name in the cache key.
    """

    prompt_version = GLOSSARY_PROMPT_VERSION
    backoff = 0.0  # a failed table is asked again at once: a build waits on every table

    def __init__(
        self,
        llm: LLM,
        *,
        timeout: float = 120.0,
        max_attempts: int = 2,
        concurrency: int = 1,
        model_name: str | None = None,
    ) -> None:
        if max_attempts < 1 or concurrency < 1:
            raise ValueError(f"max_attempts and concurrency must be >= 1, got {max_attempts}, {concurrency}")
        self.llm = llm
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.concurrency = concurrency
        self.json_mode = supports_json_mode(llm)
        self.model_name = model_name or str(getattr(llm, "model", None) or llm.metadata.model_name)

    def cache_key(self, table: Table) -> str:
        """What the answer depends on: the prompt shown, its version and the model."""
        return self._key(glossary_messages(table)[1])

    def _key(self, user: str) -> str:
        payload = json.dumps([self.prompt_version, self.model_name, user], ensure_ascii=False)
        return "glossary:" + hashlib.sha256(payload.encode("utf-8")).hexdigest()

    async def awrite(
        self, table: Table, report: GlossaryReport, prompt: tuple[str, str] | None = None
    ) -> Glossary | None:
        """One table's glossary from the LLM (``None`` when every attempt failed; never raises).

        Args:
            table: The table.
            report: Where the tokens spent and a skip are counted.
            prompt: Its :func:`glossary_messages`, when already built.
        """
        system, user = prompt or glossary_messages(table)
        messages = [
            ChatMessage(role=MessageRole.SYSTEM, content=system),
            ChatMessage(role=MessageRole.USER, content=user),
        ]
        columns = list(table.df.columns)
        asked = await ask_until_read(self, messages, lambda text, _: parse_glossary(text, columns), _corrective)
        report.prompt_tokens += asked.prompt_tokens
        report.completion_tokens += asked.completion_tokens
        if asked.value is not None:
            return asked.value
        report.skipped.append((table.id, asked.reason))
        logger.warning("No glossary for table %r: %s", table.id, asked.reason)
        return None

    async def awrite_all(
        self, tables: Sequence[Table], cache: GenerationCache | None, progress: Callable[[int], Any] | None = None
    ) -> tuple[list[Table], GlossaryReport]:
        """Every table with its glossary, in order, and what it cost; cached tables make no call.

        Args:
            tables: The tables.
            cache: Where answers are read and appended (``None``: none).
            progress: Called with 1 as each table is done (a stage's bar).
        """
        started = time.perf_counter()
        prompts = [glossary_messages(t) for t in tables]
        keys = [self._key(user) for _, user in prompts]
        hits = [cache.get_glossary(key) if cache is not None else None for key in keys]
        to_send = [i for i, hit in enumerate(hits) if hit is None]
        report = GlossaryReport(tables=len(tables), cached=len(tables) - len(to_send))
        if to_send:  # a paid run says what it will send before it sends anything
            logger.info(
                "Glossary with %r: %d table(s) to send (%d of %d cached), about %d prompt tokens",
                self.model_name,
                len(to_send),
                report.cached,
                len(tables),
                _prompt_tokens(prompts[i] for i in to_send),
            )
        semaphore = asyncio.Semaphore(self.concurrency)

        async def one(i: int) -> Table:
            hit = hits[i]
            glossary = Glossary.from_dict(hit) if hit is not None else await written_anew(i)
            if progress is not None:
                progress(1)
            return tables[i] if glossary is None else with_glossary(tables[i], glossary)

        async def written_anew(i: int) -> Glossary | None:
            async with semaphore:
                glossary = await self.awrite(tables[i], report, prompts[i])
            if glossary is not None:
                report.written += 1
                if cache is not None:
                    cache.put_glossary(
                        keys[i], glossary.to_dict(), model_name=self.model_name, prompt_version=self.prompt_version
                    )
            return glossary

        written = list(await asyncio.gather(*(one(i) for i in range(len(tables)))))
        report.seconds = time.perf_counter() - started
        logger.info(
            "Glossary: %d tables, %d written, %d cached, %d skipped, %d prompt + %d completion tokens, %.1fs",
            report.tables,
            report.written,
            report.cached,
            len(report.skipped),
            report.prompt_tokens,
            report.completion_tokens,
            report.seconds,
        )
        return written, report

    def write_all(
        self, tables: Sequence[Table], cache: GenerationCache | None, progress: Callable[[int], Any] | None = None
    ) -> tuple[list[Table], GlossaryReport]:
        """:meth:`awrite_all` from synchronous code."""
        return run_sync(lambda: self.awrite_all(tables, cache, progress))


def glossary_writer(llm: LLM | None, generator: QueryGenerator | None, config: PearlConfig) -> GlossaryWriter | None:
    """Who writes a build's glossary: ``llm``, else an :class:`LLMQueryGenerator`'s LLM (with its time limit);
    ``None`` without an LLM or with ``config.glossary`` off."""
    options: dict[str, Any] = {"concurrency": config.concurrency}
    if isinstance(generator, LLMQueryGenerator):
        llm, options["timeout"] = llm or generator.llm, generator.timeout
    if llm is None or not config.glossary:
        return None
    return GlossaryWriter(llm, **options)


def estimate_glossary(
    tables: Sequence[Table], llm: LLM | None, generator: QueryGenerator | None, config: PearlConfig
) -> dict[str, int]:
    """What a build's glossary would send, without calling the LLM: tables, those cached, prompt tokens."""
    writer = glossary_writer(llm, generator, config)
    if writer is None:
        return {"glossary_tables": 0, "glossary_cached": 0, "glossary_prompt_tokens": 0}
    cache = paid_work_cache(config.cache_dir)
    to_send = [t for t in tables if cache.get_glossary(writer.cache_key(t)) is None]
    return {
        "glossary_tables": len(to_send),
        "glossary_cached": len(tables) - len(to_send),
        "glossary_prompt_tokens": _prompt_tokens(map(glossary_messages, to_send)),
    }
