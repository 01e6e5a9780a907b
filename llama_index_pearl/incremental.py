"""Incremental indexing (paper appendix C.3): insert and delete tables without a rebuild.

Updates stay local to join edges. An insert scores candidate edges only for
column pairs involving a new table, generates questions only for newly selected
paths (through the generation cache and the index's generator), and embeds only
the new units; existing edges, paths, questions and vectors are reused. A delete
removes the table's units, its edges, and the units of every path through it.

The budget K after an insert is that of the whole corpus (the build's ``budget``;
by default every candidate path for a free generator, ⌊|C|/2⌋ per pool for an
LLM); new paths fill what the existing paths leave, so an insert-then-query
can differ from a full rebuild when the rebuild would have preferred a new path
over an existing one.
"""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import networkx as nx
from llama_index.core.schema import TextNode

from llama_index_pearl.augment import build_augmented_units
from llama_index_pearl.build import count_kinds, selection_budget
from llama_index_pearl.config import BuildReport
from llama_index_pearl.joins import JoinPath, drop_table, extend_join_paths, resolve_budget, split_by_budget
from llama_index_pearl.sources import CsvOptions, TableSource, load_tables
from llama_index_pearl.stores import normalise
from llama_index_pearl.table import Table
from llama_index_pearl.units import original_unit

if TYPE_CHECKING:
    from llama_index_pearl.index import PearlTableIndex

__all__ = ["IncrementalMixin", "UpdateReport", "delete_table", "insert_tables"]


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

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def merge(self, other: UpdateReport) -> None:
        """Add another report's changes (a replace is a delete then an insert)."""
        for name in ("added_tables", "removed_tables", "new_paths", "removed_paths"):
            getattr(self, name).extend(getattr(other, name))
        for name in ("new_units", "removed_units", "requests", "generated", "cached"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        for stage, secs in other.seconds.items():
            self.seconds[stage] = self.seconds.get(stage, 0.0) + secs


class IncrementalMixin:
    """``insert_tables``, ``delete_table`` and the state update they share, mixed into ``PearlTableIndex``."""

    _tables: dict[str, Table]
    _units: dict[str, TextNode]
    _join_graph: nx.Graph
    report: BuildReport

    def insert_tables(
        self,
        tables: TableSource,
        *,
        replace: bool = False,
        show_progress: bool = False,
        concurrency: int = 4,
        csv_options: CsvOptions | Mapping[str, Any] | None = None,
    ) -> UpdateReport:
        """Add tables without rebuilding (paper appendix C.3).

        Candidate join edges are scored only for column pairs involving a new
        table; only paths through a new table are generated (through the
        generation cache and this index's generator); only new units are
        embedded. Existing paths, questions and vectors are kept as they are.

        Args:
            tables: Anything ``PearlTableIndex.from_tables`` accepts.
            replace: Replace tables whose id already exists (delete, then insert).
            show_progress: Show progress bars.
            concurrency: LLM requests in flight during generation.
            csv_options: As in ``PearlTableIndex.from_tables``; as many rows are read
                per table as the build read (``config.max_rows_read``).

        Returns:
            What changed and what it cost.

        Raises:
            ValueError: A table id already exists and ``replace`` is false (the
                message names it), or no tables were given.
        """
        with self._update_lock:
            return insert_tables(
                self,
                tables,
                replace=replace,
                show_progress=show_progress,
                concurrency=concurrency,
                csv_options=csv_options,
            )

    def delete_table(self, table_id: str) -> UpdateReport:
        """Remove a table: its units, its join edges and the units of every path through it.

        Args:
            table_id: The table to remove.

        Returns:
            What changed.

        Raises:
            ValueError: ``table_id`` is not in the index (the message names it),
                or it is the last table.
            NotImplementedError: The vector store cannot delete (e.g. a plain
                positional ``FaissVectorStore``).
        """
        with self._update_lock:
            return delete_table(self, table_id)

    def _apply_update(
        self,
        *,
        tables: Sequence[Table] = (),
        removed_tables: Sequence[str] = (),
        units: Sequence[TextNode] = (),
        removed_units: Sequence[str] = (),
        join_graph: nx.Graph | None = None,
    ) -> None:
        """Mutate the in-memory state after the vector store has been updated."""
        self._revision = getattr(self, "_revision", 0) + 1  # retrieval plans of the old state are stale
        for table_id in removed_tables:
            self._tables.pop(table_id, None)
        for unit_id in removed_units:
            self._units.pop(unit_id, None)
        self._tables.update({t.id: t for t in tables})
        self._units.update({u.node_id: u for u in units})
        if join_graph is not None:
            self._join_graph = join_graph
        self._join_graph.add_nodes_from(t.id for t in tables)  # a whole-table index has a node per table too
        self.report.n_tables = len(self._tables)
        self.report.n_units = len(self._units)
        self.report.n_paths = len(self._join_graph.graph.get("paths", []))
        self.report.units_by_kind = count_kinds(list(self._units.values()))


def insert_tables(
    index: PearlTableIndex,
    tables: TableSource,
    *,
    replace: bool = False,
    show_progress: bool = False,
    concurrency: int = 4,
    csv_options: CsvOptions | Mapping[str, Any] | None = None,
) -> UpdateReport:
    """See :meth:`PearlTableIndex.insert_tables`."""
    started = time.perf_counter()
    loaded = load_tables(tables, max_rows_read=index.config.max_rows_read, csv_options=csv_options)
    if not loaded:
        raise ValueError("No tables to insert")
    config = index.config
    if config.random_view or config.random_query:
        raise ValueError("insert_tables does not support indexes built with random_view/random_query; rebuild")
    existing = [t.id for t in loaded if t.id in index.tables]
    if existing and not replace:
        raise ValueError(f"Tables already in the index: {', '.join(existing)} (pass replace=True to replace them)")
    report = UpdateReport()
    for table_id in existing:
        report.merge(delete_table(index, table_id, allow_empty=True))

    new_ids = [t.id for t in loaded]
    corpus = [*index.tables.values(), *loaded]
    serializer = index.serializer
    units: list[TextNode] = [original_unit(t, serializer) for t in loaded] if config.include_originals else []
    graph = None
    if config.augment:
        t0 = time.perf_counter()
        discovery = extend_join_paths(
            corpus,
            index.join_graph,
            new_ids,
            index.embed_model,
            budget=_discovery_budget(index, len(corpus)),
            lambda_div=config.lambda_div,
            use_declared=config.use_declared_joins,
            cross_source_joins=config.cross_source_joins,
            show_progress=show_progress,
        )
        graph = discovery.graph
        report.seconds["discovery"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        units.extend(_generate(index, corpus, loaded, discovery.paths, graph, report, concurrency, show_progress))
        report.new_paths = [p.path_id for p in discovery.paths]
        report.seconds["generation"] = time.perf_counter() - t0
    if not units:
        raise ValueError("The insert produced no units (originals disabled and no augmented units)")

    t0 = time.perf_counter()
    _embed_and_add(index, units, show_progress, loaded, graph)
    report.seconds["embed"] = time.perf_counter() - t0
    report.added_tables = new_ids
    report.new_units = len(units)
    report.seconds["total"] = time.perf_counter() - started
    return report


def _budget(index: PearlTableIndex, n_tables: int) -> int | None:
    """Paths per pool for the index's generator (raises, naming the missing LLM, as generation would)."""
    generator = index.generator
    return resolve_budget(index.config.budget, n_tables, generator.cost_per_path if generator is not None else 1.0)


def _discovery_budget(index: PearlTableIndex, n_tables: int) -> int | None:
    """Paths selected on insert: as in a build (:func:`~llama_index_pearl.build.selection_budget`)."""
    generator = index.generator
    budget = _budget(index, n_tables)
    return budget if generator is None else selection_budget(generator, budget)


def _generate(
    index: PearlTableIndex,
    corpus: Sequence[Table],
    loaded: Sequence[Table],
    paths: Sequence[JoinPath],
    graph: Any,
    report: UpdateReport,
    concurrency: int,
    show_progress: bool,
) -> list[TextNode]:
    """Units for the new paths, then single-hop units for new tables left in no path (if the build had them)."""
    generator = index.generator
    if generator is None:
        return []
    options = index.config.augment_options()
    by_id = {t.id: t for t in corpus}
    cache = index.generation_cache()
    # Single-hop tables are chosen separately: build_augmented_units would pick every
    # table of the mapping that the *new* paths miss, old ones included.
    # Paths already in the index count against the budget of their pool; with a free fallback
    # only the build's paid share of them did (at most the budget of the corpus before the insert).
    old_budget = _budget(index, len(index.tables))
    used = Counter(p.kind for p in index.join_paths)
    if old_budget is not None:
        used = Counter({kind: min(n, old_budget) for kind, n in used.items()})
    paid, beyond = split_by_budget(paths, _budget(index, len(corpus)), used=used)
    runs = [(by_id, paid, beyond, dataclasses.replace(options, single_hop=False))]
    if options.single_hop:
        covered = {t for p in graph.graph.get("paths", []) for t in p["tables"]}
        alone = {t.id: t for t in loaded if t.id not in covered}
        if alone:
            runs.append((alone, [], [], options))
    units: list[TextNode] = []
    for tables, kept, extra, run_options in runs:
        augmented = build_augmented_units(
            tables,
            kept,
            generator,
            serializer=index.serializer,
            options=run_options,
            fallback_paths=extra,
            concurrency=concurrency,
            cache=cache,
            show_progress=show_progress,
        )
        units.extend(augmented.units)
        if augmented.report is not None:
            report.requests += augmented.report.paths
            report.generated += augmented.report.generated
            report.cached += augmented.report.cached
            report.prompt_tokens += augmented.report.prompt_tokens
            report.completion_tokens += augmented.report.completion_tokens
    return units


def _embed_and_add(
    index: PearlTableIndex, units: Sequence[TextNode], show_progress: bool, tables: Sequence[Table], graph: Any
) -> None:
    """Embed only the new units (normalised, as a build does), then add them and their tables in one step."""
    texts = [u.get_content(metadata_mode="embed") for u in units]
    vectors = normalise(index.embed_model.get_text_embedding_batch(texts, show_progress=show_progress))
    for unit, vector in zip(units, vectors):
        unit.embedding = vector
    try:
        with index._rw.writing():  # retrievals see all of the insert or none of it
            index.vector_index.insert_nodes(list(units))
            index._apply_update(tables=tables, units=units, join_graph=graph)
    finally:
        for unit in units:
            unit.embedding = None  # vectors live in the store; units stay light


def delete_table(index: PearlTableIndex, table_id: str, *, allow_empty: bool = False) -> UpdateReport:
    """See :meth:`PearlTableIndex.delete_table`.

    Args:
        index: The index.
        table_id: The table to remove.
        allow_empty: Allow removing the last table (a replace re-inserts it).
    """
    started = time.perf_counter()
    if table_id not in index.tables:
        raise ValueError(f"Unknown table id {table_id!r}: not in the index")
    if len(index.tables) == 1 and not allow_empty:
        raise ValueError(f"Cannot delete {table_id!r}: it is the last table of the index")
    graph, removed_paths = drop_table(index.join_graph, table_id)
    dead_paths = {p.path_id for p in removed_paths}
    doomed = [
        u.node_id
        for u in index.units
        if table_id in u.metadata.get("table_ids", []) or u.metadata.get("path_id") in dead_paths
    ]
    store = index.vector_index.vector_store
    with index._rw.writing():  # retrievals see all of the delete or none of it
        try:
            index.vector_index.delete_nodes(doomed, delete_from_docstore=True)
        except NotImplementedError as exc:
            raise NotImplementedError(
                f"{type(store).__name__} cannot delete units; build with the default store (PearlFaissStore) "
                f"or a store that implements delete_nodes (Qdrant, pgvector, Milvus...)"
            ) from exc
        index._apply_update(removed_tables=[table_id], removed_units=doomed, join_graph=graph)
    return UpdateReport(
        removed_tables=[table_id],
        removed_paths=sorted(dead_paths),
        removed_units=len(doomed),
        seconds={"delete": time.perf_counter() - started},
    )
