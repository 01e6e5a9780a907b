"""What joins two sources (``Table.source``: databases, schemas, sub-folders): a key, and evidence chance does not give.

Every database has its own ``customer_id`` counting 1..n and names the same countries, cities and first names, so
across sources a join needs a key of its table on one side (:func:`~llama_index_pearl.joins.scoring.referenceable`)
and either values that chance does not explain (:func:`cross_source_evidence`: identifiers, not words of a
language, :func:`identifier_shaped`) or a reference named after a table only the other source holds, whose values
lie in its key (:func:`cross_source_reference`). Pure functions over profiles.

Pipeline step: joins (docs/architecture.md).
"""

from __future__ import annotations

import re

from llama_index_pearl.joins.profiles import ColumnProfile
from llama_index_pearl.joins.scoring import (
    INCLUSION_MIN_CONTAINMENT,
    INCLUSION_MIN_SHARED,
    coincidental_overlap,
    referenceable,
    types_compatible,
)
from llama_index_pearl.joins.signals import Signals

__all__ = [
    "CROSS_SOURCE_MIN_CONTAINMENT",
    "IDENTIFIER_SHARE",
    "cross_source_evidence",
    "cross_source_reference",
    "identifier_shaped",
    "may_join",
]

# A cross-source link is a reference: most of the referencing side's values resolve to the key on the
# other side. Two independent samples of a large domain (names, cities) resolve far fewer; a real
# natural-key link (emails of subscribers among customers, ISO codes) resolves nearly all.
CROSS_SOURCE_MIN_CONTAINMENT = 0.5
IDENTIFIER_SHARE = 0.9  # share of values with a digit or symbol that makes free-length text a code
_WORDS = re.compile(r"^[^\W\d_]+(?:[ '.-]+[^\W\d_]+)*\.?$")  # letters, words apart by a space, apostrophe or point


def cross_source_evidence(a: ColumnProfile, b: ColumnProfile, c_ab: float, c_ba: float, shared: int) -> bool:
    """Whether two columns of different sources share entities, judged on values alone.

    Names say nothing across sources (every database has its ``customer_id``), so
    the values must: the overlap must not be what chance gives (dense 1..n ids,
    prefixed counters such as ``ORD-0001``, tiny domains, dates, words of a shared
    vocabulary such as countries, cities or first names: :func:`identifier_shaped`), at least
    ``INCLUSION_MIN_SHARED`` values must be shared, and one side must be a key
    that holds at least ``CROSS_SOURCE_MIN_CONTAINMENT`` of the other side's values.

    Args:
        a: One column's profile.
        b: The other's (of another source).
        c_ab: Containment of ``a``'s values in ``b``'s.
        c_ba: Containment of ``b``'s values in ``a``'s.
        shared: Shared sampled values.
    """
    if not types_compatible(a, b) or "date" in (a.dtype, b.dtype) or shared < INCLUSION_MIN_SHARED:
        return False
    if a.sequential or b.sequential or coincidental_overlap(a, b):
        return False
    if not (identifier_shaped(a) and identifier_shaped(b)):
        return False
    return (referenceable(b, True) and c_ab >= CROSS_SOURCE_MIN_CONTAINMENT) or (
        referenceable(a, True) and c_ba >= CROSS_SOURCE_MIN_CONTAINMENT
    )


def cross_source_reference(child: ColumnProfile, parent: ColumnProfile, contained: float, shared: int) -> bool:
    """Whether a column named after another source's table, which its own source lacks, references that table's key.

    A folder of exports keeps one table per file: ``billing/invoices.customer_id`` names the customers of
    ``crm/``. Values confirm the name: at least ``INCLUSION_MIN_SHARED`` of the reference's values are shared and
    ``INCLUSION_MIN_CONTAINMENT`` of them lie in the key (1..n ids included: the name, not chance, chose the key).

    Args:
        child: The referencing column, whose name resolves to ``parent``'s table alone.
        parent: The referenced column (of another source).
        contained: Containment of ``child``'s values in ``parent``'s.
        shared: Shared sampled values.
    """
    return (
        referenceable(parent, True)
        and types_compatible(child, parent)
        and shared >= INCLUSION_MIN_SHARED
        and contained >= INCLUSION_MIN_CONTAINMENT
    )


def identifier_shaped(p: ColumnProfile) -> bool:
    """Whether a column's values are shaped like identifiers rather than words of a language.

    Integers are; so are texts of one fixed length (``USA``, ``ALFKI``, ISO codes) or holding digits or
    symbols (``ORD-0001``, emails, ISBNs, postcodes). Free-length words (countries, cities, first names)
    are a vocabulary every database about people and places shares: two unrelated sources hold them alike.

    Args:
        p: A column's profile.
    """
    if p.dtype != "text":
        return p.dtype == "int"
    values = list(p.sample)
    if not values:
        return False
    if len({len(v) for v in values}) == 1:
        return True
    return sum(not _WORDS.match(v) for v in values) >= IDENTIFIER_SHARE * len(values)


def may_join(
    a: ColumnProfile, b: ColumnProfile, i: int, sig: Signals, overlap: tuple[float, float, float, int]
) -> bool:
    """Whether two columns of different sources may join: values chance does not explain, or a reference by name.

    The name counts only when it resolves to the other source's table alone (``sig.named``: the referencing
    column's own source has no table of that name) and the values confirm it (:func:`cross_source_reference`).

    Args:
        a: One column.
        b: The other (of another source).
        i: Profile index of ``a`` (the pair's signals name the referencing side by index).
        sig: What the candidate generators found for the pair.
        overlap: ``(jaccard, containment a in b, containment b in a, shared)`` of the samples.
    """
    _, c_ab, c_ba, shared = overlap
    if cross_source_evidence(a, b, c_ab, c_ba, shared):
        return True
    if not sig.named or sig.referencing is None or sig.pattern not in ("fk_name", "fk_table"):
        return False
    child, parent, contained = (a, b, c_ab) if sig.referencing == i else (b, a, c_ba)
    return cross_source_reference(child, parent, contained, shared)
