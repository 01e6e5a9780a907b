"""Sources and tables as a person names them on the command line of a lake: ``--source chinook``, ``chinook/Invoice``.

A folder of databases gives long names: ``pearl index lakes/`` over ``lakes/chinook/tables/chinook__Invoice.csv``
makes the table ``chinook/tables/chinook__Invoice`` of the source ``chinook/tables``. A person says ``chinook`` and
``Invoice``. :func:`resolve_sources` reads what ``--source`` names (the source, the first or last parts of its path,
or the start of its name; as written, else in any case) as the one source it names; :func:`short_table_names`
writes each table as ``SOURCE/NAME`` with the shortest name of its source that ``--source`` reads back as it (its
first parts before its last), and its name without the ``chinook__`` that repeats the source (``db__table``
exports). A name that two tables would share stays whole; ``--json`` keeps the full ids.

Pipeline step: cli (docs/architecture.md).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence

from llama_index.core.schema import NodeWithScore

from llama_index_pearl.joins.graph import Join
from llama_index_pearl.retrieval.answer.join_hints import JoinHint
from llama_index_pearl.retrieval.answer.result_nodes import result_metadata
from llama_index_pearl.retrieval.search.scope import MAX_LISTED, listed, unknown_source

__all__ = [
    "MAX_LISTED",
    "listed",
    "resolve_sources",
    "short_table_names",
    "source_labels",
    "sources_named",
    "tables_named",
    "with_short_names",
]


def _named_by(wanted: str, sources: Collection[str]) -> list[str]:
    """The sources ``wanted`` names: itself; else those it is the first or last parts of; else those it starts;
    each rule read as written, then regardless of case (``Chinook`` names ``chinook`` where nothing else fits)."""
    for fold in (_as_written, str.casefold):
        name = fold(wanted)
        exact = [s for s in sources if fold(s) == name]
        parts = exact or [s for s in sources if fold(s).startswith(name + "/") or fold(s).endswith("/" + name)]
        found = parts or [s for s in sources if fold(s).startswith(name)]
        if found:
            return sorted(found)
    return []


def _as_written(name: str) -> str:
    return name


def resolve_sources(wanted: Sequence[str], sources: Collection[str]) -> list[str]:
    """The sources ``--source`` names: each name resolved to the one source it names.

    Args:
        wanted: The names given (``--source``, repeated).
        sources: The index's sources.

    Raises:
        ValueError: A name that names no source (the message lists the sources), or several (it lists them).
    """
    resolved = []
    for name in wanted:
        found = _named_by(name, sources)
        if not found:
            raise unknown_source(name, sources)
        if len(found) > 1:
            raise ValueError(f"--source {name!r} names several sources, {listed(found)}: give one of them")
        resolved.append(found[0])
    return list(dict.fromkeys(resolved))


def _label(source: str, sources: Collection[str]) -> str:
    """The shortest name of ``source`` that :func:`resolve_sources` reads back as it (the whole name at worst):
    of as many parts, its first parts before its last (``chinook`` of ``chinook/tables``: a database's folder leads
    its path, and ``tables`` is any export's sub-folder), whether or not the other sources have sub-folders."""
    parts = source.split("/")
    candidates = [c for n in range(1, len(parts)) for c in ("/".join(parts[:n]), "/".join(parts[-n:]))]
    return next((c for c in candidates if _named_by(c, sources) == [source]), source)


def source_labels(wanted: Iterable[str], sources: Collection[str]) -> dict[str, str]:
    """Each wanted source as a person names it: ``chinook`` for ``chinook/tables`` (:func:`resolve_sources` reads
    it back).

    >>> source_labels(["crm/tables"], {"crm/tables", "shop/tables"})
    {'crm/tables': 'crm'}

    Args:
        wanted: The sources to name.
        sources: Every source of the index (a label must tell them all apart).
    """
    return {source: _label(source, sources) for source in dict.fromkeys(wanted)}


def _name(table_id: str, source: str) -> str:
    """The table's name within its source, without a leading ``PART__`` or ``PART.`` that repeats a part of it."""
    name = table_id[len(source) + 1 :] if table_id.startswith(source + "/") else table_id.rsplit("/", 1)[-1]
    for part in source.split("/"):
        for joint in ("__", "."):
            if name.startswith(part + joint) and len(name) > len(part + joint):
                return name[len(part + joint) :]
    return name


def short_table_names(
    table_ids: Iterable[str], sources: Mapping[str, str | None], every_source: Collection[str] | None = None
) -> dict[str, str]:
    """Each table as a person names it: ``chinook/InvoiceLine`` for ``chinook/tables/chinook__InvoiceLine``.

    A table without a source keeps its id; a short name two tables would share, or that is another table's id,
    is left whole for both.

    >>> short_table_names(["crm/db/crm__users", "shop/db/orders"], {"crm/db/crm__users": "crm/db",
    ...                   "shop/db/orders": "shop/db"})
    {'crm/db/crm__users': 'crm/users', 'shop/db/orders': 'shop/orders'}

    Args:
        table_ids: The tables to name.
        sources: Every table of the index -> its source (all of them: a label must tell every source apart).
        every_source: The index's sources, where the caller has them (``None``: read off ``sources``, a pass over
            every table).
    """
    table_ids = list(dict.fromkeys(table_ids))
    known = every_source if every_source is not None else {s for s in sources.values() if s}
    labels = source_labels((s for t in table_ids if (s := sources.get(t))), known)
    short = {}
    for table_id in table_ids:
        source = sources.get(table_id)
        if not source:
            short[table_id] = table_id
            continue
        short[table_id] = f"{labels[source]}/{_name(table_id, source)}"
    counts = Counter(short.values())
    return {t: s if counts[s] == 1 and (s == t or s not in sources) else t for t, s in short.items()}


def tables_named(nodes: Sequence[NodeWithScore], hints: Sequence[JoinHint]) -> list[str]:
    """Every table a result names: its tables, the tables of their matched units, the join hints' tables.

    Args:
        nodes: A retrieval's result.
        hints: Its join hints.
    """
    named = []
    for hit in nodes:
        meta = result_metadata(hit)
        named += [meta["table_id"], *meta["matched_table_ids"]]
    for hint in hints:
        named += [*hint.tables, *([hint.via] if hint.via else [])]
    return list(dict.fromkeys(named))


def sources_named(nodes: Sequence[NodeWithScore]) -> list[str]:
    """Every source a result names: the routed one, its close rivals and copies, each table's set's source.

    Args:
        nodes: A retrieval's result.
    """
    named: list[str | None] = []
    for hit in nodes:
        meta = result_metadata(hit)
        named += [meta["routed_source"], meta["set_source"], *meta["route_rivals"], *meta["route_twins"]]
    return [s for s in dict.fromkeys(named) if s]


def with_short_names(
    nodes: Sequence[NodeWithScore],
    hints: Sequence[JoinHint],
    names: Mapping[str, str],
    sources: Mapping[str, str] | None = None,
) -> tuple[list[NodeWithScore], list[JoinHint]]:
    """Copies of a result's nodes and join hints that name tables by ``names`` and sources by ``sources``, for a
    person to read.

    Args:
        nodes: A retrieval's result (left as it is).
        hints: Its join hints.
        names: Table id -> the name shown (a table missing here keeps its id).
        sources: Source -> the name shown (:func:`source_labels`; a source missing here keeps its name).
    """
    labels = sources or {}

    def name(table_id: str) -> str:
        return names.get(table_id, table_id)

    def label(source: str | None) -> str | None:
        return labels.get(source, source) if source is not None else None

    def join(found: Join) -> Join:
        return dataclasses.replace(found, left_table=name(found.left_table), right_table=name(found.right_table))

    shown = []
    for hit in nodes:
        meta = result_metadata(hit).copy()
        meta["table_id"] = name(meta["table_id"])
        meta["matched_table_ids"] = [name(t) for t in meta["matched_table_ids"]]
        meta["routed_source"] = label(meta["routed_source"])
        meta["set_source"] = label(meta["set_source"])
        meta["route_rivals"] = [label(s) for s in meta["route_rivals"]]
        meta["route_twins"] = [label(s) for s in meta["route_twins"]]
        shown.append(NodeWithScore(node=hit.node.model_copy(update={"metadata": meta}), score=hit.score))
    renamed = [
        JoinHint(
            (name(h.tables[0]), name(h.tables[1])),
            tuple(join(j) for j in h.joins),
            name(h.via) if h.via else None,
            tuple(join(a) for a in h.alternatives),
        )
        for h in hints
    ]
    return shown, renamed
