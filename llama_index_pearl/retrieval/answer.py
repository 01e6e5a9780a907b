"""The answer step: a question's set of tables, first among the tables of its ranking, as result nodes.

Reads a question's ranking (from its :class:`~llama_index_pearl.retrieval.search.TableSearch`), the words of the
question each table holds (:class:`QuestionWords`, off the BM25 matrix), the join graph and the tables' sources,
chooses the set (:func:`~llama_index_pearl.retrieval.table_sets.choose_table_set`, pure), asks the search for
the scores of the set's tables that the ranking lacks (its bridges), and returns ``k`` tables (or the set and a
margin) as result nodes.

Pipeline step: retrieval (docs/architecture.md).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence

import numpy as np
from llama_index.core.schema import NodeWithScore

from llama_index_pearl.corpus.units import UnitKind
from llama_index_pearl.retrieval.lexical import text_tokens
from llama_index_pearl.retrieval.pooling import PooledTable
from llama_index_pearl.retrieval.result_nodes import ResultNodes
from llama_index_pearl.retrieval.scope import Scope
from llama_index_pearl.retrieval.search import Ranked, Request, SearchSpace, TableSearch
from llama_index_pearl.retrieval.table_sets import TableSet, choose_table_set, set_first, word_weights
from llama_index_pearl.text.serialization import table_name_in_text

__all__ = ["QuestionWords", "SetAnswer"]

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
        them (`concert.stadium_id`). Weights: :func:`~llama_index_pearl.retrieval.table_sets.word_weights`.

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


class SetAnswer:
    """The answer step of one revision: each question's set first, then the rest of its ranking, as result nodes.

    Args:
        search: The revision's search (it scores the set's tables that a ranking lacks).
        words: The question's words each table holds.
        nodes: The result nodes of the revision (texts, join hints, the join graph).
        sources: Table -> its source (provenance).
    """

    def __init__(
        self, search: TableSearch, words: QuestionWords, nodes: ResultNodes, sources: Mapping[str, str | None]
    ) -> None:
        self.search = search
        self.words = words
        self.nodes = nodes
        self.sources = sources

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
        k, rule, scope, pooled = request.k, request.rule, request.scope, ranked.tables
        if rule is None or not pooled:
            return list(pooled[:k]), TableSet((), {})
        words, weights = self.words.of(ranked.question.text, scope)
        graph = scope.graph if scope is not None else self.nodes.graph
        pairs = [(t.table_id, t.score) for t in pooled]
        table_set = choose_table_set(pairs, words, weights, graph, rule, self.sources)
        known = {t.table_id: t for t in pooled}
        missing = [t for t in table_set.tables if t not in known]
        if missing:
            known.update((t.table_id, t) for t in self._scored(ranked, missing))
        size = len(table_set.tables)
        if request.margin is None:  # k tables, as any LlamaIndex retriever returns: a larger set is cut, least sure go
            table_set, count = table_set.cut(k), k
        else:  # the whole set and ``margin`` more, at most k unless the set is larger
            count = max(size, min(k, size + request.margin))
        order = set_first((t.table_id for t in pooled), table_set)
        return [known[t] for t in order[:count]], table_set

    def _scored(self, ranked: Ranked, missing: Sequence[str]) -> list[PooledTable]:
        extra = self.search.score(ranked, missing)
        if extra is not None:
            return extra
        last = ranked.tables[-1]
        return [PooledTable(t, last.score, "", last.cosine) for t in missing]  # no unit of its own known
