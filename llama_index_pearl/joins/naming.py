"""What a column's name says it references: the naming conventions of foreign keys, as pure functions.

Real schemas name a reference after the entity it points at, decorated:

* a key suffix, split or glued: ``customer_id``, ``CustomerID``, ``Customer Key``, ``emp_no``, ``itemid``,
  ``orderkey``, ``item_sk`` (a warehouse's surrogate key);
* a role prefix: ``gender_concept_id``, ``DeliveryCityID``, ``home_team_api_id``, ``link_to_member``,
  ``sold_date_sk``, or a role after the key: ``teamIDwinner``, ``teamIDloser``;
* the table's own column prefix, which every column of a warehouse table carries: ``l_orderkey`` of
  ``lineitem``, ``ss_sold_date_sk`` of ``store_sales`` (:func:`column_prefix`);
* a number: ``home_player_1`` .. ``home_player_11``, ``concept_id_2``, ``atom_id2``;
* an agent instead of an entity: ``creator_id``, ``LastEditedBy`` (a person or user).

The entity then names a table (singular or plural, ``people`` for ``person``, without a star schema's
``_dim`` / ``Fact`` role word: ``date`` -> ``date_dim``), a table's
head word (``topic`` -> ``forum_topics``, ``territory`` -> ``DimSalesTerritory``), a word
glued into a table's name (``hero`` -> ``superhero``) or an abbreviation of one
(``cust`` -> ``customers``, ``dept`` -> ``departments``); the referenced column is the
table's key by name (``id``, ``<entity>_id``, ``Date.Date``, ``zip_code.zip_code``).

:func:`parse_reference` reads a column name, :func:`table_forms` the names a table
goes by, :func:`entity_match` and :func:`key_name_worth` score the two sides; the
products are the name evidence that :mod:`~llama_index_pearl.joins.candidates` records.
Every worth below is a constant, and ``benchmarks/README.md`` holds the measurements
that chose them.

Pipeline step: joins (docs/architecture.md).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from functools import lru_cache

from llama_index_pearl.joins.abbreviations import (
    ABBREVIATION_WORTH,
    MIN_WORD,
    abbreviates,
    abbreviates_in_order,
    entity_match,
    initials,
)
from llama_index_pearl.text.words import identifier_words, singular

__all__ = [
    "AGENT_ENTITIES",
    "AGENT_ROLES",
    "GENERIC_TOKENS",
    "KEY_TOKENS",
    "WAREHOUSE_WORDS",
    "NameReference",
    "abbreviates",
    "abbreviates_in_order",
    "bare_name",
    "column_prefix",
    "entity_match",
    "entity_singular",
    "key_name_worth",
    "named_role",
    "names_own_table",
    "parse_reference",
    "table_forms",
    "table_name_words",
]

# Tokens that mark a column as an identifier rather than an attribute.
KEY_TOKENS = frozenset(
    {"id", "code", "key", "no", "num", "number", "ref", "uid", "uuid", "guid", "pk", "fk", "nr", "sk"}
)
# Names made only of these say nothing about *which* entity a column refers to.
GENERIC_TOKENS = KEY_TOKENS | {
    "name", "type", "date", "year", "age", "description", "details", "detail", "other", "value", "title",
    "status", "note", "notes", "comment", "text", "amount", "count", "total", "time", "created", "updated",
    "first", "last", "line", "1", "2", "3",
}  # fmt: skip
# Tables an agent role (creator_id, approver_id, LastEditedBy) refers to: who acts in a system.
AGENT_ENTITIES = frozenset({"user", "person", "employee", "member", "staff"})
LINK_WORDS = frozenset({"link", "linked", "ref", "refs", "reference", "fk"})  # link_to_member, ref_customer
LINK_SUFFIXES = frozenset({"via"})  # ShipVia, ship_via: the entity something goes by, named by what it does
# Role nouns of a person who acts for a business, abbreviated or not: SupportRepId, manager_id, clerk_no.
AGENT_ROLES = frozenset({"rep", "representative", "manager", "mgr", "supervisor", "agent", "clerk", "assistant"})
# Leading words that make a column a measure of its entity rather than a reference to it.
MEASURE_WORDS = frozenset(
    {"number", "num", "count", "total", "qty", "quantity", "units", "sum", "avg", "average", "min", "max"}
)
_IRREGULAR = {"people": "person", "persons": "person", "men": "man", "women": "woman", "children": "child"}
_AGENT_SUFFIXES = ("er", "or")  # creator, approver, uploader: one who does
_PERSON = "person"  # salesperson, chairperson: a compound whose head is a person names one
# itemid, cgid, orderkey, custkey: the key words glued to an entity often enough to split, each with the
# fewest letters the entity must keep (monkey, turkey, hockey are no keys of a "mon", "tur" or "hoc").
_GLUED_KEYS = (("id", 3), ("key", 4))
# date_dim, DimCustomer, FactSales, customer_dimension: a table's role in a star schema, not its entity.
WAREHOUSE_WORDS = frozenset({"dim", "dimension", "fact", "facts"})
MAX_ROLE_SUFFIX = 2  # words after a key word that name a role: teamIDwinner, team_id_home_old

# How much a match of the column's entity with a table's name is worth (1.0: the whole name). A role prefix
# and a table's head keep the 0.9 and an abbreviation the 0.85 that P_S gave them before names could stand
# alone (benchmarks/README.md, "Constants"); glued words and agents sit at NAME_ALONE (0.8), the least that
# stands alone.
ROLE_WORTH = 0.9  # the entity is the end of the column's core: gender_concept_id -> concept
HEAD_WORTH = 0.9  # the entity is the end of the table's name: topic_id -> forum_topics
AGENT_WORTH = 0.8  # creator_id -> users: a role, no entity named at all

_NUMBERED = re.compile(r"^([a-z]+?)(\d+)$")
_INITIALS_ID = re.compile(r"[A-Z]{1,2}ID")  # PID, LAID: a table's initials glued to ID, in capitals


def entity_singular(token: str) -> str:
    """:func:`singular` plus the irregular plurals that name tables (``people`` -> ``person``).

    Args:
        token: A lowercase word.
    """
    return _IRREGULAR.get(token) or singular(token)


def table_name_words(table_id: str) -> tuple[str, ...]:
    """Tokens of a table's own name: the part after the last ``__`` or ``/`` (a ``db__`` or folder prefix is dropped).

    Args:
        table_id: The table id, e.g. ``"concert_singer__singer_in_concert"``.

    Returns:
        Tokens of the bare table name, e.g. ``("singer", "in", "concert")``.
    """
    return identifier_words(table_id.rsplit("__", 1)[-1].rsplit("/", 1)[-1])


def column_prefix(table_id: str, columns: Collection[str]) -> str:
    """The prefix most of a table's columns share when it abbreviates the table's name, else ``""``.

    Warehouse schemas prefix every column with the table's initials so that names stay unique
    across a query: ``l_orderkey`` of ``lineitem``, ``ss_item_sk`` of ``store_sales``,
    ``cd_demo_sk`` of ``customer_demographics``, ``web_site_sk`` of ``web_site``. The prefix is
    the first word before an underscore, held by more than half of the columns (two at least),
    and its letters abbreviate the table's name in order, first letter first, without being one
    of the name's words (``student_course_id`` of ``Student_Enrolment_Courses`` names a student
    course); what a column
    refers to is read from the rest of its name (:func:`bare_name`).

    Args:
        table_id: The table's id.
        columns: Its column names.
    """
    heads: dict[str, int] = {}
    for column in columns:
        head, sep, rest = str(column).partition("_")
        if sep and rest.strip("_") and head.isalpha():
            heads[head.lower()] = heads.get(head.lower(), 0) + 1
    if not heads:
        return ""
    head, count = max(heads.items(), key=lambda kv: (kv[1], kv[0]))
    words = table_name_words(table_id)
    glued = "".join(words)
    if count < 2 or 2 * count <= len(columns) or head in words or not abbreviates_in_order(head, glued):
        return ""  # a whole word of the name is the entity itself: Student_Enrolment's student_course_id
    return head + "_"


def bare_name(column: str, prefix: str) -> str:
    """A column's name without its table's column prefix (:func:`column_prefix`): ``l_orderkey`` -> ``orderkey``.

    Args:
        column: The column's name.
        prefix: The table's column prefix, lowercase with its underscore (``"l_"``), or ``""``.
    """
    text = str(column)
    if prefix and text.lower().startswith(prefix) and text[len(prefix) :].strip("_"):
        return text[len(prefix) :]
    return text


@dataclass(frozen=True)
class NameReference:
    """What a column's name says it refers to.

    Args:
        core: The words naming the referenced entity, role words first, the last one singular
            (``("gender", "concept")`` for ``gender_concept_id``); empty for a bare key (``id``).
        key: The key suffix (``"id"``, ``"key"``, ``"no"``, ...) or ``None``.
        numbered: A trailing number was dropped (``home_player_1``).
        agent: The name is a role of a person or user (``creator_id``, ``LastEditedBy``).
        suffix: Role words after the key word (``("winner",)`` for ``teamIDwinner``).
    """

    core: tuple[str, ...]
    key: str | None = None
    numbered: bool = False
    agent: bool = False
    suffix: tuple[str, ...] = ()

    @property
    def marked(self) -> bool:
        """Whether something besides the entity says the column is a reference.

        A key word, a number (``home_player_1``), an agent (``LastEditedBy``) or a link word
        (``link_to_member``); ``home_score`` and ``SpatialLocation`` are attributes of a home
        team and an address, named after an entity without referring to it.
        """
        return self.key is not None or self.numbered or self.agent or bool(LINK_WORDS & set(self.core))

    def spans(self) -> list[tuple[tuple[str, ...], float]]:
        """Candidate entities, longest first: every suffix of the core, one with a role worth less."""
        return [(self.core[i:], 1.0 if i == 0 and not self.suffix else ROLE_WORTH) for i in range(len(self.core))]


@lru_cache(maxsize=65536)
def parse_reference(column: str) -> NameReference:
    """Read a column name as a reference: ``DeliveryCityID`` -> core ``(delivery, city)``, key ``id``.

    Args:
        column: The column's name as in the table.
    """
    if _INITIALS_ID.fullmatch(column):
        return NameReference((column[:-2].lower(),), "id")
    tokens = list(identifier_words(column))
    if len(tokens) > 1 and tokens[0] in MEASURE_WORDS:
        return NameReference(())  # NumberEmployees, num_players, UnitsOnOrder: a count of things, no reference
    numbered = False
    while tokens and (tokens[-1].isdigit() or _NUMBERED.match(tokens[-1])):
        numbered = True
        match = _NUMBERED.match(tokens[-1])
        tokens[-1:] = [match.group(1)] if match else []
    suffix = _role_suffix(tokens) if not numbered else ()
    if suffix:
        tokens = tokens[: -len(suffix)]
    key = None
    if tokens and tokens[-1] in KEY_TOKENS:
        key = tokens.pop()
    elif tokens:
        for glued, least in _GLUED_KEYS:
            word = tokens[-1]
            if word.endswith(glued) and len(word) - len(glued) >= least:
                key, tokens[-1] = glued, word[: -len(glued)]
                break
    agent = False
    if key is None and len(tokens) > 1 and tokens[-1] == "by":  # created_by, LastEditedBy: "by" marks the reference
        agent, key, tokens = True, tokens[-1], tokens[:-1]
    elif key is None and len(tokens) > 1 and tokens[-1] in LINK_SUFFIXES:  # ShipVia: the shipper it goes by
        key, tokens = tokens[-1], tokens[:-1]
    elif tokens and key and (named_role(tokens[-1]) or _agent_noun(tokens[-1])):
        agent = True  # creator_id, approver_id, SupportRepId: an agent unless a table of that name says otherwise
    if tokens:
        tokens[-1] = entity_singular(tokens[-1])
    return NameReference(tuple(tokens), key, numbered, agent, suffix)


def named_role(word: str) -> bool:
    """A word that names a person's role outright: ``rep``, ``manager``, ``salesperson`` (not ``person`` itself,
    an entity)."""
    return word in AGENT_ROLES or (word.endswith(_PERSON) and len(word) > len(_PERSON))


def _agent_noun(word: str) -> bool:
    """One who does: ``creator``, ``approver`` (``user`` and ``order`` are too short to tell)."""
    return word.endswith(_AGENT_SUFFIXES) and len(word) > 4


def _role_suffix(tokens: list[str]) -> tuple[str, ...]:
    """Words after an entity's key word that say its role (``team id winner``), else ``()``.

    At most ``MAX_ROLE_SUFFIX`` plain words, none generic: ``code_name`` is a name, not a code's role.
    """
    for cut in range(1, MAX_ROLE_SUFFIX + 1):
        if len(tokens) - cut < 2:
            break
        tail = tokens[-cut:]
        if tokens[-cut - 1] in KEY_TOKENS and all(w.isalpha() and w not in GENERIC_TOKENS for w in tail):
            return tuple(tail)
    return ()


def table_forms(table_id: str, other_entities: Collection[tuple[str, ...]] = ()) -> dict[tuple[str, ...], float]:
    """The entity names a table goes by, with what a match is worth.

    The whole name (last word singular) is worth 1.0, and so is the name without a key
    suffix (``zip_code`` -> ``zip``). A proper suffix of the name (its head: ``forum_topics``
    -> ``topic``, ``DimSalesTerritory`` -> ``sales_territory``) is worth ``HEAD_WORTH``,
    unless the head or the words before it name another table of the source (whole,
    abbreviated or glued into its name): ``singer_in_concert`` relates singers and
    concerts, ``dept_emp`` departments and employees, ``Has_Pet`` someone and ``Pets``,
    ``hero_power`` a ``superhero`` and a ``superpower``; they are none of them.

    Args:
        table_id: The table id.
        other_entities: Whole-name forms of the other tables of its source.
    """
    tokens = table_name_words(table_id)
    if not tokens:
        return {}
    whole = (*tokens[:-1], entity_singular(tokens[-1]))
    forms = {whole: 1.0}
    entity = _without_warehouse_word(tokens)
    if entity:
        forms[(*entity[:-1], entity_singular(entity[-1]))] = 1.0
    if len(whole) > 1 and whole[-1] in KEY_TOKENS:
        forms[whole[:-1]] = 1.0
    for start in range(1, len(whole)):
        head = whole[start:]
        if set(head) <= WAREHOUSE_WORDS:
            continue
        if not any(_names_one_of(words, other_entities) for words in (head, *(whole[a:start] for a in range(start)))):
            forms.setdefault(head, HEAD_WORTH)
    return forms


def _without_warehouse_word(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """A table's name without a leading or trailing star-schema role word (``date_dim`` -> ``date``), else ``()``."""
    if len(tokens) > 1 and tokens[-1] in WAREHOUSE_WORDS:
        return tokens[:-1]
    if len(tokens) > 1 and tokens[0] in WAREHOUSE_WORDS:
        return tokens[1:]
    return ()


@lru_cache(maxsize=65536)
def names_own_table(column: str, table_id: str) -> bool:
    """Whether a column's name makes it its own table's key (``item_id`` of ``item``, ``catalog_page_id``).

    Such a column identifies its own rows (a surrogate or a business key): values it shares
    with another table's key are the same format, not a reference (``AAAAAAAABAAAAAAA`` is the
    first item and the first customer alike).

    Args:
        column: The column's name without its table's prefix (:func:`bare_name`).
        table_id: Its table's id.
    """
    return key_name_worth(column, table_forms(table_id)) > 0.0 and bool(parse_reference(column).core)


def _names_one_of(words: tuple[str, ...], entities: Collection[tuple[str, ...]]) -> bool:
    """Whether ``words`` name one of ``entities``: exactly, or one word of 4+ letters abbreviating or glued into one.

    Three letters are too few to tell here: ``car`` of ``car_makers`` is no ``cartoon``.
    """
    if words in entities:
        return True
    return (
        len(words) == 1
        and len(words[0]) > MIN_WORD
        and any(len(e) == 1 and entity_match(words, {e: 1.0}) for e in entities)
    )


def key_name_worth(
    column: str,
    forms: dict[tuple[str, ...], float],
    others: Collection[tuple[str, ...]] = (),
) -> float:
    """How surely a column's name makes it its table's key (0: the name does not say).

    ``id`` (or any bare key word), ``<entity>_id`` / ``<entity> Key`` / ``<entity>``
    for an entity form of the table, abbreviations and glued words included
    (``customers.cust_id``, ``icustays.stay_id``) unless they name another table
    (``titleauthor.title_id`` refers to ``titles``), and ``<entity>_<qualifier>_id``
    (``player_api_id``) a little less, unless the words after the entity name another
    table: ``Product.ProductModelID`` and ``episode.episode_concept_id`` refer to
    ``ProductModel`` and ``concept``.

    Args:
        column: The column's name.
        forms: The table's :func:`table_forms`.
        others: Forms of the other tables of its source.
    """
    ref = parse_reference(column)
    if not ref.core:
        return 1.0 if ref.key else 0.0
    if ref.numbered:
        return 0.0  # concept_id_1 is the first of several references, never the table's own key
    worth = forms.get(ref.core, 0.0)
    if worth == 0.0 and ref.core not in others:
        worth = entity_match(ref.core, forms)
    if worth == 0.0 and len(ref.core) == 1 and len(ref.core[0]) < MIN_WORD and ref.core not in others:
        worth = ABBREVIATION_WORTH if any(initials(ref.core[0], f) for f, w in forms.items() if w >= 1.0) else 0.0
    qualified = ref.key and len(ref.core) > 1 and ref.core[:1] in forms
    if worth == 0.0 and qualified and not any(ref.core[i:] in others for i in range(len(ref.core))):
        worth = forms[ref.core[:1]] * ROLE_WORTH  # player_api_id of player
    return worth
