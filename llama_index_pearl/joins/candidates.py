"""Candidate edges between columns of different tables: P_S, P_B and P_V, unioned (paper appendix B.1).

Every generator reaches its pairs through an index, never by comparing all
column pairs: a name-token / table-name index for structural patterns (P_S,
here, with declared keys), a FAISS k-nearest-neighbour search over name
embeddings (P_B, :mod:`~llama_index_pearl.joins.name_similarity`) and an inverted
value index with a cap on posting-list length (P_V,
:mod:`~llama_index_pearl.joins.value_overlap`). They share the accumulator of
:mod:`~llama_index_pearl.joins.signals`; the union is then scored once per pair
by :func:`score_candidates`.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from llama_index_pearl.joins import scoring
from llama_index_pearl.joins.name_similarity import FLAT_LIMIT, KNN, MAX_EXPANSION, SIM_PERCENTILE, name_candidates
from llama_index_pearl.joins.profiles import KEY_TOKENS, ColumnProfile, singular, table_name_tokens
from llama_index_pearl.joins.signals import Pairs, Signals, pair_key
from llama_index_pearl.joins.value_overlap import MAX_POSTING, MIN_JACCARD, MIN_SHARED, value_candidates
from llama_index_pearl.table import Table, normalize_column_name, same_source

__all__ = [
    "FLAT_LIMIT",
    "KNN",
    "MAX_EXPANSION",
    "MAX_POSTING",
    "MIN_JACCARD",
    "MIN_SHARED",
    "SIM_PERCENTILE",
    "CandidateEdge",
    "Pairs",
    "Signals",
    "declared_candidates",
    "keep_best_parents",
    "name_candidates",
    "score_candidates",
    "strongest_first",
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
PARENT_MARGIN = 0.1  # parents of one FK column scoring within this of the best are kept


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


@dataclass(frozen=True)
class CandidateEdge:
    """One scored column pair; ``left`` is the referencing (FK) side when known.

    Args:
        left_table: Table of the referencing column.
        left_column: Referencing column.
        right_table: Table of the referenced column.
        right_column: Referenced column.
        signals: Which generators found it: ``S`` structural, ``B`` name similarity, ``V`` value overlap,
            ``D`` declared.
        pattern: Strongest structural anchor (key of ``scoring.PATTERN_STRENGTH``) or ``None``.
        s_str: Structural score.
        s_sem: Semantic score.
        s_ovlp: Overlap score.
        jaccard: Estimated Jaccard of the value sets.
        containment: Estimated containment of the left values in the right values.
        explicit: Has a structural anchor (goes to the explicit pool), else implicit.
        declared: Backed by a declared foreign key.
        score: f(p) in the edge's own pool (computed, not passed).
    """

    left_table: str
    left_column: str
    right_table: str
    right_column: str
    signals: tuple[str, ...]
    pattern: str | None
    s_str: float
    s_sem: float
    s_ovlp: float
    jaccard: float
    containment: float
    explicit: bool
    declared: bool
    score: float = 0.0

    def __post_init__(self) -> None:
        # f(p) in the edge's own pool, fixed once: sorting and thresholds read it many times.
        f = scoring.explicit_score(self.s_str, self.s_ovlp) if self.explicit else self.implicit_f
        object.__setattr__(self, "score", round(f, 4))

    def to_dict(self) -> dict[str, Any]:
        """JSON-native fields (``score`` is derived, so it is left out)."""
        data = asdict(self)
        data.pop("score")
        data["signals"] = list(self.signals)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CandidateEdge:
        """Inverse of :meth:`to_dict`."""
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__ and k != "score"}
        known["signals"] = tuple(known.get("signals", ()))
        return cls(**known)

    @property
    def implicit_f(self) -> float:
        return scoring.implicit_score(self.s_sem, self.s_ovlp)

    @property
    def tables(self) -> tuple[str, str]:
        return self.left_table, self.right_table


def score_candidates(
    profiles: Sequence[ColumnProfile], pairs: Pairs, cross_source_joins: str = "evidence"
) -> list[CandidateEdge]:
    """Score every candidate pair once; drop value-only pairs below the P_V cut-off.

    Args:
        profiles: All column profiles (embedded).
        pairs: Candidates from the generators.
        cross_source_joins: Pairs of columns from two different sources (declared keys
            excepted): ``"evidence"`` keeps those that pass
            :func:`~llama_index_pearl.joins.scoring.cross_source_evidence`,
            ``"never"`` drops them all, ``"always"`` scores them like any pair.

    Returns:
        Scored edges, strongest first.
    """
    if cross_source_joins not in scoring.CROSS_SOURCE_POLICIES:
        raise ValueError(
            f"cross_source_joins must be one of {scoring.CROSS_SOURCE_POLICIES}, got {cross_source_joins!r}"
        )
    edges = []
    for (i, j), sig in pairs.items():
        a, b = profiles[i], profiles[j]
        jac, c_ab, c_ba, shared = scoring.value_overlap(a, b)
        if (
            cross_source_joins != "always"
            and sig.pattern != "declared"
            and not same_source(a.source, b.source)
            and (cross_source_joins == "never" or not scoring.cross_source_evidence(a, b, c_ab, c_ba, shared))
        ):
            continue
        compatible = scoring.types_compatible(a, b)
        pattern, referencing = sig.pattern, sig.referencing
        direction = scoring.inclusion_anchor(a, b, c_ab, c_ba, shared)
        if pattern is None and direction:
            pattern, referencing = "inclusion", i if direction == 1 else j
        if sig.sources == {"V"} and jac <= MIN_JACCARD and pattern is None:
            continue
        if referencing is None:
            referencing = i if (a.distinct_ratio, a.table_id) <= (b.distinct_ratio, b.table_id) else j
        left, right = (a, b) if referencing == i else (b, a)
        s_str = scoring.structural_score(pattern, right, compatible)
        if pattern is not None and pattern != "inclusion" and sig.strength:
            s_str *= sig.strength / scoring.PATTERN_STRENGTH[pattern]
        s_ovlp = scoring.overlap_score(jac, max(c_ab, c_ba))
        if s_str <= 0 and (not compatible or scoring.coincidental_overlap(a, b)):
            # no anchor, and the overlap is what chance gives (numbers inside a text column, small
            # universes; scoring module docstring): it is no evidence of shared entities
            s_ovlp = 0.0
        edges.append(
            CandidateEdge(
                left_table=left.table_id,
                left_column=left.column,
                right_table=right.table_id,
                right_column=right.column,
                signals=tuple(sorted(sig.sources | ({"V"} if shared and jac > MIN_JACCARD else set()))),
                pattern=pattern if s_str > 0 else None,
                s_str=round(s_str, 4),
                s_sem=round(scoring.semantic_score(a, b), 4),
                s_ovlp=round(s_ovlp, 4),
                jaccard=round(jac, 4),
                containment=round(c_ab if referencing == i else c_ba, 4),
                explicit=s_str > 0,
                declared=pattern == "declared",
            )
        )
    return strongest_first(edges)


def strongest_first(edges: Iterable[CandidateEdge]) -> list[CandidateEdge]:
    """Edges by descending f, ties by their column names, so every run lists them alike.

    Args:
        edges: Scored edges in any order.
    """
    return sorted(edges, key=lambda e: (-e.score, e.left_table, e.left_column, e.right_table, e.right_column))


def keep_best_parents(edges: Sequence[CandidateEdge], margin: float = PARENT_MARGIN) -> list[CandidateEdge]:
    """Drop explicit edges whose referencing column has a clearly better parent elsewhere.

    A foreign key references one key. When ``Sections.course_id`` matches both
    ``Courses.course_id`` (values identical) and another corpus's
    ``course.Course_ID`` (values partly overlapping), only the first is kept;
    parents within ``margin`` of the best are all kept, since the data cannot tell them apart.

    Args:
        edges: Scored edges.
        margin: Largest f gap to the best parent that is still kept.

    Returns:
        The edges that survive, in input order.
    """
    best: dict[tuple[str, str], float] = {}
    for e in edges:
        if e.explicit and not e.declared:
            key = (e.left_table, e.left_column)
            best[key] = max(best.get(key, 0.0), e.score)
    return [e for e in edges if not e.explicit or e.declared or e.score >= best[(e.left_table, e.left_column)] - margin]
