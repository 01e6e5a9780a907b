"""Edge scores (paper section 3.1.1): S_str, S_sem, S_ovlp and the base score f.

All functions here are pure: they read profiles or numbers and return numbers,
so every weight below can be checked by a unit test without a model.

* ``S_ovlp = (Jaccard + containment) / 2`` where containment is the larger of the
  two directions: a foreign key's values sit inside the referenced key even when
  the key column is far larger (Jaccard alone would miss that).
* ``S_sem = (cos(name vectors) + cos(value vectors)) / 2``, clipped at 0.
* ``S_str`` is the strength of the best structural anchor (see
  :data:`PATTERN_STRENGTH`), and 0 when the referenced side is no key (a join needs a key
  on one side: two same-named statistics columns are no join however their values overlap)
  or the two columns' types cannot join (an int never joins prose).
* ``f = S_str + S_ovlp`` for explicit edges, ``S_sem + S_ovlp`` for implicit ones.
* Overlap between values drawn from a small universe (two 1..n surrogate keys,
  two age columns, two yes/no flags) is what chance gives, not shared entities:
  :func:`coincidental_overlap` flags it, and an edge without a structural anchor
  then gets ``S_ovlp = 0`` (benchmarks/README.md, "Constants": coincidental_overlap).
* Columns of two *different* sources (``Table.source``: databases, schemas,
  sub-folders) join only on a key of its table and value evidence that chance does not explain
  (:mod:`~llama_index_pearl.joins.sources`): a same name is no evidence there, since every
  database has its own ``customer_id`` counting 1..n.

Pipeline step: joins (docs/architecture.md).
"""

from __future__ import annotations

import numpy as np

from llama_index_pearl.joins.profiles import ColumnProfile
from llama_index_pearl.tables.table import same_source

__all__ = [
    "CROSS_SOURCE_POLICIES",
    "DEFAULT_CROSS_SOURCE",
    "INCLUSION_MIN_CONTAINMENT",
    "NAME_ALONE",
    "PATTERN_STRENGTH",
    "coincidental_overlap",
    "explicit_score",
    "implicit_score",
    "improbable_overlap",
    "inclusion_anchor",
    "overlap_score",
    "referenceable",
    "semantic_score",
    "shapes_agree",
    "structural_score",
    "types_compatible",
    "unique_by_chance",
    "value_overlap",
]

# How much each structural anchor alone says "these columns join".
PATTERN_STRENGTH: dict[str, float] = {
    "declared": 1.0,  # the source said so
    "fk_name": 1.0,  # customer_id -> customer.id / customer.customer_id
    "same_key_name": 0.9,  # identical specific name, one side unique
    "fk_table": 0.8,  # continent -> continents.<its key>
    "inclusion": 0.6,  # values of one column inside a unique column: a data-level FK
    "composite_key": 1.0,  # every column of a key of several columns, by name (joins.composite)
}
# S_str from which a sole in-source name reference is an edge without value overlap (edges.CandidateEdge.named):
# above it role-prefixed and head-matched names (0.81-0.9) stop joining, under 0.75 references with no key word
# (0.72) start to (benchmarks/README.md, "Names when values cannot tell": scoring.NAME_ALONE).
NAME_ALONE = 0.8
INCLUSION_MIN_CONTAINMENT = 0.9
INCLUSION_MIN_SHARED = 3
SMALL_UNIVERSE_FACTOR = 4  # an int span under 4x the distinct values of both columns is "small"
FEW_VALUES = 4  # columns with this many distinct values or fewer are flags or categories
CROSS_SOURCE_POLICIES = ("evidence", "never", "always")
# A named edge's values must look like its key's (shapes_agree). Text: medians at most SHAPE_RATIO apart in
# length (country names are no ISO codes); integers at most SHAPE_DIGITS digits apart (505942 of home_player_1 is no
# 1..10 Player.id). See benchmarks/README.md, "Names when values cannot tell" and "Constants".
SHAPE_RATIO = 1.5
SHAPE_DIGITS = 2
DENSE_COVER = 0.5  # a key holding half the integers of a range takes in any column there by chance
CHANCE_SHARED = 0.01  # expected chance collisions of two int samples below which one shared value is evidence
DEFAULT_CROSS_SOURCE = "evidence"  # provenance counts, but value evidence can cross it

_JOINABLE_TYPES = {
    ("int", "int"),
    ("text", "text"),
    ("date", "date"),
    ("date", "text"),  # free-form dates parse as text when one cell is odd
}


def types_compatible(a: ColumnProfile, b: ColumnProfile) -> bool:
    """Whether two inferred types can hold the same join values (floats are measurements, never keys).

    A column with no values and no declared type (``"empty"``) may hold any key.

    Args:
        a: One column.
        b: The other column.
    """
    if "empty" in (a.dtype, b.dtype):
        return "float" not in (a.dtype, b.dtype)
    return (a.dtype, b.dtype) in _JOINABLE_TYPES or (b.dtype, a.dtype) in _JOINABLE_TYPES


def value_overlap(a: ColumnProfile, b: ColumnProfile) -> tuple[float, float, float, int]:
    """Jaccard and both containments of two columns' value sets, estimated from bottom-k samples.

    Both samples are cut to the hash range both of them cover completely, which
    makes the estimate unbiased for the full sets (exact when neither sample was truncated).
    A sample held whole against a key known whole (``key_hashes``) is compared exactly.

    Args:
        a: One column.
        b: The other column.

    Returns:
        ``(jaccard, containment of a in b, containment of b in a, shared values in the common range)``.
    """
    exact = _exact_overlap(a, b) if (a.threshold is None) != (b.threshold is None) else None
    if exact is not None:
        return exact
    limits = [t for t in (a.threshold, b.threshold) if t is not None]
    if limits:
        cut = min(limits)
        sa = {v for v, h in a.sample.items() if h <= cut}
        sb = {v for v, h in b.sample.items() if h <= cut}
    else:
        sa, sb = a.value_set, b.value_set
    if not sa or not sb:
        return 0.0, 0.0, 0.0, 0
    shared = len(sa & sb)
    union = len(sa) + len(sb) - shared
    return shared / union, shared / len(sa), shared / len(sb), shared


def _exact_overlap(a: ColumnProfile, b: ColumnProfile) -> tuple[float, float, float, int] | None:
    """The overlap of a column held whole with a key known whole, else ``None``."""
    whole, key = (a, b) if a.threshold is None else (b, a)
    if key.key_hashes is None or not whole.sample:
        return None
    ours = np.fromiter(whole.sample.values(), dtype=np.int64, count=len(whole.sample))
    shared = int(np.isin(ours, key.key_hashes, assume_unique=True).sum())
    union = whole.n_distinct + key.n_distinct - shared
    inside_key, inside_whole = shared / whole.n_distinct, shared / key.n_distinct
    c_ab, c_ba = (inside_key, inside_whole) if whole is a else (inside_whole, inside_key)
    return shared / union, c_ab, c_ba, shared


def overlap_score(jaccard: float, containment: float) -> float:
    """S_ovlp in [0, 1].

    Args:
        jaccard: Jaccard of the value sets.
        containment: The larger containment of the two directions.
    """
    return 0.5 * (jaccard + containment)


def semantic_score(a: ColumnProfile, b: ColumnProfile) -> float:
    """S_sem in [0, 1]: mean of the name and value embedding cosines, clipped at 0.

    Args:
        a: One column (embedded).
        b: The other column (embedded).
    """
    if a.name_vec is None or b.name_vec is None:
        return 0.0
    name_cos = float(np.dot(a.name_vec, b.name_vec))
    value_cos = 0.0
    if a.value_vec is not None and b.value_vec is not None:
        value_cos = float(np.dot(a.value_vec, b.value_vec))
    return max(0.0, 0.5 * (name_cos + value_cos))


def inclusion_anchor(a: ColumnProfile, b: ColumnProfile, c_ab: float, c_ba: float, shared: int) -> int:
    """Which side is a data-level foreign key into the other's unique values.

    A dense 1..n integer column never anchors by values alone, on either side: every
    small-integer column of the corpus (counts, ranks, other surrogate keys) falls inside
    a 1..n key, and a 1..7 line number falls inside any key that counts from 1. Nor does an
    integer column inside a key that holds most integers of its range (:func:`dense_cover`).

    Args:
        a: One column.
        b: The other column.
        c_ab: Containment of ``a`` in ``b``.
        c_ba: Containment of ``b`` in ``a``.
        shared: Shared sampled values.

    Returns:
        ``1`` when ``a`` references ``b``, ``-1`` when ``b`` references ``a``, ``0`` when neither.
    """
    if shared < INCLUSION_MIN_SHARED or not types_compatible(a, b) or a.sequential or b.sequential:
        return 0
    if dense_cover(a, b) or dense_cover(b, a):
        return 0
    across = not same_source(a.source, b.source)
    if referenceable(b, across) and c_ab >= INCLUSION_MIN_CONTAINMENT and a.n_distinct >= INCLUSION_MIN_SHARED:
        return 1
    if referenceable(a, across) and c_ba >= INCLUSION_MIN_CONTAINMENT and b.n_distinct >= INCLUSION_MIN_SHARED:
        return -1
    return 0


def referenceable(p: ColumnProfile, across_sources: bool) -> bool:
    """Whether a reference may point at column ``p``: a key of its table.

    Inside one system a reference points at its table's key, never at a label beside it
    (:attr:`~llama_index_pearl.joins.profiles.ColumnProfile.label`). Across systems it points at what keys
    the other table: its identifier, or, in a table without one, a unique column (an email, an ISBN, an ISO
    code of a reference list). A unique column beside its table's identifier (a customer's postal code or
    phone, unique among a few hundred customers) keys nothing another database could reference.

    Args:
        p: The referenced column.
        across_sources: Whether the referencing column is of another source.
    """
    if across_sources:
        return p.joinable and p.unique and not p.beside_identifier
    return p.key_like


def dense_cover(child: ColumnProfile, key: ColumnProfile) -> bool:
    """Whether an integer key holds most integers of the child's range, so that any values there fall inside it.

    At-bats between 211 and 5,781 sit inside a people table's row ids that run densely from 1 to
    10,000 whatever they count. The key's density over the child's range is estimated from its
    bottom-k sample (an unbiased sample of its values); above ``DENSE_COVER`` chance explains
    containment.

    Args:
        child: The column whose values fall inside.
        key: The key they fall inside.
    """
    if child.int_range is None or key.int_range is None or not len(key.int_sample):
        return False
    low, high = child.int_range
    inside = np.searchsorted(key.int_sample, high, "right") - np.searchsorted(key.int_sample, low, "left")
    # one sampled value more than seen: a narrow range that the sample happens to miss is not thereby sparse
    density = (inside + 1) / len(key.int_sample) * key.n_distinct / (high - low + 1)
    return bool(density >= DENSE_COVER)


def unique_by_chance(p: ColumnProfile) -> bool:
    """Whether an integer column's unique values say nothing: few values spread thinly over their range.

    ``n`` values drawn at random from a range of ``span`` integers collide about
    ``n (n - 1) / (2 span)`` times (the birthday bound); under one expected collision, seeing
    none is what chance gives. Ten student ids between 1025 and 1934 are unique whatever the
    table; 2,000 ids between 1 and 2,000 are unique because they are a key.

    Args:
        p: A column's profile.
    """
    if p.int_range is None:
        return False
    span = p.int_range[1] - p.int_range[0] + 1
    return p.n_distinct * (p.n_distinct - 1) / (2 * span) < 1.0


def structural_score(
    pattern: str | None, referenced: ColumnProfile, compatible: bool, key: bool | None = None
) -> float:
    """S_str in [0, 1] for the strongest anchor of an edge.

    Args:
        pattern: Key of :data:`PATTERN_STRENGTH`, or ``None`` for no anchor.
        referenced: The referenced (parent) side of the edge.
        compatible: Whether the two column types can join.
        key: Whether the referenced side is a key; ``None``: its sample says (``key_like``).
    """
    if pattern is None or (
        pattern != "declared" and not (compatible and (referenced.key_like if key is None else key))
    ):
        return 0.0
    return PATTERN_STRENGTH[pattern]


def explicit_score(s_str: float, s_ovlp: float) -> float:
    """f(p) for the explicit pool: S_str + S_ovlp.

    Args:
        s_str: Structural score.
        s_ovlp: Overlap score.
    """
    return s_str + s_ovlp


def implicit_score(s_sem: float, s_ovlp: float) -> float:
    """f(p) for the implicit pool: S_sem + S_ovlp.

    Args:
        s_sem: Semantic score.
        s_ovlp: Overlap score.
    """
    return s_sem + s_ovlp


def coincidental_overlap(a: ColumnProfile, b: ColumnProfile) -> bool:
    """Whether any overlap of ``a`` and ``b`` is expected by chance alone.

    True when either column holds ``FEW_VALUES`` distinct values or fewer, when both
    are dates (a few years of a calendar: orders and payments fall on the same days), or
    when both are integer columns whose combined range is under
    ``SMALL_UNIVERSE_FACTOR`` times their distinct values together (dense ids,
    ages, years): random draws from such a range collide anyway.

    Args:
        a: One column's profile.
        b: The other's.
    """
    if min(a.n_distinct, b.n_distinct) <= FEW_VALUES:
        return True
    if a.dtype == "date" and b.dtype == "date":
        return True
    if a.int_range is None or b.int_range is None:
        return False
    span = max(a.int_range[1], b.int_range[1]) - min(a.int_range[0], b.int_range[0]) + 1
    return span <= SMALL_UNIVERSE_FACTOR * (a.n_distinct + b.n_distinct)


def improbable_overlap(a: ColumnProfile, b: ColumnProfile) -> bool:
    """Whether two integer columns share a sampled value that chance does not explain.

    Two independent samples of ``n_a`` and ``n_b`` values drawn from an integer span
    share about ``n_a * n_b / span`` values by chance; when that is under
    ``CHANCE_SHARED`` (10-value samples of ids spread over a million), one shared
    value says the columns hold the same entities. Dense 1..n ids and small universes
    never qualify (chance expects their collisions), nor columns of fewer than two values.

    Args:
        a: One column's profile.
        b: The other's.
    """
    if a.int_range is None or b.int_range is None or not (a.joinable and b.joinable):
        return False
    if not a.value_set & b.value_set:
        return False
    span = max(a.int_range[1], b.int_range[1]) - min(a.int_range[0], b.int_range[0]) + 1
    return a.n_distinct * b.n_distinct / span < CHANCE_SHARED


def shapes_agree(a: ColumnProfile, b: ColumnProfile) -> bool:
    """Whether two columns' values look alike, as a foreign key's and its key's do even when no value is shared.

    Samples of a few rows rarely share a value, but a reference holds values shaped
    like its key's: ``USA`` is no country name, a 6-digit id no 1..10 row number. Text
    medians at most ``SHAPE_RATIO`` apart in length, both spaced or both not; integers
    at most ``SHAPE_DIGITS`` digits apart. A column without values agrees with anything;
    one repeated value (``United States`` ten times) still has a shape.

    Args:
        a: One column's profile.
        b: The other's.
    """
    if not (a.sample and b.sample):
        return True
    (len_a, spaced_a), (len_b, spaced_b) = a.shape, b.shape
    if a.dtype == "int" and b.dtype == "int":
        return abs(len_a - len_b) <= SHAPE_DIGITS
    if a.dtype == "text" and b.dtype == "text":
        return max(len_a, len_b) <= SHAPE_RATIO * min(len_a, len_b) and abs(spaced_a - spaced_b) < 0.5
    return True
