"""Column profiles: everything join discovery needs to know about one column, computed once.

A profile holds the column's normalised name tokens, an inferred type, a bounded
*bottom-k* sample of its distinct normalised values, its distinct ratio (how
key-like it is) and, once :func:`embed_profiles` ran, a name and a value
embedding. Candidate generation and scoring only ever read profiles, never the
DataFrames again, so the cost of touching the data is paid once per column.

Why bottom-k: keeping the ``k`` distinct values with the smallest stable hash
(crc32) gives every column a sample drawn with the *same* hash order, so two
samples restricted to a common hash range estimate Jaccard and containment of
the full value sets without bias (see :mod:`llama_index_pearl.joins.scoring`).

Pipeline step: joins (docs/architecture.md).
"""

from __future__ import annotations

import logging
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding

from llama_index_pearl.tables.table import Table, cell_text

__all__ = [
    "KEY_TOKENS",
    "ColumnProfile",
    "embed_profiles",
    "name_tokens",
    "profile_column",
    "profile_tables",
    "singular",
    "table_name_tokens",
]

logger = logging.getLogger(__name__)

# Tokens that mark a column as an identifier rather than an attribute.
KEY_TOKENS = frozenset({"id", "code", "key", "no", "num", "number", "ref", "uid", "pk", "fk", "nr"})

MAX_CELL_CHARS = 64  # longer cells are prose; truncating keeps hashing cheap and values comparable
MAX_ROWS = 5000  # rows read per column; distinct ratio and samples are stable well before this
SAMPLE_SIZE = 256  # bottom-k sample of distinct values
EMBED_VALUES = 5  # values mean-pooled into the value embedding (paper appendix B.1)
KEY_RATIO = 0.95  # distinct ratio above which a column counts as key-like

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NON_ALNUM = re.compile(r"[^0-9a-zA-Z]+")
_INT = re.compile(r"^[+-]?\d+$")
_FLOAT = re.compile(r"^[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?$")
_CODED = re.compile(r"^(\D+?)(\d+)$")
_DATE = re.compile(r"^\d{4}[-/]\d{1,2}[-/]\d{1,2}|^\d{1,2}[-/]\d{1,2}[-/]\d{2,4}")


def name_tokens(name: str) -> tuple[str, ...]:
    """Split a column or table name on snake_case, camelCase and punctuation, lowercased.

    Args:
        name: A raw column or table name such as ``"customerId"`` or ``"Stadium_ID"``.

    Returns:
        The lowercase tokens, e.g. ``("customer", "id")``.
    """
    parts = _NON_ALNUM.split(_CAMEL.sub(" ", str(name)))
    return tuple(p.lower() for p in " ".join(parts).split() if p)


@lru_cache(maxsize=65536)  # BM25 folds every word of every unit and question; vocabularies repeat
def singular(token: str) -> str:
    """English singular of a lowercase word, by suffix rules: ``countries`` -> ``country``, ``races`` -> ``race``.

    Args:
        token: A lowercase word.
    """
    if token.endswith("ies") and len(token) > 4:
        return token[:-3] + "y"
    if token.endswith(("sses", "xes", "ches", "shes")):
        return token[:-2]
    if token.endswith("s") and not token.endswith(("ss", "us", "is")) and len(token) > 3:
        return token[:-1]
    return token


def table_name_tokens(table_id: str) -> tuple[str, ...]:
    """Tokens of a table's own name: the part after the last ``__`` or ``/`` (a ``db__`` or folder prefix is dropped).

    Args:
        table_id: The table id, e.g. ``"concert_singer__singer_in_concert"``.

    Returns:
        Tokens of the bare table name, e.g. ``("singer", "in", "concert")``.
    """
    return name_tokens(table_id.rsplit("__", 1)[-1].rsplit("/", 1)[-1])


@dataclass
class ColumnProfile:
    """What join discovery knows about one column.

    Args:
        table_id: Owning table id.
        column: Column name as in the table.
        tokens: Normalised name tokens.
        dtype: ``"int"``, ``"float"``, ``"date"``, ``"text"`` or ``"empty"``.
        n_values: Non-empty cells read.
        n_distinct: Distinct normalised values among them.
        sample: Bottom-k sample of distinct values: ``{value: crc32}``.
        threshold: Largest hash kept when the sample is truncated, else ``None`` (sample is the full set).
        examples: Up to 5 values for the value embedding.
        int_range: ``(min, max)`` of an int column's values, or of the counter of a
            prefixed code column (``ord-0001`` .. ``ord-0950``: a 1..n id in disguise), else ``None``.
        name_vec: Unit-norm name embedding (set by :func:`embed_profiles`).
        value_vec: Unit-norm mean value embedding (set by :func:`embed_values`; ``None`` without examples).
        source: Provenance of the owning table (``Table.source``; ``None``: unknown).
    """

    table_id: str
    column: str
    tokens: tuple[str, ...]
    dtype: str
    n_values: int
    n_distinct: int
    sample: dict[str, int] = field(repr=False)
    threshold: int | None = None
    examples: list[str] = field(default_factory=list, repr=False)
    int_range: tuple[int, int] | None = None
    name_vec: np.ndarray | None = field(default=None, repr=False)
    value_vec: np.ndarray | None = field(default=None, repr=False)
    source: str | None = None

    @cached_property
    def value_set(self) -> frozenset[str]:
        """The sampled values as a set (cached: scoring intersects it many times)."""
        return frozenset(self.sample)

    @property
    def norm_name(self) -> str:
        return "_".join(self.tokens)

    @property
    def distinct_ratio(self) -> float:
        return self.n_distinct / self.n_values if self.n_values else 0.0

    @property
    def key_like(self) -> bool:
        """Unique values: the referenced side of a foreign key usually is."""
        return self.joinable and self.distinct_ratio >= KEY_RATIO

    @property
    def joinable(self) -> bool:
        """All-null and constant columns can never be join keys."""
        return self.n_distinct >= 2

    @property
    def sequential(self) -> bool:
        """Dense small integers (1..n surrogate keys, counts): any two such columns overlap by chance."""
        if self.int_range is None:
            return False
        low, high = self.int_range
        return low >= -1 and high <= 2 * self.n_distinct + 10

    @property
    def has_key_token(self) -> bool:
        return bool(self.tokens) and self.tokens[-1] in KEY_TOKENS

    @property
    def name_text(self) -> str:
        """The text embedded for the name: tokens joined by spaces."""
        return " ".join(self.tokens) or self.column


def _normalise(value: str) -> str:
    text = value.strip().lower()
    if len(text) > MAX_CELL_CHARS:
        text = text[:MAX_CELL_CHARS]
    # "7.0" and "7" must meet in the value index: pandas turns int columns with gaps into floats.
    if text.endswith(".0") and _INT.match(text[:-2]):
        text = text[:-2]
    return text


def _infer_type(values: Sequence[str]) -> str:
    if not values:
        return "empty"
    probe = values[:200]
    if all(v.isascii() and v.isdigit() for v in probe) or all(_INT.match(v) for v in probe):
        return "int"
    if all(_FLOAT.match(v) for v in probe):
        return "float"
    if all(_DATE.match(v) for v in probe):
        return "date"
    return "text"


def _counter_range(values: Sequence[str]) -> tuple[int, int] | None:
    """Range of the number in values that are one fixed prefix plus a counter, else ``None``."""
    prefix = None
    low, high = None, None
    for value in values:
        match = _CODED.match(value)
        if match is None or (prefix is not None and match.group(1) != prefix):
            return None
        prefix = match.group(1)
        number = int(match.group(2))
        low = number if low is None else min(low, number)
        high = number if high is None else max(high, number)
    return None if low is None or high is None else (low, high)


def profile_column(
    table_id: str, column: str, cells: Sequence[object], sample_size: int = SAMPLE_SIZE, source: str | None = None
) -> ColumnProfile:
    """Profile one column from its cells.

    Args:
        table_id: Owning table id.
        column: Column name.
        cells: The column's cells (any type; CSV cells are strings).
        sample_size: How many distinct values the bottom-k sample keeps.
        source: Provenance of the owning table.

    Returns:
        The column's :class:`ColumnProfile` (embeddings not yet set).
    """
    # Inline fast path (this loop sees every cell of the corpus); the rare cells needing
    # truncation or "7.0" -> "7" go through _normalise.
    lowered = [(c if type(c) is str else cell_text(c)).strip().lower() for c in cells[:MAX_ROWS]]
    values = [
        _normalise(v) if len(v) > MAX_CELL_CHARS or v.endswith(".0") else v for v in lowered if v and not v.isspace()
    ]
    distinct = dict.fromkeys(values)  # insertion order = first appearance, deterministic
    hashed = {v: zlib.crc32(v.encode("utf-8", "replace")) for v in distinct}
    threshold: int | None = None
    if len(hashed) > sample_size:
        kept = sorted(hashed.items(), key=lambda kv: kv[1])[:sample_size]
        hashed = dict(kept)
        threshold = kept[-1][1]
    dtype = _infer_type(list(distinct))
    int_range = None
    if dtype == "int":
        ints = [int(v) for v in distinct]
        int_range = (min(ints), max(ints))
    elif dtype == "text" and distinct:
        int_range = _counter_range(distinct)
    return ColumnProfile(
        table_id=table_id,
        column=column,
        tokens=name_tokens(column),
        dtype=dtype,
        n_values=len(values),
        n_distinct=len(distinct),
        sample=hashed,
        threshold=threshold,
        examples=list(distinct)[:EMBED_VALUES],
        int_range=int_range,
        source=source,
    )


def profile_tables(tables: Sequence[Table], sample_size: int = SAMPLE_SIZE) -> list[ColumnProfile]:
    """Profile every column of every table, in table then column order.

    Args:
        tables: The corpus.
        sample_size: Bottom-k sample size per column.

    Returns:
        One profile per column.
    """
    profiles: list[ColumnProfile] = []
    for table in tables:
        frame = table.df if len(table.df) <= MAX_ROWS else table.df.iloc[:MAX_ROWS]
        # One conversion per table: per-column Series access costs more than the profiling itself.
        for column, cells in zip(table.columns, frame.to_numpy(dtype=object).T.tolist(), strict=False):
            profiles.append(profile_column(table.id, column, cells, sample_size, table.source))
    return profiles


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.maximum(norms, 1e-12)).astype(np.float32)


def embed_profiles(profiles: Sequence[ColumnProfile], embed_model: BaseEmbedding, show_progress: bool = False) -> None:
    """Set ``name_vec`` and ``value_vec`` on every profile (:func:`embed_names`, then :func:`embed_values`).

    Args:
        profiles: Profiles to embed in place.
        embed_model: Any LlamaIndex embedding model.
        show_progress: Show LlamaIndex's progress bar.
    """
    embed_names(profiles, embed_model, show_progress)
    embed_values(profiles, embed_model, show_progress)


def embed_names(profiles: Sequence[ColumnProfile], embed_model: BaseEmbedding, show_progress: bool = False) -> None:
    """Set ``name_vec`` on every profile, in one batched call over the distinct names.

    Args:
        profiles: Profiles to embed in place.
        embed_model: Any LlamaIndex embedding model.
        show_progress: Show LlamaIndex's progress bar.
    """
    names = list(dict.fromkeys(p.name_text for p in profiles))
    matrix, row = _embed_distinct(names, embed_model, show_progress)
    for p in profiles:
        p.name_vec = matrix[row[p.name_text]]


def embed_values(profiles: Sequence[ColumnProfile], embed_model: BaseEmbedding, show_progress: bool = False) -> None:
    """Set ``value_vec`` (the normalised mean of the examples' embeddings) on every profile with examples.

    Only scoring reads value vectors, so discovery embeds just the columns of
    admitted candidate pairs: 449 of Spider's 1,144 distinct example values (with
    provenance), 6,439 of FeTaQA's 12,050, and after an insert only those of pairs
    touching the new tables.

    Args:
        profiles: Profiles to embed in place.
        embed_model: Any LlamaIndex embedding model.
        show_progress: Show LlamaIndex's progress bar.
    """
    values = list(dict.fromkeys(v for p in profiles for v in p.examples))
    matrix, row = _embed_distinct(values, embed_model, show_progress)
    for p in profiles:
        if p.examples:
            mean = matrix[[row[v] for v in p.examples]].mean(axis=0)
            p.value_vec = _unit_rows(mean[None, :])[0]


def _embed_distinct(
    texts: list[str], embed_model: BaseEmbedding, show_progress: bool
) -> tuple[np.ndarray, dict[str, int]]:
    """Unit-norm embeddings of distinct texts and each text's row.

    Column names and small values repeat a lot across a corpus, so callers pass
    each text once: deduplication is the cheapest speed-up there is.
    """
    if not texts:
        return np.zeros((0, 0), dtype=np.float32), {}
    matrix = _unit_rows(np.asarray(embed_model.get_text_embedding_batch(texts, show_progress=show_progress)))
    return matrix, {text: i for i, text in enumerate(texts)}
