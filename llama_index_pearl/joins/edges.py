"""Candidate pairs -> scored column-pair edges (paper section 3.1.1, appendix B.1).

Scoring runs in two steps so discovery embeds only what it reads:
:func:`admissible_pairs` keeps the pairs that may become edges (value evidence
only, no embeddings), then :func:`score_admissible` computes S_str, S_sem, S_ovlp
and f for them. :func:`keep_best_parents` then drops the weaker parents of a
foreign-key column.

Pipeline step: joins (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from llama_index_pearl.joins import scoring, sources
from llama_index_pearl.joins.naming import names_own_table
from llama_index_pearl.joins.profiles import ColumnProfile
from llama_index_pearl.joins.signals import Pairs, Signals
from llama_index_pearl.joins.value_overlap import MIN_JACCARD
from llama_index_pearl.tables.table import same_source

__all__ = [
    "PARENT_MARGIN",
    "Admitted",
    "CandidateEdge",
    "admissible_pairs",
    "drop_sibling_references",
    "drop_value_alternatives",
    "group_joins",
    "keep_best_parents",
    "score_admissible",
    "strongest_first",
]

PARENT_MARGIN = 0.1  # parents of one FK column scoring within this of the best are kept
REFERENCE_PATTERNS = frozenset({"declared", "fk_name", "fk_table", "composite_key"})  # a key named as a reference


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
        named: Backed by name evidence that stands alone: inside one source, the referencing
            column's name resolves to this parent alone, strongly enough
            (``scoring.NAME_ALONE``), the two types can join and the values look alike
            (``scoring.shapes_agree``).
        key: The composite key this column pair is one part of (:mod:`~llama_index_pearl.joins.composite`):
            the edges of one table pair with the same ``key`` are one join, their pairs ANDed; ``None``:
            the pair is a join on its own.
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
    named: bool = False
    key: str | None = None
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

    def passes(self, tau_2: float) -> bool:
        """Whether the edge joins its tables: declared, named, or f >= ``tau_2``.

        Args:
            tau_2: Minimum f of a path of 2 tables.
        """
        return self.declared or self.named or self.score >= tau_2

    @property
    def implicit_f(self) -> float:
        return scoring.implicit_score(self.s_sem, self.s_ovlp)

    @property
    def tables(self) -> tuple[str, str]:
        return self.left_table, self.right_table


@dataclass(frozen=True)
class Admitted:
    """A candidate pair that may become an edge, with what its scoring reuses.

    Args:
        signals: What the generators found.
        overlap: ``(jaccard, containment i in j, containment j in i, shared)`` of the samples.
        pattern: Structural anchor (``"inclusion"`` when only the values anchor it), or ``None``.
        referencing: Profile index of the FK side, when the anchor says.
    """

    signals: Signals
    overlap: tuple[float, float, float, int]
    pattern: str | None
    referencing: int | None


def admissible_pairs(
    profiles: Sequence[ColumnProfile], pairs: Pairs, cross_source_joins: str = scoring.DEFAULT_CROSS_SOURCE
) -> dict[tuple[int, int], Admitted]:
    """The pairs that become edges; needs no embeddings (discovery embeds only their values).

    Args:
        profiles: All column profiles.
        pairs: Candidates from the generators.
        cross_source_joins: Pairs of columns from two different sources (declared keys
            excepted): ``"evidence"`` keeps those that pass
            :func:`~llama_index_pearl.joins.sources.cross_source_evidence`,
            ``"never"`` drops them all, ``"always"`` scores them like any pair.

    Returns:
        The admitted pairs; value-only pairs below the P_V cut-off are dropped.
    """
    if cross_source_joins not in scoring.CROSS_SOURCE_POLICIES:
        raise ValueError(
            f"cross_source_joins must be one of {scoring.CROSS_SOURCE_POLICIES}, got {cross_source_joins!r}"
        )
    admitted = {}
    identifiers = _own_identifiers(profiles)
    for (i, j), sig in pairs.items():
        a, b = profiles[i], profiles[j]
        jac, c_ab, c_ba, shared = overlap = scoring.value_overlap(a, b)
        if (
            cross_source_joins != "always"
            and sig.pattern != "declared"
            and not same_source(a.source, b.source)
            and (cross_source_joins == "never" or not sources.may_join(a, b, i, sig, overlap))
        ):
            continue
        pattern, referencing = sig.pattern, sig.referencing
        direction = scoring.inclusion_anchor(a, b, c_ab, c_ba, shared)
        if pattern is None and direction and (i if direction == 1 else j) not in identifiers:
            pattern, referencing = "inclusion", i if direction == 1 else j
        if sig.found_by == {"V"} and jac <= MIN_JACCARD and pattern is None:
            continue
        admitted[(i, j)] = Admitted(sig, overlap, pattern, referencing)
    return admitted


def _own_identifiers(profiles: Sequence[ColumnProfile]) -> set[int]:
    """Columns that identify their own table's rows, so values they share with another key are no reference.

    A column named after its own table (``names_own_table``: ``item_id`` of ``item``) that is
    unique there, or beside a second such column (``i_item_sk`` and the business id ``i_item_id``):
    ``AAAAAAAABAAAAAAA`` is the first item and the first customer alike. ``Friend.friend_id`` is
    neither: a friendship table's reference to a person.
    """
    named = [i for i, p in enumerate(profiles) if names_own_table(p.bare_name, p.table_id)]
    per_table: dict[str, int] = {}
    for i in named:
        per_table[profiles[i].table_id] = per_table.get(profiles[i].table_id, 0) + 1
    return {i for i in named if profiles[i].key_like or per_table[profiles[i].table_id] > 1}


def score_admissible(
    profiles: Sequence[ColumnProfile], admitted: dict[tuple[int, int], Admitted]
) -> list[CandidateEdge]:
    """One edge per admitted pair (S_str, S_sem, S_ovlp, f).

    Args:
        profiles: All column profiles; those of admitted pairs embedded.
        admitted: From :func:`admissible_pairs`.

    Returns:
        Scored edges, strongest first.
    """
    edges = []
    for (i, j), pair in admitted.items():
        a, b = profiles[i], profiles[j]
        jac, c_ab, c_ba, shared = pair.overlap
        compatible = scoring.types_compatible(a, b)
        pattern, referencing, sig = pair.pattern, pair.referencing, pair.signals
        if referencing is None:
            referencing = i if (a.distinct_ratio, a.table_id) <= (b.distinct_ratio, b.table_id) else j
        left, right = (a, b) if referencing == i else (b, a)
        # a referenced column without a sample to say otherwise is a key when its name says so
        across = not same_source(a.source, b.source)
        key = scoring.referenceable(right, across) or (sig.key_by_name and not right.joinable)
        s_str = scoring.structural_score(pattern, right, compatible, key)
        if pattern is not None and pattern != "inclusion" and sig.strength:
            s_str *= sig.strength / scoring.PATTERN_STRENGTH[pattern]
        if s_str <= 0 and not (scoring.referenceable(a, across) or scoring.referenceable(b, across) or _codes(a, b)):
            # no key on either side: the same name (batting.W, teams.W), the countries or first names two tables
            # mention are shared vocabulary, no join; a shared code (an IOC country code) still names one entity
            continue
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
                signals=tuple(sorted(sig.found_by | ({"V"} if shared and jac > MIN_JACCARD else set()))),
                pattern=pattern if s_str > 0 else None,
                s_str=round(s_str, 4),
                s_sem=round(scoring.semantic_score(a, b), 4),
                s_ovlp=round(s_ovlp, 4),
                jaccard=round(jac, 4),
                containment=round(c_ab if referencing == i else c_ba, 4),
                explicit=s_str > 0,
                declared=pattern == "declared",
                named=(
                    sig.named
                    and compatible
                    and same_source(a.source, b.source)
                    and s_str >= scoring.NAME_ALONE
                    # a dense 1..n key read from its start holds the first n rows: larger references are
                    # rows not read (customer_demographics' first 2,000 of 1.9 million)
                    and (scoring.shapes_agree(a, b) or (right.sequential and left.dtype == "int"))
                ),
            )
        )
    return strongest_first(edges)


def _codes(a: ColumnProfile, b: ColumnProfile) -> bool:
    """Whether two columns of different names both hold codes (``USA``, ``ORD-0001``): what names one entity."""
    return (
        a.tokens != b.tokens
        and a.dtype == b.dtype == "text"
        and sources.identifier_shaped(a)
        and sources.identifier_shaped(b)
    )


def drop_sibling_references(
    edges: Sequence[CandidateEdge], tau_2: float, identifiers: Collection[tuple[str, str]] = ()
) -> list[CandidateEdge]:
    """Drop edges between two columns that reference one same key: siblings join through their parent.

    ``Batting.teamID`` and ``SeriesPost.teamIDwinner`` both refer to ``Teams``: their values meet
    because both hold team codes, and the tables join through ``Teams`` (a 3-table path), not
    to each other (a team's batting lines do not relate to every series that team won, in any year).
    The same holds when one sibling is unique, one row per parent (a film's one category row): a
    film's copies in stock reference the film, not its category row, although every value of theirs is
    found there. Such an explicit edge goes when the referencing column's reference to the shared parent
    is at least as strong; a declared key, a composite key's column pair and an edge into a column that
    identifies its own table (``customers.customer_id``, which no parent makes a child) always stay.

    Args:
        edges: Scored edges.
        tau_2: Minimum f of a path of 2 tables: what an explicit edge must pass to count as a reference.
        identifiers: ``(table, column)`` of the columns that identify their own table
            (:attr:`~llama_index_pearl.joins.profiles.ColumnProfile.identifier`).
    """
    identifiers = set(identifiers)
    parents: dict[tuple[str, str], dict[tuple[str, str], float]] = {}
    for e in edges:
        if e.explicit and e.passes(tau_2):
            refs = parents.setdefault((e.left_table, e.left_column), {})
            refs[(e.right_table, e.right_column)] = max(e.score, refs.get((e.right_table, e.right_column), 0.0))
    kept = []
    for e in edges:
        ours = parents.get((e.left_table, e.left_column), {})
        theirs = parents.get((e.right_table, e.right_column), {})
        shared = ours.keys() & theirs.keys()
        if e.explicit:  # a composite key's column pair is no sibling: the key is whole only with its other pairs
            child = e.key is None and not e.declared and (e.right_table, e.right_column) not in identifiers
            sibling = child and any(ours[p] >= e.score for p in shared)
        else:
            sibling = bool(shared)
        if not sibling:
            kept.append(e)
    return kept


def drop_value_alternatives(
    edges: Sequence[CandidateEdge], tau_2: float, identifiers: Collection[tuple[str, str]] = ()
) -> list[CandidateEdge]:
    """Drop joins that values alone anchor between two tables that a key named as a reference already joins.

    An order ships to its customer's address and names its customer's company: ``ShipAddress`` values
    fall inside ``Customers.Address`` because the order is the customer's, joined by ``CustomerID``. Such
    overlap follows from the key join; it is no second key, and offering it as an alternative join would
    lead a SQL writer astray. So does a value anchor (``inclusion``), and so do two tables' own identifiers
    that happen to hold the same numbers (a league's ``id`` equal to its country's, the league naming its
    country by ``country_id``): each identifies its own table.

    Args:
        edges: Scored edges.
        tau_2: Minimum f of a path of 2 tables.
        identifiers: ``(table, column)`` of the columns that identify their own table
            (:attr:`~llama_index_pearl.joins.profiles.ColumnProfile.identifier`).
    """
    identifiers = set(identifiers)

    def own_ids(e: CandidateEdge) -> bool:
        return (e.left_table, e.left_column) in identifiers and (e.right_table, e.right_column) in identifiers

    passing = [e for e in edges if e.explicit and e.passes(tau_2)]
    keyed = {frozenset(e.tables) for e in passing if e.pattern != "inclusion" and not own_ids(e)}
    referenced = {frozenset(e.tables) for e in passing if e.pattern in REFERENCE_PATTERNS}
    return [
        e
        for e in edges
        if not (e.pattern == "inclusion" and frozenset(e.tables) in keyed)
        and not (e.pattern == "same_key_name" and own_ids(e) and frozenset(e.tables) in referenced)
    ]


def strongest_first(edges: Iterable[CandidateEdge]) -> list[CandidateEdge]:
    """Edges by descending f, ties by their column names, so every run lists them alike.

    Args:
        edges: Scored edges in any order.
    """
    return sorted(edges, key=lambda e: (-e.score, e.left_table, e.left_column, e.right_table, e.right_column))


def group_joins(edges: Iterable[CandidateEdge]) -> list[list[CandidateEdge]]:
    """Column-pair edges of one table pair as joins: a composite key's pairs together, every other pair alone.

    Joins come strongest first (ties: fewer column pairs, then input order); each is one
    condition (its pairs ANDed), and two joins are alternatives.

    Args:
        edges: Edges between the same two tables.
    """
    groups: dict[object, list[CandidateEdge]] = {}
    for n, e in enumerate(edges):
        groups.setdefault(e.key if e.key is not None else n, []).append(e)
    ranked = sorted(enumerate(groups.values()), key=lambda ig: (-max(e.score for e in ig[1]), len(ig[1]), ig[0]))
    return [group for _, group in ranked]


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
