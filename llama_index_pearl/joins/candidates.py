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
from collections.abc import Sequence

from llama_index_pearl.joins.name_similarity import FLAT_LIMIT, KNN, MAX_EXPANSION, SIM_PERCENTILE, name_candidates
from llama_index_pearl.joins.profiles import ColumnProfile
from llama_index_pearl.joins.references import reference_candidates
from llama_index_pearl.joins.same_name import same_name_candidates
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


def structural_candidates(profiles: Sequence[ColumnProfile], pairs: Pairs) -> None:
    """P_S: identical specific names (:mod:`~llama_index_pearl.joins.same_name`), and names referring to a table
    (:mod:`~llama_index_pearl.joins.references`).

    Args:
        profiles: All column profiles.
        pairs: Accumulator, updated in place.
    """
    names = TableNames(profiles)
    same_name_candidates(profiles, names, pairs)
    reference_candidates(profiles, pairs, names)


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
