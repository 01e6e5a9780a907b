"""Composite keys: joins that need several column pairs at once (``flights -> weather`` on origin and hour).

A table whose rows no single column identifies is keyed by a set of columns: a
``partsupp`` row by part *and* supplier, a weather observation by airport and hour, a
team season by year and team. A table that refers to such a row names every column of
the key, and the join is one condition over all of them (ANDed), never one of them alone.

For a child table C and a parent table P of one source, :func:`composite_edges`

1. pairs C's columns with P's columns by name: the same name, or C's name minus role
   words (``teamIDwinner`` refers to a ``teamID``, ``sold_date_sk`` to a ``date_sk``), among
   the columns that can be key parts (:func:`_key_part`: identifiers, codes, times; never
   counts, measurements or prose);
2. takes the smallest sets of P's paired columns that are unique and non-null over the
   rows read (``KEY_RATIO``: a daylight-saving hour written twice does not unmake a key),
   at most ``MAX_KEY_COLUMNS`` of them; each such set is one key, and two keys are two
   alternative joins, never ANDed;
3. keeps a join when C's tuples are found among P's (``MIN_TUPLE_CONTAINMENT``), or, for a
   parent read in part that lacks them, when every name is the key's own name and the values
   look alike (:func:`~llama_index_pearl.joins.scoring.shapes_agree`);
4. drops it when C's tuples are found in P and C holds fewer than ``MIN_FAN_IN`` rows per
   tuple: a reference is many-to-one (flights per weather hour, players per team season),
   while two tables keyed (nearly) alike (batting and pitching lines of one player season, a
   manager's awards and seasons) hold facts about the same rows, and which one is the parent
   the data cannot tell. Where the tuples mostly do not meet (a parent read in part), the
   child's own repeats say nothing: 2,000 line items rarely repeat a (part, supplier) pair.

A column constant over the rows read and equal on both sides (``year`` of a one-year
sample) cannot be told apart from a key part and loses no row: it joins every composite
key of the pair. Each join becomes one :class:`~llama_index_pearl.joins.edges.CandidateEdge`
per column pair, all carrying the join's ``key`` label.

Pipeline step: joins (docs/architecture.md).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterator, Sequence
from itertools import combinations, product

import numpy as np

from llama_index_pearl.joins import scoring
from llama_index_pearl.joins.edges import CandidateEdge
from llama_index_pearl.joins.naming import parse_reference, table_name_words
from llama_index_pearl.joins.profiles import KEY_RATIO, ColumnProfile, normal_value, value_hash
from llama_index_pearl.tables.table import Table, cell_text, same_source

__all__ = ["MAX_KEY_COLUMNS", "MIN_TUPLE_CONTAINMENT", "composite_edges", "minimal_keys"]

MAX_KEY_COLUMNS = 5  # the widest composite key looked for (date parts and a place: year, month, day, hour, origin)
MAX_PAIRED = 8  # paired parent columns searched at most (their subsets grow as 2^n)
# A name held by more tables of one source is no key part worth pairing (``status``, ``category`` of a lake's
# thousand tables); real key parts are shared far less (benchmarks/README.md, "Constants").
MAX_NAME_TABLES = 30
MIN_TUPLE_CONTAINMENT = 0.9  # share of the child's comparable key tuples found in the parent
MIN_FOUND = 3  # fewer tuples found in the parent are no evidence
MIN_FAN_IN = 2.0  # child rows per distinct key tuple: fewer is a table keyed (nearly) alike
TIME_WORDS = frozenset({"year", "quarter", "month", "week", "day", "hour", "minute", "date", "time"})
ROLE_WORTH = 0.9  # a name paired only once a role word is dropped


def composite_edges(
    tables: Sequence[Table], profiles: Sequence[ColumnProfile], touching: Collection[str] | None = None
) -> list[CandidateEdge]:
    """Edges of every composite join between two tables of one source.

    Args:
        tables: The corpus.
        profiles: Its column profiles, in table then column order.
        touching: Only pairs with one of these tables (an insert); ``None``: all.

    Returns:
        One edge per column pair of each composite join, the join's pairs sharing ``key``.
    """
    by_table = {t.id: t for t in tables}
    columns: dict[str, dict[str, ColumnProfile]] = defaultdict(dict)
    for p in profiles:
        columns[p.table_id][p.column] = p
    edges: list[CandidateEdge] = []
    for (child, parent), paired in _paired_tables(profiles).items():
        if touching is not None and child not in touching and parent not in touching:
            continue
        tables_of = (by_table[child], by_table[parent])
        edges.extend(_joins(tables_of, columns[child], columns[parent], paired))
    return edges


Paired = dict[str, list[tuple[str, float]]]  # parent column -> [(child column, name worth)]


def _paired_tables(profiles: Sequence[ColumnProfile]) -> dict[tuple[str, str], Paired]:
    """Table pairs of one source whose key-part columns pair by name at two parent columns or more."""
    by_name: dict[tuple[str | None, tuple[str, ...]], list[ColumnProfile]] = defaultdict(list)
    for p in profiles:
        if p.tokens and _key_part(p):
            by_name[(p.source, _own_name(p))].append(p)
    by_name = {name: ps for name, ps in by_name.items() if len({p.table_id for p in ps}) <= MAX_NAME_TABLES}
    found: dict[tuple[str, str], Paired] = defaultdict(lambda: defaultdict(list))
    for c in profiles:
        if not _key_part(c):
            continue
        for name, worth in _referred_names(c):
            for q in by_name.get((c.source, name), ()):
                if q.table_id != c.table_id and same_source(c.source, q.source):
                    found[(c.table_id, q.table_id)][q.column].append((c.column, worth))
    return {pair: paired for pair, paired in found.items() if len(paired) >= 2}


def _own_name(p: ColumnProfile) -> tuple[str, ...]:
    """A column's name as keys are compared: an entity and *a* key word (``yearkey`` and ``yearID`` alike)."""
    ref = parse_reference(p.bare_name)
    return (*ref.core, "<key>") if ref.key and ref.key != "by" and not ref.suffix and ref.core else p.tokens


def _referred_names(p: ColumnProfile) -> list[tuple[tuple[str, ...], float]]:
    """The names of the columns ``p`` may refer to, with what each is worth: its own, then without role words."""
    names = {_own_name(p): 1.0}
    ref = parse_reference(p.bare_name)
    if ref.key and ref.key != "by":
        for start in range(len(ref.core)):
            names.setdefault((*ref.core[start:], "<key>"), ROLE_WORTH)
    return list(names.items())


def _joins(
    tables: tuple[Table, Table], child: dict[str, ColumnProfile], parent: dict[str, ColumnProfile], paired: Paired
) -> Iterator[CandidateEdge]:
    child_table, parent_table = tables
    usable = {q: [(c, w) for c, w in cs if scoring.types_compatible(child[c], parent[q])] for q, cs in paired.items()}
    if any(parent[q].key_like for q in usable if usable[q]):
        return  # a single column is the key: the join is that column's (references, same key names)
    constant = [(q, cs[0][0]) for q, cs in usable.items() if cs and _equal_constants(child[cs[0][0]], parent[q])]
    varying = [q for q, cs in usable.items() if cs and parent[q].joinable][:MAX_PAIRED]
    for key in minimal_keys(_hashed(parent_table, varying), varying):
        for children in _assignments(key, usable):
            pairs = list(zip(children, key, strict=True))
            yield from _join_edges(child_table, parent_table, pairs, usable, constant, child, parent)


Hashed = dict[str, np.ndarray]  # column -> the hash of each row's value in normal form, NULL_HASH for none
NULL_HASH = -1


def minimal_keys(hashed: Hashed, columns: Sequence[str], max_columns: int = MAX_KEY_COLUMNS) -> list[list[str]]:
    """The smallest sets of ``columns`` (two or more) unique and non-null over the rows.

    Unique and non-null within ``KEY_RATIO`` (a few duplicated or empty rows keep a key);
    a set holding a smaller key is not minimal.

    Args:
        hashed: Each candidate column's row hashes (:func:`_hashed`; ``NULL_HASH``: no value).
        columns: Candidate columns, in preference order.
        max_columns: Widest key looked for.
    """
    if len(columns) < 2 or not len(hashed[columns[0]]) > 1 or not _unique(hashed, list(columns)):
        return []  # no subset is unique when the whole set is not
    keys: list[list[str]] = []
    for size in range(2, min(max_columns, len(columns)) + 1):
        for subset in combinations(columns, size):
            if not any(set(k) <= set(subset) for k in keys) and _unique(hashed, list(subset)):
                keys.append(list(subset))
    return keys


def _tuples(hashed: Hashed, columns: Sequence[str]) -> np.ndarray:
    """One 64-bit hash per complete row (every value present) of ``columns``."""
    parts = np.stack([hashed[c] for c in columns])
    complete = (parts != NULL_HASH).all(axis=0)
    mixed = np.zeros(int(complete.sum()), dtype=np.uint64)
    for part in parts[:, complete].astype(np.uint64):
        mixed = mixed * np.uint64(1_000_003) ^ part  # wraps mod 2**64: a hash of the tuple
    return mixed


def _unique(hashed: Hashed, columns: list[str]) -> bool:
    rows = len(hashed[columns[0]])
    tuples = _tuples(hashed, columns)
    return len(tuples) >= KEY_RATIO * rows and len(np.unique(tuples)) >= KEY_RATIO * len(tuples)


def _hashed(table: Table, columns: Sequence[str]) -> Hashed:
    """The row hashes of ``table``'s columns, computed once per table and column."""
    return {c: table.derived(f"row_hashes:{c}", lambda c=c: _hash_column(table, c)) for c in columns}


def _hash_column(table: Table, column: str) -> np.ndarray:
    values = (normal_value(cell_text(v)) for v in table.df[column].tolist())
    return np.fromiter((value_hash(v) if v else NULL_HASH for v in values), dtype=np.int64, count=len(table.df))


def _assignments(key: list[str], usable: dict[str, list[tuple[str, float]]]) -> Iterator[list[str]]:
    """Child columns for the key's columns, one each: distinct, and of one role (``winner`` or ``loser``)."""
    for choice in product(*([c for c, _ in usable[q]] for q in key)):
        roles = {parse_reference(c).suffix for c in choice} - {()}
        if len(set(choice)) == len(choice) and len(roles) <= 1:
            yield list(choice)


def _join_edges(
    child_table: Table,
    parent_table: Table,
    pairs: list[tuple[str, str]],
    usable: dict[str, list[tuple[str, float]]],
    constant: list[tuple[str, str]],
    child: dict[str, ColumnProfile],
    parent: dict[str, ColumnProfile],
) -> Iterator[CandidateEdge]:
    ours = _hashed(child_table, [c for c, _ in pairs])
    theirs = _hashed(parent_table, [q for _, q in pairs])
    rows = _tuples(ours, [c for c, _ in pairs])
    jaccard, containment, found = _tuple_overlap(rows, ours, [c for c, _ in pairs], theirs, [q for _, q in pairs])
    if found < MIN_FOUND or containment < MIN_TUPLE_CONTAINMENT:
        return
    if _fan_in(rows) < MIN_FAN_IN and not _named_for_key(parent_table.id, [parent[q] for _, q in pairs]):
        return
    worth = min(dict(usable[q])[c] for c, q in pairs)
    pairs = pairs + [(c, q) for q, c in constant if c not in {x for x, _ in pairs}]
    label = f"{child_table.id}({','.join(c for c, _ in pairs)})->{parent_table.id}({','.join(q for _, q in pairs)})"
    for c, q in pairs:
        yield CandidateEdge(
            left_table=child_table.id,
            left_column=c,
            right_table=parent_table.id,
            right_column=q,
            signals=("S", "V"),
            pattern="composite_key",
            s_str=round(scoring.PATTERN_STRENGTH["composite_key"] * worth, 4),
            s_sem=0.0,
            s_ovlp=round(scoring.overlap_score(jaccard, containment), 4),
            jaccard=round(jaccard, 4),
            containment=round(containment, 4),
            explicit=True,
            declared=False,
            named=False,
            key=label,
        )


def _named_for_key(table_id: str, key: Sequence[ColumnProfile]) -> bool:
    """Whether a table is named after the entities its key's columns name: the association of them.

    ``partsupp`` keyed by ``ps_partkey`` and ``ps_suppkey`` is the relation of parts and
    suppliers, as ``film_actor`` is of films and actors; a sample of its references may well
    meet each row once. Parts of a time (``yearID``) name no entity.
    """
    name = "".join(table_name_words(table_id))
    entities = [ref.core[-1] for ref in (parse_reference(p.bare_name) for p in key) if ref.core]
    entities = [e for e in entities if e not in TIME_WORDS]
    return bool(entities) and all(e in name for e in entities)


def _fan_in(tuples: np.ndarray) -> float:
    """Rows per distinct complete tuple: how many child rows refer to one parent row."""
    distinct = len(np.unique(tuples))
    return len(tuples) / distinct if distinct else 0.0


def _tuple_overlap(
    rows: np.ndarray, ours: Hashed, child_columns: Sequence[str], theirs: Hashed, parent_columns: Sequence[str]
) -> tuple[float, float, int]:
    """Jaccard of the tuple sets, the share of the child's tuples found in the parent's, and how many were found.

    The share counts only the child's tuples whose every value occurs in its parent column:
    a parent read in part (part suppliers of the first 500 parts) cannot hold the others, and
    what they would say is unknown, while a tuple made of known values that the parent does not
    hold (a player season that has no pitching line) says the key is not this table's. ``rows`` are the
    child's complete tuples (:func:`_tuples` of ``ours``).
    """
    child_tuples = np.unique(rows)
    parent_tuples = np.unique(_tuples(theirs, parent_columns))
    if not len(child_tuples) or not len(parent_tuples):
        return 0.0, 0.0, 0
    shared = int(np.isin(child_tuples, parent_tuples, assume_unique=True).sum())
    known = np.ones(len(ours[child_columns[0]]), dtype=bool)
    for c, q in zip(child_columns, parent_columns, strict=True):
        known &= np.isin(ours[c], theirs[q][theirs[q] != NULL_HASH])
    comparable = len(np.unique(_tuples({c: ours[c][known] for c in child_columns}, child_columns)))
    union = len(child_tuples) + len(parent_tuples) - shared
    return shared / union, shared / comparable if comparable else 0.0, shared


def _key_part(p: ColumnProfile) -> bool:
    """Whether a column can be part of a key: an identifier, a code or a point in time, never a quantity.

    Text that is not prose (mostly unspaced: codes, names of categories), dates, and integers
    named as identifiers (a key word: ``yearID``, ``l_partkey``) or as parts of a time
    (``year``, ``month``, ``hour``). Other integers are counts and measures (``W``, ``G``,
    ``rank``), floats are measurements, spaced text is prose.
    """
    if p.dtype in ("text", "date", "empty"):
        return p.dtype != "text" or p.shape[1] < 0.5
    if p.dtype != "int":
        return False
    return parse_reference(p.bare_name).key is not None or bool(set(p.tokens) & TIME_WORDS)


def _equal_constants(a: ColumnProfile, b: ColumnProfile) -> bool:
    """Both columns hold one same value over the rows read (``year`` 2013 in both)."""
    return a.n_distinct == 1 and b.n_distinct == 1 and a.value_set == b.value_set
