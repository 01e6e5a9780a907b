"""Business words and the words schemas spell them with: what an analyst's word refers to in a database.

Analysts ask for "revenue", "clients", "staff" and "vendors"; schemas store an order line's ``unit_price`` and
``quantity``, a ``customer`` table, an ``employee`` table and a ``supplier`` table. No word of the question names
them, and a small encoder places "revenue" far from "quantity". :data:`BUSINESS_WORDS` is a thesaurus of the
words of business questions (sales, money, people, goods, places, time, reasons; a hospital's and a school's
staples) mapped to the words schemas use for the same thing: a measure to the columns it is computed from, a role
to the table of the people who play it, a synonym to the usual table name. It was written from what those words
mean in a business (after reading which of them a dev set's answers missed); its schema words are the generic ones
(``customer``, ``employee``, ``price``), no one database's names, and a dev set written without reading it
measures how it generalises (``benchmarks/analyst_words``).

What it changes is the question's **lexical text** (:func:`with_schema_words`): the question followed by the schema
words of its business words, save those the tables in reach spell themselves (a database with a ``cards`` table
reads "cards" as it is). BM25, the words each table holds and the content words matched against column
vectors read that text; the question's embedding does not (the encoder reads the analyst's own words, and adding
schema words to it moved single-table questions to the wrong table: ``benchmarks/README.md``, "Business words
(the thesaurus)").

Pipeline step: text (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping
from functools import lru_cache

import simplemma

from llama_index_pearl.text.words import identifier_words, singular, written_words

__all__ = ["BUSINESS_WORDS", "name_forms", "parse_business_words", "schema_words", "with_schema_words"]


def _entries(rows: Iterable[tuple[str, str]]) -> dict[str, tuple[str, ...]]:
    """``("business words", "schema words")`` rows as one entry per business word (a word in two rows is an error:
    the second would silently replace the first)."""
    entries: dict[str, tuple[str, ...]] = {}
    for words, spelled in rows:
        for word in words.split():
            if word in entries:
                raise ValueError(f"the business word {word!r} is given twice")
            entries[word] = tuple(spelled.split())
    return entries


#: A business word (its dictionary form) -> the words schemas spell it with. No word is among its own schema words:
#: a word schemas use ("sales", "film") names what it means already.
BUSINESS_WORDS: Mapping[str, tuple[str, ...]] = _entries(
    {
        # what a business takes in: an order or invoice line's price and quantity, a sale's amount
        "revenue turnover takings earn generate bring sell": "sales amount price quantity total line",
        "spend spender spending": "amount total price payment",
        "margin profitable profitability": "profit cost price",
        "wage payroll": "salary pay",
        "pay": "salary",
        "buy": "purchase order",
        "deal offer": "discount promotion",
        "refund": "return",
        "bill": "invoice",
        "budget forecast": "scenario",  # a plan, beside the actuals, is a scenario of the same figures
        # people and their roles
        "staff workforce headcount worker personnel rep salesperson salespeople employ hire": "employee",
        "team division": "department",
        "client buyer shopper purchaser patron": "customer",
        "vendor": "supplier",
        "supplier": "vendor",
        # goods, where they are and how they travel
        "goods merchandise article sku": "product item",
        "item": "product",
        "range segment kind": "group category type",
        "shop outlet branch": "store",
        "parcel": "shipment",
        "ship shipping deliver": "delivery shipment",
        "shelf shelve warehouse": "stock inventory quantity",
        # places, time, judgements and reasons
        "territory": "region",
        "area": "territory region",
        "calendar month monthly yearly quarter quarterly": "date",
        "star score": "rating review",
        "motivation motivate why": "reason",
        "waste": "scrap",
        "night": "shift",
        "job role position": "title",
        "card": "credit",
        # a hospital's and a school's staples
        "die deceased mortality": "death",
        "medication medicine prescribe": "drug prescription",
        "diagnose illness disease": "diagnosis condition",
        "condition comorbidity": "diagnosis",
        "operation surgery surgical": "procedure",
        "assay bloodwork test": "lab measurement",
        "lab laboratory": "measurement",
        "clinic": "site facility",
        "hospitalisation hospitalization admit": "admission stay",
        "doctor clinician": "provider physician",
        "insurer coverage": "insurance payer",
        "pupil": "student",
        "lecturer professor teacher": "instructor",
        # media
        "movie": "film",
        "tune song": "track",
        "singer musician": "artist",
        "writer": "author",
    }.items()
)


def schema_words(
    question: str, spelled: Container[str] = frozenset(), thesaurus: Mapping[str, tuple[str, ...]] = BUSINESS_WORDS
) -> list[str]:
    """The schema words of the question's business words, once each, none the question already holds.

    A word is looked up as written, in its dictionary form (simplemma: "brought" -> "bring", "clients" ->
    "client") and singular; a schema word the question holds in any of these forms ("films") is not added. A
    business word the schema spells itself is read as it is: "cards" where a table is named ``cards``,
    "revenue" where a column is.

    >>> schema_words("Which clients spent the most?")
    ['customer', 'amount', 'total', 'price', 'payment']
    >>> schema_words("Which clients spent the most?", spelled={"client"})
    ['amount', 'total', 'price', 'payment']

    Args:
        question: The question.
        spelled: The words of the names of the tables in reach and of their columns (lower case; a word is
            found in any of its forms).
        thesaurus: Business word -> its schema words (:data:`BUSINESS_WORDS`, and a user's own:
            :func:`parse_business_words`).
    """
    words = written_words(question)
    held = {form for word in words for form in _forms(word)}
    found: dict[str, None] = {}
    for word in words:
        if any(form in spelled for form in _forms(word)):
            continue
        for schema_word in _schema_words_of(word, thesaurus):
            if schema_word not in held:
                found[schema_word] = None
    return list(found)


def with_schema_words(
    question: str, spelled: Container[str] = frozenset(), thesaurus: Mapping[str, tuple[str, ...]] = BUSINESS_WORDS
) -> str:
    """The question's lexical text: the question, then its :func:`schema_words` (the question itself when none).

    >>> with_schema_words("What is revenue per shop?")
    'What is revenue per shop? sales amount price quantity total line store'

    Args:
        question: The question.
        spelled: As in :func:`schema_words`.
        thesaurus: As in :func:`schema_words`.
    """
    added = schema_words(question, spelled, thesaurus)
    return f"{question} {' '.join(added)}" if added else question


def name_forms(names: Iterable[str]) -> frozenset[str]:
    """The words of some names (a table's, its columns'), each as written and singular: what ``spelled`` reads.

    >>> sorted(name_forms(["Cards", "card_type"]))
    ['card', 'cards', 'type']

    Args:
        names: Table or column names.
    """
    return frozenset(form for name in names for word in identifier_words(name) for form in (word, singular(word)))


def parse_business_words(text: str) -> dict[str, tuple[str, ...]]:
    """A user's own business words: ``"words: schema words"`` entries separated by ``;``.

    >>> parse_business_words("arr mrr: revenue subscription; gmv: sales amount")
    {'arr': ('revenue', 'subscription'), 'mrr': ('revenue', 'subscription'), 'gmv': ('sales', 'amount')}

    Args:
        text: The entries (``PearlConfig.business_words``).

    Raises:
        ValueError: An entry without ``:``, without a word on either side, with a word that is not letters, or a
            word given twice; the message names it.
    """
    rows = []
    for entry in (part.strip() for part in text.split(";")):
        if not entry:
            continue
        words, colon, spelled = entry.partition(":")
        sides = [side.lower().split() for side in (words, spelled)]
        if not colon or not all(sides) or not all(word.isalpha() for side in sides for word in side):
            raise ValueError(
                f"business_words entry {entry!r}: write it as 'words: schema words' (letters only), entries "
                "separated by ';'"
            )
        rows.append((" ".join(sides[0]), " ".join(sides[1])))
    try:
        return _entries(rows)
    except ValueError as error:
        raise ValueError(f"business_words: {error}") from None


def _schema_words_of(word: str, thesaurus: Mapping[str, tuple[str, ...]]) -> tuple[str, ...]:
    """One word's schema words: its own entry, else its dictionary form's."""
    return next((thesaurus[form] for form in _forms(word) if form in thesaurus), ())


@lru_cache(maxsize=65536)  # questions repeat their words; the lemmatizer is a dictionary lookup and more
def _forms(word: str) -> tuple[str, ...]:
    """A lower-case word as written, in its dictionary form and singular ("films" is also "film")."""
    return tuple(dict.fromkeys((word, simplemma.lemmatize(word, lang="en"), singular(word))))
