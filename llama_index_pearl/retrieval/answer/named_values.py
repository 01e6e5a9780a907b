"""The values a question names: groups of its words equal to a text cell of a table's rows ("Tamsin Cove",
"classic cars"), and the confidence they lend the table holding one.

A question naming a value filters on the column holding it, so that table is at least may-be-needed, even where no
word of the question names it (``benchmarks/README.md``, "A value the question names"). Pure functions over the
question and each table's values (:mod:`~llama_index_pearl.corpus.values`).

Pipeline step: answer (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from llama_index_pearl.corpus.values import value_form
from llama_index_pearl.retrieval.answer.evidence import FUNCTION_WORDS, QUESTION_WORDS

__all__ = ["MAX_VALUE_WORDS", "value_floor", "value_groups"]

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


def value_floor(
    confidence: Mapping[str, float],
    named: frozenset[str],
    values: Mapping[str, frozenset[str]],
    floor: float,
    sources: Mapping[str, str | None] | None = None,
    home: str | None = None,
) -> dict[str, float]:
    """Each candidate's confidence, at least ``floor`` where its rows hold a value the question names: a question
    naming a value filters on the column holding it.

    >>> held = {"warehouses": frozenset({"tamsin cove"})}
    >>> value_floor({"orders": 0.9, "warehouses": 0.03}, frozenset({"tamsin cove"}), held, 0.12)
    {'orders': 0.9, 'warehouses': 0.12}

    Args:
        confidence: Candidate -> its confidence.
        named: The question's :func:`value_groups`.
        values: Table -> the values its rows hold.
        floor: The confidence a table holding a named value gets at least (the may-be-needed bar).
        sources: Table -> its source.
        home: The source the question was routed to: only its tables are read for values (another source's table
            comes in by a key, not by a cell it shares); ``None``: every table.
    """
    sources = sources or {}
    return {
        table: max(sure, floor)
        if (home is None or sources.get(table) == home) and not named.isdisjoint(values.get(table, ()))
        else sure
        for table, sure in confidence.items()
    }
