"""Incremental indexing (paper appendix C.3): plan inserts and deletes without a rebuild.

Updates stay local to join edges. An insert runs the build's units step
(:mod:`~llama_index_pearl.corpus.units_step`) over its new tables with an insert scope: it scores candidate
edges only for column pairs involving a new table, generates questions only for newly selected paths (through
the generation cache and the index's generator), and makes units only for them; existing edges, paths,
questions and vectors are reused. A delete removes the table's units, its edges, and the units of every path
through it.

These functions read an index through :class:`UpdatableIndex` (its public state) and plan what should change
(:func:`plan_insert`, :func:`plan_delete`); :func:`insert_into` and :func:`delete_from` run an update whole,
embedding an insert's new units outside the index's locks and handing the change to the index's ``apply``
(``PearlTableIndex`` applies it under its write lock), so this module never imports the index.

The budget K after an insert is that of the whole corpus (the build's ``budget``;
by default every candidate path for a free generator, ⌊|C|/2⌋ per pool for an
LLM); new paths fill what the existing paths leave, so an insert-then-query
can differ from a full rebuild when the rebuild would have preferred a new path
over an existing one.

Pipeline step: corpus (docs/architecture.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import networkx as nx
from llama_index.core.llms import LLM
from llama_index.core.schema import TextNode

from llama_index_pearl.config import PearlConfig
from llama_index_pearl.corpus.augment import AugmentedCorpus
from llama_index_pearl.corpus.catalog import Catalog
from llama_index_pearl.corpus.columns import ColumnIndex
from llama_index_pearl.corpus.state import IndexContents, IndexState
from llama_index_pearl.corpus.units import PATH_ID, TABLE_IDS, unit_meta
from llama_index_pearl.corpus.units_step import CorpusBuild, InsertScope, StepsReport, corpus_units
from llama_index_pearl.foundations.timing import shown_stage, stage
from llama_index_pearl.generation import (
    GenerationReport,
    GlossaryReport,
    QueryGenerator,
    glossary_writer,
    paid_work_cache,
)
from llama_index_pearl.joins import drop_table
from llama_index_pearl.store.embedding import embedded
from llama_index_pearl.tables.inputs import TablesInput, read_tables
from llama_index_pearl.tables.table import Table
from llama_index_pearl.text.serialization import Serializer

__all__ = [
    "ApplyChange",
    "IndexChange",
    "UpdatableIndex",
    "UpdateReport",
    "delete_from",
    "insert_into",
    "plan_delete",
    "plan_insert",
]


class UpdatableIndex(IndexState, Protocol):
    """The public state of an index that updates are planned from (the index applies what they plan)."""

    @property
    def serializer(self) -> Serializer: ...

    @property
    def generator(self) -> QueryGenerator | None: ...

    @property
    def catalog(self) -> Catalog: ...


@dataclass
class UpdateReport(StepsReport):
    """What an insert or delete changed and cost.

    Args:
        added_tables: Ids of inserted tables.
        removed_tables: Ids of deleted (or replaced) tables.
        new_paths: Path ids selected and generated for.
        removed_paths: Path ids invalidated by deletes.
        new_units: Units embedded and added.
        removed_units: Units deleted.
        requests: Generation requests sent to the generator (paths and single-hop tables).
        generated: Requests answered by the generator (LLM calls for an LLM generator).
        cached: Requests served by the generation cache.
        prompt_tokens: Prompt tokens spent (the glossary's included).
        completion_tokens: Completion tokens spent (the glossary's included).
        glossary_written: Inserted tables whose glossary the LLM wrote (``PearlConfig.glossary``).
        glossary_cached: Inserted tables whose glossary the cache served.
        seconds: Wall time per stage.
        skipped: Table files that could not be read (``{"path", "reason"}``), when the insert skipped them.
        bad_lines: CSV files whose rows with more fields than the header were skipped (``skip_bad_lines``).
    """

    added_tables: list[str] = field(default_factory=list)
    removed_tables: list[str] = field(default_factory=list)
    new_paths: list[str] = field(default_factory=list)
    removed_paths: list[str] = field(default_factory=list)
    new_units: int = 0
    removed_units: int = 0
    requests: int = 0
    generated: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    glossary_written: int = 0
    glossary_cached: int = 0
    seconds: dict[str, float] = field(default_factory=dict)
    skipped: list[dict[str, str]] = field(default_factory=list)
    bad_lines: list[dict[str, Any]] = field(default_factory=list)

    def merge(self, other: UpdateReport) -> None:
        """Add another report's changes (a replace is a delete then an insert)."""
        for f in dataclasses.fields(self):
            mine, theirs = getattr(self, f.name), getattr(other, f.name)
            if isinstance(mine, list):
                mine.extend(theirs)
            elif isinstance(mine, dict):
                for stage_name, secs in theirs.items():
                    mine[stage_name] = mine.get(stage_name, 0.0) + secs
            else:
                setattr(self, f.name, mine + theirs)

    def add_generation(self, corpus: AugmentedCorpus) -> None:
        """Add the requests and tokens of a generation run of the units step (none without a generator run)."""
        if corpus.report is not None:
            self.count_generation(corpus.report)

    def count_glossary(self, report: GlossaryReport) -> None:
        """Add a glossary run's tables and tokens."""
        self.glossary_written += report.written
        self.glossary_cached += report.cached
        self.prompt_tokens += report.prompt_tokens
        self.completion_tokens += report.completion_tokens

    def count_generation(self, report: GenerationReport) -> None:
        """Add a generation run's requests and tokens."""
        self.requests += report.requests
        self.generated += report.generated
        self.cached += report.cached
        self.prompt_tokens += report.prompt_tokens
        self.completion_tokens += report.completion_tokens


@dataclass
class IndexChange:
    """What an update changes, for the index to apply in one step.

    Args:
        tables: Tables to add.
        units: Units to embed and add.
        removed_tables: Table ids to remove.
        removed_units: Unit ids to remove.
        join_graph: The join graph afterwards (``None``: unchanged).
        report: What the update did and cost.
        table_texts: The added tables' texts for an LLM (rendered while planning, outside the index's lock).
        columns: The added tables' column vectors (embedded while planning; ``None``: none).
    """

    tables: list[Table] = field(default_factory=list)
    units: list[TextNode] = field(default_factory=list)
    removed_tables: list[str] = field(default_factory=list)
    removed_units: list[str] = field(default_factory=list)
    join_graph: nx.Graph | None = None
    report: UpdateReport = field(default_factory=UpdateReport)
    table_texts: dict[str, str] = field(default_factory=dict)
    columns: ColumnIndex | None = None

    def apply_to(
        self, tables: MutableMapping[str, Table], units: dict[str, TextNode], join_graph: nx.Graph
    ) -> nx.Graph:
        """Change an index's tables and units in place; returns its join graph afterwards."""
        for table_id in self.removed_tables:
            tables.pop(table_id, None)
        for unit_id in self.removed_units:
            units.pop(unit_id, None)
        tables.update({t.id: t for t in self.tables})
        units.update({u.node_id: u for u in self.units})
        graph = self.join_graph if self.join_graph is not None else join_graph
        graph.add_nodes_from(t.id for t in self.tables)  # a whole-table index has a node per table too
        return graph


ApplyChange = Callable[[IndexChange], None]
"""How an index applies a planned change (``PearlTableIndex`` holds its write lock while it does)."""


def insert_into(
    index: UpdatableIndex,
    tables: TablesInput,
    config: PearlConfig,
    apply: ApplyChange,
    *,
    replace: bool = False,
    show_progress: bool = False,
    llm: LLM | None = None,
) -> UpdateReport:
    """An insert, whole (see ``PearlTableIndex.insert_tables``, which holds the index's update lock around this).

    A replace is planned as the deletes followed by the insert, against the index as the deletes will
    leave it (:meth:`~llama_index_pearl.corpus.units_step.InsertScope.without`), and applied as one change after
    the new units are embedded: if anything fails before that, the index still holds the old tables, and a
    retrieval never sees it without them.

    Args:
        index: The index.
        tables: The tables to add (anything ``load_tables`` accepts).
        config: The build's settings, with the insert's own reading/generation options.
        apply: Applies the change to the index (the new units carry their vectors meanwhile).
        replace: Replace tables whose id already exists.
        show_progress: Show progress bars.
        llm: The index's LLM: with ``config.glossary``, it (else an LLM generator's) writes the new tables' glossary.
    """
    report = UpdateReport()
    with stage(report.seconds, "total"):
        with stage(report.seconds, "load"):
            read = read_tables(
                tables,
                max_rows_read=config.max_rows_read,
                csv_options=config.csv_options,
                strict=config.strict,
                skip_bad_lines=config.skip_bad_lines,
            )
        report.skipped = [f.to_dict() for f in read.skipped]
        report.bad_lines = [b.to_dict() for b in read.bad_lines]
        loaded, writer = read.tables, glossary_writer(llm, index.generator, config)
        if writer is not None:
            with stage(report.seconds, "glossary"):
                loaded, glossary = writer.write_all(loaded, paid_work_cache(config.cache_dir))
            report.count_glossary(glossary)
        existing = [t.id for t in loaded if t.id in index.tables]
        if existing and not replace:
            raise ValueError(f"Tables already in the index: {', '.join(existing)} (pass replace=True to replace them)")
        scope = InsertScope.of(index)
        deletes: list[IndexChange] = []
        for table_id in existing:
            deletes.append(plan_delete(scope, table_id, allow_empty=True))
            scope = scope.without(deletes[-1].removed_tables, deletes[-1].removed_units, deletes[-1].join_graph)
        change = plan_insert(index, loaded, config, show_progress=show_progress, scope=scope)
        if deletes:
            change = _after_deletes(deletes, change, scope.join_graph)
        # embedding happens outside the index's write lock: retrievals go on meanwhile
        seconds, count = change.report.seconds, len(change.units)
        with (
            shown_stage(seconds, "embed", show_progress, total=count, unit="unit") as bar,
            embedded(change.units, index.embed_model, bar.update),
        ):
            apply(change)
        report.merge(change.report)
    return report


def _after_deletes(deletes: Sequence[IndexChange], insert: IndexChange, graph: nx.Graph) -> IndexChange:
    """One change: the deletes, then the insert planned after them (``graph``: the join graph they leave)."""
    report = UpdateReport()
    for change in (*deletes, insert):
        report.merge(change.report)
    return IndexChange(
        tables=insert.tables,
        units=insert.units,
        removed_tables=[t for d in deletes for t in d.removed_tables],
        removed_units=[u for d in deletes for u in d.removed_units],
        join_graph=insert.join_graph if insert.join_graph is not None else graph,
        report=report,
        table_texts=insert.table_texts,
        columns=insert.columns,
    )


def delete_from(index: UpdatableIndex, table_id: str, apply: ApplyChange) -> UpdateReport:
    """A delete, whole (see ``PearlTableIndex.delete_table``).

    Args:
        index: The index.
        table_id: The table to remove.
        apply: Applies the change to the index.
    """
    change = plan_delete(index, table_id)
    with stage(change.report.seconds, "delete"):
        apply(change)
    return change.report


def plan_insert(
    index: UpdatableIndex,
    loaded: Sequence[Table],
    config: PearlConfig,
    *,
    show_progress: bool = False,
    scope: InsertScope | None = None,
) -> IndexChange:
    """Units, tables and graph an insert adds (nothing embedded yet); see ``PearlTableIndex.insert_tables``.

    Args:
        index: The index (its encoder, generator and serializer).
        loaded: The tables to add, none of them in the index.
        config: The build's settings, with the insert's own reading/generation options.
        show_progress: Show progress bars.
        scope: The index as any replaced tables' deletes will leave it (default: as it is).

    Raises:
        ValueError: No tables, or no units produced.
    """
    if not loaded:
        raise ValueError("No tables to insert")
    scope = scope if scope is not None else InsertScope.of(index)
    change = IndexChange(tables=list(loaded))
    change.table_texts = {t.id: index.serializer.table_text(t, config.table_text_chars) for t in loaded}
    if config.column_vectors:
        with stage(change.report.seconds, "columns"):
            change.columns = ColumnIndex.build(loaded, index.embed_model, index.catalog.columns.words)
    build = CorpusBuild(
        loaded, index.embed_model, index.generator, index.serializer, config, change.report, show_progress, scope
    )
    change.units, change.join_graph = corpus_units(build)
    change.removed_units.extend(build.removed)
    if not change.units:
        raise ValueError("The insert produced no units")
    change.report.added_tables = [t.id for t in loaded]
    change.report.new_paths = [p.path_id for p in build.discovery.paths] if build.discovery is not None else []
    change.report.new_units = len(change.units)
    return change


def plan_delete(index: IndexContents, table_id: str, *, allow_empty: bool = False) -> IndexChange:
    """What removing a table removes: its units, its edges, and the units of every path through it.

    Args:
        index: The index.
        table_id: The table to remove.
        allow_empty: Allow removing the last table (a replace re-inserts it).

    Raises:
        ValueError: ``table_id`` is not in the index, or it is the last table.
    """
    if table_id not in index.tables:
        raise ValueError(f"Unknown table id {table_id!r}: not in the index")
    if len(index.tables) == 1 and not allow_empty:
        raise ValueError(f"Cannot delete {table_id!r}: it is the last table of the index")
    graph, removed_paths = drop_table(index.join_graph, table_id)
    dead_paths = {p.path_id for p in removed_paths}
    doomed = [
        u.node_id for u in index.units if table_id in unit_meta(u)[TABLE_IDS] or unit_meta(u)[PATH_ID] in dead_paths
    ]
    report = UpdateReport(removed_tables=[table_id], removed_paths=sorted(dead_paths), removed_units=len(doomed))
    return IndexChange(removed_tables=[table_id], removed_units=doomed, join_graph=graph, report=report)
