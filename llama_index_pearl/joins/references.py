"""P_S by name: each column whose name refers to another table, resolved through table-name indexes.

A column's name (:func:`~llama_index_pearl.joins.naming.parse_reference`) is looked up
in the indexes of :class:`~llama_index_pearl.joins.table_names.TableNames`: the names
every table goes by, keys named after an entity, the tables a detail table extends.
Inside the referenced table, the column is its key by name
(:func:`~llama_index_pearl.joins.naming.key_name_worth`) or by its sample. Nothing
compares all pairs of columns or tables.

The name evidence of a pair is the product of the entity match and the referenced
column's worth, times the pattern's strength; the best parent of a column, when it is
the only one at that evidence, is marked ``sole``: inside one source, such a reference
stands without value overlap (:mod:`~llama_index_pearl.joins.edges`).

Pipeline step: joins (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from llama_index_pearl.joins import abbreviations, naming, scoring
from llama_index_pearl.joins.naming import GENERIC_TOKENS, NameReference, parse_reference
from llama_index_pearl.joins.profiles import ColumnProfile
from llama_index_pearl.joins.signals import Pairs, Signals, pair_key
from llama_index_pearl.joins.table_names import TableNames, starts_with_qualifier

__all__ = ["AGENT_SPREAD", "Resolved", "reference_candidates"]

# Tables (copies aside) that must share an ..er/..or_id column before it reads as a role
# (benchmarks/README.md, "Constants": references.AGENT_SPREAD).
AGENT_SPREAD = 2


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
        ref = parse_reference(p.bare_name)
        own = naming.key_name_worth(p.bare_name, names.forms[p.table_id], names.others[p.table_id])
        if not ref.core or own > 0.0 or ref.core in names.forms[p.table_id] or _qualified(i, ref, names):
            continue  # a bare key word, its own table's key, or about its own entity (dokur.dokur_no_4)
        found = _resolve(p, ref, names)
        if not found:
            continue
        best = max(r.rank for r in found)
        winner = next(r for r in found if r.rank == best)
        # A name stands alone when it resolves to one parent best, outside copies (their references are
        # their original's; a copy's own rows are its original's: races_ext.race_id joins races), and, when a
        # role word was dropped to get there (Courses for student_course_id), no key of the same name elsewhere
        # (Student_Enrolment_Courses.student_course_id) competes.
        rivals = names.keys_named(p.source, p.tokens) - {p.table_id} if winner.role else set()
        sole = (
            sum(r.rank == best for r in found) == 1
            and (p.table_id not in names.copies or _original_key(p, profiles[winner.column], names))
            and (not rivals or profiles[winner.column].table_id in rivals)
        )
        for resolved in found:
            target, evidence, key_by_name, role = resolved[:4]
            # a number marks a reference as a key word does: home_player_1 .. home_player_11
            marked = ref.key is not None or ref.numbered
            pattern = "fk_name" if marked or _repeats(ref, profiles[target].bare_name) else "fk_table"
            # without a key word on either side, a name is an attribute (ProductReview.EmailAddress
            # holds addresses): values must say it refers to EmailAddress.EmailAddress
            keyword = ref.key is not None or parse_reference(profiles[target].bare_name).key is not None
            # An unmarked name (no key word, number, agent or link word) with a role word dropped is an
            # attribute (home_score) unless values meet beyond chance (SourceAirport in AirportCode) or are
            # codes of the key's one length (departure_airport of three letters, as airport_code).
            stands = ref.marked or not role or _meets(p, profiles[target]) or _codes_alike(p, profiles[target])
            named = sole and resolved.rank == best and keyword and stands
            sig = pairs.setdefault(pair_key(i, target), Signals())
            sig.add_pattern(pattern, i, evidence, named=named, key_by_name=key_by_name)


class Resolved(NamedTuple):
    """A table a reference's name resolves to.

    Args:
        column: Profile index of the referenced column.
        evidence: Name evidence (entity match times the column's worth).
        key_by_name: The referenced column's name makes it its table's key.
        role: A role word was dropped to get there (``gender_concept_id`` -> ``concept``).
        extends: The referencing table's name extends this one's (``EmployeePayHistory``, ``Employee``).
        by_table_name: The table's own name is the entity (``orders`` for ``order_id``), not only a key of it
            named after the entity (``order_items.order_id``, unique in a sample of five rows).
    """

    column: int
    evidence: float
    key_by_name: bool
    role: bool
    extends: bool
    by_table_name: bool = True

    @property
    def rank(self) -> tuple[float, bool, bool]:
        # of two equal resolutions, the table the entity names is the parent: a sibling's copy of the key is
        # unique in a small sample by chance (a five-row order_items holds five distinct order ids)
        return self.evidence, self.extends, self.by_table_name


# table -> (worth, strict entity, role dropped, named by its own name)
Matches = dict[str, tuple[float, tuple[str, ...] | None, bool, bool]]


def _resolve(p: ColumnProfile, ref: NameReference, names: TableNames) -> list[Resolved]:
    """Every table the name of ``p`` resolves to, with what the resolution is worth."""
    matches = _name_matches(p, ref, names)
    named = set(matches) - {p.table_id}
    extended = _extension_matches(p, ref, names, matches)
    matches.pop(p.table_id, None)
    # an agent word (creator, approver) is a role only as an audit convention, repeated across tables:
    # one column named so (SensorNumber, Beginning of Quarter Key) is more likely a thing
    named_role = ref.key == "by" or naming.named_role(ref.core[-1])
    agents = {}
    if not named and ref.agent and (named_role or names.spread[(p.source, p.norm_name)] >= AGENT_SPREAD):
        for entity in naming.AGENT_ENTITIES:
            for table_id in names.exact.get((entity,), ()):
                if names.forms[table_id].get((entity,)) == 1.0 and table_id != p.table_id:
                    agents[table_id] = (naming.AGENT_WORTH, None, False, True)
    if agents:  # a role names a person: the people's table before a table that only shares the column (Managers)
        matches, extended = agents, set()
    home = {t: m for t, m in matches.items() if names.source[t] == p.source}
    found = []
    for table_id, (worth, strict, role, by_table_name) in (home or matches).items():
        target = _target(p, ref, table_id, names, strict)
        if target is None or (role and not _same_key_word(ref, names.profiles[target[0]].bare_name)):
            continue  # a role-prefixed ID is no Key: "WWI Purchase Order ID" is a business id, not Order Key
        column, column_worth, by_name = target
        # the key of an extended table is one by position: the sample said nothing against it
        extends = table_id in extended
        found.append(Resolved(column, round(worth * column_worth, 4), by_name or extends, role, extends, by_table_name))
    return found


def _name_matches(p: ColumnProfile, ref: NameReference, names: TableNames) -> Matches:
    """Tables named by a suffix of the reference's entity words, or by a key named after them."""
    matches: Matches = {}
    for span, span_worth in ref.spans():
        if span[-1].isdigit():
            continue
        # generic words (status, date, type) name a table only exactly: never by abbreviation or ending
        loose = ref.key is not None and not set(span) <= GENERIC_TOKENS
        named_here = False
        for table_id in names.tables_named(span, loose):
            worth = span_worth * abbreviations.entity_match(span, names.forms[table_id])
            named_here = named_here or (worth > 0.0 and names.source[table_id] == p.source)
            # a role word dropped *and* a partial table name (purchase_order_id, WorkOrder) need a key
            # named after the entity itself: OrderDateKey -> DimDate.DateKey
            strict = span if span_worth < 1.0 and worth < span_worth else None
            if worth > matches.get(table_id, (0.0,))[0]:
                matches[table_id] = (worth, strict, span_worth < 1.0, True)
        # a key named after the entity names a table its own name does not (home_team_api_id -> Team.team_api_id);
        # where a table of the source is named by it, that table is the entity's (olist_orders for order_id,
        # whatever sibling holds order_id unique in a five-row sample)
        for table_id, key_worth in () if named_here else names.key_cores.get((p.source, span), ()):
            matches.setdefault(table_id, (span_worth * key_worth, span, span_worth < 1.0, False))
        if loose and len(span) == 1:  # ss_addr_sk -> customer_address.ca_address_sk, cdemo -> cd_demo_sk
            for table_id in names.keys_abbreviated(p.source, span[0]):
                matches.setdefault(
                    table_id, (span_worth * abbreviations.ABBREVIATION_WORTH, None, span_worth < 1.0, False)
                )
    return matches


def _extension_matches(p: ColumnProfile, ref: NameReference, names: TableNames, matches: Matches) -> set[str]:
    """Add the tables whose key ``p`` is because ``p``'s table extends them; return them.

    A detail table's column that is the key of the table its name extends refers to that table:
    EmployeePayHistory.BusinessEntityID is an Employee's, whatever "business entity" names. The key
    is unique in its sample or, with none, the table's first column (OrderLines.StockItemID is not).
    """
    extended = set()
    if ref.key is None or p.table_id in names.copies:
        return extended
    for table_id in names.extends.get(p.table_id, ()):
        columns = names.columns[table_id]
        same = [c for c in columns if names.profiles[c].tokens == p.tokens]
        q = names.profiles[same[0]] if same else None
        if q is not None and (q.key_like if q.joinable else same[0] == columns[0]):
            matches[table_id] = (1.0, ref.core, False, True)
            extended.add(table_id)
    return extended


def _qualified(i: int, ref: NameReference, names: TableNames) -> bool:
    """Whether column ``i`` is a qualified lookup's key or refers to one, which the same name decides
    (:mod:`~llama_index_pearl.joins.same_name`): ``d_labitems.itemid`` leads a table that glues a qualifier to
    its entity (lab items), and ``labevents.itemid`` starts with that qualifier; neither is a reference to the
    plain ``d_items``."""
    p = names.profiles[i]
    if len(ref.core) != 1:
        return False
    lookups = names.qualified_lookups(p.source, p.tokens, ref.core[0])
    return i in lookups or any(starts_with_qualifier(p.table_id, qualifier) for qualifier in lookups.values())


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
        if worth == 0.0 and q.tokens == p.tokens and not q.joinable:
            worth = 1.0  # the same name and no rows to say it is no key: the extended table's key by position
        if worth == 0.0 or not names.compatible(p, ref, q):
            continue
        if strict is not None and strict not in {parse_reference(q.bare_name).core, parse_reference(q.column).core}:
            continue
        if by_name and (q.tokens == p.tokens or _repeats(ref, q.bare_name)):
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


def _original_key(p: ColumnProfile, key: ColumnProfile, names: TableNames) -> bool:
    """Whether ``key`` identifies the table ``p``'s table copies (``races`` of ``races_ext``), ``p`` named alike.

    A copy holds its original's rows, so numbers drawn from one range: ``sprint_results.result_id`` (2 to 254),
    beside ``results.result_id`` (5,230 to 22,727), numbers rows of its own.
    """
    if not (key.identifier and key.tokens == p.tokens and key.table_id in names.extends.get(p.table_id, ())):
        return False
    if p.int_range is None or key.int_range is None:
        return True
    return max(p.int_range[0], key.int_range[0]) <= min(p.int_range[1], key.int_range[1])


def _codes_alike(a: ColumnProfile, b: ColumnProfile) -> bool:
    """Whether two text columns hold codes of one same length (``DME`` and ``ESL``): one code list's values."""
    lengths = {len(v) for v in a.sample} | {len(v) for v in b.sample}
    return a.dtype == b.dtype == "text" and bool(a.sample) and bool(b.sample) and len(lengths) == 1


def _same_key_word(ref: NameReference, column: str) -> bool:
    """Whether a referenced column's key word (if any) is the reference's own (``ID`` and ``ID``, not ``Key``)."""
    theirs = parse_reference(column).key
    return ref.key is None or theirs is None or theirs == ref.key
