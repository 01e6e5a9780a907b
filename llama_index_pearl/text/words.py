"""The words of names and texts: one identifier splitter and one plural rule for every step that reads words.

BM25 (:mod:`~llama_index_pearl.corpus.lexical`), join naming (:mod:`~llama_index_pearl.joins.naming`)
and the heuristic questions (:mod:`~llama_index_pearl.generation.heuristic`) all read a name's words
through :func:`split_identifiers`, so ``HTTPServer`` is the words ``HTTP Server`` to each of them,
``teamIDwinner`` is ``team ID winner`` and ``Has_Pet`` is ``Has Pet``. What each then does with
punctuation is its own tokenization: :func:`identifier_words` keeps letters and digits only (names),
BM25 keeps word characters of any script, a question keeps the name as written.

Pipeline step: text (docs/architecture.md).
"""

from __future__ import annotations

import re
from collections.abc import Container
from functools import lru_cache

import simplemma

__all__ = ["family_forms", "identifier_words", "singular", "split_identifiers", "written_words"]

# A plural acronym keeps its "s": "IDs", "URLs" (an "s" after a capital, then no lower-case letter).
_PLURAL = r"(?![A-Z]s(?![a-z]))"
# a lower-case letter or digit before a capital (carMakers, customer2Name), or the last capital of an
# acronym before a capitalised word (HTTPServer -> HTTP Server, but documentIDs -> document IDs)
_CAMEL = re.compile(rf"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z]){_PLURAL}")
# teamIDwinner: "ID" then a word, not "I" + "Dwinner" (nor "ID" + "s")
_ID_THEN_WORD = re.compile(r"(?<=[a-z0-9])ID(?=[a-z])(?!s(?![a-z]))")
_NON_ALNUM = re.compile(r"[^0-9a-zA-Z]+")
_WRITTEN_WORD = re.compile(r"[A-Za-z][A-Za-z']+")  # two letters or more, an apostrophe kept: "shop's", not "2016"
# a short vowel then one consonant ends the word: the consonant doubles before an ending (ship -> shipping)
_DOUBLED = re.compile(r"(?:^|[^aeiou])[aeiou][bdgklmnprt]$")
# Endings that name a verb's act: rent -> rental, pay -> payment, ship -> shipment, deliver -> delivery. Not its
# actor (-er, -or, -ee): "games played" asks of games, not of the player
_DERIVED = ("al", "ment", "y", "ion", "ation", "ance", "ence", "ing")


def split_identifiers(text: str) -> str:
    """``text`` with the words of each identifier apart, case kept: snake_case, camelCase and acronyms.

    >>> split_identifiers("Has_Pet carMakers HTTPServer teamIDwinner")
    'Has Pet car Makers HTTP Server team ID winner'

    Args:
        text: A name, or any text holding names.
    """
    return _CAMEL.sub(" ", _ID_THEN_WORD.sub(" ID ", text)).replace("_", " ")


def identifier_words(name: str) -> tuple[str, ...]:
    """The lower-case words of a column or table name (:func:`split_identifiers`, then letters and digits only).

    Args:
        name: A raw name such as ``"customerId"`` or ``"Stadium_ID"``.

    Returns:
        The words, lower case.

    >>> identifier_words("customerId"), identifier_words("Stadium_ID")
    (('customer', 'id'), ('stadium', 'id'))
    """
    return tuple(word.lower() for word in _NON_ALNUM.split(split_identifiers(str(name))) if word)


def written_words(text: str) -> list[str]:
    """The words of a question as written, lower case, in order: letters (and apostrophes), two or more.

    >>> written_words("Which shop's clients spent $5 in 2016?")
    ['which', "shop's", 'clients', 'spent', 'in']

    Args:
        text: A question.
    """
    return [word.lower() for word in _WRITTEN_WORD.findall(text)]


@lru_cache(maxsize=65536)  # BM25 folds every word of every unit and question; vocabularies repeat
def singular(word: str) -> str:
    """English singular of a lowercase word, by suffix rules: ``countries`` -> ``country``, ``races`` -> ``race``.

    A word in ``-ies`` is ``-y`` or ``-ie`` by the word, not by its letters (``countries``, ``movies``,
    ``series``): simplemma's English dictionary decides it, the ``-y`` rule where it knows no such form. A word in
    ``-ses`` is a Greek ``-sis`` where the dictionary knows that form (``diagnoses``, ``analyses``), else ``-se``.

    >>> [singular(w) for w in ("countries", "movies", "series", "races", "status", "diagnoses", "courses")]
    ['country', 'movie', 'series', 'race', 'status', 'diagnosis', 'course']

    Args:
        word: A lowercase word.
    """
    if word.endswith("ies") and len(word) > 4:
        lemma = simplemma.lemmatize(word, lang="en")
        return lemma if lemma in (word[:-1], word) else word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if word.endswith("ses") and simplemma.is_known(word[:-2] + "is", lang="en"):
        return word[:-2] + "is"
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        return word[:-1]
    return word


def family_forms(word: str, known: Container[str]) -> tuple[str, ...]:
    """The forms of a word's family that ``known`` holds, for a word it does not: a question says "rented" and
    "paid" of tables that spell ``rental`` and ``payment``.

    The family is the word's dictionary form (simplemma: "paid" -> "pay") and that form with an ending that names
    the verb's act (:data:`_DERIVED`: ``-al``, ``-ment``, ``-y``, ``-ion``...), its last consonant doubled
    ("shipping") or its last "e" dropped ("approval") as English spells them; never its actor ("played" is not
    ``player``). Only a word a verb's ending made has a family here ("rented", "paying", "paid"): a word in its
    dictionary form is read as written ("one" is not "oney"), a comparative as its own ("lowest" is not ``low``).
    A dictionary form that does not start as the word does ("sold" -> "sell", "best" -> "good") is another word
    to a reader: none is read. The "e" is dropped only from forms of five letters or more, before a vowel.

    >>> family_forms("rented", {"rental", "film"}), family_forms("paid", {"payment"}), family_forms("sold", {"sale"})
    (('rental',), ('payment',), ())

    Args:
        word: A lower-case token (:func:`singular` already applied).
        known: The tokens an index holds.

    Returns:
        ``(word,)`` when ``known`` holds it, else the known forms of its family (none: empty).
    """
    if word in known:
        return (word,)
    return tuple(f for f in _family(word) if f in known)


@lru_cache(maxsize=65536)  # every question's words the index lacks, twice a question (BM25, the words it holds)
def _family(word: str) -> tuple[str, ...]:
    """Every form of :func:`family_forms`' family of a word, known or not."""
    lemma = simplemma.lemmatize(word, lang="en")
    if lemma == word or len(lemma) < 3 or lemma[:2] != word[:2] or word.endswith(("er", "est")):
        return ()
    stems = [(lemma, _DERIVED)]
    if lemma.endswith("e") and len(lemma) >= 5:
        stems.append((lemma[:-1], tuple(e for e in _DERIVED if e[0] in "aeiou")))
    if _DOUBLED.search(lemma):
        stems.append((lemma + lemma[-1], tuple(e for e in _DERIVED if e[0] in "aeiou")))
    if lemma.endswith("y"):
        stems.append((lemma[:-1] + "i", _DERIVED))
    return tuple(dict.fromkeys([lemma] + [stem + ending for stem, endings in stems for ending in endings]))
