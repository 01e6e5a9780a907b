"""Naming-convention classes of foreign keys, to report where join discovery finds keys and where it misses.

A reference ``child.column -> parent.column`` falls in the first class that fits
(:func:`convention_class`); :func:`by_convention` scores discovered table pairs per
class, a gold pair by the class of its gold key, any other pair by that of its
strongest discovered edge. The classes read the names only, never the values:

============== =========================================================================
class          example
============== =========================================================================
entity_key     ``person_id -> person.person_id``, ``CustomerID -> Customers.CustomerID``
generic_key    ``UserId -> users.Id``, ``singer_id -> singer.id``
role_prefix    ``gender_concept_id -> concept.concept_id``, ``DeliveryCityID -> Cities.CityID``
numbered       ``home_player_1 -> Player.player_api_id``, ``concept_id_2 -> concept``
agent          ``creator_id -> users.id``, ``LastEditedBy -> People.PersonID``
abbreviation   ``cust_id -> customers.cust_id``, ``dept_no -> departments.dept_no``
compound_table ``topic_id -> forum_topics.id``, ``hero_id -> superhero.id``, ``ITEMID -> D_ITEMS``
prefixed       a warehouse's column prefixes: ``l_partkey -> part.p_partkey``, ``ss_item_sk -> item.i_item_sk``
same_name      the same name, not the parent's: ``SUBJECT_ID -> PATIENTS.SUBJECT_ID``, ``ID -> Patient.ID``
unrelated      names that share nothing: ``car_names.MakeId -> cars_data.Id``, ``ShipVia -> Shippers``
============== =========================================================================

Pipeline step: joins (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Mapping

from llama_index_pearl.joins import abbreviations, naming
from llama_index_pearl.text.words import identifier_words

__all__ = ["CONVENTIONS", "by_convention", "convention_class"]

CONVENTIONS = (
    "entity_key",
    "generic_key",
    "role_prefix",
    "numbered",
    "agent",
    "abbreviation",
    "compound_table",
    "prefixed",
    "same_name",
    "unrelated",
)

Pair = frozenset[str]
Key = tuple[str, str, str, str]  # child table, child column, parent table, parent column


def convention_class(child_column: str, parent_table: str, parent_column: str) -> str:
    """The naming convention a reference follows (one of :data:`CONVENTIONS`).

    Args:
        child_column: The referencing column.
        parent_table: The referenced table's id.
        parent_column: The referenced column.
    """
    stripped = _without_prefix(child_column), _without_prefix(parent_column)
    if stripped != (child_column, parent_column):
        inner = convention_class(*stripped[:1], parent_table, stripped[1])
        return "prefixed" if inner in ("entity_key", "same_name", "unrelated") else inner
    ref = naming.parse_reference(child_column)
    forms = naming.table_forms(parent_table)
    match, role = 0.0, False
    for span, span_worth in ref.spans():
        worth = abbreviations.entity_match(span, forms)
        if worth > match:
            match, role = worth, span_worth < 1.0
    if ref.numbered and match:
        return "numbered"
    if ref.agent and not match:
        return "agent"
    if match == 1.0:
        if role:
            return "role_prefix"
        return "generic_key" if not naming.parse_reference(parent_column).core else "entity_key"
    if match:
        return "abbreviation" if match == abbreviations.ABBREVIATION_WORTH else "compound_table"
    return "same_name" if identifier_words(child_column) == identifier_words(parent_column) else "unrelated"


def _without_prefix(column: str) -> str:
    """A column's name without a leading word of at most three letters and an underscore (``l_`` of ``l_partkey``).

    Only the names are read here, so any such word counts: a class for reporting, not a rule of discovery
    (which reads a table's prefix from all its columns: ``naming.column_prefix``).
    """
    head, sep, rest = column.partition("_")
    return rest if sep and rest and head.isalpha() and len(head) <= 3 else column


def by_convention(predicted: Mapping[Pair, Key], gold: Mapping[Pair, Key]) -> dict[str, tuple[set[Pair], set[Pair]]]:
    """Discovered and gold table pairs per naming-convention class.

    Args:
        predicted: Discovered table pair -> its strongest edge as ``(child table, column, parent table, column)``.
        gold: Gold table pair -> its first gold key, the same way.

    Returns:
        Class -> ``(discovered pairs, gold pairs)``, in :data:`CONVENTIONS` order, classes with neither left out.
    """
    classes = {pair: convention_class(*key[1:]) for pair, key in gold.items()}
    for pair, key in predicted.items():
        classes.setdefault(pair, convention_class(*key[1:]))
    out = {}
    for name in CONVENTIONS:
        pred = {p for p in predicted if classes[p] == name}
        true = {p for p in gold if classes[p] == name}
        if pred or true:
            out[name] = (pred, true)
    return out
