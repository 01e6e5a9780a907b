"""How a short name names a longer one: abbreviations, initials and glued words, as pure functions.

A column names its table's entity shortened (``cust`` of ``customers``, ``mgr`` of ``manager``), by initials
(``PID`` of ``Person``, ``LAID`` of ``Language``), or glued into a longer word (``hero`` of ``superhero``).
:mod:`~llama_index_pearl.joins.naming` reads names with these; every worth is a constant, and
``benchmarks/README.md`` holds the measurements that chose them.

Pipeline step: joins (docs/architecture.md).
"""

from __future__ import annotations

__all__ = [
    "ABBREVIATION_WORTH",
    "GLUED_WORTH",
    "MIN_WORD",
    "abbreviates",
    "abbreviates_in_order",
    "entity_match",
    "initials",
    "qualified",
]

MIN_WORD = 3  # shortest abbreviation, glued remainder or compound part that counts as a word
QUALIFIER = 1  # letters of a qualifier's initial before an abbreviation: hadm is the h(ospital) adm(ission)
SKELETON_SHARE = 0.6  # cust/customer 0.5, dept/department 0.4, mgr/manager 0.43; emp, pub, prod are prefixes
ABBREVIATION_WORTH = 0.85  # cust_id -> customers
GLUED_WORTH = 0.8  # hero_id -> superhero: the entity is glued into one word of the table's name


def abbreviates_in_order(short: str, word: str) -> bool:
    """Whether ``short`` starts ``word`` and its other letters follow in order (``cd`` of ``customerdemographics``).

    Args:
        short: The abbreviation.
        word: The word or glued words it may abbreviate.
    """
    if not short or not word or short[0] != word[0]:
        return False
    position = 1
    for letter in short[1:]:
        position = word.find(letter, position) + 1
        if position == 0:
            return False
    return True


def abbreviates(short: str, word: str) -> bool:
    """``cust`` of ``customer``, ``dept`` of ``department``: a prefix, or its letters in order and much shorter.

    A prefix of 3+ letters abbreviates (``stor`` of ``store``); other letters in order
    only when at most ``SKELETON_SHARE`` of the word (``mgr`` of ``manager``), since
    ``dokur`` is no abbreviation of ``dotekur``.
    """
    if len(short) < MIN_WORD or len(short) >= len(word) or short[0] != word[0]:
        return False
    if word.startswith(short):
        return True
    if len(short) > SKELETON_SHARE * len(word):
        return False
    position = 0
    for letter in short:
        position = word.find(letter, position) + 1
        if position == 0:
            return False
    return True


def entity_match(span: tuple[str, ...], forms: dict[tuple[str, ...], float]) -> float:
    """How well a column's entity words name a table (0: not at all).

    Exact forms score their worth; otherwise the last word may abbreviate the last word
    of a whole-name form (``cust`` -> ``customer``) or be glued at the end of it
    (``hero`` -> ``superhero``), the other words equal.

    Args:
        span: The entity words (a suffix of :attr:`NameReference.core`).
        forms: From :func:`table_forms`.
    """
    if not span:
        return 0.0
    best = forms.get(span, 0.0)
    for form, worth in forms.items():
        if worth < 1.0 or best >= worth or len(form) != len(span) or form[:-1] != span[:-1]:
            continue  # loose matches only against whole names: "make" of car_makers' head is no "maker"
        word, short = form[-1], span[-1]
        if abbreviates(short, word):
            best = max(best, worth * ABBREVIATION_WORTH)
        elif len(short) > MIN_WORD and word.endswith(short) and len(word) - len(short) >= MIN_WORD:
            best = max(best, worth * GLUED_WORTH)
    return best


def initials(short: str, form: tuple[str, ...]) -> bool:
    """``p`` of ``person``, ``la`` of ``language``, ``cg`` of ``care_giver``: a table's initials, or the first letters
    of its one word (what ``PID`` and ``LAID`` abbreviate)."""
    return "".join(w[0] for w in form) == short or (len(form) == 1 and form[0].startswith(short))


def qualified(short: str, word: str) -> bool:
    """``hadm`` of ``admission``: a qualifier's initial (the ``h`` of hospital) before an abbreviation of the word.

    Args:
        short: One word of a column's name, its key word dropped (``hadm`` of ``hadm_id``).
        word: A table's one-word name, singular.
    """
    rest = short[QUALIFIER:]
    return len(rest) >= MIN_WORD and short[0] != word[0] and abbreviates(rest, word)
