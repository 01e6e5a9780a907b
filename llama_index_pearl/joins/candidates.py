"""Candidate column pairs between tables: P_S, P_B and P_V, unioned (paper appendix B.1).

Every generator reaches its pairs through an index, never by comparing all
column pairs: a name-token / table-name index for structural patterns (P_S,
here, with declared keys), a FAISS k-nearest-neighbour search over name
embeddings (P_B, :mod:`~llama_index_pearl.joins.name_similarity`) and an inverted
value index with a cap on posting-list length (P_V,
:mod:`~llama_index_pearl.joins.value_overlap`). They share the accumulator of
:mod:`~llama_index_pearl.joins.signals`; the union is then scored once per pair
by :func:`~llama_index_pearl.joins.edges.score_candidates`.

Pipeline step: joins (docs/architecture.md).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence

from llama_index_pearl.joins import scoring
from llama_index_pearl.joins.name_similarity import FLAT_LIMIT, KNN, MAX_EXPANSION, SIM_PERCENTILE, name_candidates
from llama_index_pearl.joins.profiles import KEY_TOKENS, ColumnProfile, singular, table_name_tokens
from llama_index_pearl.joins.signals import Pairs, Signals, pair_key
from llama_index_pearl.joins.value_overlap import MAX_POSTING, MIN_JACCARD, MIN_SHARED, value_candidates
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
    "name_candidates",
    "structural_candidates",
    "value_candidates",
]

logger = logging.getLogger(__name__)

# Names made only of these say nothing about *which* entity a column refers to.
GENERIC_TOKENS = KEY_TOKENS | {
    "name", "type", "date", "year", "age", "description", "details", "detail", "other", "value", "title",
    "status", "note", "notes", "comment", "text", "amount", "count", "total", "time", "created", "updated",
    "first", "last", "line", "1", "2", "3",
}  # fmt: skip
MAX_SAME_NAME_KEYS = 20  # a "specific" name that is the key of more tables than this is not specific
MAX_SAME_NAME_GROUP = 10  # identical non-key names: pair all only in small groups


def _table_variants(tokens: tuple[str, ...]) -> dict[str, float]:
    """Names a column may use for a table, with how much a match is worth."""
    if not tokens:
        return {}
    full = "_".join(tokens)
    single = "_".join((*tokens[:-1], singular(tokens[-1])))
    variants = {full: 1.0, single: 1.0}
    if len(tokens) > 1:
        variants.setdefault(tokens[-1], 0.9)
        variants.setdefault(singular(tokens[-1]), 0.9)
    return variants


def _references(core: tuple[str, ...]) -> list[tuple[str, tuple[str, ...], float]]:
    """Table names a column's core tokens may point at: every suffix, singular form too.

    A proper suffix (``permanent_address`` -> ``address``) is worth a little less
    than the whole core: the dropped words may name a different entity.
    """
    out = []
    for start in range(len(core)):
        span = core[start:]
        worth = 1.0 if start == 0 else 0.9
        out.append(("_".join(span), span, worth))
        single = (*span[:-1], singular(span[-1]))
        if single != span:
            out.append(("_".join(single), single, worth))
    return out


def _primarypair_key(cols: list[int], profiles: Sequence[ColumnProfile]) -> int | None:
    for c in cols:
        if profiles[c].key_like and profiles[c].has_key_token:
            return c
    return None


def structural_candidates(profiles: Sequence[ColumnProfile], pairs: Pairs) -> None:
    """P_S: FK naming patterns and identical specific names, through name indexes.

    Args:
        profiles: All column profiles.
        pairs: Accumulator, updated in place.
    """
    by_table: dict[str, list[int]] = defaultdict(list)
    # Identical names pair up within a source only: across sources a shared name is no evidence
    # (each database has its own customer_id), and the value index finds the real cross-source links.
    by_name: dict[tuple[str | None, str], list[int]] = defaultdict(list)
    for i, p in enumerate(profiles):
        if p.joinable:
            by_table[p.table_id].append(i)
            by_name[(p.source, p.norm_name)].append(i)

    for (_, name), members in by_name.items():
        if len(members) < 2 or set(name.split("_")) <= GENERIC_TOKENS:
            continue
        keys = [i for i in members if profiles[i].key_like]
        if keys and len(keys) <= MAX_SAME_NAME_KEYS:
            for k in keys:
                for i in members:
                    if profiles[i].table_id != profiles[k].table_id:
                        pairs.setdefault(pair_key(i, k), Signals()).add_pattern("same_key_name", i)
        elif not keys and len(members) <= MAX_SAME_NAME_GROUP:
            for a, i in enumerate(members):
                for k in members[a + 1 :]:
                    if profiles[i].table_id != profiles[k].table_id:
                        pairs.setdefault(pair_key(i, k), Signals()).add_pattern("same_name", i)

    # Table-name index: exact variants and 3+-letter prefixes (abbreviations like cust -> customer).
    table_index: dict[str, list[tuple[str, float]]] = defaultdict(list)
    prefix_index: dict[str, list[str]] = defaultdict(list)
    for table_id in by_table:
        tokens = table_name_tokens(table_id)
        for variant, worth in _table_variants(tokens).items():
            table_index[variant].append((table_id, worth))
        if len(tokens) == 1 and len(tokens[0]) > 4:
            for n in range(3, len(tokens[0])):
                prefix_index[tokens[0][:n]].append(table_id)

    for i, p in enumerate(profiles):
        if not p.joinable or not p.tokens:
            continue
        key_token = p.tokens[-1] if p.has_key_token else None
        core = p.tokens[:-1] if key_token else p.tokens
        if not core or set(core) <= GENERIC_TOKENS:
            continue
        matches: dict[str, tuple[float, tuple[str, ...]]] = {}
        for ref, span, span_worth in _references(core):
            for table_id, table_worth in table_index.get(ref, ()):
                worth = span_worth * table_worth
                if worth > matches.get(table_id, (0.0,))[0]:
                    matches[table_id] = (worth, span)
        if len(core) == 1 and core[0] not in table_index:
            for table_id in prefix_index.get(core[0], ()):
                matches.setdefault(table_id, (0.85, core))
        home = {t: m for t, m in matches.items() if t != p.table_id and profiles[by_table[t][0]].source == p.source}
        if home:  # a reference resolves inside its own source when that source has the table
            matches = home
        for table_id, (worth, span) in matches.items():
            if table_id == p.table_id:
                continue
            target, pattern = _fk_target(p, span, key_token, by_table[table_id], profiles)
            if target is not None:
                pairs.setdefault(pair_key(i, target), Signals()).add_pattern(pattern, i, worth)


def _fk_target(
    p: ColumnProfile, span: tuple[str, ...], key_token: str | None, cols: list[int], profiles: Sequence[ColumnProfile]
) -> tuple[int | None, str]:
    """The column of the referenced table a FK-like column points at."""
    wanted = {p.tokens}
    if key_token:
        wanted |= {(*span, key_token), (key_token,)}
    # A same-named column of the wrong type (car_makers.Maker, text, for model_list.Maker, int)
    # is not the target; the referenced table's key is.
    cols = [c for c in cols if scoring.types_compatible(p, profiles[c])]
    for c in cols:
        tokens = profiles[c].tokens
        if tokens in wanted or (not key_token and tokens[: len(span)] == span and profiles[c].has_key_token):
            return c, "fk_name"
    pk = _primarypair_key(cols, profiles)
    return pk, "fk_table"


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
