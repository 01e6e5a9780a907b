"""The answer step: a question's set of tables, first among the tables of its ranking, as result nodes.

Reads a question's ranking (from its :class:`~llama_index_pearl.retrieval.search.search.TableSearch`), the words of the
question each table holds (:class:`~llama_index_pearl.retrieval.answer.words.QuestionWords`, off the BM25 matrix),
the join graph and the tables' sources; routes a question of a lake
(:class:`~llama_index_pearl.retrieval.answer.router.Router`); chooses the set
(:func:`~llama_index_pearl.retrieval.answer.table_sets.choose_table_set`, pure); scores the set's tables that the
ranking lacks (its bridges) where the search can
(:class:`~llama_index_pearl.retrieval.search.search.ScopedScoring`); and returns ``k`` tables (or the set and a
margin) as result nodes. What it is asked is an :class:`AnswerRequest`; how deep the ranking must be for it, the
search request's depth, it says itself (:meth:`SetAnswer.depth`).

Pipeline step: answer (docs/architecture.md).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import networkx as nx
import numpy as np
from llama_index.core.schema import NodeWithScore

from llama_index_pearl.corpus.columns import ColumnIndex
from llama_index_pearl.corpus.lexical import text_tokens
from llama_index_pearl.joins.graph import key_references
from llama_index_pearl.retrieval.answer.evidence import (
    MAX_DISTANCE,
    Candidate,
    Confidence,
    content_words,
    features,
    quoted_words,
    word_shares,
)
from llama_index_pearl.retrieval.answer.lookups import (
    asks_to_count,
    date_share,
    holds_names,
    names_a_period,
    with_dates,
    with_lookups,
    with_roles,
)
from llama_index_pearl.retrieval.answer.named_values import (
    asked_words,
    named_floor,
    spelled_tables,
    value_groups,
    value_holders,
)
from llama_index_pearl.retrieval.answer.result_nodes import ResultNodes
from llama_index_pearl.retrieval.answer.router import Router
from llama_index_pearl.retrieval.answer.routing import Route, rank_confidence
from llama_index_pearl.retrieval.answer.table_sets import SetRule, TableSet, choose_table_set, fit_whole, set_first
from llama_index_pearl.retrieval.answer.words import QuestionWords
from llama_index_pearl.retrieval.search.pooling import PooledTable
from llama_index_pearl.retrieval.search.scope import Scope
from llama_index_pearl.retrieval.search.search import Ranked, ScopedScoring, TableSearch

__all__ = ["AnswerRequest", "QuestionEvidence", "SetAnswer"]


@dataclass(frozen=True)
class AnswerRequest:
    """What a retriever asks of a revision's answer, for each of its questions.

    Args:
        k: Tables returned.
        rule: How the set is chosen (``None``: the ranking as pooled).
        margin: Return the whole set and this many other tables (``None``: ``k`` tables).
        scope: The tables the retrieval may return (``None``: every table).
    """

    k: int
    rule: SetRule | None
    margin: int | None
    scope: Scope | None


@dataclass(frozen=True)
class QuestionEvidence:
    """What a question's candidates show (:func:`~llama_index_pearl.retrieval.answer.evidence.features`).

    Args:
        tables: The candidates, best score first.
        features: Their feature matrix, a row each.
        seed: The set's first table.
        graph: The join graph in reach.
        columns: Whether column evidence is in the features (the index has column vectors).
    """

    tables: list[str]
    features: np.ndarray
    seed: str
    graph: nx.Graph
    columns: bool


class SetAnswer:
    """The answer step of one revision: each question's set first, then the rest of its ranking, as result nodes.

    Args:
        search: The revision's search (with :class:`ScopedScoring`, it scores the set's tables that a ranking lacks,
            and tables' own units).
        words: The question's words each table holds.
        nodes: The result nodes of the revision (texts, join hints, the join graph).
        sources: Table -> its source (provenance).
        router: The routing of a lake's questions.
        columns: The column vectors of the revision's tables.
        values: Table -> the text values its rows hold (:mod:`~llama_index_pearl.corpus.values`): a table holding a
            value the question names is at least may-be-needed.
    """

    def __init__(
        self,
        search: TableSearch,
        words: QuestionWords,
        nodes: ResultNodes,
        sources: Mapping[str, str | None],
        router: Router,
        columns: ColumnIndex | None = None,
        values: Mapping[str, frozenset[str]] | None = None,
    ) -> None:
        self.search = search
        self.scoring = search if isinstance(search, ScopedScoring) else None
        self.words = words
        self.nodes = nodes
        self.sources = sources
        self.router = router
        self.columns = columns if columns is not None else ColumnIndex()
        self.values = values if values is not None else {}

    def depth(self, request: AnswerRequest) -> int:
        """Tables of the ranking the answer reads: ``k``, or as deep as the set rule and the routing read.

        Args:
            request: What the retriever asks.
        """
        if request.rule is None:
            return request.k
        return max(request.k, request.rule.depth, self.router.depth(request.scope))

    def result(self, ranked: Ranked, request: AnswerRequest, hints_in_text: bool) -> list[NodeWithScore]:
        """The result nodes of a question (:class:`~llama_index_pearl.retrieval.retriever.PearlRetriever`).

        Args:
            ranked: The question's ranking.
            request: What the retriever asks.
            hints_in_text: Append join hints to the node texts.
        """
        tables, table_set = self.tables(ranked, request)
        return self.nodes.nodes(tables, self.search.space.units, hints_in_text, table_set)

    def tables(self, ranked: Ranked, request: AnswerRequest) -> tuple[list[PooledTable], TableSet]:
        """The tables to return: the connected set first, then the other tables of the ranking.

        ``request.k`` tables, the set first (cut at ``k`` when larger); with ``request.margin``, the whole set and
        that many other tables (at most ``k`` unless the set is larger). Without ``request.rule``, the ranking as
        pooled. A set's table outside the ranking is scored by the search; where it cannot (no
        :class:`ScopedScoring`), it scores as the ranking's last table, no unit named.

        Args:
            ranked: The question's ranking, :meth:`depth` tables deep where the index holds them
                (within ``request.scope``).
            request: What the retriever asks.
        """
        k, rule, pooled = request.k, request.rule, ranked.tables
        if rule is None or not pooled:
            return list(pooled[:k]), TableSet((), {})
        table_set = self.table_set(ranked, rule, request.scope)
        known = {t.table_id: t for t in pooled}
        missing = [t for t in (*table_set.tables, *table_set.hedges) if t not in known]
        if missing:
            known.update((t.table_id, t) for t in self._scored(ranked, missing))
        size = len(table_set.tables)
        order = set_first((t.table_id for t in pooled), table_set)
        if request.margin is None:  # k tables, as any LlamaIndex retriever returns: a larger set loses its last tables
            return [known[t] for t in fit_whole(order, table_set, k)], table_set
        count = max(size, min(k, size + request.margin))  # the whole set and ``margin`` more
        return [known[t] for t in order[:count]], table_set

    def table_set(self, ranked: Ranked, rule: SetRule, scope: Scope | None) -> TableSet:
        """The set of a question: each candidate's confidence from its evidence, the set read off them (within the
        source the question is routed to, in a lake).

        Args:
            ranked: The question's ranking.
            rule: How the set is chosen.
            scope: The tables in reach (``None``: every table).
        """
        chosen = self.router.route(ranked, scope)
        ids = [t.table_id for t in ranked.tables]
        if chosen is None:
            meant = {self.sources.get(ids[0]): 1.0} if ids else {}  # its first tables hold one source
            table_set = self._chosen(ranked, rule, scope)
            return dataclasses.replace(table_set, other_confidence=rank_confidence(ids, self.sources, meant))
        alternatives = tuple(
            self._answer_within(ranked, rule, scope, Route(rival, sure))
            for rival, sure in zip(chosen.rivals, chosen.rival_confidences)
        )
        table_set = self._answer_within(ranked, rule, scope, chosen)
        hedges = tuple(dict.fromkeys(t for a in alternatives for t in a.needed if t not in table_set))
        confidence = {**{t: a.confidence[t] for a in alternatives for t in a.needed}, **table_set.confidence}
        other = rank_confidence(ids, self.sources, dict(chosen.probabilities))
        other.update((t, c) for a in alternatives for t, c in a.confidence.items())
        return dataclasses.replace(
            table_set,
            confidence=confidence,
            route=chosen,
            hedges=hedges,
            alternatives=alternatives,
            other_confidence=other,
        )

    def _chosen(self, ranked: Ranked, rule: SetRule, scope: Scope | None, home: str | None = None) -> TableSet:
        """The set read off each candidate's confidence, within ``scope`` (routed to ``home``: only its tables are
        raised for what the question names of them; another source's table comes in by a key, not by a name)."""
        evidence = self.evidence(ranked, rule, scope)
        model = rule.confidence if evidence.columns else Confidence.without_columns()
        confidence = dict(zip(evidence.tables, model.probabilities(evidence.features).tolist()))
        asked = self._asked(ranked)
        named = self._tables_named(ranked, asked, evidence.tables)
        confidence = named_floor(confidence, named, rule.maybe, self.sources, home)
        pairs = [(t.table_id, t.score) for t in ranked.tables]
        chosen = choose_table_set(pairs, confidence, evidence.seed, evidence.graph, rule, self.sources)
        chosen = with_roles(chosen, evidence.graph, asked, self.words.own_name_words())
        if names_a_period(ranked.question.as_asked):
            chosen = with_dates(chosen, evidence.graph, functools.partial(_date_share, self.columns, evidence.graph))
        if asks_to_count(ranked.question.as_asked):
            return chosen
        return with_lookups(chosen, evidence.graph, _Named(self.columns, self._name_words))

    def _answer_within(self, ranked: Ranked, rule: SetRule, scope: Scope | None, route: Route) -> TableSet:
        """The set within a source the question may mean (the chosen one or a close rival), as surely as
        ``route.confidence``: a table is needed only if the question means its source, so each confidence is the
        table's within the source times that (the tiers are read within the source)."""
        within, inside = self._within(ranked, rule, route, scope)
        answer = self._chosen(within, rule, inside, route.source)
        confidence = {t: c * route.confidence for t, c in answer.confidence.items()}
        return dataclasses.replace(answer, confidence=confidence, route=route)

    def _within(self, ranked: Ranked, rule: SetRule, chosen: Route, scope: Scope | None) -> tuple[Ranked, Scope]:
        """The question's ranking within the routed source, as deep as the set reads or the ranking goes."""
        return self.router.within(ranked, max(rule.depth, len(ranked.tables)), chosen, scope)

    def evidence(self, ranked: Ranked, rule: SetRule, scope: Scope | None) -> QuestionEvidence:
        """The evidence of a question's candidates (what :meth:`table_set` reads; ``benchmarks/table_sets.py`` fits
        the confidence on it).

        Args:
            ranked: The question's ranking.
            rule: How the set is chosen (its depth and the seed's coverage).
            scope: The tables in reach (``None``: every table).
        """
        words, weights = self.words.of(ranked.question.text, scope)
        graph = scope.graph if scope is not None else self.nodes.graph
        candidates = self.candidates(ranked, rule.depth)
        shares = word_shares(candidates, words, weights, quoted_words(ranked.question.text))
        seed = max(range(len(candidates)), key=lambda i: (candidates[i].score + rule.coverage * shares[i][0], -i))
        seed_id = candidates[seed].table_id
        distances = _distances(graph, seed_id, {c.table_id for c in candidates})
        degrees = {c.table_id: graph.degree(c.table_id) for c in candidates if c.table_id in graph}
        reach = len(scope.tables) if scope is not None else len(self.search.space.table_ids)
        asked = len(content_words(ranked.question.text))
        return QuestionEvidence(
            tables=[c.table_id for c in candidates],
            features=features(candidates, shares, distances, degrees, reach, asked, seed_id),
            seed=seed_id,
            graph=graph,
            columns=candidates[0].column is not None,
        )

    def candidates(self, ranked: Ranked, depth: int) -> list[Candidate]:
        """The evidence of the ranking's first ``depth`` tables: scores, own units, columns, the words' columns."""
        first = ranked.tables[:depth]
        ids = [t.table_id for t in first]
        own = self.scoring.own_scores(ranked, ids) if self.scoring is not None else None
        units = self.search.space.units
        column = word_columns = None
        if len(self.columns.vectors) and self.columns.dimension:
            question = ranked.question
            column = self.columns.best_columns(ids, np.asarray([question.embedding], dtype=np.float32))[0]
            if question.word_vectors is not None and len(question.word_vectors):
                word_columns = self.columns.best_columns(ids, question.word_vectors)
        out = []
        for i, table in enumerate(first):
            info = units.get(table.unit_id)
            out.append(
                Candidate(
                    table.table_id,
                    table.score,
                    own.get(table.table_id) if own is not None else table.score,
                    len(info.table_ids) if info is not None and info.table_ids else 1,
                    float(column[i]) if column is not None else None,
                    tuple(word_columns[:, i].tolist()) if word_columns is not None else (),
                )
            )
        return out

    @functools.cached_property
    def _name_words(self) -> dict[str, frozenset[str]]:
        """Each table's name as words, by table id (read once: a revision's tables never change)."""
        return dict(zip(self.search.space.table_ids, self.words.table_name_words()))

    def _asked(self, ranked: Ranked) -> frozenset[str]:
        """The question's words as the tables' names are written: its tokens as the index reads them, and each two
        in a row run together."""
        text = ranked.question.text
        return frozenset(self.search.space.lexical().index.question_tokens(text)) | asked_words(text_tokens(text))

    def _tables_named(self, ranked: Ranked, asked: frozenset[str], tables: Sequence[str]) -> frozenset[str]:
        """The candidates the question names: by a value their rows hold, or by their whole name (``asked``)."""
        question = ranked.question
        own = self.words.own_name_words()
        named = spelled_tables(asked, {t: own.get(t, frozenset()) for t in tables})
        if not self.values:
            return named
        held = {t: self.values[t] for t in tables if t in self.values}
        return named | value_holders(value_groups(question.as_asked), held)

    def _scored(self, ranked: Ranked, missing: Sequence[str]) -> list[PooledTable]:
        if self.scoring is not None:
            return self.scoring.score(ranked, missing)
        last = ranked.tables[-1]
        return [PooledTable(t, last.score, "", last.cosine) for t in missing]  # no unit of its own known


def _distances(graph: nx.Graph, seed: str, wanted: set[str]) -> dict[str, int]:
    """Joins from the seed to each wanted table, breadth first, until all are reached (a lake's hubs join
    thousands of tables: the walk stops at the wanted tables, at most ``MAX_DISTANCE`` joins out)."""
    if seed not in graph:
        return {}
    seen = {seed: 0}
    frontier = [seed]
    left = wanted - {seed}
    for depth in range(1, MAX_DISTANCE + 1):
        if not left or not frontier:
            break
        reached = [n for table in frontier for n in graph.neighbors(table) if n not in seen]
        frontier = list(dict.fromkeys(reached))
        for table in frontier:
            seen[table] = depth
        left.difference_update(frontier)
    return {t: d for t, d in seen.items() if t in wanted}


class _Named:
    """The tables that hold a name (:func:`~llama_index_pearl.retrieval.answer.lookups.holds_names`), read off the
    column index's names and the tables' name words when asked."""

    def __init__(self, columns: ColumnIndex, name_words: Mapping[str, frozenset[str]]) -> None:
        self._columns, self._name_words = columns, name_words

    def __contains__(self, table_id: object) -> bool:
        if not isinstance(table_id, str):
            return False
        names = self._columns.columns
        columns = (names[row] for row in self._columns.rows_of(table_id))
        return holds_names(columns, self._name_words.get(table_id, frozenset()))


def _date_share(columns: ColumnIndex, graph: nx.Graph, table: str) -> float:
    """The share of a table's columns that hold a date
    (:func:`~llama_index_pearl.retrieval.answer.lookups.date_share`), less the keys by which it references another
    table: ``OrderDateKey`` is the date dimension's date."""
    keys = {c for join in (key_references(graph, table) if table in graph else ()) for c, _ in join.column_pairs}
    names = (columns.columns[row] for row in columns.rows_of(table))
    return date_share([c for c in names if c not in keys])
