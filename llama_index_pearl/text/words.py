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
from functools import lru_cache

import simplemma

__all__ = ["identifier_words", "singular", "split_identifiers", "written_words"]

# A plural acronym keeps its "s": "IDs", "URLs" (an "s" after a capital, then no lower-case letter).
_PLURAL = r"(?![A-Z]s(?![a-z]))"
# a lower-case letter or digit before a capital (carMakers, customer2Name), or the last capital of an
# acronym before a capitalised word (HTTPServer -> HTTP Server, but documentIDs -> document IDs)
_CAMEL = re.compile(rf"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z]){_PLURAL}")
# teamIDwinner: "ID" then a word, not "I" + "Dwinner" (nor "ID" + "s")
_ID_THEN_WORD = re.compile(r"(?<=[a-z0-9])ID(?=[a-z])(?!s(?![a-z]))")
_NON_ALNUM = re.compile(r"[^0-9a-zA-Z]+")
_WRITTEN_WORD = re.compile(r"[A-Za-z][A-Za-z']+")  # two letters or more, an apostrophe kept: "shop's", not "2016"


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
    ``series``): simplemma's English dictionary decides it, the ``-y`` rule where it knows no such form.

    >>> [singular(w) for w in ("countries", "movies", "series", "races", "status")]
    ['country', 'movie', 'series', 'race', 'status']

    Args:
        word: A lowercase word.
    """
    if word.endswith("ies") and len(word) > 4:
        lemma = simplemma.lemmatize(word, lang="en")
        return lemma if lemma in (word[:-1], word) else word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        return word[:-1]
    return word
