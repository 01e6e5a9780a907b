"""The answer as a set of tables that join: every table the question needs, complete first, small second.

A question that needs five tables needs all five, joined; a question about one table needs that table first and
little beside it. From the pooled ranking (:mod:`~llama_index_pearl.retrieval.pooling`) the set grows greedily,
one table at a time, each by how surely the question needs it:

1. **Candidates**: the ranking's first ``depth`` tables. Each holds some of the question's words (its name,
   headers and values, as BM25 reads its ``original`` unit; a word naming a table is that table's), a word
   weighted by how few tables hold it.
2. **Seed**: the candidate with the best score plus ``coverage`` times the share of the question's words it holds.
3. **Confidence** of each other candidate, given the set so far (:class:`Evidence`): a logistic model of four
   kinds of evidence: how far its score lies below the best one, the share of the question's word weight it
   brings that no member holds, how many joins separate it from the set, and how many tables it joins (the
   centre of a database, an order or a person, is in most of its questions). The weights are a logistic
   regression of gold membership on every dev set together (``benchmarks/README.md``, "Complete sets").
4. **Grow**: the candidate of highest confidence comes in while it reaches ``min_confidence``, with the tables
   of the shortest path that joins it to the set (at most ``bridges`` of them) as **bridges** (link tables, facts
   the question never names). A candidate no such path reaches comes in **unjoined** (its joins are unknown) if
   it is of the seed's source: a table the question names is needed even where no join to it was found.
5. **Rivals**: where a table of another source scores within ``rival_window`` of the seed, the question may
   belong to either database; the join graph then says nothing of which, and a table comes in only with words no
   member holds (at least ``rival_words`` of their weight) or through the very unit that scores best (a score
   equal to the best one).

The set comes first, its tables in the order they came in, each bridge after the table it joined, then the
other tables in their order. Pure functions over the ranking, the words each table holds, the tables' sources
and a networkx join graph: testable without a model.

Pipeline step: retrieval (docs/architecture.md).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum

import networkx as nx

from llama_index_pearl.joins.graph import join_edge

__all__ = [
    "DEFAULT_SET_RULE",
    "QUESTION_WORDS",
    "Evidence",
    "SetReason",
    "SetRule",
    "TableSet",
    "choose_table_set",
    "set_first",
    "word_weights",
]

MAX_DISTANCE = 4  # joins counted from the set: farther tables, and tables no join reaches, count as this far
MAX_PATHS = 64  # shortest paths compared per link: a bound on the query's work in a dense join graph

# Words that ask rather than name: a table holding "how" or "average" in a value says nothing of the question
QUESTION_WORDS = frozenset(
    [
        *("how", "many", "much", "what", "which", "who", "whom", "whose", "where", "when", "why"),
        *("show", "list", "give", "find", "return", "tell", "number", "count", "total", "average", "mean"),
        *("sum", "maximum", "minimum", "max", "min", "each", "every", "all", "different", "distinct", "name"),
    ]
)


class SetReason(str, Enum):
    """Why a table is in the set."""

    MATCHED = "matched"  # the question's evidence chose it, and it joins the set
    BRIDGE = "bridge"  # it lies on the join path of a matched table: a link table, a fact
    UNJOINED = "unjoined"  # the question's evidence chose it, but no join to the set is known


@dataclass(frozen=True)
class Evidence:
    """Weights of a logistic model of "the question needs this table", per kind of evidence.

    The logistic regression of gold membership on these four features, over the ranking's first 12 tables of
    every question of every dev set, each set weighted alike, rounded (``benchmarks/README.md``).

    Args:
        bias: The log-odds of a candidate with no evidence.
        score_gap: Per unit of score below the best table.
        words: Per share of the question's word weight the table brings that no member holds.
        distance: Per join between the table and the set (at most ``MAX_DISTANCE``).
        centrality: Per ``log(1 + n)`` of the ``n`` tables it joins.
    """

    bias: float = -1.0
    score_gap: float = -11.5
    words: float = 7.5
    distance: float = -0.4
    centrality: float = 0.45

    def logit(self, score_gap: float, words: float, distance: int, degree: int) -> float:
        """Log-odds that the question needs a table with this evidence."""
        return (
            self.bias
            + self.score_gap * score_gap
            + self.words * words
            + self.distance * min(distance, MAX_DISTANCE)
            + self.centrality * math.log1p(degree)
        )


@dataclass(frozen=True)
class SetRule:
    """How a set is chosen (the shipped values are the measured defaults; ``benchmarks/README.md``).

    Args:
        depth: The ranking's first ``depth`` tables are candidates.
        min_confidence: A candidate comes in while its confidence (:class:`Evidence`) reaches this.
        coverage: Score the seed gains for holding all of the question's coverable words (its share times this).
        bridges: At most this many tables between a table that comes in and the set.
        rival_window: A table of another source within this of the seed's score makes the question a rival's too.
        rival_words: With a rival, the share of the question's word weight a table must bring to come in.
        evidence: The weights of the confidence.
    """

    depth: int = 12
    min_confidence: float = 0.1
    coverage: float = 0.1
    bridges: int = 3
    rival_window: float = 0.1
    rival_words: float = 0.05
    evidence: Evidence = field(default_factory=Evidence)

    def __post_init__(self) -> None:
        if self.depth < 1:
            raise ValueError(f"SetRule.depth must be >= 1, got {self.depth!r}")
        if self.bridges < 0:
            raise ValueError(f"SetRule.bridges must be >= 0, got {self.bridges!r}")
        if not 0.0 < self.min_confidence < 1.0:
            raise ValueError(f"SetRule.min_confidence must be within (0, 1), got {self.min_confidence!r}")
        for name in ("coverage", "rival_window", "rival_words"):
            value = getattr(self, name)
            if not 0.0 <= value < math.inf:
                raise ValueError(f"SetRule.{name} must be a finite number >= 0, got {value!r}")


DEFAULT_SET_RULE = SetRule()


@dataclass(frozen=True)
class TableSet:
    """The set: its tables in answer order, why each is in it and how surely.

    Args:
        tables: The set's tables, in the order they are returned.
        reasons: Table -> :class:`SetReason`.
        confidence: Table -> the confidence it came in with (a bridge: that of the table it joined; the seed: 1).
        whole: The size of the set this one was cut from (:meth:`cut`); ``None``: this is the whole set.
    """

    tables: tuple[str, ...]
    reasons: Mapping[str, SetReason]
    confidence: Mapping[str, float] = field(default_factory=dict)
    whole: int | None = None

    def __contains__(self, table_id: object) -> bool:
        return table_id in self.reasons

    @property
    def size(self) -> int:
        """Tables in the whole set (cut or not)."""
        return self.whole if self.whole is not None else len(self.tables)

    def cut(self, k: int) -> TableSet:
        """The first tables of the set that fit in ``k``, never a table without the bridges that join it.

        A table and the bridges after it (those that joined it) stay together: the cut keeps the longest run of
        such groups within ``k`` tables, the least sure ones going.

        >>> whole = TableSet(("a", "c", "b"), {"a": SetReason.MATCHED, "c": SetReason.MATCHED, "b": SetReason.BRIDGE})
        >>> whole.cut(2).tables, whole.cut(2).size
        (('a',), 3)
        """
        if len(self.tables) <= k:
            return self
        kept: list[str] = []
        group: list[str] = []
        for table in (*self.tables, None):
            if table is not None and self.reasons[table] is SetReason.BRIDGE:
                group.append(table)
                continue
            if len(kept) + len(group) > k:
                break
            kept.extend(group)
            group = [table] if table is not None else []
        reasons = {t: self.reasons[t] for t in kept}
        confidence = {t: c for t, c in self.confidence.items() if t in reasons}
        return TableSet(tuple(kept), reasons, confidence, self.size)


def word_weights(holders: Mapping[str, int], n_tables: int) -> dict[str, float]:
    """Each question word's weight: BM25's idf over tables (a word every table holds weighs little).

    >>> weights = word_weights({"name": 40, "wembley": 1}, 40)
    >>> weights["wembley"] > weights["name"] > 0
    True

    Args:
        holders: Word -> how many tables hold it.
        n_tables: Tables in the index.
    """
    return {
        word: math.log(1.0 + (n_tables - count + 0.5) / (count + 0.5)) for word, count in holders.items() if count > 0
    }


def sigmoid(logit: float) -> float:
    """The probability of a log-odds."""
    return 1.0 / (1.0 + math.exp(-logit))


def choose_table_set(
    ranked: Sequence[tuple[str, float]],
    words: Mapping[str, frozenset[str]],
    weights: Mapping[str, float],
    graph: nx.Graph,
    rule: SetRule | None = None,
    sources: Mapping[str, str | None] | None = None,
) -> TableSet:
    """The set of a question (see the module docstring).

    >>> graph = nx.Graph([("artist", "gig"), ("gig", "venue")])
    >>> ranked = [("artist", 0.60), ("venue", 0.55), ("gig", 0.20)]
    >>> words = {"artist": frozenset({"joe"}), "venue": frozenset({"wembley"})}
    >>> chosen = choose_table_set(ranked, words, {"joe": 2.0, "wembley": 2.0}, graph)
    >>> chosen.tables, chosen.reasons["gig"].value
    (('artist', 'venue', 'gig'), 'bridge')

    Args:
        ranked: ``(table, score)`` by descending score (the pooled ranking).
        words: Table -> the question's words it holds, for every table that holds one.
        weights: Question word -> weight (:func:`word_weights`).
        graph: The join graph (only its tables and edges are read).
        rule: How the set is chosen (default: :data:`DEFAULT_SET_RULE`).
        sources: Table -> its source (provenance), for the rival rule and unjoined tables; ``None``: one source.
    """
    rule = rule or DEFAULT_SET_RULE
    if not ranked:
        return TableSet((), {})
    return _Growth(ranked, words, weights, graph, rule, sources or {}).run()


class _Growth:
    """One question's set as it grows (the steps of the module docstring)."""

    def __init__(
        self,
        ranked: Sequence[tuple[str, float]],
        words: Mapping[str, frozenset[str]],
        weights: Mapping[str, float],
        graph: nx.Graph,
        rule: SetRule,
        sources: Mapping[str, str | None],
    ) -> None:
        self.rule, self.graph, self.words, self.sources = rule, graph, words, sources
        self.scores = dict(ranked)
        self.candidates = [t for t, _ in ranked[: rule.depth]]
        self.top = ranked[0][1]
        self.asked = {w: x for w, x in weights.items() if w not in QUESTION_WORDS}
        self.total = sum(self.asked.get(w, 0.0) for w in set().union(*words.values())) if words else 0.0
        self.covered: set[str] = set()
        self.seed = max(self.candidates, key=lambda t: self.scores[t] + rule.coverage * self.gain(t))
        self.rival = any(
            self._source(t) != self._source(self.seed) and s >= self.scores[self.seed] - rule.rival_window
            for t, s in ranked
            if t != self.seed
        )

    def _source(self, table: str) -> str | None:
        return self.sources.get(table)

    def gain(self, table: str) -> float:
        """The share of the question's coverable word weight ``table`` holds and no member does."""
        if not self.total:
            return 0.0
        return sum(self.asked.get(w, 0.0) for w in self.words.get(table, frozenset()) - self.covered) / self.total

    def run(self) -> TableSet:
        order, reasons, confidence = [self.seed], {self.seed: SetReason.MATCHED}, {self.seed: 1.0}
        self.covered |= self.words.get(self.seed, frozenset())
        left = [t for t in self.candidates if t != self.seed]
        while left:
            distances = self._distances([t for t in order if reasons[t] is not SetReason.UNJOINED])
            scored = [(self._logit(t, distances), -i, t) for i, t in enumerate(left) if self._admissible(t)]
            if not scored:
                break
            logit, _, table = max(scored)
            chance = sigmoid(logit)
            if chance < self.rule.min_confidence:
                break
            left.remove(table)
            path = self._path(table, [t for t in order if reasons[t] is not SetReason.UNJOINED])
            if path is None and self._source(table) != self._source(self.seed):
                continue  # another database's table: the set holds one database's tables
            self.covered |= self.words.get(table, frozenset())
            reasons[table] = SetReason.UNJOINED if path is None else SetReason.MATCHED
            confidence[table] = chance
            order.append(table)
            for bridge in path or ():
                if bridge not in reasons:
                    reasons[bridge], confidence[bridge] = SetReason.BRIDGE, chance
                    order.append(bridge)
                    if bridge in left:
                        left.remove(bridge)
        return TableSet(tuple(self._answer_order(order, reasons)), reasons, confidence)

    def _admissible(self, table: str) -> bool:
        """With a rival database, only evidence admits a table: words of the question no member holds, or the best
        score (the unit that scores best holds it)."""
        return not self.rival or self.gain(table) >= self.rule.rival_words or self.scores[table] >= self.top

    def _logit(self, table: str, distances: Mapping[str, int]) -> float:
        degree = self.graph.degree(table) if table in self.graph else 0
        gap = self.top - self.scores[table]
        return self.rule.evidence.logit(gap, self.gain(table), distances.get(table, MAX_DISTANCE), degree)

    def _distances(self, members: Sequence[str]) -> dict[str, int]:
        """Joins from the set to each candidate, breadth first, until every candidate is reached (a lake's hubs
        join thousands of tables: the walk stops at the candidates, at most ``MAX_DISTANCE`` joins out)."""
        frontier = [m for m in members if m in self.graph]
        seen = dict.fromkeys(frontier, 0)
        wanted = {t for t in self.candidates if t not in seen}
        for depth in range(1, MAX_DISTANCE + 1):
            if not wanted or not frontier:
                break
            reached = [n for table in frontier for n in self.graph.neighbors(table) if n not in seen]
            frontier = list(dict.fromkeys(reached))
            for table in frontier:
                seen[table] = depth
            wanted.difference_update(frontier)
        return seen

    def _path(self, table: str, members: Sequence[str]) -> tuple[str, ...] | None:
        """The tables between ``table`` and the nearest member on a shortest path of the join graph, the one whose
        joins are strongest; ``()`` when it joins a member; ``None`` when no path of at most ``bridges`` does."""
        if table not in self.graph:
            return None
        lengths = nx.single_source_shortest_path_length(self.graph, table, cutoff=self.rule.bridges + 1)
        reached = [m for m in members if m in lengths]
        if not reached:
            return None
        nearest = min(lengths[m] for m in reached)
        if nearest == 1:
            return ()
        paths = [p for m in sorted(reached) if lengths[m] == nearest for p in _shortest_paths(self.graph, table, m)]
        best = max(paths, key=lambda p: (self._strength(p), sum(self.scores.get(t, 0.0) for t in p[1:-1]), p))
        return tuple(best[1:-1])

    def _strength(self, path: Sequence[str]) -> float:
        """A path's weakest join (its joins' scores f)."""
        return min(join_edge(self.graph, a, b).score for a, b in itertools.pairwise(path))

    @staticmethod
    def _answer_order(order: Sequence[str], reasons: Mapping[str, SetReason]) -> list[str]:
        """The members as they came in (each bridge after the table it joined), unjoined tables last."""
        return [t for t in order if reasons[t] is not SetReason.UNJOINED] + [
            t for t in order if reasons[t] is SetReason.UNJOINED
        ]


def _shortest_paths(graph: nx.Graph, a: str, b: str) -> list[list[str]]:
    paths = []
    for path in nx.all_shortest_paths(graph, a, b):
        paths.append(path)
        if len(paths) >= MAX_PATHS:
            break
    return paths


def set_first(ranked: Iterable[str], table_set: TableSet) -> list[str]:
    """The set's tables in its order, then every other table of ``ranked`` in its order.

    >>> chosen = TableSet(("venue", "gig"), {"venue": SetReason.MATCHED, "gig": SetReason.BRIDGE})
    >>> set_first(["artist", "venue", "label", "gig"], chosen)
    ['venue', 'gig', 'artist', 'label']

    Args:
        ranked: Table ids by descending score.
        table_set: From :func:`choose_table_set`.
    """
    return [*table_set.tables, *(t for t in ranked if t not in table_set)]
