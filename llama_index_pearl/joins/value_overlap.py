"""P_V: column pairs sharing sampled values, through an inverted value index (paper appendix B.1).

Each column's value sample is hashed (:mod:`~llama_index_pearl.joins.profiles`);
sorting all hashes groups the columns holding each value (its posting list),
and co-occurrences are counted per column pair without comparing all pairs.
Values in more than ``MAX_POSTING`` columns are skipped.

Values held by more than ``SIBLING_POSTING`` columns pair every column with the
key-like (non-date) columns of the list only: a star, not a clique. In a data
lake such values are ids of hub entities, referenced by dozens of foreign-key
columns, or dates that many unrelated columns hold by coincidence; pairing all
holders with each other grows with the square of the list (benchmarks/README.md,
"Constants": SIBLING_POSTING). The star keeps every
foreign key -> key pair; two siblings still pair through values few other
columns hold, and otherwise meet through the key's table as a path of 3 tables.

Pipeline step: joins (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from llama_index_pearl.joins.profiles import ColumnProfile
from llama_index_pearl.joins.signals import Pairs, Signals

__all__ = ["MAX_POSTING", "MIN_JACCARD", "MIN_SHARED", "SIBLING_POSTING", "key_lookup_candidates", "value_candidates"]

MAX_POSTING = 64  # values in more columns than this ('1', 'yes', 'usa') are skipped in the value index
SIBLING_POSTING = 16  # longer posting lists pair their columns with its key-like columns only
MIN_SHARED = 2
MIN_JACCARD = 0.10  # paper: P_V keeps Jaccard > 0.10


def value_candidates(
    profiles: Sequence[ColumnProfile],
    pairs: Pairs,
    max_posting: int = MAX_POSTING,
    sibling_posting: int = SIBLING_POSTING,
) -> int:
    """P_V: pairs sharing sampled values, counted through an inverted value index.

    Values held by more than ``max_posting`` columns are skipped: they are the
    '1', '0', 'yes' of the corpus and would make the index quadratic while
    saying nothing about joinability. The kept pairs are filtered later by
    :func:`~llama_index_pearl.joins.edges.admissible_pairs` (Jaccard > 0.10 or
    inclusion in a key).

    Args:
        profiles: All column profiles.
        pairs: Accumulator, updated in place.
        max_posting: Longest posting list used.
        sibling_posting: Longest posting list whose columns are all paired with
            each other; longer lists pair each column with the list's key-like
            columns only.

    Returns:
        The number of skipped (too frequent) values.
    """
    cols, hashes = [], []
    for i, p in enumerate(profiles):
        if p.joinable and p.dtype in ("int", "text", "date"):
            cols.append(np.full(len(p.sample), i, dtype=np.int64))
            hashes.append(np.fromiter(p.sample.values(), dtype=np.int64, count=len(p.sample)))
    if not cols:
        return 0
    col = np.concatenate(cols)
    h = np.concatenate(hashes)
    order = np.argsort(h, kind="stable")
    col, h = col[order], h[order]
    starts = np.flatnonzero(np.r_[True, h[1:] != h[:-1]])
    sizes = np.diff(np.r_[starts, len(h)])
    skipped = int((sizes > max_posting).sum())
    n = len(profiles)
    # Dates are distinct enough to look key-like, but share values by calendar
    # coincidence, not by reference: they never centre a star.
    key_like = np.array([p.key_like and p.dtype != "date" for p in profiles], dtype=bool)
    codes = []
    for size in range(2, max_posting + 1):
        group_starts = starts[sizes == size]
        if not len(group_starts):
            continue
        members = col[group_starts[:, None] + np.arange(size)[None, :]]
        if size <= sibling_posting:
            a_idx, b_idx = np.triu_indices(size, 1)
            a, b = members[:, a_idx].ravel(), members[:, b_idx].ravel()
        else:
            a, b = _star_pairs(members, key_like[members])
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        codes.append(lo * n + hi)
    if not codes:
        return skipped
    code, counts = np.unique(np.concatenate(codes), return_counts=True)
    # Cheap pre-filter on sample counts (exact estimates come in admissible_pairs): enough
    # Jaccard, or one sample nearly inside the other (a foreign key into a larger key).
    lo, hi = np.divmod(code, n)
    sa, sb = _sizes_in_common_range(profiles, lo, hi)
    jaccard = counts / (sa + sb - counts)
    containment = counts / np.minimum(sa, sb)
    keep = (counts >= MIN_SHARED) & ((jaccard > MIN_JACCARD) | (containment >= 0.5))
    for i, j in zip(lo[keep].tolist(), hi[keep].tolist(), strict=False):
        if i != j and profiles[i].table_id != profiles[j].table_id:
            pairs.setdefault((i, j), Signals()).found_by.add("V")
    return skipped


HASH_SPACE = 2.0**32  # crc32


def _sizes_in_common_range(
    profiles: Sequence[ColumnProfile], lo: np.ndarray, hi: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Expected sample values of each column of a pair below the pair's common hash cut.

    Shared values are only counted below the smaller of the two samples' cuts, so the
    sample sizes they are compared with must be too, or a sample's share of a large key column
    looks like a small containment and real links into large key columns are lost
    (benchmarks/README.md, "Constants").
    """
    sample = np.array([len(p.sample) for p in profiles], dtype=np.float64)
    distinct = np.array([p.n_distinct for p in profiles], dtype=np.float64)
    cut_of = np.array([HASH_SPACE if p.threshold is None else p.threshold + 1.0 for p in profiles])
    cut = np.minimum(cut_of[lo], cut_of[hi])
    return (
        np.minimum(sample[lo], np.maximum(1.0, distinct[lo] * cut / HASH_SPACE)),
        np.minimum(sample[hi], np.maximum(1.0, distinct[hi] * cut / HASH_SPACE)),
    )


def _star_pairs(members: np.ndarray, is_key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each key-like member of a posting list paired once with every other member of that list."""
    group, position = np.nonzero(is_key)
    size = members.shape[1]
    other = np.arange(size)[None, :]
    # Two key-like members would meet twice (once from each side): keep the pair from the first.
    # A key never meets itself: its own slot is key-like and not after itself.
    once = ~is_key[group] | (other > position[:, None])
    keys = np.broadcast_to(members[group, position][:, None], once.shape)
    return keys[once], members[group][once]


def key_lookup_candidates(profiles: Sequence[ColumnProfile], pairs: Pairs, max_posting: int = MAX_POSTING) -> None:
    """Pairs of a column held whole in its sample with a larger key that holds most of its values.

    The bottom-k sample of a 1,458-value key keeps a sixth of it, so three airports of origin
    share a value with it by luck only; a key's ``key_hashes`` hold all of it. Every value of
    every column held whole is looked up there, and a pair is kept when the key holds
    ``MIN_SHARED`` of the column's values and at least half of them (scoring decides the rest).

    Args:
        profiles: All column profiles.
        pairs: Accumulator, updated in place.
        max_posting: Values held by more keys than this say nothing and are skipped.
    """
    keys = [i for i, p in enumerate(profiles) if p.key_hashes is not None]
    if not keys:
        return
    key_hash = np.concatenate([profiles[i].key_hashes for i in keys])
    key_col = np.concatenate([np.full(len(profiles[i].key_hashes), i, dtype=np.int64) for i in keys])
    order = np.argsort(key_hash, kind="stable")
    key_hash, key_col = key_hash[order], key_col[order]
    held = [i for i, p in enumerate(profiles) if p.threshold is None and p.joinable and p.dtype in ("int", "text")]
    if not held:
        return
    query = np.concatenate([np.fromiter(profiles[i].sample.values(), dtype=np.int64) for i in held])
    query_col = np.concatenate([np.full(len(profiles[i].sample), i, dtype=np.int64) for i in held])
    left, right = np.searchsorted(key_hash, query, "left"), np.searchsorted(key_hash, query, "right")
    hits = right - left
    use = (hits > 0) & (hits <= max_posting)
    starts, counts, columns = left[use], hits[use], query_col[use]
    positions = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())
    a, b = np.repeat(columns, counts), key_col[positions]
    n = len(profiles)
    code, shared = np.unique(a * n + b, return_counts=True)
    for (i, j), k in zip(np.column_stack(np.divmod(code, n)).tolist(), shared.tolist(), strict=True):
        p, q = profiles[i], profiles[j]
        if p.table_id != q.table_id and k >= MIN_SHARED and k >= 0.5 * p.n_distinct:
            pairs.setdefault((min(i, j), max(i, j)), Signals()).found_by.add("V")
