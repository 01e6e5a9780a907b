"""P_S by the same name: columns of one source named alike join the one among them that is its table's key.

Identical specific names (``drivers.driverId``, ``results.driverId``) are candidates whose values must meet;
where a few sample rows share no value, what makes a column a key says which side is the key, and the join
then stands on the names (:meth:`Signals.add_pattern` with ``named``):

* **The owner** of a name is the one member that keys its table: its identifier (``Patient.ID``,
  ``cards.uuid``), or, in a table without one, its first column named as a key (a DDL lists the key first:
  ``clients.cust_code``). The other members **refer** to it when their table is keyed by another column
  (``invoices.cust_code`` beside ``invoice_id``) or their values repeat (``Laboratory.ID``: a patient's rows);
  without rows, every member but the owner refers. Of several tables leading with a name, the owner is the one
  it alone keys (``patients.subject_id``, not ``admissions.subject_id`` beside ``hadm_id``), unless every table
  carrying it leads with it (``order_id`` of orders and their lines). A row number (``ROW_ID``, leading most
  tables of a source; ``index``, which pandas writes for a data frame's row labels, leading any) keys no entity: a
  table's first column is read after it. Of several lookups a name alone
  keys (``d_icd_diagnoses``, ``d_icd_procedures``), a member refers to the one whose table's name shares the most
  words with its own (``diagnoses_icd``); a table that carries the name as a reference is none the name names.
  Where no member keys its table by position, the owner is the member whose name abbreviates its own table's
  after a qualifier's initial (``admissions.hadm_id``: the h(ospital) adm(ission)). A lookup that glues a
  qualifier to the name's entity (``d_labitems.itemid``: lab items) keys the members whose table's name starts
  with that qualifier (``labevents``), and the plain lookup (``d_items``) the others.
  Two owners (each table's own ``ID``, a ``rowguid`` beside every key) leave the name to the values.
* **A table named after another** (``legislators_terms`` of ``legislators``) refers to it through the key they
  share, whatever the name says (``id_bioguide``).
* **Abbreviations**: ``cust_id`` and ``customer_id``, ``emp_no`` and ``employee_id`` are one name when a
  key's entity word abbreviates the other's (:func:`~llama_index_pearl.joins.abbreviations.abbreviates`), with a key
  word of one kind (a number: ``id``, ``no``, ``num``).

Every such join needs values of an identifier's type on both sides: integers, or codes
(:func:`~llama_index_pearl.joins.sources.identifier_shaped`), or none read (a table known by its header).

Pipeline step: joins (docs/architecture.md).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence

from llama_index_pearl.joins import abbreviations, scoring, sources
from llama_index_pearl.joins.naming import (
    GENERIC_TOKENS,
    KEY_TOKENS,
    entity_singular,
    parse_reference,
    table_name_words,
)
from llama_index_pearl.joins.profiles import ColumnProfile
from llama_index_pearl.joins.signals import Pairs, Signals, pair_key
from llama_index_pearl.joins.table_names import TableNames, starts_with_qualifier

__all__ = ["IDENTIFYING", "MAX_SAME_NAME_GROUP", "MAX_SAME_NAME_KEYS", "NUMBER_KEYS", "same_name_candidates"]

MAX_SAME_NAME_KEYS = 20  # a "specific" name that is the key of more tables than this is not specific
MAX_SAME_NAME_GROUP = 10  # tables sharing a bare ID column: compared pairwise only in small groups
NUMBER_KEYS = frozenset({"id", "no", "num", "number", "nr"})  # key words that number an entity alike
# Bare key words that identify rows; a bare number or code (a car's number, a driver's code) is an attribute.
IDENTIFYING = frozenset({"id", "uid", "uuid", "guid", "key", "pk"})


def same_name_candidates(profiles: Sequence[ColumnProfile], names: TableNames, pairs: Pairs) -> None:
    """Identical specific names, and names alike but for an abbreviation, inside one source: each joins its key.

    Identical names across sources are no evidence (each database has its own ``customer_id``); the value
    index finds the real cross-source links.

    Args:
        profiles: All column profiles.
        names: The table-name indexes.
        pairs: Accumulator, updated in place.
    """
    groups: dict[tuple[str | None, str], list[int]] = defaultdict(list)
    for i, p in enumerate(profiles):
        if p.tokens:
            groups[(p.source, p.norm_name)].append(i)
    for (_, name), members in groups.items():
        if len(members) < 2:
            continue
        bare = name in KEY_TOKENS
        if name in IDENTIFYING or not set(name.split("_")) <= GENERIC_TOKENS:
            _owned_links(profiles, names, members, pairs, bare)
        if bare and len(members) <= MAX_SAME_NAME_GROUP:
            _bare_key_candidates(profiles, members, pairs)
        if not bare and not set(name.split("_")) <= GENERIC_TOKENS:
            _keyed_candidates(profiles, names, members, pairs)
    for members in _abbreviated(profiles, groups):
        _owned_links(profiles, names, members, pairs, False)


def _keyed_candidates(profiles: Sequence[ColumnProfile], names: TableNames, members: list[int], pairs: Pairs) -> None:
    """Each member paired with the group's key, to be joined where values meet.

    The key of a group is the member whose name makes it its table's key (``drivers.driverId``)
    when there is one; otherwise the members unique in their samples, unless chance explains it
    (:func:`~llama_index_pearl.joins.scoring.unique_by_chance`), or else, of a pair of columns, the one
    that leads a table without rows (``CustomerDemographics.CustomerTypeID``: a DDL lists its primary key
    first; among more tables sharing the name, the first column is as often a reference: ``subject_id``).
    A column unique in a 10-row sample (``driverStandings.driverId``) is no key when a member's name says which is.
    A group without a key makes no join (``batting.GIDP``, ``teams.W``): a join needs a key.
    """
    keys = [i for i in members if names.key_worth(i)[1]]
    keys = keys or [i for i in members if profiles[i].key_like and not scoring.unique_by_chance(profiles[i])]
    # no name nor rows say which is the key: of two tables without rows, the one it leads (a DDL lists it first)
    leading = not keys and len(members) == 2
    keys = keys or [i for i in members if leading and _leads_empty_table(profiles[i], names, i)]
    if len(keys) > MAX_SAME_NAME_KEYS:
        return
    lookups = _qualified_lookups(profiles, names, members, keys)
    own = {i: [k for k, q in lookups.items() if starts_with_qualifier(profiles[i].table_id, q)] for i in members}
    for k in keys:
        for i in members:
            # a lookup's own key, and a member its qualifier names (labevents), refer to no plain key
            if profiles[i].table_id != profiles[k].table_id and i not in lookups and not own[i]:
                pairs.setdefault(pair_key(i, k), Signals()).add_pattern(
                    "same_key_name", i, named=leading, key_by_name=leading
                )
    for i in members:
        for k in own[i]:
            if profiles[i].table_id != profiles[k].table_id:
                signals = pairs.setdefault(pair_key(i, k), Signals())
                signals.add_pattern("same_key_name", i, named=True, key_by_name=True)


def _qualified_lookups(
    profiles: Sequence[ColumnProfile], names: TableNames, members: list[int], keys: list[int]
) -> dict[int, str]:
    """Lookups that glue a qualifier to the name's entity, each with its qualifier: ``d_labitems`` leads with
    ``itemid`` (lab items), so ``labevents.itemid`` refers to it, not to the plain ``d_items``."""
    found = {}
    for k in members:
        p = profiles[k]
        core = parse_reference(p.bare_name).core
        if not keys or k in keys or len(core) != 1:
            continue
        qualifier = names.qualified_lookups(p.source, p.tokens, core[0]).get(k)
        if qualifier:
            found[k] = qualifier
    return found


def _owned_links(
    profiles: Sequence[ColumnProfile], names: TableNames, members: list[int], pairs: Pairs, bare: bool
) -> None:
    """Join each member that refers to the group's owner, or to the table its own table's name extends, by name."""
    if not _key_named(profiles[members[0]]):
        return  # no key by its name (is_deleted)
    usable = [i for i in members if _id_like(profiles[i]) and profiles[i].table_id not in names.copies]
    owners = [i for i in usable if _owns(profiles[i], names, i)] or _abbreviated_owners(profiles, usable)
    one_name = len({profiles[i].norm_name for i in members}) == 1  # not two names one abbreviates
    carriers = {profiles[i].table_id for i in members if one_name and i not in owners and _carries(profiles[i])}
    if _names_a_table(profiles[members[0]], names, carriers):
        return  # the name says which table it refers to: references decide
    first = profiles[members[0]]
    narrowed = not _one_table(profiles, owners) and not bare
    narrowed = narrowed and (first.source, first.norm_name) not in names.leading_names
    if narrowed:
        owners = [i for i in owners if _keyed_alone(profiles[i], names, i)]  # several lead with it: the one it keys
    single = owners[0] if _one_table(profiles, owners) else None
    for i in usable:
        p = profiles[i]
        parent = None if bare or p.identifier else _extended(profiles, names, usable, i)
        owner = single if single is not None or not narrowed else _named_like(profiles, owners, i)
        if parent is None and owner is not None and i not in owners and (_refers(p) or not p.n_values):
            parent = owner
        if parent is not None and profiles[parent].table_id != p.table_id:
            q = profiles[parent]
            pairs.setdefault(pair_key(i, parent), Signals()).add_pattern(
                "same_key_name", i, named=True, key_by_name=not q.joinable
            )


def _abbreviated_owners(profiles: Sequence[ColumnProfile], usable: list[int]) -> list[int]:
    """Where no member keys its table by position, the members whose name abbreviates their own table's, a
    qualifier's initial first: ``admissions.hadm_id`` (the h(ospital) adm(ission)), not ``labevents.hadm_id``."""
    found = []
    for i in usable:
        core = parse_reference(profiles[i].bare_name).core
        words = [entity_singular(w) for w in table_name_words(profiles[i].table_id)]
        if len(core) == 1 and len(words) == 1 and abbreviations.qualified(core[0], words[0]):
            found.append(i)
    return found


def _carries(p: ColumnProfile) -> bool:
    """Whether a column that does not own its name carries it as a reference: its values repeat, or none were read
    (a header's ``diagnoses_icd.icd_code``); a unique column (``cities_countries.country_code_2``) may key it."""
    return not p.n_values or (p.joinable and not p.unique)


def _one_table(profiles: Sequence[ColumnProfile], members: list[int]) -> bool:
    return len({profiles[i].table_id for i in members}) == 1


def _named_like(profiles: Sequence[ColumnProfile], owners: list[int], i: int) -> int | None:
    """Of several lookups keyed alone by a name, the owner column ``i`` refers to: the one whose table's name shares
    the most words with its own (``DIAGNOSES_ICD.ICD9_CODE`` -> ``D_ICD_DIAGNOSES``, not ``D_ICD_PROCEDURES``);
    ``None`` where none shares more than the others."""
    mine = _name_words(profiles[i].table_id)
    shared = sorted(((len(mine & _name_words(profiles[k].table_id)), k) for k in owners), reverse=True)
    if not shared or shared[0][0] == 0 or (len(shared) > 1 and shared[1][0] == shared[0][0]):
        return None
    return shared[0][1]


def _name_words(table_id: str) -> set[str]:
    return {entity_singular(w) for w in table_name_words(table_id)}


def _names_a_table(p: ColumnProfile, names: TableNames, carriers: Collection[str] = ()) -> bool:
    """Whether a column's name refers to a table of its source (``CountryCode``) or to a person by a role
    (``playerID``): the reference is then resolved by name (:mod:`~llama_index_pearl.joins.references`). A table
    that carries the name without keying it (``diagnoses_icd.icd_code``, among ``carriers``) is none it refers to."""
    ref = parse_reference(p.bare_name)
    spans = [span for span, _ in ref.spans()]
    named = {t for span in spans for t in names.tables_named(span, True) if names.source[t] == p.source}
    return ref.agent or bool(named - set(carriers))


def _owns(p: ColumnProfile, names: TableNames, i: int) -> bool:
    """Whether column ``i`` keys its table: its identifier, or the first column (after a row number), named as a key, of
    a table without one that describes something (a column not named as a key: a link table of references, ``Likes``,
    keys none alone).

    Without rows (a table known by its header) the first column named as a key is taken for the key.
    """
    if p.identifier:
        return True
    columns = names.columns[p.table_id]
    if i != names.leading_column(p.table_id) or not _key_named(p) or any(names.profiles[c].identifier for c in columns):
        return False
    if all(_key_named(names.profiles[c]) for c in columns):
        return False
    return not p.n_values or (p.key_like and not p.label)


def _keyed_alone(p: ColumnProfile, names: TableNames, i: int) -> bool:
    """Whether column ``i`` is its table's one column named as a key (a row number aside): ``patients.subject_id``
    beside a gender and an age keys its table, ``admissions.subject_id`` beside ``hadm_id`` leads a table keyed
    otherwise."""
    others = [c for c in names.columns[p.table_id] if c != i and not names.row_number(c)]
    return not any(_key_named(names.profiles[c]) for c in others)


def _refers(p: ColumnProfile) -> bool:
    """Whether a column holds references rather than keys: its table is keyed by another column, or it repeats."""
    return p.beside_identifier or (p.joinable and not p.unique)


def _extended(profiles: Sequence[ColumnProfile], names: TableNames, usable: list[int], i: int) -> int | None:
    """The member of the one table among ``usable`` that column ``i``'s table is named after, if it is a key there.

    A table named after another that the name itself names is left to :mod:`~llama_index_pearl.joins.references`.
    """
    extended = set(names.extends.get(profiles[i].table_id, ()))
    found = [k for k in usable if profiles[k].table_id in extended]
    if len({profiles[k].table_id for k in found}) != 1:
        return None
    q = profiles[found[0]]
    # without rows, the key is the column the table leads with (posts.parent_id is a post's parent, no key)
    return found[0] if (q.key_like if q.n_values else found[0] == names.columns[q.table_id][0]) else None


def _key_named(p: ColumnProfile) -> bool:
    """A key word ends or starts the column's name (``cust_code``, ``id_bioguide``)."""
    return parse_reference(p.bare_name).key is not None or (bool(p.tokens) and p.tokens[0] in KEY_TOKENS)


def _id_like(p: ColumnProfile) -> bool:
    """Values an identifier may hold: integers, codes (no words of a language), or none read (a header's text
    column, ``icd_code``)."""
    if p.dtype == "text":
        return not p.n_values or sources.identifier_shaped(p)
    return p.dtype in ("int", "empty")


def _abbreviated(profiles: Sequence[ColumnProfile], groups: dict[tuple[str | None, str], list[int]]) -> list[list[int]]:
    """Groups of one source whose names differ by an abbreviated entity word: ``cust_id`` with ``customer_id``.

    Names made of an entity word and a key word are compared: the shorter word must abbreviate the longer
    (:func:`~llama_index_pearl.joins.abbreviations.abbreviates`) and the key words agree, or both number the entity
    (``NUMBER_KEYS``: ``emp_no`` and ``employee_id``).
    """
    keyed: dict[str | None, list[tuple[str, str, list[int]]]] = defaultdict(list)
    for (source, _), members in groups.items():
        ref = parse_reference(profiles[members[0]].bare_name)
        if len(ref.core) == 1 and ref.key and not ref.suffix and not ref.numbered and ref.key != "by":
            keyed[source].append((ref.core[0], ref.key, members))
    merged = []
    for entries in keyed.values():
        for word, key, members in entries:
            for other, other_key, others in entries:
                alike = key == other_key or {key, other_key} <= NUMBER_KEYS
                if alike and word != other and abbreviations.abbreviates(word, other):
                    merged.append(members + others)
    return merged


def _leads_empty_table(p: ColumnProfile, names: TableNames, i: int) -> bool:
    """Whether column ``i`` is the first column, named as a key, of a table with no rows: a DDL's primary key.

    Not when its name refers to a table (``costs.prod_id`` leads with a product), when it is a row number (``ROW_ID``
    keys no entity), or when its table copies another.
    """
    if names.row_number(i):
        return False
    if p.n_rows or not p.has_key_token or i != names.columns[p.table_id][0] or p.table_id in names.copies:
        return False
    core = parse_reference(p.bare_name).core
    named = {t for start in range(len(core)) for t in names.tables_named(core[start:], True)}
    return not any(names.source[t] == p.source for t in named - {p.table_id})


def _bare_key_candidates(profiles: Sequence[ColumnProfile], members: list[int], pairs: Pairs) -> None:
    """Columns of one source both named ``ID`` (``Patient.ID``, ``Examination.ID``) whose samples share a value
    that chance does not explain (:func:`~llama_index_pearl.joins.scoring.improbable_overlap`): the same entities.

    Every table has its ``id``; two of them holding one same sparse number out of millions are one key.
    """
    for a, i in enumerate(members):
        for k in members[a + 1 :]:
            p, q = profiles[i], profiles[k]
            if p.table_id == q.table_id or not (p.key_like or q.key_like) or not scoring.improbable_overlap(p, q):
                continue
            # the parent is the unique side, or the one with more distinct values: it holds every entity
            referencing = k if (p.key_like, p.n_distinct) > (q.key_like, q.n_distinct) else i
            pairs.setdefault(pair_key(i, k), Signals()).add_pattern("same_key_name", referencing, named=True)
