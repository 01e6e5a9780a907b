"""The answer as a set of tables that join, in two tiers: what the question needs, and what it may need.

A question that needs five tables needs all five, joined; a question about one table needs that table and
little beside it. From the pooled ranking (:mod:`~llama_index_pearl.retrieval.search.pooling`) each of the first
``depth`` tables gets a **confidence**, the probability that the question needs it
(:mod:`~llama_index_pearl.retrieval.answer.evidence`), and the set is read off those probabilities:

1. **Seed**: the candidate with the best score plus ``coverage`` times the share of the question's words it
   holds; it is always needed.
2. **Needed**: every candidate whose confidence reaches ``needed``, joined to the seed by the cheapest tree of
   the join graph that connects them (the Steiner tree problem). Its extra tables are **bridges**: link tables
   and facts the question never names. The tree is the shortest-path heuristic of Takahashi and Matsuyama
   [1]_: the terminal nearest the tree joins it by a shortest path, then the next, each path at most
   ``bridges`` tables long, so a terminal that no path reached at first joins once one does. A terminal no path
   reaches comes in **unjoined** when it is of the seed's source (a table the question names is needed even
   where no join to it was found); a table of another source never joins the set without a join.
3. **May be needed**: every other candidate whose confidence reaches ``maybe``, joined to the set the same way.

The set comes first, needed before may-be-needed, its tables in the order they came in (each bridge after the
table it joined, unjoined tables last in their tier), then the other tables in their order. Pure functions over
the ranking, the confidences, the tables' sources and a networkx join graph: testable without a model.

References
----------
.. [1] H. Takahashi and A. Matsuyama, "An approximate solution for the Steiner problem in graphs",
   Mathematica Japonica 24 (1980) 573-577.

Pipeline step: answer (docs/architecture.md).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum

import networkx as nx

from llama_index_pearl.config import DEFAULT_MAYBE_CONFIDENCE, DEFAULT_NEEDED_CONFIDENCE, PearlConfig
from llama_index_pearl.joins.graph import join_edge
from llama_index_pearl.retrieval.answer.evidence import Confidence
from llama_index_pearl.retrieval.answer.routing import Route

__all__ = [
    "DEFAULT_SET_RULE",
    "SetReason",
    "SetRule",
    "SetTier",
    "TableSet",
    "choose_table_set",
    "fit_whole",
    "set_first",
]

MAX_PATHS = 64  # shortest paths compared per link: a bound on the query's work in a dense join graph


class SetReason(str, Enum):
    """Why a table is in the set."""

    MATCHED = "matched"  # the question's evidence chose it, and it joins the set
    BRIDGE = "bridge"  # it lies on the join path of a matched table: a link table, a fact
    UNJOINED = "unjoined"  # the question's evidence chose it, but no join to the set is known
    LOOKUP = "lookup"  # it names what the needed tables code, and none of them holds a name (``lookups``)
    ROLE = "role"  # a needed table's key calls it by a role the question spells: a store's manager (``lookups``)
    DATE = "date"  # it holds the date of a needed table that holds none, for a period the question names (``lookups``)


class SetTier(str, Enum):
    """How surely the question needs a table of the set."""

    NEEDED = "needed"  # its confidence reaches the needed bar, or it joins such tables
    MAYBE = "may_be_needed"  # its confidence reaches the second bar, or it joins such a table


@dataclass(frozen=True)
class SetRule:
    """How a set is chosen (the shipped values are the measured defaults; ``benchmarks/README.md``).

    Args:
        depth: The ranking's first ``depth`` tables are candidates.
        needed: A candidate whose confidence reaches this is needed.
        maybe: A candidate whose confidence reaches this (below ``needed``) may be needed.
        coverage: Score the seed gains for holding all of the question's coverable words (its share times this).
        bridges: At most this many tables between a table that comes in and the set.
        bridge_confidence: How often a bridge of the needed tables is needed (measured on every dev set): a
            bridge's confidence is the larger of its own and this, capped by the two tables it joins (a link is
            never surer than what it links).
        confidence: The model of the confidence.

    Raises:
        ValueError: A field of the wrong type (``depth`` and ``bridges`` are integers, never a bool; the bars and
            ``coverage`` finite numbers) or out of range; the message names it.
    """

    depth: int = 16
    needed: float = DEFAULT_NEEDED_CONFIDENCE
    maybe: float = DEFAULT_MAYBE_CONFIDENCE
    coverage: float = 0.1
    bridges: int = 3
    bridge_confidence: float = 0.5
    confidence: Confidence = field(default_factory=Confidence)

    def __post_init__(self) -> None:
        for name in ("depth", "bridges"):  # a bool is an int to Python, never a count here
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError(f"SetRule.{name} must be an integer, got {value!r}")
        for name in ("needed", "maybe", "bridge_confidence", "coverage"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
                raise ValueError(f"SetRule.{name} must be a finite number, got {value!r}")
        if self.depth < 1:
            raise ValueError(f"SetRule.depth must be >= 1, got {self.depth!r}")
        if self.bridges < 0:
            raise ValueError(f"SetRule.bridges must be >= 0, got {self.bridges!r}")
        for name in ("needed", "maybe", "bridge_confidence"):
            value = getattr(self, name)
            if not 0.0 < value < 1.0:
                raise ValueError(f"SetRule.{name} must be within (0, 1), got {value!r}")
        if self.maybe > self.needed:
            raise ValueError(f"SetRule.maybe ({self.maybe}) must be at most SetRule.needed ({self.needed})")
        if self.coverage < 0.0:
            raise ValueError(f"SetRule.coverage must be a finite number >= 0, got {self.coverage!r}")
        if not isinstance(self.confidence, Confidence):
            raise ValueError(f"SetRule.confidence must be a Confidence, got {self.confidence!r}")

    @classmethod
    def of(cls, config: PearlConfig) -> SetRule:
        """The rule of an index's settings (its two bars)."""
        return cls(needed=config.needed_confidence, maybe=config.maybe_confidence)


DEFAULT_SET_RULE = SetRule()


@dataclass(frozen=True)
class TableSet:
    """The set: its tables in answer order, why each is in it, its tier, and every candidate's confidence.

    Args:
        tables: The set's tables, in the order they are returned.
        reasons: Table -> :class:`SetReason`.
        confidence: Table -> how surely the question needs it (every candidate and bridge, in the set or not).
        tiers: Table -> :class:`SetTier` (every table of the set).
        whole: The size of the whole set, where this one holds part of it; ``None``: this is the whole set.
        route: The source the question was routed to (``None``: one source in reach).
        hedges: The needed tables of each close rival database's set (``alternatives``): returned after the set,
            outside it, since the question may mean that database.
        alternatives: The set within each close rival database (:attr:`Route.rivals`), each with its own tiers,
            its ``route`` that database and how probable it is, its confidences times that probability.
        other_confidence: Table -> how surely the question needs it, for the tables ``confidence`` lacks: a close
            rival's other candidates, as its set reads them; any other table by its rank within its source
            (:func:`~llama_index_pearl.retrieval.answer.routing.rank_confidence`).
    """

    tables: tuple[str, ...]
    reasons: Mapping[str, SetReason]
    confidence: Mapping[str, float] = field(default_factory=dict)
    tiers: Mapping[str, SetTier] = field(default_factory=dict)
    whole: int | None = None
    route: Route | None = None
    hedges: tuple[str, ...] = ()
    alternatives: tuple[TableSet, ...] = ()
    other_confidence: Mapping[str, float] = field(default_factory=dict)

    def __contains__(self, table_id: object) -> bool:
        return table_id in self.reasons

    @property
    def size(self) -> int:
        """Tables in the whole set (cut or not)."""
        return self.whole if self.whole is not None else len(self.tables)

    @property
    def needed(self) -> tuple[str, ...]:
        """The tables of the needed tier, in order."""
        return tuple(t for t in self.tables if self.tiers.get(t) is SetTier.NEEDED)

    def confidence_of(self, table_id: str) -> float | None:
        """How surely the question needs a table: from the set's evidence, else from its rank (``None``: no
        ranking read it)."""
        sure = self.confidence.get(table_id)
        return sure if sure is not None else self.other_confidence.get(table_id)

    def holding(self, table_id: str) -> TableSet | None:
        """The set that holds a table: this one, or the alternative whose needed tier holds it (``None``: none)."""
        if table_id in self:
            return self
        return next((a for a in self.alternatives if a.tiers.get(table_id) is SetTier.NEEDED), None)


def choose_table_set(
    ranked: Sequence[tuple[str, float]],
    confidence: Mapping[str, float],
    seed: str,
    graph: nx.Graph,
    rule: SetRule | None = None,
    sources: Mapping[str, str | None] | None = None,
) -> TableSet:
    """The set of a question (see the module docstring).

    >>> graph = nx.Graph([("artist", "gig"), ("gig", "venue")])
    >>> ranked = [("artist", 0.60), ("venue", 0.55), ("gig", 0.20)]
    >>> chosen = choose_table_set(ranked, {"artist": 0.9, "venue": 0.7, "gig": 0.1}, "artist", graph)
    >>> chosen.tables, chosen.reasons["gig"].value, chosen.tiers["gig"].value
    (('artist', 'venue', 'gig'), 'bridge', 'needed')

    Args:
        ranked: ``(table, score)`` by descending score (the pooled ranking).
        confidence: Candidate -> how surely the question needs it (:mod:`~llama_index_pearl.retrieval.answer.evidence`).
        seed: The set's first table (a candidate).
        graph: The join graph (only its tables and edges are read).
        rule: How the set is chosen (default: :data:`DEFAULT_SET_RULE`).
        sources: Table -> its source (provenance), for unjoined tables; ``None``: one source.
    """
    rule = rule or DEFAULT_SET_RULE
    if not ranked:
        return TableSet((), {})
    return _Growth(ranked, confidence, seed, graph, rule, sources or {}).run()


class _Growth:
    """One question's set as it grows (the steps of the module docstring)."""

    def __init__(
        self,
        ranked: Sequence[tuple[str, float]],
        confidence: Mapping[str, float],
        seed: str,
        graph: nx.Graph,
        rule: SetRule,
        sources: Mapping[str, str | None],
    ) -> None:
        self.rule, self.graph, self.sources, self.seed = rule, graph, sources, seed
        self.scores = dict(ranked)
        position = {t: i for i, (t, _) in enumerate(ranked)}
        candidates = [t for t, _ in ranked[: rule.depth] if t != seed]
        self.order = sorted(candidates, key=lambda t: (-confidence.get(t, 0.0), position[t]))
        self.confidence = dict(confidence)
        self.reasons: dict[str, SetReason] = {seed: SetReason.MATCHED}
        self.tiers: dict[str, SetTier] = {seed: SetTier.NEEDED}
        self.came_in: list[str] = [seed]

    def run(self) -> TableSet:
        self.confidence.setdefault(self.seed, 1.0)
        needed = [t for t in self.order if self.confidence.get(t, 0.0) >= self.rule.needed]
        maybe = [t for t in self.order if self.rule.maybe <= self.confidence.get(t, 0.0) < self.rule.needed]
        self._join(needed, SetTier.NEEDED)
        self._join([t for t in maybe if t not in self.reasons], SetTier.MAYBE)
        return TableSet(tuple(self._answer_order()), self.reasons, self.confidence, self.tiers)

    def _join(self, terminals: list[str], tier: SetTier) -> None:
        """Join each terminal to the set by the shortest path to it, nearest first (Takahashi-Matsuyama)."""
        left = [t for t in terminals if t not in self.reasons]
        while left:
            joined = [t for t in self.came_in if self.reasons[t] is not SetReason.UNJOINED]
            reachable = [(len(p), i, t, p) for i, t in enumerate(left) if (p := self._path(t, joined)) is not None]
            if not reachable:
                break
            _, _, table, path = min(reachable)
            left.remove(table)
            self._add(table, SetReason.MATCHED, tier)
            *between, member = path
            linked = min(self.confidence.get(table, 0.0), self.confidence.get(member, 0.0))
            for bridge in between:
                if bridge not in self.reasons:
                    lent = min(self.rule.bridge_confidence, linked)
                    self.confidence[bridge] = max(self.confidence.get(bridge, 0.0), lent)
                    self._add(bridge, SetReason.BRIDGE, tier)
                    if bridge in left:
                        left.remove(bridge)
        for table in left:  # no join to the set: a table of the seed's own source is needed all the same
            if self.sources.get(table) == self.sources.get(self.seed):
                self._add(table, SetReason.UNJOINED, tier)

    def _add(self, table: str, reason: SetReason, tier: SetTier) -> None:
        self.reasons[table], self.tiers[table] = reason, tier
        self.came_in.append(table)

    def _path(self, table: str, members: Sequence[str]) -> tuple[str, ...] | None:
        """The tables between ``table`` and the nearest member on a shortest path of the join graph, the one whose
        joins are strongest, then that member; ``(member,)`` when it joins a member; ``None`` when no path of at
        most ``bridges`` does."""
        if table not in self.graph:
            return None
        lengths = nx.single_source_shortest_path_length(self.graph, table, cutoff=self.rule.bridges + 1)
        reached = [m for m in members if m in lengths]
        if not reached:
            return None
        nearest = min(lengths[m] for m in reached)
        if nearest == 1:
            return (min(m for m in reached if lengths[m] == 1),)
        paths = [p for m in sorted(reached) if lengths[m] == nearest for p in _shortest_paths(self.graph, table, m)]
        best = max(paths, key=lambda p: (self._strength(p), sum(self.scores.get(t, 0.0) for t in p[1:-1]), p))
        return tuple(best[1:])

    def _strength(self, path: Sequence[str]) -> float:
        """A path's weakest join (its joins' scores f)."""
        return min(join_edge(self.graph, a, b).score for a, b in itertools.pairwise(path))

    def _answer_order(self) -> list[str]:
        """Needed before may-be-needed; in each, the tables as they came in, unjoined tables last."""
        order = []
        for tier in SetTier:
            members = [t for t in self.came_in if self.tiers[t] is tier]
            order += [t for t in members if self.reasons[t] is not SetReason.UNJOINED]
            order += [t for t in members if self.reasons[t] is SetReason.UNJOINED]
        return order


def _shortest_paths(graph: nx.Graph, a: str, b: str) -> list[list[str]]:
    paths = []
    for path in nx.all_shortest_paths(graph, a, b):
        paths.append(path)
        if len(paths) >= MAX_PATHS:
            break
    return paths


def set_first(ranked: Iterable[str], table_set: TableSet) -> list[str]:
    """The set's tables, then every other table of ``ranked`` in its order. A close rival database's needed
    tables (``hedges``) come after the needed tier, each before the first may-be-needed table less sure than it:
    one order, by how surely the question needs a table, in which a rival's table never comes before a needed
    table of the set nor between a table and its bridges.

    >>> chosen = TableSet(("venue", "gig"), {"venue": SetReason.MATCHED, "gig": SetReason.BRIDGE})
    >>> set_first(["artist", "venue", "label", "gig"], chosen)
    ['venue', 'gig', 'artist', 'label']

    Args:
        ranked: Table ids by descending score.
        table_set: From :func:`choose_table_set`.
    """
    hedges = [t for t in table_set.hedges if t not in table_set]
    needed = [t for t in table_set.tables if table_set.tiers.get(t) is not SetTier.MAYBE]
    maybe = _groups([t for t in table_set.tables if t not in needed], table_set.reasons)
    sure = table_set.confidence
    merged: list[str] = []
    for group in maybe:
        while hedges and sure.get(hedges[0], 0.0) > sure.get(group[0], 0.0):
            merged.append(hedges.pop(0))
        merged.extend(group)
    first = [*needed, *merged, *hedges]
    placed = set(first)
    return [*first, *(t for t in ranked if t not in placed)]


def _groups(tables: Sequence[str], reasons: Mapping[str, SetReason]) -> list[list[str]]:
    """Tables in order, a table of the set with the bridges that follow it as one group, any other alone."""
    groups: list[list[str]] = []
    for table in tables:
        if groups and reasons.get(table) is SetReason.BRIDGE and groups[-1][0] in reasons:
            groups[-1].append(table)
        else:
            groups.append([table])
    return groups


def fit_whole(order: Sequence[str], table_set: TableSet, k: int) -> list[str]:
    """The first ``k`` tables of ``order`` (:func:`set_first`'s), the set's before any other: a set table and the
    bridges after it come in together or not at all (but the set's first table, which comes alone where its group
    does not fit: alone, it needs no join), and once one such group does not fit, the set's groups after it stay
    out too (the set's order, not its confidence: cut by confidence, no more sets were whole within ``k``,
    ``benchmarks/README.md``); other tables, a close rival database's among them, fill the room the set leaves,
    and never take a set table's place. The tables kept stay in ``order``'s order.

    >>> chosen = TableSet(("a", "c", "b"), {"a": SetReason.MATCHED, "c": SetReason.MATCHED, "b": SetReason.BRIDGE})
    >>> fit_whole(["a", "c", "b", "x", "y"], chosen, 2)
    ['a', 'x']

    Args:
        order: Table ids, the set's first.
        table_set: The set.
        k: Tables wanted.
    """
    kept: list[str] = []
    for group in _groups([t for t in order if t in table_set], table_set.reasons):
        if len(kept) + len(group) <= k:
            kept.extend(group)
            continue
        if not kept and k:  # the set's first table comes whatever its bridges: alone, it needs no join
            kept.append(group[0])
        break
    room = k - len(kept)
    kept.extend([t for t in order if t not in table_set][: max(0, room)])
    placed = set(kept)
    return [t for t in order if t in placed]
