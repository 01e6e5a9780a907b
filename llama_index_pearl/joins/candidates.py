"""Candidate column pairs between tables: P_S, P_B and P_V, unioned (paper appendix B.1).

Every generator reaches its pairs through an index, never by comparing all
column pairs: a name index for identical names and a table-name index for names
that refer to a table (P_S, here and in :mod:`~llama_index_pearl.joins.references`,
with declared keys), a FAISS k-nearest-neighbour search over name
embeddings (P_B, :mod:`~llama_index_pearl.joins.name_similarity`) and an inverted
value index with a cap on posting-list length (P_V,
:mod:`~llama_index_pearl.joins.value_overlap`). They share the accumulator of
:mod:`~llama_index_pearl.joins.signals`; the union is then scored once per pair
by :func:`~llama_index_pearl.joins.edges.admissible_pairs` and
:func:`~llama_index_pearl.joins.edges.score_admissible`.

Pipeline step: joins (docs/architecture.md).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence

from llama_index_pearl.joins import scoring
from llama_index_pearl.joins.name_similarity import FLAT_LIMIT, KNN, MAX_EXPANSION, SIM_PERCENTILE, name_candidates
from llama_index_pearl.joins.naming import GENERIC_TOKENS, KEY_TOKENS, parse_reference
from llama_index_pearl.joins.profiles import ColumnProfile
from llama_index_pearl.joins.references import reference_candidates
from llama_index_pearl.joins.signals import Pairs, Signals, pair_key
from llama_index_pearl.joins.table_names import TableNames
from llama_index_pearl.joins.value_overlap import (
    MAX_POSTING,
    MIN_JACCARD,
    MIN_SHARED,
    key_lookup_candidates,
    value_candidates,
)
from llama_index_pearl.tables.table import Table, normalize_column_name

__all__ = [
    "FLAT_LIMIT",
    "KNN",
    "MAX_EXPANSION",
    "MAX_POSTING",
    "MIN_JACCARD",
    "MIN_SHARED",
    "SIM_PERCENTILE",
    "Pairs",
    "Signals",
    "declared_candidates",
    "key_lookup_candidates",
    "name_candidates",
    "structural_candidates",
    "value_candidates",
]

logger = logging.getLogger(__name__)

MAX_SAME_NAME_KEYS = 20  # a "specific" name that is the key of more tables than this is not specific
MAX_SAME_NAME_GROUP = 10  # tables sharing a bare ID column: compared pairwise only in small groups


def structural_candidates(profiles: Sequence[ColumnProfile], pairs: Pairs) -> None:
    """P_S: identical specific names, and names referring to a table (:mod:`~llama_index_pearl.joins.references`).

    Args:
        profiles: All column profiles.
        pairs: Accumulator, updated in place.
    """
    names = TableNames(profiles)
    _same_name_candidates(profiles, names, pairs)
    reference_candidates(profiles, pairs, names)


def _same_name_candidates(profiles: Sequence[ColumnProfile], names: TableNames, pairs: Pairs) -> None:
    """Identical specific names inside one source: each joins the group's key.

    The key of a group is the member whose name makes it its table's key (``drivers.driverId``)
    when there is one; otherwise the members unique in their samples, unless chance explains it
    (:func:`~llama_index_pearl.joins.scoring.unique_by_chance`), or else, of a pair of columns, the one
    that leads a table without rows (``CustomerDemographics.CustomerTypeID``: a DDL lists its primary key
    first; among more tables sharing the name, the first column is as often a reference: ``subject_id``).
    A column unique in a 10-row sample (``driverStandings.driverId``) is no key when a member's name says which is.
    A group without a key makes no join (``batting.GIDP``, ``teams.W``): a join needs a key.
    """
    # Identical names pair up within a source only: across sources a shared name is no evidence
    # (each database has its own customer_id), and the value index finds the real cross-source links.
    by_name: dict[tuple[str | None, str], list[int]] = defaultdict(list)
    for i, p in enumerate(profiles):
        if p.tokens:
            by_name[(p.source, p.norm_name)].append(i)
    for (_, name), members in by_name.items():
        if len(members) < 2:
            continue
        if name in KEY_TOKENS and len(members) <= MAX_SAME_NAME_GROUP:
            _bare_key_candidates(profiles, members, pairs)
        if set(name.split("_")) <= GENERIC_TOKENS:
            continue
        keys = [i for i in members if names.key_worth(i)[1]]
        keys = keys or [i for i in members if profiles[i].key_like and not scoring.unique_by_chance(profiles[i])]
        # no name nor rows say which is the key: of two tables without rows, the one it leads (a DDL lists it first)
        leading = not keys and len(members) == 2
        keys = keys or [i for i in members if leading and _leads_empty_table(profiles[i], names, i)]
        if len(keys) <= MAX_SAME_NAME_KEYS:
            for k in keys:
                for i in members:
                    if profiles[i].table_id != profiles[k].table_id:
                        pairs.setdefault(pair_key(i, k), Signals()).add_pattern(
                            "same_key_name", i, named=leading, key_by_name=leading
                        )


def _leads_empty_table(p: ColumnProfile, names: TableNames, i: int) -> bool:
    """Whether column ``i`` is the first column, named as a key, of a table with no rows: a DDL's primary key.

    Not when its name refers to a table (``costs.prod_id`` leads with a product) or its table copies another.
    """
    if p.n_rows or not p.has_key_token or i != names.columns[p.table_id][0] or p.table_id in names.copies:
        return False
    core = parse_reference(p.bare_name).core
    named = {t for start in range(len(core)) for t in names.tables_named(core[start:], True)}
    return not any(names.source[t] == p.source for t in named - {p.table_id})


def _bare_key_candidates(profiles: Sequence[ColumnProfile], members: list[int], pairs: Pairs) -> None:
    """Columns of one source both named ``ID`` (``Patient.ID``, ``Examination.ID``) whose samples share a value
    that chance does not explain (:func:`~llama_index_pearl.joins.scoring.improbable_overlap`): the same entities.

    Every table has its ``id``; two of them holding one same sparse number out of millions are one key.
    """
    for a, i in enumerate(members):
        for k in members[a + 1 :]:
            p, q = profiles[i], profiles[k]
            if p.table_id == q.table_id or not (p.key_like or q.key_like) or not scoring.improbable_overlap(p, q):
                continue
            # the parent is the unique side, or the one with more distinct values: it holds every entity
            referencing = k if (p.key_like, p.n_distinct) > (q.key_like, q.n_distinct) else i
            pairs.setdefault(pair_key(i, k), Signals()).add_pattern("same_key_name", referencing, named=True)


def declared_candidates(tables: Sequence[Table], profiles: Sequence[ColumnProfile], pairs: Pairs) -> int:
    """Declared foreign keys (``Table.foreign_keys``) as explicit edges with full structural score.

    Args:
        tables: The corpus.
        profiles: All column profiles.
        pairs: Accumulator, updated in place.

    Returns:
        How many declared keys were resolved to columns of the corpus.
    """
    where = {(p.table_id, normalize_column_name(p.column)): i for i, p in enumerate(profiles)}
    found = 0
    for table in tables:
        for fk in table.foreign_keys:
            i = where.get((table.id, normalize_column_name(fk.column)))
            j = where.get((fk.ref_table, normalize_column_name(fk.ref_column)))
            if i is None or j is None or i == j:
                logger.info(
                    "Declared foreign key %s.%s -> %s.%s not found", table.id, fk.column, fk.ref_table, fk.ref_column
                )
                continue
            pairs.setdefault(pair_key(i, j), Signals()).add_pattern("declared", i)
            found += 1
    return found
