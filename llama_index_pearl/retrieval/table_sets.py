"""The answer as a set of tables that join: the pooled ranking's best tables that cover the question, connected.

A question that needs several tables needs all of them, joined; a question about one table needs that table
first and nothing beside it. From the pooled ranking (:mod:`~llama_index_pearl.retrieval.pooling`), the set is
chosen greedily, as Greedy-JAR chooses by coverage and join compatibility, without a solver:

1. candidates: the ranking's best tables (within ``window`` of the best score, at most ``depth`` of them); each
   holds some of the question's words (its name, headers and values, as BM25 reads its ``original`` unit; a word
   naming a table is that table's), a word weighted by how few tables hold it;
2. the candidate with the best score plus ``coverage`` times the share of the question's words it holds starts
   the set;
3. while a candidate holds words no member holds (at least ``min_gain`` of the weight of the words some table
   holds) and joins a member, directly or through at most ``bridges`` other tables of the join graph, the best
   of them by the same value comes in, and the tables it joins through come in as **bridges** (a link table, a
   fact);
4. it stops when no candidate adds a word and joins: the question says how many tables it needs.

The set comes first, its matched tables in the order they came in and each bridge after the tables it connects;
the other tables follow in their order. Pure functions over the ranking, the words each table holds and a
networkx join graph: testable without a model. The measurements that chose the defaults are in
``benchmarks/README.md`` ("Table sets").

Pipeline step: retrieval (docs/architecture.md).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import networkx as nx

from llama_index_pearl.joins.graph import strongest_middle

__all__ = [
    "BRIDGE",
    "DEFAULT_SET_RULE",
    "MATCHED",
    "QUESTION_WORDS",
    "SetRule",
    "TableSet",
    "choose_table_set",
    "set_first",
    "word_weights",
]

MATCHED = "matched"
MAX_PATHS = 64  # shortest paths compared per link: a bound on the query's work in a dense join graph
BRIDGE = "bridge"

# Words that ask rather than name: a table holding "how" or "average" in a value says nothing of the question
QUESTION_WORDS = frozenset(
    [
        "how",
        "many",
        "much",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "where",
        "when",
        "why",
        "show",
        "list",
        "give",
        "find",
        "return",
        "tell",
        "number",
        "count",
        "total",
        "average",
        "mean",
        "sum",
        "maximum",
        "minimum",
        "max",
        "min",
        "each",
        "every",
        "all",
        "different",
        "distinct",
        "name",
    ]
)


@dataclass(frozen=True)
class SetRule:
    """How a set is chosen (the shipped values are the measured defaults).

    Args:
        window: Tables scoring within this much of the best table are candidates.
        depth: At most this many tables of the ranking are candidates.
        min_gain: Share of the question's coverable word weight a table must add to come in.
        coverage: Score a table gains for holding all of the question's coverable words (its share of them
            times this): what orders the seed and the tables that come in.
        bridges: At most this many tables between a table that comes in and the set (0: it must join a member).
    """

    window: float = 0.1
    depth: int = 12
    min_gain: float = 0.1
    coverage: float = 0.1
    bridges: int = 1

    def __post_init__(self) -> None:
        if not 0.0 <= self.window < math.inf:
            raise ValueError(f"SetRule.window must be a finite number >= 0, got {self.window!r}")
        if self.depth < 1:
            raise ValueError(f"SetRule.depth must be >= 1, got {self.depth!r}")
        if self.bridges < 0:
            raise ValueError(f"SetRule.bridges must be >= 0, got {self.bridges!r}")
        if not 0.0 <= self.min_gain <= 1.0:
            raise ValueError(f"SetRule.min_gain must be within [0, 1], got {self.min_gain!r}")


DEFAULT_SET_RULE = SetRule()


@dataclass(frozen=True)
class TableSet:
    """The connected set: its tables in answer order and why each is in it.

    Args:
        tables: The set's tables, in the order they are returned.
        reasons: Table -> :data:`MATCHED` (the question's words or the ranking chose it) or :data:`BRIDGE`
            (it joins two matched tables).
    """

    tables: tuple[str, ...]
    reasons: Mapping[str, str]

    def __contains__(self, table_id: object) -> bool:
        return table_id in self.reasons


def word_weights(holders: Mapping[str, int], n_tables: int) -> dict[str, float]:
    """Each question word's weight: BM25's idf over tables (a word every table holds weighs little).

    Args:
        holders: Word -> how many tables hold it.
        n_tables: Tables in the index.
    """
    return {
        word: math.log(1.0 + (n_tables - count + 0.5) / (count + 0.5)) for word, count in holders.items() if count > 0
    }


def choose_table_set(
    ranked: Sequence[tuple[str, float]],
    words: Mapping[str, frozenset[str]],
    weights: Mapping[str, float],
    graph: nx.Graph,
    rule: SetRule | None = None,
) -> TableSet:
    """The connected set of a question (see the module docstring).

    Args:
        ranked: ``(table, score)`` by descending score (the pooled ranking).
        words: Table -> the question's words it holds, for every table of the index that holds one.
        weights: Question word -> weight (:func:`word_weights`).
        graph: The join graph.
        rule: Window, depth, minimum gain and the weight of coverage (default: :data:`DEFAULT_SET_RULE`).
    """
    rule = rule or DEFAULT_SET_RULE
    if not ranked:
        return TableSet((), {})
    top_score = ranked[0][1]
    scores = dict(ranked)
    window = [(t, s) for t, s in ranked[: rule.depth] if s >= top_score - rule.window]
    asked = {w: x for w, x in weights.items() if w not in QUESTION_WORDS}
    total = sum(asked.get(w, 0.0) for w in set().union(*words.values()))  # what some table of the index holds

    def gain(table: str, covered: set[str]) -> float:
        return sum(asked.get(w, 0.0) for w in words.get(table, frozenset()) - covered) / total if total else 0.0

    seed = max(window, key=lambda ts: ts[1] + rule.coverage * gain(ts[0], set()))[0]
    matched = [seed]
    bridges: dict[str, list[str]] = {}  # bridge -> the matched tables it follows
    covered = set(words.get(seed, frozenset()))
    while total > 0:
        best: tuple[float, str, tuple[str, ...]] | None = None
        for table, score in window:
            if table in matched or table in bridges:
                continue
            added = gain(table, covered)
            if added < rule.min_gain:
                continue
            link = _link(graph, table, [*matched, *bridges], rule.bridges, scores)
            value = score + rule.coverage * added
            if link is not None and (best is None or value > best[0]):
                best = (value, table, link)
        if best is None:
            break
        _, table, link = best
        matched.append(table)
        covered |= words.get(table, frozenset())
        for bridge in link:
            bridges.setdefault(bridge, []).append(table)
    order = list(matched)
    for bridge, follows in bridges.items():
        if bridge not in order:
            order.insert(max(order.index(t) for t in follows if t in order) + 1, bridge)
    reasons = {t: (BRIDGE if t in bridges and t not in matched else MATCHED) for t in order}
    return TableSet(tuple(order), reasons)


def _link(
    graph: nx.Graph, table: str, members: Sequence[str], most: int, scores: Mapping[str, float]
) -> tuple[str, ...] | None:
    """The bridges that join ``table`` to a member: ``()`` when it joins one directly, ``None`` when no path of at
    most ``most`` bridges does.

    Through one table, the one whose weaker join is strongest (then by name: deterministic); through more, a
    shortest path of the join graph (the fewest joins a SQL writer must write), of those the one whose bridges
    the ranking scores highest (the question's own evidence for them; at most ``MAX_PATHS`` compared).
    """
    if table not in graph:
        return None
    neighbours = set(graph.neighbors(table))
    if neighbours.intersection(members):
        return ()
    if most < 1:
        return None
    middles = [found for m in members if m in graph and (found := strongest_middle(graph, table, m)) is not None]
    if middles:  # the first strongest: by member order, then by name
        return (max(middles, key=lambda found: found[0])[1],)
    if most < 2:
        return None
    lengths = nx.single_source_shortest_path_length(graph, table, cutoff=most + 1)
    reached = [m for m in members if m in lengths]
    if not reached:
        return None
    nearest = min(lengths[m] for m in reached)
    paths = (p for m in sorted(reached) if lengths[m] == nearest for p in nx.all_shortest_paths(graph, table, m))
    best_path = max(
        itertools.islice(paths, MAX_PATHS), key=lambda p: (sum(scores.get(t, 0.0) for t in p[1:-1]), tuple(p))
    )
    return tuple(best_path[1:-1])


def set_first(ranked: Iterable[str], table_set: TableSet) -> list[str]:
    """The set's tables in its order, then every other table of ``ranked`` in its order.

    Args:
        ranked: Table ids by descending score.
        table_set: From :func:`choose_table_set`.
    """
    return [*table_set.tables, *(t for t in ranked if t not in table_set)]
