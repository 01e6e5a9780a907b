"""Column profiles: everything join discovery needs to know about one column, computed once.

A profile holds the column's normalised name tokens, an inferred type, a bounded
*bottom-k* sample of its distinct normalised values, its distinct ratio (how
key-like it is) and, once discovery embedded it, a name embedding and a value embedding
(:mod:`~llama_index_pearl.joins.embedding`).
Candidate generation and scoring only ever read profiles, never the DataFrames again, so the
cost of touching the data is paid once per column.

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
from functools import cached_property

import numpy as np

from llama_index_pearl.joins.naming import (
    KEY_TOKENS,
    bare_name,
    column_prefix,
    entity_singular,
    names_own_table,
    parse_reference,
    table_name_words,
)
from llama_index_pearl.tables.table import Table, cell_text
from llama_index_pearl.text.words import identifier_words

__all__ = [
    "KEY_TOKENS",
    "ColumnProfile",
    "profile_column",
    "profile_tables",
    "table_name_words",
    "value_hash",
]

logger = logging.getLogger(__name__)

MAX_CELL_CHARS = 64  # longer cells are prose; truncating keeps hashing cheap and values comparable
SAMPLE_SIZE = 256  # bottom-k sample of distinct values
EMBED_VALUES = 5  # values mean-pooled into the value embedding (paper appendix B.1)
KEY_RATIO = 0.95  # distinct ratio above which a column counts as key-like

_INT = re.compile(r"^[+-]?\d+$")
_FLOAT = re.compile(r"^[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?$")
_CODED = re.compile(r"^(\D+?)(\d+)$")
_DATE = re.compile(r"^\d{4}[-/]\d{1,2}[-/]\d{1,2}|^\d{1,2}[-/]\d{1,2}[-/]\d{2,4}")


@dataclass
class ColumnProfile:
    """What join discovery knows about one column.

    Args:
        table_id: Owning table id.
        column: Column name as in the table.
        tokens: Normalised name tokens.
        dtype: ``"int"``, ``"float"``, ``"date"``, ``"text"`` or ``"empty"``.
        n_values: Non-empty cells read.
        n_rows: Cells read, empty ones included (``n_values`` when not given).
        key_hashes: Every distinct value's crc32, sorted, when the column is a key (``key_like``) whose
            values the sample does not hold whole; else ``None``. A reference with a few values (three
            airports of origin) is then checked against the whole key, not a bottom-k sample of it.
        bare_name: The column's name without its table's column prefix (``orderkey`` of
            ``l_orderkey``; :func:`~llama_index_pearl.joins.naming.column_prefix`): what names are read from.
        n_distinct: Distinct normalised values among them.
        sample: Bottom-k sample of distinct values: ``{value: crc32}``.
        threshold: Largest hash kept when the sample is truncated, else ``None`` (sample is the full set).
        examples: Up to 5 values for the value embedding.
        int_range: ``(min, max)`` of an int column's values, or of the counter of a
            prefixed code column (``ord-0001`` .. ``ord-0950``: a 1..n id in disguise), else ``None``.
        name_vec: Unit-norm name embedding (set by :func:`~llama_index_pearl.joins.embedding.embed_names`).
        value_vec: Unit-norm mean value embedding (set by :func:`~llama_index_pearl.joins.embedding.embed_values`;
            ``None`` without examples).
        source: Provenance of the owning table (``Table.source``; ``None``: unknown).
        label: Unique over the rows read, but a label of a table that has an identifier
            (:func:`mark_labels`): a name, phone or city beside ``CustomerID``, never what a reference points at.
        beside_identifier: Its table has an identifier and this column is none (:func:`mark_labels`): what it
            holds describes or references that table's rows; it keys no table of its own.
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
    n_rows: int = -1
    key_hashes: np.ndarray | None = field(default=None, repr=False)
    bare_name: str = ""
    label: bool = False
    beside_identifier: bool = False

    def __post_init__(self) -> None:
        if self.n_rows < 0:
            self.n_rows = self.n_values
        if not self.bare_name:
            self.bare_name = self.column

    @cached_property
    def value_set(self) -> frozenset[str]:
        """The sampled values as a set (cached: scoring intersects it many times)."""
        return frozenset(self.sample)

    @cached_property
    def int_sample(self) -> np.ndarray:
        """The sampled values of an int column as sorted integers (empty for other types)."""
        if self.dtype != "int":
            return np.zeros(0, dtype=np.int64)
        ints = sorted(int(v) for v in self.sample)
        fits = not ints or (ints[0] >= -(2**63) and ints[-1] < 2**63)  # unsigned 64-bit ids and hashes may not
        return np.array(ints, dtype=np.int64 if fits else object)

    @cached_property
    def shape(self) -> tuple[float, float]:
        """Median length of the sampled values and the share holding a space: what a value looks like."""
        if not self.sample:
            return 0.0, 0.0
        values = list(self.sample)
        return float(np.median([len(v) for v in values])), sum(" " in v for v in values) / len(values)

    @property
    def norm_name(self) -> str:
        return "_".join(self.tokens)

    @property
    def distinct_ratio(self) -> float:
        return self.n_distinct / self.n_values if self.n_values else 0.0

    @property
    def key_like(self) -> bool:
        """Unique and non-null over the rows read, and no label (:func:`mark_labels`): what the referenced side of a
        foreign key is.

        Both shares are held to ``KEY_RATIO``, so a few duplicated or missing cells (a
        daylight-saving hour written twice) do not unmake a key, while a mostly empty column
        whose few values differ (``planes.speed``) is no key.
        """
        return self.joinable and not self.label and self.unique

    @property
    def unique(self) -> bool:
        """Unique and non-null over the rows read (``KEY_RATIO``), whatever the column's role in its table."""
        return _unique_and_full(self.n_distinct, self.n_values, self.n_rows)

    @property
    def identifier(self) -> bool:
        """A key whose name says it identifies its own table's rows: a bare key word (``id``) or the table's entity
        with one (``CustomerID`` of ``Customers``, ``officeCode`` of ``offices``, ``l_orderkey``'s ``o_orderkey``)."""
        if not (self.joinable and self.unique):
            return False
        ref = parse_reference(self.bare_name)
        return (ref.key is not None and not ref.core) or names_own_table(self.bare_name, self.table_id)

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


# Cells that CSV exports and databases write for "no value" (R's NA, Excel's #N/A, MySQL's \N, pandas' NaN):
# never a value, so never an overlap and never a type.
NULL_MARKERS = frozenset(
    {"", "na", "n/a", "n.a.", "#n/a", "nan", "nat", "null", "none", "<na>", "<null>", "\\n", "-", "--"}
)
_INTEGRAL_FLOAT = re.compile(r"^([+-]?\d+)\.0+$")
_SPACES = re.compile(r"\s{2,}")


def normal_value(cell: str) -> str:
    """A cell in the form values are compared in: ``" 13.0 "`` and ``"13"`` meet, ``"AB12"`` and ``"ab12"`` too.

    Lowercased, outer spaces stripped and inner runs of spaces collapsed, an integer
    written as a float (``13.0``, ``13.00``: a nullable integer column exported through
    a float) written as the integer, null markers (``NULL``, ``None``, ``nan``, ``-``)
    empty, and at most ``MAX_CELL_CHARS`` characters.

    Args:
        cell: The cell as text.

    Returns:
        The normal form; ``""`` for no value.
    """
    text = cell.strip().lower()
    if len(text) > MAX_CELL_CHARS:
        text = text[:MAX_CELL_CHARS].rstrip()
    if text in NULL_MARKERS:
        return ""
    if "  " in text or "\t" in text:
        text = _SPACES.sub(" ", text)
    match = _INTEGRAL_FLOAT.match(text)
    return match.group(1).lstrip("+") if match else text


def _unique_and_full(n_distinct: int, n_values: int, n_rows: int) -> bool:
    """Distinct values and non-empty cells each at least ``KEY_RATIO`` of what they are counted against."""
    return n_values > 0 and n_distinct >= KEY_RATIO * n_values and n_values >= KEY_RATIO * n_rows


def value_hash(value: str) -> int:
    """The stable hash (crc32) a value in normal form is sampled and compared by."""
    return zlib.crc32(value.encode("utf-8", "replace"))


def _infer_type(values: Sequence[str]) -> str:
    """The type every value fits (null markers are gone by now): one late odd value makes a column text."""
    if not values:
        return "empty"
    if all(v.isascii() and v.isdigit() for v in values) or all(_INT.match(v) for v in values):
        return "int"
    if all(_FLOAT.match(v) for v in values):
        return "float"
    if all(_DATE.match(v) for v in values):
        return "date"
    return "text"


def declared_type(dtype: object) -> str:
    """The join type a pandas dtype declares: what a column holds when no cell says.

    Integer dtypes declare ``"int"``, datetimes ``"date"``, pandas' string dtype
    ``"text"`` and its nullable ``Float64`` ``"float"``; anything else (object, and numpy
    float, which is also what pandas makes of an all-null column) declares nothing
    (``"empty"``: compatible with every key type).

    Args:
        dtype: A pandas dtype.
    """
    kind = getattr(dtype, "kind", "O")
    if kind in "iu":
        return "int"
    if kind == "M":
        return "date"
    return {"string": "text", "Float64": "float"}.get(str(dtype), "empty")


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
    table_id: str,
    column: str,
    cells: Sequence[object],
    sample_size: int = SAMPLE_SIZE,
    source: str | None = None,
    declared: str = "empty",
    prefix: str = "",
) -> ColumnProfile:
    """Profile one column from its cells.

    Args:
        table_id: Owning table id.
        column: Column name.
        cells: The column's cells (any type; CSV cells are strings).
        sample_size: How many distinct values the bottom-k sample keeps.
        source: Provenance of the owning table.
        declared: The type the source declares (:func:`declared_type`), used when no cell
            has a value (a header-only table, a column empty in the sample).
        prefix: The table's column prefix (:func:`~llama_index_pearl.joins.naming.column_prefix`).

    Returns:
        The column's :class:`ColumnProfile` (embeddings not yet set).
    """
    # Inline fast path (this loop sees every cell of the corpus); the cells that may change
    # in normal form (long, with a point, two spaces, a null marker) go through normal_value.
    # Every row read counts: a prefix of a column sorted by its key covers one end of its values.
    lowered = [(c if type(c) is str else cell_text(c)).strip().lower() for c in cells]
    values = [
        v if len(v) <= MAX_CELL_CHARS and "." not in v and "  " not in v and v not in NULL_MARKERS else normal_value(v)
        for v in lowered
        if v
    ]
    values = [v for v in values if v]
    distinct = dict.fromkeys(values)  # insertion order = first appearance, deterministic
    hashed = {v: value_hash(v) for v in distinct}
    threshold: int | None = None
    key_hashes = None
    if len(hashed) > sample_size:
        if _unique_and_full(len(distinct), len(values), len(lowered)):
            key_hashes = np.unique(np.fromiter(hashed.values(), dtype=np.int64, count=len(hashed)))
        kept = sorted(hashed.items(), key=lambda kv: kv[1])[:sample_size]
        hashed = dict(kept)
        threshold = kept[-1][1]
    dtype = _infer_type(list(distinct)) if distinct else declared
    int_range = None
    if dtype == "int" and distinct:
        ints = [int(v) for v in distinct]
        int_range = (min(ints), max(ints))
    elif dtype == "text" and distinct:
        int_range = _counter_range(distinct)
    return ColumnProfile(
        table_id=table_id,
        column=column,
        tokens=identifier_words(bare_name(column, prefix)),
        dtype=dtype,
        n_values=len(values),
        n_rows=len(lowered),
        n_distinct=len(distinct),
        sample=hashed,
        threshold=threshold,
        examples=list(distinct)[:EMBED_VALUES],
        int_range=int_range,
        source=source,
        key_hashes=key_hashes,
        bare_name=bare_name(column, prefix),
    )


def profile_tables(
    tables: Sequence[Table], sample_size: int = SAMPLE_SIZE, *, provenance: bool = True
) -> list[ColumnProfile]:
    """Profile every column of every table, in table then column order.

    Args:
        tables: The corpus.
        sample_size: Bottom-k sample size per column.
        provenance: Give each profile its table's source; ``False``: one unified pool (source ``None``).

    Returns:
        One profile per column.
    """
    profiles: list[ColumnProfile] = []
    for table in tables:
        frame = table.df
        # One conversion per table: per-column Series access costs more than the profiling itself.
        cells_of = frame.to_numpy(dtype=object).T.tolist() if len(frame) else [[] for _ in table.columns]
        prefix = column_prefix(table.id, table.columns)
        for column, cells, dtype in zip(table.columns, cells_of, frame.dtypes, strict=True):
            try:
                declared = declared_type(dtype)
                source = table.source if provenance else None
                profile = profile_column(table.id, column, cells, sample_size, source, declared, prefix)
            except Exception as exc:  # a cell no rule foresaw: say where, rather than fail the whole build blindly
                raise ValueError(f"Cannot profile column {column!r} of table {table.id!r}: {exc}") from exc
            profiles.append(profile)
        mark_labels(profiles[len(profiles) - len(table.columns) :])
    return profiles


def mark_labels(columns: Sequence[ColumnProfile]) -> None:
    """Mark the unique columns of one table that are labels, not keys, in place.

    A table that has an identifier (:attr:`ColumnProfile.identifier`: ``CustomerID``, ``officeCode``) is
    referenced through it; its other unique columns (a company name, an address, a phone number, the city
    of each of seven offices, the first names of a few hundred customers) are unique because the table is
    small or the values are descriptive, and values shared with them are shared words, not references. A
    column named as a key (``playerID`` beside a surrogate ``ID``) or by a word of its table's name
    (``model_list.Model``) stays a key. Every column but the identifiers is marked ``beside_identifier``.

    Args:
        columns: The profiles of one table's columns.
    """
    if not any(p.identifier for p in columns):
        return
    own_words = {entity_singular(w) for w in table_name_words(columns[0].table_id)}
    for p in columns:
        p.beside_identifier = not p.identifier
        named_key = parse_reference(p.bare_name).key is not None  # playerID beside a surrogate ID: a natural key
        if p.unique and not named_key and not {entity_singular(w) for w in p.tokens} & own_words:
            p.label = True
