"""What a question names: groups of its words equal to a text cell of a table's rows ("Tamsin Cove", "classic
cars"), and tables whose whole name it spells ("in each country": ``country``); and the confidence they lend.

A question naming a value filters on the column holding it, and a question spelling a table's name asks for what
that table holds, so that table is at least may-be-needed, even where no other evidence is strong
(``benchmarks/README.md``, "A value the question names", "A table the question spells by its whole name"). Pure
functions over the question, each table's values (:mod:`~llama_index_pearl.corpus.values`) and the tables' names.

Pipeline step: answer (docs/architecture.md).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from functools import lru_cache
from itertools import pairwise

from llama_index_pearl.corpus.values import value_form
from llama_index_pearl.retrieval.answer.evidence import FUNCTION_WORDS, QUESTION_WORDS

__all__ = [
    "MAX_VALUE_WORDS",
    "asked_words",
    "named_floor",
    "own_name_words",
    "spelled_tables",
    "value_groups",
    "value_holders",
]

MAX_VALUE_WORDS = 5  # words of the longest value a question is read for ("classic cars", "new york city")


@lru_cache(maxsize=256)  # a question routed to a database and its close rivals is read once
def value_groups(question: str) -> frozenset[str]:
    """The groups of a question's words that may name a value (as :func:`~llama_index_pearl.corpus.values.value_form`
    writes values): up to ``MAX_VALUE_WORDS`` words, neither the first nor the last a question word, one at least
    neither a function nor a question word (values start with one: "On Hold", "The Beatles").

    >>> sorted(value_groups("Which orders are on hold?"))
    ['are on hold', 'hold', 'on hold', 'orders', 'orders are', 'orders are on', 'orders are on hold']

    Args:
        question: The question, as the user wrote it.
    """
    words = value_form(question).split()
    asking = [w in QUESTION_WORDS for w in words]
    content = [not asking[i] and w not in FUNCTION_WORDS for i, w in enumerate(words)]
    return frozenset(
        " ".join(words[i : i + n])
        for n in range(1, MAX_VALUE_WORDS + 1)
        for i in range(len(words) - n + 1)
        if not asking[i] and not asking[i + n - 1] and any(content[i : i + n])
    )


def value_holders(named: frozenset[str], values: Mapping[str, frozenset[str]]) -> frozenset[str]:
    """The tables whose rows hold a value the question names.

    >>> sorted(value_holders(frozenset({"tamsin cove", "hold"}), {"warehouses": frozenset({"tamsin cove"})}))
    ['warehouses']

    Args:
        named: The question's :func:`value_groups`.
        values: Table -> the values its rows hold.
    """
    return frozenset(table for table, held in values.items() if not named.isdisjoint(held))


def own_name_words(names: Mapping[str, frozenset[str]], sources: Mapping[str, str | None]) -> dict[str, frozenset[str]]:
    """Each table's name words less those every table of its source carries: an export writes its database's name
    before each table's (``sakila__country`` is ``country`` of sakila); a source of one table keeps its name whole.

    Only the words *every* table carries: a first word that most of a source's tables share is often part of their
    names (spider's ``car_makers`` and ``car_names``, ``TV_Channel`` and ``TV_series``, spider2_lite's ``pizza_*``),
    though twin detection may drop it (:func:`~llama_index_pearl.retrieval.answer.routing.twin_sources`, which
    matches names across sources, not to a question).

    >>> names = {"a": frozenset({"sakila", "country"}), "b": frozenset({"sakila", "city"}), "c": frozenset({"zoo"})}
    >>> own = own_name_words(names, {"a": "sakila", "b": "sakila", "c": "zoo"})
    >>> sorted(own["a"]), sorted(own["c"])
    (['country'], ['zoo'])

    Args:
        names: Table -> its name's words.
        sources: Table -> its source.
    """
    shared: dict[str | None, frozenset[str]] = {}
    count: Counter[str | None] = Counter()
    for table, words in names.items():
        source = sources.get(table)
        shared[source] = shared[source] & words if source in shared else words
        count[source] += 1
    return {t: w - shared[sources.get(t)] if count[sources.get(t)] > 1 else w for t, w in names.items()}


def spelled_tables(asked: frozenset[str], names: Mapping[str, frozenset[str]]) -> frozenset[str]:
    """The tables whose whole name the question spells: each word of the name (:func:`own_name_words`) is a word of
    the question.

    >>> sorted(spelled_tables(frozenset({"payment", "country"}), {"country": frozenset({"country"}),
    ...     "film_category": frozenset({"film", "category"})}))
    ['country']

    Args:
        asked: The question's words, as the tables' names are written (BM25 tokens).
        names: Table -> its own name's words.
    """
    return frozenset(table for table, words in names.items() if words and words <= asked)


def asked_words(tokens: Sequence[str]) -> frozenset[str]:
    """A question's words as a table's name may spell them: each token, and each two in a row run together (a
    schema that writes ``productlines`` or ``orderdetails`` names "product lines" and "order details").

    >>> sorted(asked_words(["product", "line", "sold"]))
    ['line', 'linesold', 'product', 'productline', 'sold']

    Args:
        tokens: The question's BM25 tokens, in order.
    """
    return frozenset([*tokens, *(a + b for a, b in pairwise(tokens))])


def named_floor(
    confidence: Mapping[str, float],
    named: frozenset[str],
    floor: float,
    sources: Mapping[str, str | None] | None = None,
    home: str | None = None,
) -> dict[str, float]:
    """Each candidate's confidence, at least ``floor`` where the question names the table (a value its rows hold,
    its whole name).

    >>> named_floor({"orders": 0.9, "warehouses": 0.03}, frozenset({"warehouses"}), 0.12)
    {'orders': 0.9, 'warehouses': 0.12}

    Args:
        confidence: Candidate -> its confidence.
        named: The tables the question names (:func:`value_holders`, :func:`spelled_tables`).
        floor: The confidence a named table gets at least (the may-be-needed bar).
        sources: Table -> its source.
        home: The source the question was routed to: only its tables are raised (another source's table comes in
            by a key, not by what the question names of it); ``None``: every table.
    """
    sources = sources or {}
    return {
        table: max(sure, floor) if table in named and (home is None or sources.get(table) == home) else sure
        for table, sure in confidence.items()
    }
