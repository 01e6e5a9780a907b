"""The units step, the one pipeline of a build and an insert: tables in, units and the join graph out.

:func:`corpus_units` composes the steps of a :class:`CorpusBuild`: each new table's own units; with augmentation
(paper Algorithm 1) join discovery, the generated questions of the selected paths, and a unit per star. A build
runs it over every table. An insert (paper appendix C.3) runs the same steps with an :class:`InsertScope`: the
index it adds to, as a replace's deletes leave it. Discovery then scores only pairs with a column of a new table
and keeps the graph's edges and paths, whose paths count against the budget; generation writes the new paths and,
for the new tables that no path reaches, single-hop questions; the stars are those of the graph afterwards, a
star the index holds kept and one that changed removed (:attr:`CorpusBuild.removed`).

Pipeline step: corpus (docs/architecture.md).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import networkx as nx
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.schema import TextNode

from llama_index_pearl.config import PearlConfig
from llama_index_pearl.corpus.augment import AugmentedCorpus, build_augmented_units, star_units, table_units
from llama_index_pearl.corpus.state import IndexContents
from llama_index_pearl.corpus.units import KIND, UnitKind, unit_meta
from llama_index_pearl.foundations.timing import shown_stage, stage
from llama_index_pearl.generation import QueryGenerator, cache_for
from llama_index_pearl.joins import JoinDiscovery, JoinPath, discover_join_paths, resolve_budget, split_by_budget
from llama_index_pearl.joins.graph import paths_from_graph
from llama_index_pearl.joins.stars import join_stars
from llama_index_pearl.tables.table import Table
from llama_index_pearl.text.serialization import Serializer

__all__ = [
    "CorpusBuild",
    "InsertScope",
    "StepsReport",
    "corpus_units",
    "discover_for_generator",
    "selection_budget",
    "split_for_generator",
]


Report = TypeVar("Report", bound="StepsReport")


class StepsReport:
    """What the units step records: a build's ``BuildReport`` or an insert's ``UpdateReport`` (dataclasses)."""

    seconds: dict[str, float]

    def add_generation(self, corpus: AugmentedCorpus) -> None:
        """Record a generation run (its requests, tokens and paths)."""
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        """The fields as plain data (``pearl``'s JSON, the manifest)."""
        return dataclasses.asdict(self)  # type: ignore[call-overload]

    @classmethod
    def from_dict(cls: type[Report], data: Mapping[str, Any]) -> Report:
        """Inverse of :meth:`to_dict` (a persisted index's ``report``, ``pearl``'s JSON).

        Raises:
            TypeError: A key that is no field.
        """
        return cls(**data)


class InsertScope:
    """The index an insert adds to, as the deletes of the tables it replaces leave it.

    Args:
        tables: The index's tables by id.
        join_graph: Their join graph.
        units: Reads the index's units (when first needed).
    """

    def __init__(
        self, tables: Mapping[str, Table], join_graph: nx.Graph, units: Callable[[], Sequence[TextNode]]
    ) -> None:
        self.tables = tables
        self.join_graph = join_graph
        self._units = units

    @classmethod
    def of(cls, index: IndexContents) -> InsertScope:
        """An index as it is (its units read when first needed)."""
        return cls(index.tables, index.join_graph, lambda: index.units)

    @property
    def units(self) -> list[TextNode]:
        return list(self._units())

    def without(self, tables: Collection[str], units: Collection[str], join_graph: nx.Graph) -> InsertScope:
        """The index once a delete is applied.

        Args:
            tables: The tables it removes.
            units: The units it removes.
            join_graph: The join graph it leaves.
        """
        kept = {k: t for k, t in self.tables.items() if k not in tables}
        removed = set(units)
        return InsertScope(kept, join_graph, lambda: [u for u in self._units() if u.node_id not in removed])

    def corpus(self, new: Sequence[Table]) -> list[Table]:
        """The index's tables and the new ones."""
        return [*self.tables.values(), *new]

    def used(self, budget: int | None) -> Counter:
        """Paths per pool the index holds, as spent budget (with a free fallback, at most ``budget`` were paid)."""
        used = Counter(p.kind for p in paths_from_graph(self.join_graph))
        return Counter({kind: min(n, budget) for kind, n in used.items()}) if budget is not None else used

    def stars(self) -> set[str]:
        """The ids of the star units the index holds."""
        return {u.node_id for u in self.units if unit_meta(u)[KIND] == UnitKind.STAR.value}


def selection_budget(generator: QueryGenerator, budget: int | None) -> int | None:
    """Paths discovery selects: all of them when a free fallback writes those beyond ``budget``."""
    return None if generator.fallback is not None else budget


def split_for_generator(
    paths: Sequence[JoinPath], budget: int | None, generator: QueryGenerator, used: Mapping[Any, int] | None = None
) -> tuple[list[JoinPath], list[JoinPath]]:
    """The paths ``generator`` writes, the first ``budget`` of each pool, and the rest (for its fallback).

    Args:
        paths: Selected paths, in selection order.
        budget: Paths per pool for the generator (``None``: no cap).
        generator: Its :meth:`~llama_index_pearl.generation.QueryGenerator.writes` says which kinds it writes.
        used: Budget already spent per pool (an insert: the paths the index holds).
    """
    within, beyond = split_by_budget([p for p in paths if generator.writes(p)], budget, used=used)
    return within, [*beyond, *(p for p in paths if not generator.writes(p))]


def discover_for_generator(
    tables: Sequence[Table],
    embed_model: BaseEmbedding,
    generator: QueryGenerator | None,
    config: PearlConfig,
    show_progress: bool = False,
    insert: InsertScope | None = None,
) -> tuple[JoinDiscovery, list[JoinPath], list[JoinPath]]:
    """Discover join paths and split them into the generator's budget and the rest (for its fallback).

    Args:
        tables: The corpus; with ``insert``, the tables the insert adds.
        embed_model: Encoder for column profiles.
        generator: The query generator (its cost sets the default budget; ``None``: every path, none beyond).
        config: The discovery settings (budget, diversity, declared joins, cross-source policy).
        show_progress: Show embedding progress bars.
        insert: The index an insert adds ``tables`` to: only pairs with a column of a new table are scored, and
            the index's paths count against the budget of their pool.

    Returns:
        ``(discovery, paths within the budget, paths beyond it)``; the discovery's paths are the new ones.
    """
    corpus = list(tables) if insert is None else insert.corpus(tables)
    cost = generator.cost_per_path if generator is not None else 1.0
    k = resolve_budget(config.budget, len(corpus), cost)
    previous = {} if insert is None else {"touching": [t.id for t in tables], "previous": insert.join_graph}
    discovery = discover_join_paths(
        corpus,
        embed_model,
        budget=selection_budget(generator, k) if generator is not None else k,
        lambda_div=config.lambda_div,
        use_declared=config.use_declared_joins,
        cross_source_joins=config.cross_source_joins,
        show_progress=show_progress,
        **previous,
    )
    if generator is None:
        return discovery, list(discovery.paths), []
    used = insert.used(resolve_budget(config.budget, len(insert.tables), cost)) if insert is not None else None
    within, beyond = split_for_generator(discovery.paths, k, generator, used=used)
    return discovery, within, beyond


@dataclass
class CorpusBuild:
    """The units step of a build or an insert: what it reads, the report it writes (see the module docstring).

    :func:`corpus_units` composes its steps into the units a build or an insert makes; ``pearl eval``'s ablations
    (:mod:`~llama_index_pearl.evaluation.ablations`) compose them otherwise. Each step times itself in
    ``report.seconds``.

    Args:
        tables: The tables read: every table of a build, the new tables of an insert.
        model: The encoder (join discovery embeds column names and values with it).
        generator: The query generator (``None``: no augmentation).
        serializer: The index's serializer.
        config: The build settings (an insert's: the build's, with its own reading and generation options).
        report: The build's report, or the insert's.
        show_progress: Show a bar per stage: tables, discovery, generation (the runner's, by request).
        insert: The index an insert adds ``tables`` to; ``None``: a build.
    """

    tables: Sequence[Table]
    model: BaseEmbedding
    generator: QueryGenerator | None
    serializer: Serializer
    config: PearlConfig
    report: StepsReport
    show_progress: bool = False
    insert: InsertScope | None = None
    discovery: JoinDiscovery | None = field(default=None, init=False)  # set by discover(): the graph, the new paths
    removed: list[str] = field(default_factory=list, init=False)  # units of the index an insert replaces (stars)

    @property
    def corpus(self) -> list[Table]:
        """Every table of the index after the step."""
        return list(self.tables) if self.insert is None else self.insert.corpus(self.tables)

    def own_units(self) -> list[TextNode]:
        """Each new table's own units: its original unit, and with augmentation its schema unit."""
        with shown_stage(self.report.seconds, "tables", self.show_progress):
            return table_units(self.tables, self.serializer, self.config)

    def discover(self) -> tuple[nx.Graph, list[JoinPath], list[JoinPath]]:
        """The join graph, the paths the generator writes and those beyond its budget (for its fallback)."""
        with shown_stage(self.report.seconds, "discovery", self.show_progress):  # its one bar, no encoder bars
            self.discovery, paths, beyond = discover_for_generator(
                self.tables, self.model, self.generator, self.config, insert=self.insert
            )
        return self.discovery.graph, paths, beyond

    def generate(
        self, paths: Sequence[JoinPath], beyond: Sequence[JoinPath], config: PearlConfig | None = None
    ) -> list[TextNode]:
        """Units of generated questions for ``paths`` (``beyond``: the fallback's), recorded in the report.

        Args:
            paths: Paths the generator writes.
            beyond: Paths for the generator's free fallback.
            config: The settings of this generation (default: the build's).
        """
        if self.generator is None:
            return []
        chosen = config or self.config
        cache = cache_for(self.generator, chosen.cache_dir)
        units: list[TextNode] = []
        with stage(self.report.seconds, "generation"):
            for tables, kept, extra, run_config in self._runs(paths, beyond, chosen):
                corpus = build_augmented_units(
                    tables,
                    kept,
                    self.generator,
                    self.serializer,
                    run_config,
                    fallback_paths=extra,
                    cache=cache,
                    show_progress=self.show_progress,
                )
                self.report.add_generation(corpus)
                units.extend(corpus.units)
        return units

    def _runs(
        self, paths: Sequence[JoinPath], beyond: Sequence[JoinPath], config: PearlConfig
    ) -> list[tuple[dict[str, Table], Sequence[JoinPath], Sequence[JoinPath], PearlConfig]]:
        """The generation runs: one over the corpus; an insert's single-hop tables apart.

        ``build_augmented_units`` picks as single-hop every table of its mapping that its paths miss: over an
        insert's corpus that would be the index's tables too, so an insert asks for its new tables alone.
        """
        everything = {t.id: t for t in self.corpus}
        if self.insert is None:
            return [(everything, paths, beyond, config)]
        runs = [(everything, paths, beyond, dataclasses.replace(config, single_hop=False))]
        if config.single_hop and self.discovery is not None:
            covered = {t for p in paths_from_graph(self.discovery.graph) for t in p.tables}
            alone = {t.id: t for t in self.tables if t.id not in covered}
            if alone:
                runs.append((alone, [], [], config))
        return runs

    def stars(self, graph: nx.Graph) -> list[TextNode]:
        """A unit per fact table of ``graph`` and its dimensions (``config.star_units``; none when off).

        An insert keeps the stars the index holds; those that changed go to :attr:`removed`.
        """
        if not self.config.star_units:
            return []
        with stage(self.report.seconds, "generation"):
            stars = star_units(join_stars(graph), {t.id: t for t in self.corpus}, self.serializer)
        if self.insert is None:
            return stars
        held = self.insert.stars()
        self.removed.extend(sorted(held - {u.node_id for u in stars}))
        return [u for u in stars if u.node_id not in held]


def corpus_units(build: CorpusBuild) -> tuple[list[TextNode], nx.Graph | None]:
    """The units a build or an insert makes, and its join graph (``None`` without augmentation).

    Each table's own units; with augmentation (paper Algorithm 1) the units of the generated questions of
    the selected join paths, then a unit per star.

    Args:
        build: The step's inputs (a build's, or an insert's with its scope).
    """
    units = build.own_units()
    if not build.config.augment:
        return units, None
    graph, paths, beyond = build.discover()
    return [*units, *build.generate(paths, beyond), *build.stars(graph)], graph
