"""Which source a question means: in a lake of several databases, the question is routed to one before its set.

A user who points PEARL at a folder of databases does not say which one a question asks. The best table alone
is a poor guide (``customers`` is in every database); each source's tables are read together instead
(:class:`SourceEvidence`): how close its best tables come to the best score, how much of the question's word
weight its tables hold, and how well its columns answer each content word of the question. A conditional
logit over the sources in the ranking turns these into a probability per source (:class:`Routing`, fitted on
every dev set whose questions name their database: ``python benchmarks/routing.py --learn``); the question is
answered within the most probable source, and a second source within ``RIVAL`` of it is named as close.

**Twins** are copies of one schema in two sources (a database exported twice, a sample loaded under two names):
their table names match once a prefix every table of a source carries is dropped (``olist_orders`` is
``orders``). A twin fits a question as well as its copy; the answer names it (:func:`twin_sources`).

Pure functions over the ranking's scores, the words each table holds and the column cosines.

Pipeline step: answer (docs/architecture.md).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields

import numpy as np

from llama_index_pearl.joins.table_names import COPY_COLUMNS, COPY_SHARE
from llama_index_pearl.text.words import identifier_words, singular

__all__ = [
    "RANK_RATES",
    "RIVAL",
    "ROUTE_DEPTH",
    "TWIN_OVERLAP",
    "TWIN_TABLES",
    "Route",
    "Routing",
    "SourceEvidence",
    "preferred",
    "rank_confidence",
    "route",
    "source_ranks",
    "twin_sources",
]

ROUTE_DEPTH = 48  # tables of the ranking read to route a question (each source's best ones among them)
RIVAL = 0.2  # a second source at least this probable is named beside the chosen one
TWIN_OVERLAP = 0.5  # share of the smaller source's tables that its twin holds
TWIN_TABLES = 2  # tables of the smaller source, and tables held in common, at the least
# How often the table at each rank within its source (1, 2, ..., the last for every later rank) is needed when the
# question means that source: fitted on every dev set whose questions name their database, sets alike
# (``python benchmarks/routing.py ... --rank-rates``).
RANK_RATES = (0.85, 0.48, 0.24, 0.16, 0.15, 0.12, 0.11, 0.05)


@dataclass(frozen=True)
class SourceEvidence:
    """What one source's tables in the ranking show of a question.

    Args:
        source: The source.
        gap: How far its best table lies below the ranking's best.
        gap_three: How far the mean of its three best tables lies below the ranking's best (missing ones count as
            the ranking's last read).
        words: The share of the question's word weight its tables hold.
        word_columns: The mean, over the question's content words, of the best cosine with one of its columns.
        tables: Its tables among the ranking's first ten.
        size: Its tables in reach: a large database holds a table like anything, and a column like any word, so
            its best scores say less of the question than a small one's.
    """

    source: str | None
    gap: float
    gap_three: float
    words: float
    word_columns: float
    tables: int
    size: int = 1

    def features(self) -> list[float]:
        return [self.gap, self.gap_three, self.words, self.word_columns, math.log1p(self.tables), math.log(self.size)]


@dataclass(frozen=True)
class Routing:
    """Weights of the conditional logit over sources, one per :meth:`SourceEvidence.features`.

    Fitted by ``python benchmarks/routing.py --learn`` on every dev set whose questions name their database
    (spider, spider_realistic, spider2_lite, business_words and the dev lakes of ``benchmarks/lake/make_lake.py``),
    each set weighted alike; rounded.
    """

    gap: float = -13.38
    gap_three: float = -2.39
    words: float = 0.94
    word_columns: float = 11.63
    tables: float = 0.05
    size: float = -0.6

    def weights(self) -> np.ndarray:
        return np.asarray([getattr(self, f.name) for f in fields(self)], dtype=np.float64)


@dataclass(frozen=True)
class Route:
    """The source a question is answered within, and how surely.

    Args:
        source: The chosen source.
        confidence: Its probability among the sources in the ranking.
        rivals: Other sources at least ``RIVAL`` probable, most probable first.
        twins: Twins of the chosen source (copies of its schema) that the ranking holds.
        rival_confidences: Each rival's probability, in the order of ``rivals``.
        probabilities: Every source of the ranking and its probability (:func:`rank_confidence` reads them).
    """

    source: str | None
    confidence: float
    rivals: tuple[str | None, ...] = ()
    twins: tuple[str | None, ...] = ()
    rival_confidences: tuple[float, ...] = ()
    probabilities: tuple[tuple[str | None, float], ...] = field(default=(), repr=False)


def source_evidence(
    ranked: Sequence[tuple[str, float]],
    sources: Mapping[str, str | None],
    shares: Mapping[str, frozenset[str]],
    weights: Mapping[str, float],
    word_columns: Mapping[str, Sequence[float]],
    sizes: Mapping[str | None, int] | None = None,
) -> list[SourceEvidence]:
    """The evidence of each source with a table in ``ranked``.

    >>> ranked = [("a.x", 0.7), ("b.y", 0.6), ("a.z", 0.5)]
    >>> ev = source_evidence(ranked, {"a.x": "a", "b.y": "b", "a.z": "a"}, {"b.y": frozenset({"w"})}, {"w": 1.0}, {})
    >>> [(e.source, round(e.gap, 2), e.words, e.tables) for e in ev]
    [('a', 0.0, 0.0, 2), ('b', 0.1, 1.0, 1)]

    Args:
        ranked: ``(table, score)``, best first.
        sources: Table -> its source.
        shares: Table -> the question's words it holds.
        weights: Question word -> its weight.
        word_columns: Table -> each content word's best cosine with one of its columns (empty: none).
        sizes: Source -> its tables in reach (``None``: one each).
    """
    if not ranked:
        return []
    top, last = ranked[0][1], ranked[-1][1]
    total = sum(weights.get(w, 0.0) for w in set().union(*shares.values())) if shares else 0.0
    grouped: dict[str | None, list[tuple[str, float]]] = {}
    for table, score in ranked:
        grouped.setdefault(sources.get(table), []).append((table, score))
    first_ten = Counter(sources.get(t) for t, _ in ranked[:10])
    out = []
    for source, tables in grouped.items():
        scores = [s for _, s in tables[:3]] + [last] * (3 - min(3, len(tables)))
        held = set().union(*(shares.get(t, frozenset()) for t, _ in tables))
        per_word = [word_columns[t] for t, _ in tables if len(word_columns.get(t, ()))]
        covered = float(np.max(np.asarray(per_word), axis=0).mean()) if per_word else 0.0
        out.append(
            SourceEvidence(
                source,
                top - tables[0][1],
                top - sum(scores) / 3,
                sum(weights.get(w, 0.0) for w in held) / total if total else 0.0,
                covered,
                first_ten[source],
                max(1, (sizes or {}).get(source, 1)),
            )
        )
    return out


def route(evidence: Sequence[SourceEvidence], routing: Routing, twins: Mapping[str | None, Iterable[str]]) -> Route:
    """The most probable source of the question (a softmax of the conditional logit over the sources).

    >>> one = SourceEvidence("a", 0.0, 0.0, 1.0, 0.6, 5)
    >>> other = SourceEvidence("b", 0.2, 0.3, 0.0, 0.3, 1)
    >>> chosen = route([one, other], Routing(), {})
    >>> chosen.source, chosen.confidence > 0.9, chosen.rivals
    ('a', True, ())

    Args:
        evidence: Each source's evidence (:func:`source_evidence`).
        routing: The weights.
        twins: Source -> its twins (:func:`twin_sources`).
    """
    logits = np.asarray([e.features() for e in evidence], dtype=np.float64) @ routing.weights()
    p = np.exp(logits - logits.max())
    p /= p.sum()
    order = sorted(range(len(evidence)), key=lambda i: (-p[i], i))
    best = evidence[order[0]].source
    present = {e.source for e in evidence}
    close = [i for i in order[1:] if p[i] >= RIVAL]
    copies = tuple(t for t in twins.get(best, ()) if t in present)
    rivals = tuple(evidence[i].source for i in close)
    every = tuple((evidence[i].source, float(p[i])) for i in order)
    return Route(best, float(p[order[0]]), rivals, copies, tuple(float(p[i]) for i in close), every)


def preferred(chosen: Route, twins: Mapping[str | None, Iterable[str]], sources: Sequence[str]) -> Route:
    """The route to a preferred copy: a question routed to a preferred source, or to a twin of one, is answered
    within that source; its copies are named among the twins, never answered as rivals.

    >>> preferred(Route("export", 0.7, ("crm",), (), (0.3,)), {"export": ["crm"], "crm": ["export"]}, ["crm"])
    Route(source='crm', confidence=0.7, rivals=(), twins=('export',), rival_confidences=())

    Args:
        chosen: The route the evidence chose.
        twins: Source -> its twins (:func:`twin_sources`).
        sources: The preferred sources, in order of preference.
    """
    if chosen.source in sources:
        target = chosen.source
    else:
        target = next((s for s in sources if s in twins.get(chosen.source, ())), None)
    if target is None:
        return chosen
    copies = {chosen.source, *twins.get(target, ())} - {target}
    kept = [(r, p) for r, p in zip(chosen.rivals, chosen.rival_confidences) if r != target and r not in copies]
    named = tuple(dict.fromkeys(t for t in (chosen.source, *chosen.twins) if t != target))
    rivals, sure = tuple(r for r, _ in kept), tuple(p for _, p in kept)
    return Route(target, chosen.confidence, rivals, named, sure, chosen.probabilities)


def rank_confidence(
    ranked: Iterable[str],
    sources: Mapping[str, str | None],
    probabilities: Mapping[str | None, float],
    rates: Sequence[float] = RANK_RATES,
) -> dict[str, float]:
    """How surely the question needs each table, from its rank within its source alone: the probability that the
    question means the source times how often a table at that rank is needed when it does (``rates``; the last for
    every later rank). For the tables no set read: a database the question is not routed to, the tail of a
    ranking. A source without a probability is taken as not meant.

    >>> rank_confidence(["a.x", "b.y", "a.z"], {"a.x": "a", "b.y": "b", "a.z": "a"}, {"a": 0.75, "b": 0.25}, (1, 0.5))
    {'a.x': 0.75, 'b.y': 0.25, 'a.z': 0.375}

    Args:
        ranked: Table ids, best first.
        sources: Table -> its source.
        probabilities: Source -> how probable it is that the question means it.
        rates: How often the table at each rank within its source is needed, the source meant.
    """
    ranked = list(ranked)
    return {
        table: probabilities.get(sources.get(table), 0.0) * rates[min(rank, len(rates)) - 1]
        for table, rank in zip(ranked, source_ranks(ranked, sources))
    }


def source_ranks(ranked: Iterable[str], sources: Mapping[str, str | None]) -> list[int]:
    """Each table's rank within its own source (1: its source's best), in the ranking's order.

    >>> source_ranks(["a.x", "b.y", "a.z"], {"a.x": "a", "b.y": "b", "a.z": "a"})
    [1, 1, 2]

    Args:
        ranked: Table ids, best first.
        sources: Table -> its source.
    """
    seen: Counter[str | None] = Counter()
    out = []
    for table in ranked:
        seen[sources.get(table)] += 1
        out.append(seen[sources.get(table)])
    return out


def twin_sources(
    names: Mapping[str | None, Iterable[str]], columns: Mapping[tuple[str | None, str], Iterable[str]] | None = None
) -> dict[str | None, list[str]]:
    """Each source's twins: the sources that copy its schema, whatever their naming convention, or hold it whole.

    A table of one source *is* a table of another when it holds the other's columns as
    :mod:`~llama_index_pearl.joins.table_names` reads a copy (``COPY_SHARE`` of them, names read alike whatever
    their convention), under its name, or under another with ``COPY_COLUMNS`` at least; where the columns are not
    known, when their names match as a schema reads them (:func:`_forms`: case, separators and camelCase, plurals, a
    prefix most tables of a source carry). Two sources are twins when at least ``TWIN_OVERLAP`` of the smaller one's
    tables, ``TWIN_TABLES`` at least, are tables of the other: a copy under another naming convention, or a
    database that holds another's tables and more.

    >>> twin_sources({"shop": ["olist_orders", "olist_customers"], "store": ["Orders", "customers"], "zoo": ["animal"]})
    {'shop': ['store'], 'store': ['shop']}
    >>> twin_sources({"a": ["teamsHalf", "Teams", "Players"], "b": ["teams_half", "team", "player", "salary", "park"]})
    {'a': ['b'], 'b': ['a']}

    Args:
        names: Source -> its tables' names.
        columns: ``(source, table name)`` -> the table's column names (``None``: names alone).
    """
    forms = {source: dict(zip(_forms(list(tables)), tables)) for source, tables in names.items()}
    held = {
        source: {form: _column_set((columns or {}).get((source, table), ())) for form, table in tables.items()}
        for source, tables in forms.items()
    }
    twins: dict[str | None, list[str]] = {}
    for a in forms:
        for b in forms:
            small, large = (a, b) if len(forms[a]) <= len(forms[b]) else (b, a)
            if a == b or len(forms[small]) < TWIN_TABLES:
                continue
            shared = sum(_holds(held[large], form, held[small][form]) for form in forms[small])
            if shared >= TWIN_TABLES and shared >= TWIN_OVERLAP * len(forms[small]):
                twins.setdefault(a, []).append(b)  # type: ignore[arg-type]
    return twins


def _holds(tables: Mapping[str, frozenset[str]], form: str, columns: frozenset[str]) -> bool:
    """Whether a source holds a table: one of its name and its columns (a copy under another name), or of its
    name alone where the columns are not known; a table of the same name with other columns is another table
    (``customers`` of two companies)."""
    namesake = tables.get(form)
    if not columns or (namesake is not None and not namesake):
        return namesake is not None
    if namesake and _alike(columns, namesake):
        return True
    return len(columns) >= COPY_COLUMNS and any(
        len(columns & theirs) >= COPY_COLUMNS and _alike(columns, theirs) for theirs in tables.values()
    )


def _alike(mine: frozenset[str], theirs: frozenset[str]) -> bool:
    """Two tables' columns are one table's: ``COPY_SHARE`` of the wider one's in common."""
    return len(mine & theirs) >= COPY_SHARE * max(len(mine), len(theirs))


def _column_set(columns: Iterable[str]) -> frozenset[str]:
    """Column names read alike: ``CustomerID``, ``customer_id`` and ``customer id`` are one."""
    return frozenset("_".join(identifier_words(c)) for c in columns)


def _forms(tables: list[str]) -> list[str]:
    """Table names as a schema reads them: words of any convention (``InvoiceLine``, ``invoice_line``), lower
    case, singular, without a first word most of them share (``olist_orders`` is ``order``)."""
    words = [identifier_words(name) or (name.lower(),) for name in tables]
    first = Counter(w[0] for w in words if len(w) > 1)
    prefix = first.most_common(1)[0][0] if first else None
    shared = prefix is not None and first[prefix] >= 2 and first[prefix] * 2 >= len(tables)
    return [
        "_".join(singular(w) for w in (parts[1:] if shared and parts[0] == prefix and len(parts) > 1 else parts))
        for parts in words
    ]
