"""P_S by name: each column whose name refers to another table, resolved through table-name indexes.

A column's name (:func:`~llama_index_pearl.joins.naming.parse_reference`) is looked up
in indexes of the names every table goes by (:func:`~llama_index_pearl.joins.naming.table_forms`):
exact forms, prefixes and letter skeletons of their last word (abbreviations) and
their word endings (glued compounds). Inside the referenced table, the column is its key
by name (:func:`~llama_index_pearl.joins.naming.key_name_worth`) or, failing that, by
its sample. Nothing compares all pairs of columns or tables.

The name evidence of a pair is the product of the entity match and the referenced
column's worth, times the pattern's strength; the best parent of a column, when it is
the only one at that evidence, is marked ``sole``: inside one source, such a reference
stands without value overlap (:mod:`~llama_index_pearl.joins.edges`).

Pipeline step: joins (docs/architecture.md).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field, replace

from llama_index_pearl.joins import naming, scoring
from llama_index_pearl.joins.naming import GENERIC_TOKENS, NameReference, parse_reference
from llama_index_pearl.joins.profiles import ColumnProfile
from llama_index_pearl.joins.signals import Pairs, Signals, pair_key

__all__ = ["TableNames", "reference_candidates"]

AGENT_SPREAD = 2  # tables (copies aside) that must share an ..er/..or_id column before it reads as a role


@dataclass
class TableNames:
    """Every table's columns, source and name forms, and the indexes that look tables up by name.

    Args:
        profiles: All column profiles.
    """

    profiles: Sequence[ColumnProfile]
    columns: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    source: dict[str, str | None] = field(default_factory=dict)
    forms: dict[str, dict[tuple[str, ...], float]] = field(default_factory=dict)
    exact: dict[tuple[str, ...], list[str]] = field(default_factory=lambda: defaultdict(list))
    loose: dict[tuple, list[str]] = field(default_factory=lambda: defaultdict(list))
    others: dict[str, _Others] = field(default_factory=dict)  # forms of the other tables of each table's source
    named_by: dict[str | None, set[tuple[str, ...]]] = field(default_factory=lambda: defaultdict(set))
    copies: set[str] = field(default_factory=set)
    families: dict[tuple, set[str]] = field(default_factory=lambda: defaultdict(set))
    named_alike: dict[tuple, list[int]] = field(default_factory=lambda: defaultdict(list))
    key_cores: dict[tuple, list[tuple[str, float]]] = field(default_factory=lambda: defaultdict(list))
    spread: dict[tuple[str | None, str], int] = field(default_factory=lambda: defaultdict(int))
    _key_worth: dict[int, tuple[float, bool]] = field(default_factory=dict)
    _keys_named: dict[tuple, set[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for i, p in enumerate(self.profiles):
            self.columns[p.table_id].append(i)
            self.source.setdefault(p.table_id, p.source)
        wholes: dict[str | None, set[tuple[str, ...]]] = defaultdict(set)
        for table_id in self.columns:
            wholes[self.source[table_id]].update(_whole_forms(table_id))
        for table_id in self.columns:
            others = _Others(wholes[self.source[table_id]], _whole_forms(table_id))
            self.forms[table_id] = forms = naming.table_forms(table_id, others)
            for form in forms:
                self.exact[form].append(table_id)
                for key in _loose_keys(form):
                    self.loose[key].append(table_id)
        for table_id, forms in self.forms.items():
            self.named_by[self.source[table_id]].update(forms)
        for table_id, forms in self.forms.items():
            self.others[table_id] = _Others(self.named_by[self.source[table_id]], set(forms))
        self.copies = _copies(self.profiles, self.columns, self.source)
        for i, p in enumerate(self.profiles):
            self.named_alike[(p.source, p.tokens)].append(i)
            ref = parse_reference(p.column)
            worth, by_name = self.key_worth(i)
            if ref.core and by_name:
                self.key_cores[(p.source, ref.core)].append((p.table_id, worth))
            if ref.numbered and p.n_values:
                self.families[(p.table_id, ref.core[-1:], ref.key)].add(p.dtype)
        for table_id, cols in self.columns.items():
            if table_id not in self.copies:
                for name in {self.profiles[c].norm_name for c in cols}:
                    self.spread[(self.source[table_id], name)] += 1

    def key_worth(self, i: int) -> tuple[float, bool]:
        """How surely column ``i`` is its table's key (0: not), and whether its name says so.

        By name (:func:`~llama_index_pearl.joins.naming.key_name_worth`), unless its sample
        repeats a value; a column unique in its sample and named like a key (``..._id``,
        ``ContId``) is worth 1.0 whatever its name says: the sample shows it is one.
        """
        if i not in self._key_worth:
            p = self.profiles[i]
            worth, by_name = 0.0, False
            if not p.joinable or p.key_like:
                worth = naming.key_name_worth(p.column, self.forms[p.table_id], self.others[p.table_id])
                by_name = worth > 0.0
                if p.key_like and p.has_key_token:
                    worth = 1.0
            self._key_worth[i] = (worth, by_name)
        return self._key_worth[i]

    def keys_named(self, source: str | None, tokens: tuple[str, ...]) -> set[str]:
        """Tables of ``source`` whose column named ``tokens`` is a key (by name or by sample)."""
        if (source, tokens) not in self._keys_named:
            alike = self.named_alike.get((source, tokens), ())
            self._keys_named[(source, tokens)] = {self.profiles[c].table_id for c in alike if self.key_worth(c)[0] > 0}
        return self._keys_named[(source, tokens)]

    def compatible(self, p: ColumnProfile, ref: NameReference, q: ColumnProfile) -> bool:
        """Whether ``p`` can hold ``q``'s values; an empty numbered column has its family's type.

        ``fld_feature_3`` empty in the sample is text when ``apt_feature_1`` holds text.
        """
        if not scoring.types_compatible(p, q):
            return False
        family = self.families.get((p.table_id, ref.core[-1:], ref.key), ()) if ref.numbered and not p.n_values else ()
        return all(scoring.types_compatible(replace(p, dtype=dtype), q) for dtype in family)

    def tables_named(self, span: tuple[str, ...], loose: bool) -> set[str]:
        """Tables with ``span`` among their forms; with ``loose``, also those it may abbreviate or end."""
        found = set(self.exact.get(span, ()))
        if loose:
            for key in _loose_keys(span, probe=True):
                found.update(self.loose.get(key, ()))
        return found


class _Others(Collection):
    """The whole-name forms of a source's tables but one, without copying the source's set."""

    def __init__(self, source: set[tuple[str, ...]], own: set[tuple[str, ...]]) -> None:
        self.source, self.own = source, own

    def __contains__(self, form: object) -> bool:
        return form in self.source and form not in self.own

    def __iter__(self) -> Iterator[tuple[str, ...]]:
        return (form for form in self.source if form not in self.own)

    def __len__(self) -> int:
        return len(self.source - self.own)


def _whole_forms(table_id: str) -> set[tuple[str, ...]]:
    return {form for form, worth in naming.table_forms(table_id).items() if worth == 1.0}


# A table holding COPY_SHARE of another's columns, and COPY_COLUMNS at least, under a name extending the
# other's, is a copy of it. Measured over every such name pair of real_schemas and spider (120 pairs):
# archives, staging and temp tables share 0.67-1.00 of their original's columns (4-31 of them);
# every other pair with 4+ shared columns shares at most 0.57 (forum_post_votes / post_votes), and
# 3-column tables (BusinessEntity: id, rowguid, date) sit whole in every junction table named after them.
COPY_SHARE = 0.65
COPY_COLUMNS = 4


def _copies(
    profiles: Sequence[ColumnProfile], columns: dict[str, list[int]], source: dict[str, str | None]
) -> set[str]:
    """Tables that copy another of their source: ``Customers_Archive``, ``City_Staging``, ``NewFactCurrencyRate``.

    A copy's name contains the other table's whole name and it repeats at least
    ``COPY_SHARE`` of that table's columns (``COPY_COLUMNS`` at least): archives, staging and temporary tables hold rows
    in transit, and no schema declares keys on them.
    """
    by_words: dict[tuple[str | None, tuple[str, ...]], str] = {}
    for table_id in columns:
        by_words[(source[table_id], naming.table_name_tokens(table_id))] = table_id
    copies = set()
    for table_id, cols in columns.items():
        words = naming.table_name_tokens(table_id)
        names = {profiles[c].norm_name for c in cols}
        for start in range(len(words)):
            for end in range(start + 1, len(words) + 1):
                original = by_words.get((source[table_id], words[start:end])) if end - start < len(words) else None
                if original is None:
                    continue
                theirs = {profiles[c].norm_name for c in columns[original]}
                shared = len(theirs & names)
                if shared >= COPY_COLUMNS and shared >= COPY_SHARE * len(theirs):
                    copies.add(table_id)
    return copies


def _loose_keys(form: tuple[str, ...], probe: bool = False) -> list[tuple]:
    """Index keys under which a form is found by a prefix of its last word or a word glued at its end.

    Indexed (``probe=False``): every prefix of the last word of 3+ letters and its endings
    of 4+ letters that leave 3+ letters. Probed: the word itself under both kinds. An
    abbreviation by other letters (``dept`` of ``departments``) is found through the
    referenced key's own name instead (``departments.dept_no``, :attr:`TableNames.key_cores`):
    indexed by first and last letter, most words of a large lake would share a bucket.
    """
    head, word = form[:-1], form[-1]
    if probe:
        return [(head, "prefix", word), (head, "ending", word)]
    keys: list[tuple] = [(head, "prefix", word[:n]) for n in range(naming.MIN_WORD, len(word))]
    keys += [(head, "ending", word[n:]) for n in range(naming.MIN_WORD, len(word) - naming.MIN_WORD)]
    return keys


def reference_candidates(profiles: Sequence[ColumnProfile], pairs: Pairs, names: TableNames | None = None) -> None:
    """P_S: every column whose name refers to another table, paired with that table's key.

    A column empty or constant in the sample still refers by its name; the referenced
    column must be a key by name or by its sample (:meth:`TableNames.key_worth`).
    A reference resolves inside its own source when that source has a match.

    Args:
        profiles: All column profiles.
        pairs: Accumulator, updated in place.
        names: The table-name indexes (built from ``profiles`` when not given).
    """
    names = names or TableNames(profiles)
    for i, p in enumerate(profiles):
        ref = parse_reference(p.column)
        own = naming.key_name_worth(p.column, names.forms[p.table_id], names.others[p.table_id])
        if not ref.core or own > 0.0 or ref.core in names.forms[p.table_id]:
            continue  # a bare key word, its own table's key, or about its own entity (dokur.dokur_no_4)
        found = _resolve(p, ref, names)
        if not found:
            continue
        best = max(evidence for _, evidence, _, _ in found)
        winner = next(profiles[c].table_id for c, evidence, _, _ in found if evidence == best)
        # A name stands alone when it resolves to one parent best, outside copies (their references are
        # their original's), and no key of the same name elsewhere (Student_Enrolment_Courses.student_course_id)
        # competes with what the name resolves to (Courses, role word dropped).
        rivals = names.keys_named(p.source, p.tokens) - {p.table_id}
        sole = (
            sum(evidence == best for _, evidence, _, _ in found) == 1
            and p.table_id not in names.copies
            and (not rivals or winner in rivals)
        )
        for target, evidence, key_by_name, role in found:
            # a number marks a reference as a key word does: home_player_1 .. home_player_11
            marked = ref.key is not None or ref.numbered
            pattern = "fk_name" if marked or _repeats(ref, profiles[target].column) else "fk_table"
            # without a key word on either side, a name is an attribute (ProductReview.EmailAddress
            # holds addresses): values must say it refers to EmailAddress.EmailAddress
            keyword = ref.key is not None or parse_reference(profiles[target].column).key is not None
            # An unmarked name (no key word, number, agent or link word) with a role word dropped is an
            # attribute (home_score) unless values meet beyond chance (SourceAirport in AirportCode).
            stands = ref.marked or not role or _meets(p, profiles[target])
            named = sole and evidence == best and keyword and stands
            sig = pairs.setdefault(pair_key(i, target), Signals())
            sig.add_pattern(pattern, i, evidence, named=named, key_by_name=key_by_name)


def _resolve(p: ColumnProfile, ref: NameReference, names: TableNames) -> list[tuple[int, float, bool, bool]]:
    """Per table the name resolves to: the referenced column, the name evidence, whether the column's
    name makes it the key, and whether a role word was dropped to get there."""
    matches: dict[str, tuple[float, tuple[str, ...] | None, bool]] = {}
    for span, span_worth in ref.spans():
        if span[-1].isdigit():
            continue
        # generic words (status, date, type) name a table only exactly: never by abbreviation or ending
        loose = ref.key is not None and not set(span) <= GENERIC_TOKENS
        for table_id in names.tables_named(span, loose):
            worth = span_worth * naming.entity_match(span, names.forms[table_id])
            # a role word dropped *and* a partial table name (purchase_order_id, WorkOrder) need a key
            # named after the entity itself: OrderDateKey -> DimDate.DateKey
            strict = span if span_worth < 1.0 and worth < span_worth else None
            if worth > matches.get(table_id, (0.0,))[0]:
                matches[table_id] = (worth, strict, span_worth < 1.0)
        # a key named after the entity names a table its own name does not: home_team_api_id -> Team.team_api_id
        for table_id, key_worth in names.key_cores.get((p.source, span), ()):
            matches.setdefault(table_id, (span_worth * key_worth, span, span_worth < 1.0))
    matches.pop(p.table_id, None)
    # an agent word (creator, approver) is a role only as an audit convention, repeated across tables:
    # one column named so (SensorNumber, Beginning of Quarter Key) is more likely a thing
    if not matches and ref.agent and (ref.key == "by" or names.spread[(p.source, p.norm_name)] >= AGENT_SPREAD):
        for entity in naming.AGENT_ENTITIES:
            for table_id in names.exact.get((entity,), ()):
                if names.forms[table_id].get((entity,)) == 1.0 and table_id != p.table_id:
                    matches[table_id] = (naming.AGENT_WORTH, None, False)
    home = {t: m for t, m in matches.items() if names.source[t] == p.source}
    found = []
    for table_id, (worth, strict, role) in (home or matches).items():
        target = _target(p, ref, table_id, names, strict)
        if target is not None:
            column, column_worth, by_name = target
            found.append((column, round(worth * column_worth, 4), by_name, role))
    return found


def _target(
    p: ColumnProfile, ref: NameReference, table_id: str, names: TableNames, strict: tuple[str, ...] | None = None
) -> tuple[int, float, bool] | None:
    """The column of ``table_id`` that ``p`` references, its worth, and whether its name makes it the key.

    Among the table's keys, one with the same name or the same entity (``CityID`` for
    ``DeliveryCityID``) or a bare ``id`` is worth 1.0 when its name makes it the key; any
    other key its own worth. Values that meet, then values shaped alike decide between keys
    (``Player.id`` or ``Player.player_api_id`` for ``home_player_1``), then the worth. With ``strict``, only
    a key named after exactly those entity words counts.
    """
    best: tuple[bool, bool, float, int, bool] | None = None
    for c in names.columns[table_id]:
        q = names.profiles[c]
        worth, by_name = names.key_worth(c)
        if worth == 0.0 and q.tokens == p.tokens:
            worth = 1.0  # the same name, not a key: scoring weakens it (NOT_KEY_FACTOR) and values must agree
        if worth == 0.0 or not names.compatible(p, ref, q):
            continue
        if strict is not None and parse_reference(q.column).core != strict:
            continue
        if by_name and (q.tokens == p.tokens or _repeats(ref, q.column)):
            worth = 1.0
        looks = (bool(p.value_set & q.value_set), scoring.shapes_agree(p, q))
        if best is None or (*looks, worth) > best[:3]:
            best = (*looks, worth, c, by_name)
    return None if best is None else (best[3], best[2], best[4])


def _repeats(ref: NameReference, column: str) -> bool:
    """Whether a referenced column's name repeats the reference's entity (``CityID`` for ``DeliveryCityID``).

    A bare key (``id``) repeats any reference that carries a key word itself.
    """
    other = parse_reference(column)
    if not other.core:
        return ref.key is not None  # flights.Airline does not name airlines.uid; airline_id would
    return other.core == ref.core[-len(other.core) :]


def _meets(a: ColumnProfile, b: ColumnProfile) -> bool:
    """Whether two columns share a sampled value that chance does not explain."""
    return bool(a.value_set & b.value_set) and not scoring.coincidental_overlap(a, b)
