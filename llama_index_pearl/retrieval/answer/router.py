"""Routing a question of a lake, in one place: whether it is routed, to which source, and its ranking there.

A retrieval whose reach holds tables of two sources or more reads its ranking ``ROUTE_DEPTH`` tables deep
(:meth:`Router.depth`, which the answer's depth and so the search request read); a question is routed when the
first ``ROUTE_DEPTH`` tables of its ranking hold two sources (:meth:`Router.route`, the one place that decides it).
The source is chosen by the conditional logit of :mod:`~llama_index_pearl.retrieval.answer.routing` (pure), a
preferred source taking the place of its twin (``PearlConfig.preferred_sources``), and the question's ranking is
scored within that source's scope (:meth:`Router.within`), by the search where it has
:class:`~llama_index_pearl.retrieval.search.search.ScopedScoring`.

Pipeline step: answer (docs/architecture.md).
"""

from __future__ import annotations

import dataclasses
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from llama_index_pearl.corpus.columns import ColumnIndex
from llama_index_pearl.retrieval.answer.routing import (
    ROUTE_DEPTH,
    Route,
    Routing,
    preferred,
    route,
    source_evidence,
    twin_sources,
)
from llama_index_pearl.retrieval.answer.words import QuestionWords
from llama_index_pearl.retrieval.search.scope import Scope, Scopes
from llama_index_pearl.retrieval.search.search import Ranked, ScopedScoring
from llama_index_pearl.text.serialization import table_name_in_text

__all__ = ["Router", "source_names"]


class Router:
    """The routing of one revision's questions (see the module docstring).

    Args:
        scopes: The revision's scopes (a routed question is answered within its source's).
        sources: Table -> its source (provenance).
        table_ids: Every table, in the index's order.
        words: The question's words each table holds.
        columns: The column vectors of the revision's tables (``None``: none).
        table_text: A table's text for an LLM (its name is read from it, for the twins).
        scoring: The search's scoring of given tables (``None``: it has none, and a scope's ranking is the
            ranking kept to its tables).
        preferred_sources: Sources a question routed to one of their copies is answered within
            (``PearlConfig.preferred_sources``).
    """

    def __init__(
        self,
        scopes: Scopes,
        sources: Mapping[str, str | None],
        table_ids: Sequence[str],
        words: QuestionWords,
        columns: ColumnIndex | None,
        table_text: Callable[[str], str],
        scoring: ScopedScoring | None = None,
        preferred_sources: Sequence[str] = (),
    ) -> None:
        self.scopes = scopes
        self.sources = sources
        self.table_ids = list(table_ids)
        self.words = words
        self.columns = columns if columns is not None else ColumnIndex()
        self.table_text = table_text
        self.scoring = scoring
        self.preferred_sources = tuple(preferred_sources)
        self.routing = Routing()
        self._sizes = Counter(sources.values())  # each source's tables
        self._sources_in_index = len({sources.get(t) for t in self.table_ids})
        self._twins: dict[str | None, list[str]] | None = None
        self._lock = threading.Lock()

    def depth(self, scope: Scope | None) -> int:
        """Tables of a ranking the routing reads: ``ROUTE_DEPTH`` where the reach holds tables of two sources or
        more, else ``0`` (no question in it is routed).

        Args:
            scope: The retrieval's scope (``None``: every table).
        """
        return ROUTE_DEPTH if (scope.sources if scope is not None else self._sources_in_index) > 1 else 0

    def route(self, ranked: Ranked, scope: Scope | None) -> Route | None:
        """The source a question is answered within (a preferred source for its twin); ``None`` where the question
        is not routed: the first ``ROUTE_DEPTH`` tables of its ranking hold one source.

        Args:
            ranked: The question's ranking, :meth:`depth` tables deep.
            scope: The retrieval's own scope.
        """
        first = ranked.tables[:ROUTE_DEPTH]
        if len({self.sources.get(t.table_id) for t in first}) < 2:
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
        chosen = route(evidence, self.routing, self.twins())
        return preferred(chosen, self.twins(), self.preferred_sources) if self.preferred_sources else chosen

    def within(self, ranked: Ranked, k: int, chosen: Route, scope: Scope | None) -> tuple[Ranked, Scope]:
        """The question's ranking within the scope of the source it is routed to (within the retrieval's own
        ``scope``), ``k`` tables at most, and that scope."""
        scope = self.scopes.of_source(chosen.source, scope)
        if self.scoring is not None:
            return self.scoring.rank_within(ranked, scope, k), scope
        return dataclasses.replace(ranked, tables=[t for t in ranked.tables if t.table_id in scope.tables]), scope

    def twins(self) -> dict[str | None, list[str]]:
        """Each source's twins (copies of its schema), read once from the tables' names and columns."""
        with self._lock:
            if self._twins is None:
                names: dict[str | None, list[str]] = {}
                columns: dict[tuple[str | None, str], list[str]] = {}
                held = self.columns
                for table in self.table_ids:
                    name, source = table_name_in_text(self.table_text(table)) or table, self.sources.get(table)
                    names.setdefault(source, []).append(name)
                    columns[(source, name)] = [held.columns[i] for i in held.rows_of(table)]
                self._twins = twin_sources(names, columns)
            return self._twins


def source_names(given: str | None) -> tuple[str, ...]:
    """The sources a comma-separated setting names, in its order (``None``: none).

    >>> source_names("crm, billing")
    ('crm', 'billing')
    """
    return tuple(part.strip() for part in (given or "").split(",") if part.strip())
