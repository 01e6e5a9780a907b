"""Incremental indexing (paper appendix C.3): plan inserts and deletes without a rebuild.

Updates stay local to join edges. An insert scores candidate edges only for
column pairs involving a new table, generates questions only for newly selected
paths (through the generation cache and the index's generator), and makes units
only for them; existing edges, paths, questions and vectors are reused. A delete
removes the table's units, its edges, and the units of every path through it.

These functions read an index through :class:`UpdatableIndex` (its public state)
and return what should change; the index embeds the new units and applies the
change under its write lock, so this module never imports the index.

The budget K after an insert is that of the whole corpus (the build's ``budget``;
by default every candidate path for a free generator, ⌊|C|/2⌋ per pool for an
LLM); new paths fill what the existing paths leave, so an insert-then-query
can differ from a full rebuild when the rebuild would have preferred a new path
over an existing one.

Pipeline step: storage (docs/architecture.md).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import networkx as nx
from llama_index.core import VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.schema import TextNode

from llama_index_pearl.config import PearlConfig
from llama_index_pearl.corpus.augment import build_augmented_units, star_units, table_units
from llama_index_pearl.corpus.build import corpus_units, selection_budget, split_for_generator
from llama_index_pearl.corpus.stores import embedded
from llama_index_pearl.corpus.units import KIND, PATH_ID, TABLE_IDS, UnitKind, unit_meta
from llama_index_pearl.foundations.timing import stage
from llama_index_pearl.generation import GenerationReport, QueryGenerator, cache_for
from llama_index_pearl.joins import JoinPath, drop_table, extend_join_paths, paths_from_graph, resolve_budget
from llama_index_pearl.joins.stars import join_stars
from llama_index_pearl.storage.state import IndexState
from llama_index_pearl.tables.inputs import TablesInput, read_tables
from llama_index_pearl.tables.table import Table
from llama_index_pearl.text.serialization import Serializer

__all__ = [
    "IndexChange",
    "UpdatableIndex",
    "UpdateReport",
    "delete_table",
    "insert_tables",
    "plan_delete",
    "plan_insert",
]


class UpdatableIndex(IndexState, Protocol):
    """The public state of an index that updates are planned from, and the one way to change it."""

    @property
    def join_paths(self) -> list[JoinPath]: ...

    @property
    def config(self) -> PearlConfig: ...

    @property
    def serializer(self) -> Serializer: ...

    @property
    def generator(self) -> QueryGenerator | None: ...

    def apply_change(self, change: IndexChange) -> None: ...


@dataclass
class UpdateReport:
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
        prompt_tokens: Prompt tokens spent.
        completion_tokens: Completion tokens spent.
        seconds: Wall time per stage.
        skipped: Table files that could not be read (``{"path", "reason"}``), when the insert skipped them.
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
    seconds: dict[str, float] = field(default_factory=dict)
    skipped: list[dict[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> UpdateReport:
        """Inverse of :meth:`to_dict`.

        Raises:
            TypeError: A key that is no field.
        """
        return cls(**data)

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
    """

    tables: list[Table] = field(default_factory=list)
    units: list[TextNode] = field(default_factory=list)
    removed_tables: list[str] = field(default_factory=list)
    removed_units: list[str] = field(default_factory=list)
    join_graph: nx.Graph | None = None
    report: UpdateReport = field(default_factory=UpdateReport)
    table_texts: dict[str, str] = field(default_factory=dict)

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


def insert_tables(
    index: UpdatableIndex, tables: TablesInput, config: PearlConfig, replace: bool, show_progress: bool
) -> UpdateReport:
    """See ``PearlTableIndex.insert_tables`` (which holds the index's update lock around this).

    A replace is planned as the deletes followed by the insert, against the index as the deletes will
    leave it (:class:`_Without`), and applied as one change after the new units are embedded: if
    anything fails before that, the index still holds the old tables, and a retrieval never sees it
    without them.
    """
    report = UpdateReport()
    with stage(report.seconds, "total"):
        with stage(report.seconds, "load"):
            read = read_tables(
                tables, max_rows_read=config.max_rows_read, csv_options=config.csv_options, strict=config.strict
            )
        loaded = read.tables
        report.skipped = [f.to_dict() for f in read.skipped]
        existing = [t.id for t in loaded if t.id in index.tables]
        if existing and not replace:
            raise ValueError(f"Tables already in the index: {', '.join(existing)} (pass replace=True to replace them)")
        planned: UpdatableIndex = index
        deletes: list[IndexChange] = []
        for table_id in existing:
            deletes.append(plan_delete(planned, table_id, allow_empty=True))
            planned = _Without(planned, deletes[-1])
        change = plan_insert(planned, loaded, config, show_progress=show_progress)
        if deletes:
            change = _after_deletes(deletes, change, planned.join_graph)
        # embedding happens outside the index's write lock: retrievals go on meanwhile
        with stage(change.report.seconds, "embed"), embedded(change.units, index.embed_model, show_progress):
            index.apply_change(change)
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
    )


@dataclass
class _Without:
    """An index as it will be once a planned delete is applied: what the insert of a replace is planned on."""

    index: UpdatableIndex
    change: IndexChange

    @property
    def tables(self) -> dict[str, Table]:
        return {k: t for k, t in self.index.tables.items() if k not in self.change.removed_tables}

    @property
    def units(self) -> list[TextNode]:
        removed = set(self.change.removed_units)
        return [u for u in self.index.units if u.node_id not in removed]

    @property
    def join_graph(self) -> nx.Graph:
        assert self.change.join_graph is not None  # plan_delete always sets it
        return self.change.join_graph

    @property
    def join_paths(self) -> list[JoinPath]:
        return paths_from_graph(self.join_graph)

    @property
    def embed_model(self) -> BaseEmbedding:
        return self.index.embed_model

    @property
    def vector_index(self) -> VectorStoreIndex:
        return self.index.vector_index

    @property
    def config(self) -> PearlConfig:
        return self.index.config

    @property
    def serializer(self) -> Serializer:
        return self.index.serializer

    @property
    def generator(self) -> QueryGenerator | None:
        return self.index.generator

    def apply_change(self, change: IndexChange) -> None:
        raise RuntimeError("A planned state of an index cannot be changed; apply to the index itself")


def delete_table(index: UpdatableIndex, table_id: str) -> UpdateReport:
    """See ``PearlTableIndex.delete_table``."""
    change = plan_delete(index, table_id)
    with stage(change.report.seconds, "delete"):
        index.apply_change(change)
    return change.report


def plan_insert(
    index: UpdatableIndex, loaded: Sequence[Table], config: PearlConfig, *, show_progress: bool = False
) -> IndexChange:
    """Units, tables and graph an insert adds (nothing embedded yet); see ``PearlTableIndex.insert_tables``.

    Args:
        index: The index, as any replaced tables' deletes will leave it.
        loaded: The tables to add, none of them in the index.
        config: The build's settings, with the insert's own reading/generation options.
        show_progress: Show progress bars.

    Raises:
        ValueError: No tables, or no units produced.
    """
    if not loaded:
        raise ValueError("No tables to insert")
    change = IndexChange(tables=list(loaded))
    change.table_texts = {t.id: index.serializer.table_text(t, config.table_text_chars) for t in loaded}
    corpus = [*index.tables.values(), *loaded]
    steps = _InsertSteps(index, loaded, corpus, config, change, show_progress)
    change.units, change.join_graph = corpus_units(steps)
    if not change.units:
        raise ValueError("The insert produced no units")
    change.report.added_tables = [t.id for t in loaded]
    change.report.new_units = len(change.units)
    return change


@dataclass
class _InsertSteps:
    """The units steps of an insert (:class:`~llama_index_pearl.corpus.build.UnitsSteps`), composed as a build's.

    Units for the new tables, the paths through them and the stars of the graph after the insert; a star
    that changed is recorded in ``change.removed_units``.
    """

    index: UpdatableIndex
    loaded: Sequence[Table]
    corpus: Sequence[Table]  # the index's tables and the new ones
    config: PearlConfig
    change: IndexChange
    show_progress: bool

    def own_units(self) -> list[TextNode]:
        return table_units(self.loaded, self.index.serializer, self.config)

    def discover(self) -> tuple[nx.Graph, list[JoinPath], list[JoinPath]]:
        """The graph after the insert, the new paths the generator writes and those for its fallback."""
        index, config, corpus = self.index, self.config, self.corpus
        with stage(self.change.report.seconds, "discovery"):
            discovery = extend_join_paths(
                corpus,
                index.join_graph,
                [t.id for t in self.loaded],
                index.embed_model,
                budget=_discovery_budget(index, len(corpus)),
                lambda_div=config.lambda_div,
                use_declared=config.use_declared_joins,
                cross_source_joins=config.cross_source_joins,
                show_progress=self.show_progress,
            )
        self.change.join_graph = discovery.graph
        self.change.report.new_paths = [p.path_id for p in discovery.paths]
        if index.generator is None:
            return discovery.graph, list(discovery.paths), []
        # Paths already in the index count against the budget of their pool; with a free fallback
        # only the build's paid share of them did (at most the budget of the corpus before the insert).
        old_budget = _budget(index, len(index.tables))
        used = Counter(p.kind for p in index.join_paths)
        if old_budget is not None:
            used = Counter({kind: min(n, old_budget) for kind, n in used.items()})
        paid, beyond = split_for_generator(discovery.paths, _budget(index, len(corpus)), index.generator, used=used)
        return discovery.graph, paid, beyond

    def generate(self, paths: Sequence[JoinPath], beyond: Sequence[JoinPath]) -> list[TextNode]:
        """Units for the new paths, then single-hop units for new tables left in no path (if the build had them)."""
        with stage(self.change.report.seconds, "generation"):
            return _generate(self, paths, beyond)

    def stars(self, graph: nx.Graph) -> list[TextNode]:
        """Star units of the graph after the insert that the index lacks; stars that changed are removed."""
        if not self.config.star_units:
            return []
        with stage(self.change.report.seconds, "generation"):
            stars = star_units(join_stars(graph), {t.id: t for t in self.corpus}, self.index.serializer)
        wanted = {u.node_id for u in stars}
        held = {u.node_id for u in self.index.units if unit_meta(u)[KIND] == UnitKind.STAR.value}
        self.change.removed_units.extend(sorted(held - wanted))
        return [u for u in stars if u.node_id not in held]


def _budget(index: UpdatableIndex, n_tables: int) -> int | None:
    """Paths per pool for the index's generator (raises, naming the missing LLM, as generation would)."""
    generator = index.generator
    return resolve_budget(index.config.budget, n_tables, generator.cost_per_path if generator is not None else 1.0)


def _discovery_budget(index: UpdatableIndex, n_tables: int) -> int | None:
    """Paths selected on insert: as in a build (:func:`~llama_index_pearl.corpus.build.selection_budget`)."""
    generator = index.generator
    budget = _budget(index, n_tables)
    return budget if generator is None else selection_budget(generator, budget)


def _generate(steps: _InsertSteps, paid: Sequence[JoinPath], beyond: Sequence[JoinPath]) -> list[TextNode]:
    index, change, config = steps.index, steps.change, steps.config
    generator = index.generator
    if generator is None:
        return []
    # Single-hop tables are chosen separately: build_augmented_units would pick every
    # table of the mapping that the *new* paths miss, old ones included.
    runs = [({t.id: t for t in steps.corpus}, paid, beyond, dataclasses.replace(config, single_hop=False))]
    if config.single_hop and change.join_graph is not None:
        covered = {t for p in paths_from_graph(change.join_graph) for t in p.tables}
        alone = {t.id: t for t in steps.loaded if t.id not in covered}
        if alone:
            runs.append((alone, [], [], config))
    cache = cache_for(generator, config.cache_dir)
    units: list[TextNode] = []
    for tables, kept, extra, run_config in runs:
        augmented = build_augmented_units(
            tables,
            kept,
            generator,
            index.serializer,
            run_config,
            fallback_paths=extra,
            cache=cache,
            show_progress=steps.show_progress,
        )
        units.extend(augmented.units)
        if augmented.report is not None:
            change.report.count_generation(augmented.report)
    return units


def plan_delete(index: UpdatableIndex, table_id: str, *, allow_empty: bool = False) -> IndexChange:
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
