"""``PearlConfig``: every build option of an index, declared once, validated when made.

``PearlTableIndex.from_tables``/``estimate_cost``, the build, incremental inserts and
the ``pearl`` command line all take this one object (the CLI derives its flags from
the fields' metadata); ``persist`` writes it and ``load`` reads it back. It sits
below every pipeline step that reads it: it imports only their constants.

Pipeline step: configuration (docs/architecture.md).
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from llama_index_pearl.joins.scoring import CROSS_SOURCE_POLICIES, DEFAULT_CROSS_SOURCE
from llama_index_pearl.joins.selection import LAMBDA_DIV
from llama_index_pearl.tables.files import CsvOptions
from llama_index_pearl.tables.table import DEFAULT_MAX_ROWS_READ
from llama_index_pearl.text.serialization import (
    DEFAULT_EMBEDDED_ROWS,
    DEFAULT_INCLUDE_TITLES,
    DEFAULT_MAX_ROWS,
    DEFAULT_TABLE_TEXT_CHARS,
)
from llama_index_pearl.text.thesaurus import parse_business_words

__all__ = [
    "DEFAULT_CONCURRENCY",
    "GROUPS",
    "MAX_EF_CONSTRUCTION",
    "MAX_EF_SEARCH",
    "MAX_HNSW_M",
    "PearlConfig",
    "check_field",
    "option",
    "option_fields",
]

# requests in flight: a local LLM server (vLLM, llama.cpp) serves a few slots at once
DEFAULT_CONCURRENCY = 4
# unit count from which the default store is an HNSW graph (benchmarks/README.md, "Scale")
DEFAULT_APPROXIMATE_FROM = 100_000
# Upper bounds of the options a folder persists (a folder may come from anyone: a value past them would allocate
# gigabytes at load or at the first query, e.g. FAISS's graph of M = 2^24 or a candidate list of efSearch = 2^31,
# or make a load that builds the graph take hours). Each is far above any value that helps: hnswlib advises M of
# 2 to 100 and efConstruction up to 2,000, FAISS's efSearch ranges 16 to a few thousand.
MAX_HNSW_M = 256
MAX_EF_CONSTRUCTION = 4_096
MAX_EF_SEARCH = 65_536
MAX_VIEW_ROWS = 10_000

# Field metadata: "group" (one of GROUPS), "help" (one line; the CLI shows it), "off" for a
# bool that defaults to True (the help of its --no-... flag: what turning it off does), and
# where needed "min" and "max" (numbers: every number has both), "choices", "flag" (the CLI
# spelling), "persist" (False: a per-machine or per-run setting, not written with the index),
# "update" (True: an insert may use another value than the build did) and "kept" (True: an insert's value
# becomes the index's from that insert on, persisted with it: the answer's bars; the other update options
# are how one insert reads its tables).
GROUPS = ("reading", "discovery", "generation", "views", "serialization", "store", "answer")

# The bars of the answer set's two tiers (benchmarks/README.md, "How the bars were chosen"): a table the question
# needs at this confidence or more is *needed*; from the second bar up it *may be needed*.
DEFAULT_NEEDED_CONFIDENCE = 0.5
DEFAULT_MAYBE_CONFIDENCE = 0.12


def option(default: Any, group: str, help: str, **meta: Any) -> Any:
    """A field of an options dataclass with its metadata (see above); ``pearl`` derives its flag from it."""
    return field(default=default, metadata={"group": group, "help": help, **meta})


@dataclass(frozen=True)
class PearlConfig:
    """Build settings of an index.

    Args:
        max_rows_read: Leading rows read per table from its input, ``None``: all
            (SQL: ``LIMIT``, run by the server; CSV: ``nrows``; Parquet: leading row
            groups; DataFrames: cut). Discovery and units use this sample, and only it
            is persisted; the exact row count is kept in ``Table.total_rows``.
        csv_options: Encoding, delimiter and quote character of CSV files
            (a dict or :class:`~llama_index_pearl.tables.files.CsvOptions`); detected
            per file where not given.
        strict: Stop at the first table file that cannot be read (``False``: skip it
            with one warning naming it and why; the build report lists it). ``pearl eval`` reads a benchmark's
            gold tables the same way: one that is no table of the folder is an error (``False``: a warning).
        skip_bad_lines: Skip the rows of a CSV file that hold more fields than its header (pandas'
            ``on_bad_lines="skip"``), with one warning naming the file and how many, counted in the build report
            (``bad_lines``); ``False``: such a row makes the file unreadable (skipped, or an error with ``strict``).
        augment: Discover join paths and add generated units (``False``: the
            whole-table baseline).
        budget: Paths kept per pool by lazy greedy (paper's K). Default: every
            candidate path for a free generator (the heuristic), ⌊|C|/2⌋ for an LLM.
        lambda_div: Diversity weight λ_div of path selection (paper: 0.1).
        use_declared_joins: Use foreign keys declared by SQL databases as edges.
        cross_source_joins: Joins between tables of different sources
            (``Table.source``): ``"evidence"`` keeps only those backed by values
            chance does not explain, ``"never"`` drops them, ``"always"`` ignores
            provenance.
        concurrency: Generation requests in flight (match the LLM server's slots).
        cache_dir: Folder of the generation cache (JSONL). ``None``: the generator's
            default (an LLM caches in ``$PEARL_CACHE_DIR`` or ``~/.cache/llama-index-pearl``;
            the heuristic does not cache).
        glossary: With an LLM (``llm=``, or an ``LLMQueryGenerator``), it writes each table's and column's business
            words once at build time (:mod:`~llama_index_pearl.generation.glossary`), cached like the questions;
            they fill the descriptions the tables lack. Off by default: it lifts business-word questions and costs
            a statistics database's (benchmarks/README.md, "An LLM's glossary at build time").
        single_hop_questions: Questions per single-hop table (default: the
            generator's ``questions_per_table``: 5 for an LLM, 2 for the heuristic).
        single_hop: Add per-table questions for tables in no selected path
            (paper appendix E; use it for single-table corpora).
        star_units: Add a unit per fact table (one referencing four or more tables by key joins)
            naming it and its dimensions (:mod:`~llama_index_pearl.joins.stars`), so a question that
            reads a fact and several dimensions finds them together.
        include_titles: Render table titles and descriptions in units.
        max_rows: Rows per table view (paper appendix B.2: 10): what the query generator is
            shown and what the lexical index reads.
        embedded_rows: Rows per table view in the text the encoder embeds (at most
            ``max_rows``); the other rows reach the lexical index only. See
            :data:`~llama_index_pearl.text.serialization.DEFAULT_EMBEDDED_ROWS` for the measurements.
        table_text_chars: Characters of a table's text as a result node gives it to an LLM
            (``PearlTableIndex.table_text``): columns, then rows, beyond it are cut with a
            visible marker (:meth:`~llama_index_pearl.text.serialization.Serializer.table_text`).
        approximate_from: Units from which the default FAISS store searches an HNSW graph instead of
            every vector (:mod:`~llama_index_pearl.store.hnsw`); ``None``: always exact. Below
            it the store is exact and nothing differs. Default and HNSW parameters: benchmarks/README.md,
            "Scale".
        hnsw_m: Neighbours per node of the HNSW graph (FAISS's ``M``).
        hnsw_ef_construction: Candidate list while inserting into the graph (``efConstruction``).
        hnsw_ef_search: Candidate list while searching the graph (``efSearch``; at least the units asked for).
        column_vectors: Embed each column on its own (``table: column — description (values)``) and the words of
            every name, so that a question's words, business words included, are matched to columns
            (:mod:`~llama_index_pearl.corpus.columns`); ``False``: tables are matched by their units and names only.
        needed_confidence: The answer set's *needed* tier: the tables the question needs with at least this
            confidence (a probability, fitted on every dev set), joined by the fewest bridges
            (:mod:`~llama_index_pearl.retrieval.answer.table_sets`). Read by the index's retrievers; an insert that sets
            it (``insert_tables(..., needed_confidence=0.6)``) changes the index's bar from then on, persisted.
        maybe_confidence: The set's *may be needed* tier: tables from this confidence up to ``needed_confidence``
            (an insert may change it as it changes ``needed_confidence``).
        thesaurus: A question's lexical text (what BM25, the words each table holds and the word evidence read)
            adds the schema words of its business words: "revenue" reads ``price``, ``quantity`` and ``amount``
            too, "clients" ``customer`` (:mod:`~llama_index_pearl.text.thesaurus`), save the words that every
            source in reach spells itself (a ``cards`` table: "cards" is read as it is); its embedding reads its
            own words. ``False``: the question's own words only. An insert may change it, as it changes the bars.
        business_words: Your own business words and the words your schemas spell them with, as ``"words: schema
            words"`` entries separated by ``;`` (``"arr mrr: revenue subscription; gmv: sales amount"``;
            :func:`~llama_index_pearl.text.thesaurus.parse_business_words`): read like the thesaurus's, before
            them, and with ``thesaurus=False`` too. An insert may change it, as it changes the bars.
        preferred_sources: Sources, comma-separated, that a question routed to one of their copies (a *twin*:
            :func:`~llama_index_pearl.retrieval.answer.routing.twin_sources`) is answered within instead, the
            copy named: the production database before its export, the warehouse before its staging copy.
            ``None``: the question is answered within the copy it is routed to. An insert may change it, as it
            changes the bars.

    Raises:
        ValueError: A value of the wrong type or out of range, or two options that
            exclude each other; the message names the field.
    """

    max_rows_read: int | None = option(
        DEFAULT_MAX_ROWS_READ, "reading", "leading rows read per table (default 10000)", min=1, max=10**9
    )
    csv_options: CsvOptions = field(
        default_factory=CsvOptions,
        metadata={"group": "reading", "help": "CSV encoding/delimiter/quotechar", "update": True},
    )
    strict: bool = option(
        False,
        "reading",
        "stop at the first table file that cannot be read, and (pearl eval) at a gold table that is no table of the "
        "folder (default: a warning naming it; the file is skipped, the gold table counted as missed)",
        persist=False,
        update=True,
    )
    skip_bad_lines: bool = option(
        False,
        "reading",
        "skip CSV rows with more fields than the header, counted in the build report (default: skip the whole file)",
        update=True,
    )
    augment: bool = option(
        True,
        "discovery",
        "discover join paths and generate units (False: whole tables only)",
        off="index whole tables only: no join discovery, no generated questions (the whole-table baseline)",
    )
    budget: int | None = option(
        None, "discovery", "paths per pool (default: every path; tables/2 with an LLM)", min=0, max=10**6
    )
    lambda_div: float = option(
        LAMBDA_DIV, "discovery", "diversity weight of path selection (paper: 0.1)", min=0.0, max=1000.0
    )
    use_declared_joins: bool = option(
        True,
        "discovery",
        "use foreign keys declared by SQL databases",
        flag="--no-declared-joins",
        off="ignore the foreign keys SQL databases declare: find every join from names and values",
    )
    cross_source_joins: str = option(
        DEFAULT_CROSS_SOURCE,
        "discovery",
        "joins between tables of different sources (default: only on value evidence)",
        choices=CROSS_SOURCE_POLICIES,
    )
    concurrency: int = option(
        DEFAULT_CONCURRENCY, "generation", "LLM requests in flight", min=1, max=1024, persist=False, update=True
    )
    cache_dir: str | None = option(
        None,
        "generation",
        "generation cache folder (LLM default: ~/.cache/llama-index-pearl)",
        persist=False,
        update=True,
    )
    glossary: bool = option(
        False,
        "generation",
        "with an LLM: it first writes a glossary of each table and column (their business words), cached; "
        "it fills the descriptions the tables lack",
    )
    single_hop_questions: int | None = option(
        None, "generation", "questions per single-hop table (default: 5 with an LLM, 2 heuristic)", min=1, max=100
    )
    single_hop: bool = option(False, "views", "per-table questions for tables in no path (paper appendix E)")
    star_units: bool = option(
        True,
        "views",
        "a unit per fact table that references 4+ tables: it and its dimensions (star and snowflake joins)",
        flag="--no-star-units",
        off="no star units: a fact table and its dimensions are found through join paths of 2-3 tables only",
    )
    include_titles: bool = option(
        DEFAULT_INCLUDE_TITLES,
        "serialization",
        "render table titles",
        flag="--no-titles",
        off="leave table titles and descriptions out of the indexed texts",
    )
    max_rows: int = option(
        DEFAULT_MAX_ROWS, "serialization", "rows per table view (paper: 10)", min=1, max=MAX_VIEW_ROWS
    )
    embedded_rows: int = option(
        DEFAULT_EMBEDDED_ROWS,
        "serialization",
        f"rows per table in the embedded text (default {DEFAULT_EMBEDDED_ROWS}); the view's other rows reach only "
        "the lexical index",
        min=0,
        max=MAX_VIEW_ROWS,
    )
    table_text_chars: int = option(
        DEFAULT_TABLE_TEXT_CHARS,
        "serialization",
        f"characters of a table's text given to an LLM (default {DEFAULT_TABLE_TEXT_CHARS:,}); columns and rows "
        "beyond it are cut with a marker",
        min=200,
        max=10**7,
    )

    approximate_from: int | None = option(
        DEFAULT_APPROXIMATE_FROM,
        "store",
        f"units from which the default FAISS store searches an HNSW graph (default {DEFAULT_APPROXIMATE_FROM:,}); "
        "below it, exact",
        min=1,
        max=10**12,
    )
    hnsw_m: int = option(
        32, "store", "neighbours per node of the HNSW graph (FAISS's M; default 32)", min=2, max=MAX_HNSW_M
    )
    hnsw_ef_construction: int = option(
        200,
        "store",
        "HNSW candidate list while inserting (efConstruction; default 200)",
        min=1,
        max=MAX_EF_CONSTRUCTION,
    )
    hnsw_ef_search: int = option(
        768,
        "store",
        "HNSW candidate list while searching (efSearch; default 768, at least the units asked for)",
        min=1,
        max=MAX_EF_SEARCH,
    )

    column_vectors: bool = option(
        True,
        "answer",
        "embed each column apart, and the words of the names, to match a question's words to columns",
        off="no column vectors: a question's words reach tables through their units and names only",
    )
    needed_confidence: float = option(
        DEFAULT_NEEDED_CONFIDENCE,
        "answer",
        f"confidence from which a table is needed by the question (default {DEFAULT_NEEDED_CONFIDENCE})",
        min=0.01,
        max=0.99,
        update=True,
        kept=True,
    )
    maybe_confidence: float = option(
        DEFAULT_MAYBE_CONFIDENCE,
        "answer",
        f"confidence from which a table may be needed (default {DEFAULT_MAYBE_CONFIDENCE}; at most needed)",
        min=0.01,
        max=0.99,
        update=True,
        kept=True,
    )
    thesaurus: bool = option(
        True,
        "answer",
        "read a question's business words (revenue, clients, staff) as the words schemas spell them with too",
        off="no thesaurus: BM25 and the word evidence read the question's own words only",
        update=True,
        kept=True,
    )
    business_words: str | None = option(
        None,
        "answer",
        "your own business words, as 'words: schema words' entries separated by ';' (arr: revenue subscription); "
        "read before the thesaurus's",
        update=True,
        kept=True,
    )
    preferred_sources: str | None = option(
        None,
        "answer",
        "sources (comma-separated) a question routed to one of their copies is answered within",
        update=True,
        kept=True,
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "csv_options", CsvOptions.of(self.csv_options))
        if self.cache_dir is not None:
            if not isinstance(self.cache_dir, (str, os.PathLike)):
                raise ValueError(f"cache_dir must be a folder path or None, got {self.cache_dir!r}")
            object.__setattr__(self, "cache_dir", os.fspath(self.cache_dir))
        for declared in option_fields():
            if declared.name not in ("csv_options", "cache_dir"):
                check_field(declared, getattr(self, declared.name))
        if self.business_words is not None:
            parse_business_words(self.business_words)  # a bad entry is an error here, not at the first question
        if self.maybe_confidence > self.needed_confidence:
            raise ValueError(
                f"maybe_confidence ({self.maybe_confidence}) must be at most needed_confidence "
                f"({self.needed_confidence})"
            )

    @classmethod
    def with_overrides(cls, config: PearlConfig | None = None, **overrides: Any) -> PearlConfig:
        """``config`` (default: the defaults) with some fields replaced.

        Raises:
            TypeError: An override that is no field (the message suggests the closest one).
            ValueError: A bad value, as in the constructor.
        """
        base = config if config is not None else cls()
        unknown = [name for name in overrides if name not in cls.__dataclass_fields__]
        if unknown:
            close = difflib.get_close_matches(unknown[0], cls.__dataclass_fields__, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; options: {', '.join(cls.__dataclass_fields__)}"
            raise TypeError(f"Unknown build option {unknown[0]!r}{hint}")
        return dataclasses.replace(base, **overrides) if overrides else base

    def for_update(self, **overrides: Any) -> PearlConfig:
        """The build's settings with an insert's own values for the options an insert may change.

        Raises:
            ValueError: An option fixed by the build (rows, titles, budget...).
        """
        fixed = [name for name in overrides if not self.__dataclass_fields__[name].metadata.get("update")]
        if fixed:
            raise ValueError(
                f"{fixed[0]} is fixed by the build ({getattr(self, fixed[0])!r}); rebuild the index to change it"
            )
        return PearlConfig.with_overrides(self, **overrides)

    def after_update(self, update: PearlConfig) -> PearlConfig:
        """The index's settings after an insert made with ``update`` (:meth:`for_update`'s): the options an insert
        keeps (``kept``: the answer's bars) are the insert's, every other the index's.

        Args:
            update: The insert's settings.
        """
        kept = {f.name: getattr(update, f.name) for f in option_fields() if f.metadata.get("kept")}
        return dataclasses.replace(self, **kept)

    def to_dict(self) -> dict[str, Any]:
        """The persisted fields as JSON values (per-machine settings such as ``cache_dir`` left out)."""
        data = {f.name: getattr(self, f.name) for f in option_fields() if f.metadata.get("persist", True)}
        data["csv_options"] = dataclasses.asdict(self.csv_options)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PearlConfig:
        """Read :meth:`to_dict`'s output.

        Raises:
            ValueError: A key that is no persisted field, or a bad value (the message names it).
        """
        persisted = {f.name for f in option_fields() if f.metadata.get("persist", True)}
        unknown = sorted(set(data) - persisted)
        if unknown:
            raise ValueError(f"unknown build option(s) {unknown} in the persisted config")
        return cls(**data)


def option_fields() -> tuple[dataclasses.Field, ...]:
    """The fields of :class:`PearlConfig`, in declaration order (the CLI's flags come from them)."""
    return fields(PearlConfig)


_EXPECTED = (("bool", "True or False"), ("int", "an integer"), ("float", "a finite number"), ("", "a string"))


def check_field(declared: dataclasses.Field, value: Any) -> None:
    """Type and range of one field's value, from its annotation and metadata (``ValueError`` naming the field)."""
    name, kind, meta = declared.name, str(declared.type), declared.metadata
    if value is None and "None" in kind:
        return
    if kind.startswith("bool"):
        ok = isinstance(value, bool)
    elif kind.startswith("int"):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif kind.startswith("float"):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    else:
        ok = isinstance(value, str)
    if not ok:
        expected = next(text for prefix, text in _EXPECTED if kind.startswith(prefix))
        raise ValueError(f"{name} must be {expected}{' or None' if 'None' in kind else ''}, got {value!r}")
    if "min" in meta and value < meta["min"]:
        raise ValueError(f"{name} must be >= {meta['min']}, got {value!r}")
    if "max" in meta and value > meta["max"]:
        raise ValueError(f"{name} must be <= {meta['max']:,}, got {value!r}")
    if "choices" in meta and value not in meta["choices"]:
        raise ValueError(f"{name} must be one of {tuple(meta['choices'])}, got {value!r}")
