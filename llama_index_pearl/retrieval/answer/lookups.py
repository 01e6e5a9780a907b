"""The tables a needed table references that the question asks for: the lookup that names what it codes (a
diagnosis table holds an ICD code, its dictionary the title), the person its key calls by a role the question
spells (``store.manager_staff_id``: "each store's manager"), and the date of a period the question names.

A question that lists things ("Which conditions are coded most often?") wants their names. Where every needed
table of its set holds codes and keys only (``diagnoses_icd``: ``subject_id``, ``icd_code``), the names live in a
lookup that a needed table references (``d_icd_diagnoses``: ``icd_code``, ``long_title``): a table that references
no other and holds a name. Such a lookup is named by no word of the question, scores low and often ranks beyond the
candidates. :func:`with_lookups` brings it into the set, as may be needed; a question that counts ("How many...")
names nothing, and a set that holds a name already needs no lookup for one.

A key named by a person's role (``manager_staff_id``, ``SupportRepId``, ``salesRepEmployeeNumber``) calls the row
it references by that role: the staff member who manages the store. A question that spells the role ("each store's
manager") asks for that table, though it spells none of its name; :func:`with_roles` brings it in, as may be
needed, as sure as a lookup.

A question that names a period ("in 1997", "per month") filters or groups on a date. A needed table that holds none
has it in a table it references (an order line's date is its order's, a fact's its date dimension's):
:func:`with_dates` brings in the one whose columns are most often dates, as may be needed, as sure as a lookup.

A column holds a name when a word of its name is one of :data:`NAME_WORDS`, or when it is named as its table is; a
date when a word of its name is one of :data:`DATE_WORDS` and it is no key by which its table references another.
Pure functions over the set, the join graph (its key joins, each read from its referencing side by
:func:`~llama_index_pearl.joins.graph.key_references`), the tables that hold a name and the question's words.

Pipeline step: answer (docs/architecture.md).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Collection, Container, Iterable, Mapping

import networkx as nx

from llama_index_pearl.corpus.lexical import text_tokens
from llama_index_pearl.joins.graph import key_references
from llama_index_pearl.joins.naming import named_role, parse_reference
from llama_index_pearl.retrieval.answer.table_sets import SetReason, SetTier, TableSet
from llama_index_pearl.text.words import identifier_words, singular

__all__ = [
    "DATE_WORDS",
    "LOOKUP_CONFIDENCE",
    "NAME_WORDS",
    "asks_to_count",
    "date_share",
    "holds_names",
    "names_a_period",
    "referenced",
    "role_words",
    "with_dates",
    "with_lookups",
    "with_roles",
]

#: The words of a column name that say it holds what a row is called or what it is.
NAME_WORDS = frozenset({"name", "title", "label", "description", "desc"})

#: The words of a column name that say it holds a date (``OrderDate``, ``year``); a time of day is no period.
DATE_WORDS = frozenset({"date", "datetime", "timestamp", "month", "year"})

#: How often a lookup that :func:`with_lookups` brings in is needed (measured: ``benchmarks/README.md``).
LOOKUP_CONFIDENCE = 0.4

_COUNTING = re.compile(r"\bhow many\b|\bnumber of\b|\bcount\b", re.IGNORECASE)
# A year of the calendar ("in 1997"), a month's name, or a word that groups by a period ("per month", "annual")
_PERIOD = re.compile(
    r"\b(1[89]|20)\d\d\b|\b(january|february|march|april|may|june|july|august|september|october|november|december"
    r"|years?|yearly|annual(ly)?|months?|monthly|quarters?|quarterly|weeks?|weekly|daily|fiscal)\b",
    re.IGNORECASE,
)


def holds_names(columns: Iterable[str], entity: Collection[str] = ()) -> bool:
    """Whether a table's columns hold a name: a word of a column's name is one of :data:`NAME_WORDS`, or the column
    is named as its table is (``airlines.Airline``: what a row is called).

    >>> holds_names(["icd_code", "long_title"]), holds_names(["subject_id", "icd_code"])
    (True, False)
    >>> holds_names(["alid", "Airline", "Country"], entity={"airline"})
    True

    Args:
        columns: The table's column names.
        entity: The words of the table's name, singular (none: no column is read as named like it).
    """
    for column in columns:
        words = [singular(w) for w in identifier_words(column)]
        if NAME_WORDS.intersection(words) or (entity and set(words) == set(entity)):
            return True
    return False


def asks_to_count(question: str) -> bool:
    """Whether a question counts ("how many", "number of", "count"): a count names nothing.

    >>> asks_to_count("How many operations were performed?"), asks_to_count("Which operations are most common?")
    (True, False)

    Args:
        question: The question.
    """
    return _COUNTING.search(question) is not None


def date_share(columns: Iterable[str]) -> float:
    """The share of a table's columns that hold a date: a word of the column's name is one of :data:`DATE_WORDS`.

    >>> date_share(["OrderID", "OrderDate", "ShippedDate", "Freight"]), date_share(["OrderID", "UnitPrice"])
    (0.5, 0.0)

    Args:
        columns: The table's column names (less those by which it references another table: ``OrderDateKey`` is the
            date dimension's date).
    """
    flags = [bool(DATE_WORDS.intersection(singular(w) for w in identifier_words(c))) for c in columns]
    return sum(flags) / len(flags) if flags else 0.0


def names_a_period(question: str) -> bool:
    """Whether a question names a period it filters or groups on: a year, a month, "per quarter", "annual".

    >>> names_a_period("What were our total sales in 1997?"), names_a_period("Which products sell best?")
    (True, False)

    Args:
        question: The question.
    """
    return _PERIOD.search(question) is not None


def referenced(graph: nx.Graph, table: str) -> list[str]:
    """The tables that ``table`` references by a key (:func:`~llama_index_pearl.joins.graph.key_references`), in
    name order.

    Args:
        graph: The join graph.
        table: A table of it.
    """
    if table not in graph:
        return []
    return sorted(join.right_table for join in key_references(graph, table))


def _references_any(graph: nx.Graph, table: str) -> bool:
    """Whether ``table`` references some table (the first such join ends the walk)."""
    return table in graph and next(key_references(graph, table), None) is not None


def with_lookups(
    chosen: TableSet, graph: nx.Graph, named: Container[str], confidence: float = LOOKUP_CONFIDENCE
) -> TableSet:
    """The set with the lookups that name what its needed tables code, where none of them holds a name.

    A lookup is a table that a needed table references, that references no table, and that holds a name
    (``named``). Each comes in after the set's tables, may be needed, as sure as ``confidence`` and never surer
    than the table that references it.

    Args:
        chosen: The set (:func:`~llama_index_pearl.retrieval.answer.table_sets.choose_table_set`).
        graph: The join graph.
        named: The tables that hold a name (:func:`holds_names`).
        confidence: How sure a lookup is (:data:`LOOKUP_CONFIDENCE`).
    """
    needed = chosen.needed
    if not needed or any(t in named for t in needed):
        return chosen
    referencing: dict[str, list[str]] = {}  # each table a needed table references: the needed tables that do
    for table in needed:
        for lookup in referenced(graph, table):
            referencing.setdefault(lookup, []).append(table)
    lookups: dict[str, float] = {}
    for lookup, tables in referencing.items():  # each candidate read once, however many needed tables reference it
        if lookup not in chosen and lookup in named and not _references_any(graph, lookup):
            lookups[lookup] = _as_sure(chosen, lookup, tables, confidence)
    return _with_tables(chosen, lookups, SetReason.LOOKUP)


def role_words(column: str, referenced_name: Collection[str]) -> frozenset[str]:
    """The role a key gives the row it references, as the question's tokens are written: the words of the key's name
    less the key word and the referenced table's name, where one of them names a person's role (``rep``,
    ``manager``, ``salesperson``: :func:`~llama_index_pearl.joins.naming.named_role`); else none.

    >>> sorted(role_words("manager_staff_id", {"staff"})), sorted(role_words("salesRepEmployeeNumber", {"employee"}))
    (['manager'], ['rep', 'sale'])
    >>> role_words("store_id", {"store"}), role_words("order_provider_id", {"provider"})
    (frozenset(), frozenset())

    Args:
        column: The key's column name.
        referenced_name: The referenced table's own name words.
    """
    words = frozenset(text_tokens(" ".join(parse_reference(column).core))).difference(referenced_name)
    return words if any(named_role(w) for w in words) else frozenset()


def with_roles(
    chosen: TableSet,
    graph: nx.Graph,
    asked: Container[str],
    names: Mapping[str, frozenset[str]],
    confidence: float = LOOKUP_CONFIDENCE,
) -> TableSet:
    """The set with each table a needed table's key calls by a role the question spells whole
    (:func:`role_words`): "each store's manager" brings in ``staff`` beside ``store``. Each comes in after the set's
    tables, may be needed, as sure as a lookup (``confidence``: a table a needed table references that the question
    asks for) and never surer than the table whose key names the role.

    Args:
        chosen: The set.
        graph: The join graph.
        asked: The question's words, as the tables' names are written
            (:func:`~llama_index_pearl.retrieval.answer.named_values.asked_words`).
        names: Table -> its own name's words.
        confidence: How sure such a table is (:data:`LOOKUP_CONFIDENCE`).
    """
    referencing: dict[str, list[str]] = {}
    for table in chosen.needed:
        for join in key_references(graph, table) if table in graph else ():
            person = join.right_table
            spelled = (role_words(column, names.get(person, ())) for column, _ in join.column_pairs)
            if person not in chosen and any(role and all(w in asked for w in role) for role in spelled):
                referencing.setdefault(person, []).append(table)
    added = {t: _as_sure(chosen, t, tables, confidence) for t, tables in referencing.items()}
    return _with_tables(chosen, added, SetReason.ROLE)


def with_dates(
    chosen: TableSet, graph: nx.Graph, dates: Callable[[str], float], confidence: float = LOOKUP_CONFIDENCE
) -> TableSet:
    """The set with the table that holds the date of each needed table that holds none, for a question that names a
    period: of the tables the needed table references, the one whose columns are most often dates (``dates``), where
    it is not in the set. "Sales in 1997" of order lines brings in their orders; of a warehouse's fact, the date
    dimension its date key references (not a dimension that merely records when it changed). Each comes in after the
    set's tables, may be needed, as sure as ``confidence`` and never surer than the table that references it.

    Args:
        chosen: The set of a question that names a period (:func:`names_a_period`).
        graph: The join graph.
        dates: Table -> the share of its columns that hold a date (:func:`date_share`; 0: none).
        confidence: How sure such a table is (:data:`LOOKUP_CONFIDENCE`).
    """
    referencing: dict[str, list[str]] = {}
    for table in chosen.needed:
        if table not in graph or dates(table) > 0:
            continue
        held = [(dates(other), other) for other in referenced(graph, table)]  # name order: a tie goes to the first
        share, dated = max(held, key=lambda pair: pair[0], default=(0.0, ""))
        if share > 0 and dated not in chosen:
            referencing.setdefault(dated, []).append(table)
    added = {t: _as_sure(chosen, t, tables, confidence) for t, tables in referencing.items()}
    return _with_tables(chosen, added, SetReason.DATE)


def _as_sure(chosen: TableSet, table: str, referencing: Iterable[str], confidence: float) -> float:
    """A table that comes in for a table that references it: ``confidence``, never surer than the surest table that
    references it, nor less sure than it was."""
    sure = max(min(confidence, chosen.confidence.get(t, 0.0)) for t in referencing)
    return max(chosen.confidence.get(table, 0.0), sure)


def _with_tables(chosen: TableSet, added: Mapping[str, float], reason: SetReason) -> TableSet:
    """The set with ``added`` (table -> its confidence) after its tables, may be needed, for ``reason``."""
    if not added:
        return chosen
    return dataclasses.replace(
        chosen,
        tables=(*chosen.tables, *added),
        reasons={**chosen.reasons, **dict.fromkeys(added, reason)},
        confidence={**chosen.confidence, **added},
        tiers={**chosen.tiers, **dict.fromkeys(added, SetTier.MAYBE)},
    )
