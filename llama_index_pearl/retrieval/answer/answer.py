"""The answer step: a question's set of tables, first among the tables of its ranking, as result nodes.

Reads a question's ranking (from its :class:`~llama_index_pearl.retrieval.search.search.TableSearch`), the words of the
question each table holds (:class:`QuestionWords`, off the BM25 matrix), the join graph and the tables' sources,
chooses the set (:func:`~llama_index_pearl.retrieval.answer.table_sets.choose_table_set`, pure), asks the search for
the scores of the set's tables that the ranking lacks (its bridges), and returns ``k`` tables (or the set and a
margin) as result nodes.

Pipeline step: retrieval (docs/architecture.md).
"""

from __future__ import annotations

import dataclasses
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import networkx as nx
import numpy as np
from llama_index.core.schema import NodeWithScore

from llama_index_pearl.corpus.columns import ColumnIndex
from llama_index_pearl.corpus.units import UnitKind
from llama_index_pearl.retrieval.answer.evidence import (
    MAX_DISTANCE,
    Candidate,
    Confidence,
    content_words,
    features,
    quoted_words,
    word_shares,
    word_weights,
)
from llama_index_pearl.retrieval.answer.result_nodes import ResultNodes
from llama_index_pearl.retrieval.answer.routing import (
    ROUTE_DEPTH,
    Route,
    Routing,
    preferred,
    route,
    source_evidence,
    twin_sources,
)
from llama_index_pearl.retrieval.answer.table_sets import SetRule, TableSet, choose_table_set, fit_whole, set_first
from llama_index_pearl.retrieval.search.lexical import text_tokens
from llama_index_pearl.retrieval.search.pooling import PooledTable
from llama_index_pearl.retrieval.search.scope import Scope, Scopes
from llama_index_pearl.retrieval.search.search import Ranked, Request, SearchSpace, TableSearch
from llama_index_pearl.text.serialization import table_name_in_text

__all__ = ["QuestionEvidence", "QuestionWords", "SetAnswer"]

_WORD_KINDS = frozenset({UnitKind.ORIGINAL.value, UnitKind.SCHEMA.value})


class QuestionWords:
    """The words of a question each table holds, read off the BM25 matrix of the tables' whole-table units.

    Args:
        space: The revision's units, tables and BM25.
        table_text: A table's text for an LLM (its name is read from it, once per table).
    """

    def __init__(self, space: SearchSpace, table_text: Callable[[str], str]) -> None:
        self._space = space
        self._table_text = table_text
        memberships = space.memberships
        # the table whose words a unit holds: a whole table's unit (its name, headers and rows), else none (-1)
        counts = np.diff(memberships.unit_ptr)
        whole = np.fromiter((info.kind in _WORD_KINDS for info in space.units.values()), dtype=bool, count=len(counts))
        single = (counts == 1) & whole
        self._words_of = np.full(len(counts), -1, dtype=np.int64)
        self._words_of[single] = memberships.unit_tables[memberships.unit_ptr[:-1][single]]
        self._names: list[frozenset[str]] | None = None
        self._lock = threading.Lock()

    def of(self, question: str, scope: Scope | None = None) -> tuple[dict[str, frozenset[str]], dict[str, float]]:
        """The question's words each table holds (in its name, headers or rows), and each word's weight.

        A word is held by a table when its whole-table unit (``original``, ``schema``) holds the token; a word that
        names tables (their name holds it) is held by those tables only, not by the tables whose key columns name
        them (`concert.stadium_id`). Weights: :func:`~llama_index_pearl.retrieval.answer.evidence.word_weights`.

        Args:
            question: The question.
            scope: Only its tables hold words, and a word's weight is its idf over them.
        """
        space = self._space
        index = space.lexical().index
        names = self._table_name_words()
        inside = scope.inside if scope is not None else None
        held: dict[int, set[str]] = {}
        holders: dict[str, int] = {}
        for word in set(text_tokens(question)):
            postings = index.postings(word)
            if postings is None:
                continue
            tables = self._words_of[postings[0]]
            tables = np.unique(tables[tables >= 0])
            if inside is not None:
                tables = tables[inside[tables]]
            named = [t for t in tables.tolist() if word in names[t]]
            if named:  # a word naming a table is that table's, not the tables whose key columns name it
                tables = np.asarray(named, dtype=np.int64)
            holders[word] = len(tables)
            for table in tables.tolist():
                held.setdefault(table, set()).add(word)
        words = {space.table_ids[t]: frozenset(ws) for t, ws in held.items()}
        return words, word_weights(holders, len(scope.tables) if scope is not None else len(space.table_ids))

    def _table_name_words(self) -> list[frozenset[str]]:
        """Each table's name as words (read from its catalog text once, by table number)."""
        with self._lock:
            if self._names is None:
                texts = (self._table_text(t) for t in self._space.table_ids)
                self._names = [frozenset(text_tokens(table_name_in_text(x) or "")) for x in texts]
            return self._names


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
        search: The revision's search (it scores the set's tables that a ranking lacks, and tables' own units).
        words: The question's words each table holds.
        nodes: The result nodes of the revision (texts, join hints, the join graph).
        sources: Table -> its source (provenance).
        columns: The column vectors of the revision's tables.
        scopes: The revision's scopes (a routed question is answered within its source's).
        preferred_sources: Sources a question routed to one of their copies is answered within
            (``PearlConfig.preferred_sources``).
    """

    def __init__(
        self,
        search: TableSearch,
        words: QuestionWords,
        nodes: ResultNodes,
        sources: Mapping[str, str | None],
        columns: ColumnIndex | None = None,
        scopes: Scopes | None = None,
        preferred_sources: Sequence[str] = (),
    ) -> None:
        self.search = search
        self.words = words
        self.nodes = nodes
        self.sources = sources
        self.columns = columns if columns is not None else ColumnIndex()
        self.scopes = scopes
        self.preferred_sources = tuple(preferred_sources)
        self._sizes = Counter(sources.values())  # each source's tables, for routing
        self.routing = Routing()
        self._twins: dict[str | None, list[str]] | None = None
        self._lock = threading.Lock()

    def result(self, ranked: Ranked, request: Request, hints_in_text: bool) -> list[NodeWithScore]:
        """The result nodes of a question (:class:`~llama_index_pearl.retrieval.retriever.PearlRetriever`).

        Args:
            ranked: The question's ranking.
            request: What the retriever asks.
            hints_in_text: Append join hints to the node texts.
        """
        tables, table_set = self.tables(ranked, request)
        return self.nodes.nodes(tables, self.search.space.units, hints_in_text, table_set)

    def tables(self, ranked: Ranked, request: Request) -> tuple[list[PooledTable], TableSet]:
        """The tables to return: the connected set first, then the other tables of the ranking.

        ``request.k`` tables, the set first (cut at ``k`` when larger); with ``request.margin``, the whole set and
        that many other tables (at most ``k`` unless the set is larger). Without ``request.rule``, the ranking as
        pooled. A set's table outside the ranking is scored by the search; where it cannot (``None``), it scores
        as the ranking's last table, no unit named.

        Args:
            ranked: The question's ranking, at least ``request.rule.depth`` tables deep where the index holds them
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
        if request.margin is None:  # k tables, as any LlamaIndex retriever returns: a larger set is cut, least sure go
            return [known[t] for t in fit_whole(order, table_set, k)], table_set
        count = max(size, min(k, size + request.margin))  # the whole set and ``margin`` more
        return [known[t] for t in order[:count]], table_set

    def table_set(self, ranked: Ranked, rule: SetRule, scope: Scope | None) -> TableSet:
        """The set of a question: each candidate's confidence from its evidence, the set read off them.

        Args:
            ranked: The question's ranking.
            rule: How the set is chosen.
            scope: The tables in reach (``None``: every table).
        """
        chosen = self.route(ranked, scope)
        if chosen is None:
            return self._chosen(ranked, rule, scope)
        if self.preferred_sources:
            chosen = preferred(chosen, self.twins(), self.preferred_sources)
        alternatives = tuple(
            self._alternative(ranked, rule, scope, Route(rival, sure))
            for rival, sure in zip(chosen.rivals, chosen.rival_confidences)
        )
        within, inside = self.within(ranked, rule, chosen, scope)
        table_set = self._chosen(within, rule, inside)
        hedges = tuple(dict.fromkeys(t for a in alternatives for t in a.needed if t not in table_set))
        confidence = {**{t: a.confidence[t] for a in alternatives for t in a.needed}, **table_set.confidence}
        return dataclasses.replace(
            table_set, confidence=confidence, route=chosen, hedges=hedges, alternatives=alternatives
        )

    def _chosen(self, ranked: Ranked, rule: SetRule, scope: Scope | None) -> TableSet:
        """The set read off each candidate's confidence, within ``scope``."""
        evidence = self.evidence(ranked, rule, scope)
        model = rule.confidence if evidence.columns else Confidence.without_columns()
        confidence = dict(zip(evidence.tables, model.probabilities(evidence.features).tolist()))
        pairs = [(t.table_id, t.score) for t in ranked.tables]
        return choose_table_set(pairs, confidence, evidence.seed, evidence.graph, rule, self.sources)

    def _alternative(self, ranked: Ranked, rule: SetRule, scope: Scope | None, rival: Route) -> TableSet:
        """The set within a close rival database: the question may mean it, as surely as ``rival.confidence``
        (each confidence is times that)."""
        within, inside = self.within(ranked, rule, rival, scope)
        alternative = self._chosen(within, rule, inside)
        confidence = {t: c * rival.confidence for t, c in alternative.confidence.items()}
        return dataclasses.replace(alternative, confidence=confidence, route=rival)

    def route(self, ranked: Ranked, scope: Scope | None) -> Route | None:
        """The source a question is answered within (:mod:`~llama_index_pearl.retrieval.answer.routing`); ``None`` where
        the ranking holds one source only.

        Args:
            ranked: The question's ranking, ``ROUTE_DEPTH`` tables deep.
            scope: The retrieval's own scope.
        """
        first = ranked.tables[:ROUTE_DEPTH]
        if self.scopes is None or len({self.sources.get(t.table_id) for t in first}) < 2:
            return None
        words, weights = self.words.of(ranked.question.text, scope)
        ids = [t.table_id for t in first]
        per_word: dict[str, list[float]] = {}
        vectors = ranked.question.word_vectors
        if vectors is not None and len(vectors) and len(self.columns.vectors) and self.columns.dimension:
            matrix = self.columns.best_columns(ids, vectors)
            per_word = {t: matrix[:, i].tolist() for i, t in enumerate(ids)}
        pairs = [(t.table_id, t.score) for t in first]
        sizes = Counter(self.sources.get(t) for t in scope.tables) if scope is not None else self._sizes
        evidence = source_evidence(pairs, self.sources, words, weights, per_word, sizes)
        return route(evidence, self.routing, self.twins())

    def within(self, ranked: Ranked, rule: SetRule, chosen: Route, scope: Scope | None) -> tuple[Ranked, Scope]:
        """The question's ranking within the scope of the source it is routed to (within the retrieval's own
        ``scope``), and that scope."""
        assert self.scopes is not None
        scope = self.scopes.of_source(chosen.source, scope)
        within = self.search.rank_within(ranked, scope, max(rule.depth, len(ranked.tables)))
        if within is None:
            within = dataclasses.replace(ranked, tables=[t for t in ranked.tables if t.table_id in scope.tables])
        return within, scope

    def twins(self) -> dict[str | None, list[str]]:
        """Each source's twins (copies of its schema), read once from the tables' names and columns."""
        with self._lock:
            if self._twins is None:
                names: dict[str | None, list[str]] = {}
                columns: dict[tuple[str | None, str], list[str]] = {}
                held = self.columns
                for table in self.search.space.table_ids:
                    name, source = table_name_in_text(self.nodes.text(table)) or table, self.sources.get(table)
                    names.setdefault(source, []).append(name)
                    columns[(source, name)] = [held.columns[i] for i in held.rows_of(table)]
                self._twins = twin_sources(names, columns)
            return self._twins

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
        return QuestionEvidence(
            tables=[c.table_id for c in candidates],
            features=features(candidates, shares, distances, degrees, reach, len(content_words(ranked.question.text))),
            seed=seed_id,
            graph=graph,
            columns=candidates[0].column is not None,
        )

    def candidates(self, ranked: Ranked, depth: int) -> list[Candidate]:
        """The evidence of the ranking's first ``depth`` tables: scores, own units, columns, the words' columns."""
        first = ranked.tables[:depth]
        ids = [t.table_id for t in first]
        own = self.search.own_scores(ranked, ids)
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

    def _scored(self, ranked: Ranked, missing: Sequence[str]) -> list[PooledTable]:
        extra = self.search.score(ranked, missing)
        if extra is not None:
            return extra
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
