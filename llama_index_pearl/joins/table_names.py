"""Every table's names, columns, copies and extensions, indexed so a column's name finds its tables.

:class:`TableNames` is built once per discovery from the column profiles: the name forms
of each table (:func:`~llama_index_pearl.joins.naming.table_forms`) in an exact index and
a loose one (prefixes of a form's last word: abbreviations; its endings: glued compounds),
the keys named after an entity (``Team.team_api_id``), copies of other tables
(``Customers_Archive``) and the tables a table's name extends (``EmployeePayHistory`` of
``Employee``). :mod:`~llama_index_pearl.joins.references` resolves names through it.

Pipeline step: joins (docs/architecture.md).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field, replace

from llama_index_pearl.joins import abbreviations, naming, scoring
from llama_index_pearl.joins.naming import NameReference, parse_reference
from llama_index_pearl.joins.profiles import ColumnProfile

__all__ = ["COPY_COLUMNS", "COPY_SHARE", "TableNames", "glued_qualifier", "starts_with_qualifier"]


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
    extends: dict[str, list[str]] = field(default_factory=dict)
    families: dict[tuple, set[str]] = field(default_factory=lambda: defaultdict(set))
    named_alike: dict[tuple, list[int]] = field(default_factory=lambda: defaultdict(list))
    key_cores: dict[tuple, list[tuple[str, float]]] = field(default_factory=lambda: defaultdict(list))
    loose_key_cores: dict[tuple, list[tuple[str, str]]] = field(default_factory=lambda: defaultdict(list))
    spread: dict[tuple[str | None, str], int] = field(default_factory=lambda: defaultdict(int))
    leading_names: set[tuple[str | None, str]] = field(default_factory=set)  # (source, name): leads where it is
    row_numbers: set[tuple[str | None, str]] = field(default_factory=set)  # ... and in most tables of its source
    _key_worth: dict[int, tuple[float, bool]] = field(default_factory=dict)
    _keys_named: dict[tuple, set[str]] = field(default_factory=dict)
    _qualified: dict[tuple, dict[int, str]] = field(default_factory=dict)

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
        self.leading_names, self.row_numbers = _leading_names(self.profiles, self.columns)
        self.extends = _extensions(self.columns, self.source)
        for i, p in enumerate(self.profiles):
            self.named_alike[(p.source, p.tokens)].append(i)
            ref = parse_reference(p.bare_name)
            worth, _ = self.key_worth(i)
            # a prefix that abbreviates the table names its entity too: departments.dept_no is a "dept" key
            for core in {ref.core, parse_reference(p.column).core} if self.names_key(i) else ():
                if core:
                    self.key_cores[(p.source, core)].append((p.table_id, worth))
                if len(core) == 1 and len(core[0]) > abbreviations.MIN_WORD:
                    # abbreviations drop much of the word: addr of address, cust of customer; make is no maker
                    for n in range(abbreviations.MIN_WORD, int(abbreviations.SKELETON_SHARE * len(core[0])) + 1):
                        self.loose_key_cores[(p.source, core[0][:n])].append((p.table_id, core[0]))
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
        ``ContId``) is worth 1.0 whatever its name says: the sample shows it is one. Unique in its
        sample, a key named after words of its own table's name is its key by name too
        (``Student_Enrolment_Courses.student_course_id``).

        Args:
            i: Profile index of the column.
        """
        if i not in self._key_worth:
            p = self.profiles[i]
            worth, by_name = 0.0, False
            if not p.joinable or p.key_like:
                worth = naming.key_name_worth(p.bare_name, self.forms[p.table_id], self.others[p.table_id])
                by_name = worth > 0.0
                if p.key_like and p.has_key_token and not self._refers_beside_identifier(i):
                    worth = 1.0
                    core = parse_reference(p.bare_name).core
                    by_name = by_name or (bool(core) and set(core) <= _own_words(p.table_id))
            self._key_worth[i] = (worth, by_name)
        return self._key_worth[i]

    def _refers_beside_identifier(self, i: int) -> bool:
        """Whether column ``i`` names another table of its source while its own table has an identifier.

        Unique in a two-row ``staff`` table, ``address_id`` is the staff's address, not the staff's key:
        ``staff_id`` is. (A table without such an identifier, ``film_category``, is keyed by what it has.)
        """
        p = self.profiles[i]
        core = parse_reference(p.bare_name).core
        if not core or not any(c != i and self.profiles[c].identifier for c in self.columns[p.table_id]):
            return False
        return any(self.source[t] == p.source for t in self.tables_named(core, False) - {p.table_id})

    def row_number(self, i: int) -> bool:
        """Whether column ``i`` is its table's row number (``ROW_ID``: its name leads every table carrying it, and
        most tables of its source carry it; or a data frame's index written out, :data:`FRAME_INDEX_NAMES`)."""
        p = self.profiles[i]
        return (p.source, p.norm_name) in self.row_numbers

    def leading_column(self, table_id: str) -> int:
        """A table's first column after its row number (a DDL lists the key first)."""
        columns = self.columns[table_id]
        return columns[1] if len(columns) > 1 and self.row_number(columns[0]) else columns[0]

    def qualified_lookups(self, source: str | None, tokens: tuple[str, ...], entity: str) -> dict[int, str]:
        """The columns named ``tokens`` in ``source`` that lead a table whose name glues a qualifier before
        ``entity``, each with its qualifier (:func:`glued_qualifier`: ``d_labitems.itemid``, ``lab``); read once a
        name, as every column of the name asks.

        Args:
            source: Provenance.
            tokens: The columns' name tokens.
            entity: The one entity word of their name (``item`` of ``itemid``).
        """
        key = (source, tokens, entity)
        if key not in self._qualified:
            found = {}
            for c in self.named_alike.get((source, tokens), ()):
                table_id = self.profiles[c].table_id
                if self.leading_column(table_id) == c and (qualifier := glued_qualifier(entity, table_id)):
                    found[c] = qualifier
            self._qualified[key] = found
        return self._qualified[key]

    def names_key(self, i: int) -> bool:
        """Whether column ``i`` is its table's key by name, or a prefixed table's first column, unique, named as a key.

        Warehouse tables whose columns carry the table's prefix lead with their surrogate key:
        ``customer_demographics.cd_demo_sk`` is where a ``demo`` reference leads, whatever entity
        ``demo`` names. A column unique only in a sample (``cs_sold_time_sk`` of a fact table, the
        first column of a 10-row ``Likes``) is not.

        Args:
            i: Profile index of the column.
        """
        worth, by_name = self.key_worth(i)
        p = self.profiles[i]
        leading = (
            i == self.columns[p.table_id][0]
            and p.bare_name != p.column
            and parse_reference(p.bare_name).key is not None
        )
        return worth > 0.0 and (by_name or leading)

    def keys_named(self, source: str | None, tokens: tuple[str, ...]) -> set[str]:
        """Tables of ``source`` whose column named ``tokens`` is their key (:meth:`names_key`).

        Args:
            source: Provenance.
            tokens: The column's name tokens.
        """
        if (source, tokens) not in self._keys_named:
            alike = self.named_alike.get((source, tokens), ())
            self._keys_named[(source, tokens)] = {self.profiles[c].table_id for c in alike if self.names_key(c)}
        return self._keys_named[(source, tokens)]

    def compatible(self, p: ColumnProfile, ref: NameReference, q: ColumnProfile) -> bool:
        """Whether ``p`` can hold ``q``'s values; an empty numbered column has its family's type.

        ``fld_feature_3`` empty in the sample is text when ``apt_feature_1`` holds text.

        Args:
            p: The referencing column.
            ref: What its name says.
            q: The referenced column.
        """
        if not scoring.types_compatible(p, q):
            return False
        family = self.families.get((p.table_id, ref.core[-1:], ref.key), ()) if ref.numbered and not p.n_values else ()
        return all(scoring.types_compatible(replace(p, dtype=dtype), q) for dtype in family)

    def keys_abbreviated(self, source: str | None, word: str) -> set[str]:
        """Tables whose key is named after an entity that ``word`` abbreviates.

        ``addr`` of ``customer_address.ca_address_sk`` (a prefix of 3+ letters), and ``cdemo`` of
        ``customer_demographics.cd_demo_sk``: the entity after initials of the table's other words.

        Args:
            source: Provenance of the referencing column.
            word: The reference's entity, one word.
        """
        found = {t for t, _ in self.loose_key_cores.get((source, word), ())}
        for cut in range(1, len(word) - abbreviations.MIN_WORD + 1):
            initials, entity = word[:cut], word[cut:]
            for table_id, _ in self.key_cores.get((source, (entity,)), ()):
                rest = "".join(w for w in naming.table_name_words(table_id) if not w.startswith(entity))
                if rest and abbreviations.abbreviates_in_order(initials, rest):
                    found.add(table_id)
        return found

    def tables_named(self, span: tuple[str, ...], loose: bool) -> set[str]:
        """Tables with ``span`` among their forms; with ``loose``, also those it may abbreviate or end.

        Args:
            span: Entity words.
            loose: Whether prefixes and endings of a form's last word count.
        """
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


def glued_qualifier(entity: str, table_id: str) -> str:
    """What a table's name glues before an entity, as a word of its own (``lab`` of ``d_labitems`` for ``item``),
    else ``""``: lab items are the items of lab events, beside a plain ``d_items``.

    Args:
        entity: The entity word of a key's name (``item`` of ``itemid``).
        table_id: The table.
    """
    words = naming.table_name_words(table_id)
    last = naming.entity_singular(words[-1]) if words else ""
    qualifier = last[: -len(entity)] if last.endswith(entity) else ""
    return qualifier if len(qualifier) >= abbreviations.MIN_WORD else ""


def starts_with_qualifier(table_id: str, qualifier: str) -> bool:
    """Whether a table's name starts with a qualifier (``labevents`` with ``lab``)."""
    words = naming.table_name_words(table_id)
    return bool(qualifier) and bool(words) and words[0].startswith(qualifier)


def _own_words(table_id: str) -> set[str]:
    """The words of a table's name, singular."""
    return {naming.entity_singular(w) for w in naming.table_name_words(table_id)}


def _whole_forms(table_id: str) -> set[tuple[str, ...]]:
    return {form for form, worth in naming.table_forms(table_id).items() if worth == 1.0}


# A table holding COPY_SHARE of another's columns, and COPY_COLUMNS at least, under a name extending the
# other's, is a copy of it: archives, staging and temp tables, not a junction table named after a narrow one
# (benchmarks/README.md, "Constants": joins.table_names.COPY_SHARE).
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
        by_words[(source[table_id], naming.table_name_words(table_id))] = table_id
    copies = set()
    for table_id, cols in columns.items():
        words = naming.table_name_words(table_id)
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


def _extensions(columns: dict[str, list[int]], source: dict[str, str | None]) -> dict[str, list[str]]:
    """Per table, the tables of its source whose whole name begins or ends its own: ``EmployeePayHistory``
    extends ``Employee``, ``ProductVendor`` extends ``Vendor``, ``OrderLines`` extends ``Orders``,
    ``legislators_terms`` extends ``legislators``."""
    by_whole: dict[tuple[str | None, tuple[str, ...]], str] = {}
    for table_id in columns:
        for whole in _whole_forms(table_id):
            by_whole[(source[table_id], whole)] = table_id
    out: dict[str, list[str]] = {}
    for table_id in columns:
        for whole in _whole_forms(table_id):
            parts = [whole[:n] for n in range(1, len(whole))] + [whole[n:] for n in range(1, len(whole))]
            # the other table's name may stand plural inside this one's: legislators_terms, races_ext
            parts += [(*part[:-1], naming.entity_singular(part[-1])) for part in parts]
            found = [by_whole.get((source[table_id], part)) for part in parts]
            out[table_id] = [t for t in dict.fromkeys(found) if t is not None and t != table_id]
    return out


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
    keys: list[tuple] = [(head, "prefix", word[:n]) for n in range(abbreviations.MIN_WORD, len(word))]
    keys += [(head, "ending", word[n:]) for n in range(abbreviations.MIN_WORD, len(word) - abbreviations.MIN_WORD)]
    return keys


#: The names pandas gives a data frame's row labels written out as a column (``to_sql`` and ``reset_index`` write
#: ``index``, ``level_0`` when that is taken; ``to_csv`` an empty header, ``Unnamed: 0`` once pandas reads it back),
#: as normalised names: a row number.
FRAME_INDEX_NAMES = frozenset({"index", "level_0", "", "unnamed_0"})


def _leading_names(
    profiles: Sequence[ColumnProfile], columns: dict[str, list[int]]
) -> tuple[set[tuple[str | None, str]], set[tuple[str | None, str]]]:
    """Names that lead every table of a source carrying them, two tables at least (``order_id`` of orders and their
    lines), and the row numbers: those of them most tables of the source carry (``ROW_ID``), and a data frame's
    index written out (:data:`FRAME_INDEX_NAMES`) wherever it leads, in one table or in a few."""
    leads: dict[tuple[str | None, str], bool] = {}
    carried: dict[tuple[str | None, str], int] = defaultdict(int)
    tables: dict[str | None, int] = defaultdict(int)
    for table_columns in columns.values():
        tables[profiles[table_columns[0]].source] += 1
        for c in table_columns:
            name = (profiles[c].source, profiles[c].norm_name)
            leads[name] = leads.get(name, True) and c == table_columns[0]
            carried[name] += 1
    leading = {name for name, first in leads.items() if first and carried[name] >= 2}
    frame_indexes = {name for name, first in leads.items() if first and name[1] in FRAME_INDEX_NAMES}
    return leading, {name for name in leading if 2 * carried[name] >= tables[name[0]]} | frame_indexes
