"""The paper's ablations (section 4.3), for ``pearl eval``: an index built without one part of PEARL.

An ablation measures what a part of the method is worth; no user builds one. So it is no build
option (:class:`~llama_index_pearl.config.PearlConfig` holds what a user sets) and the build has no
branch for it: :func:`build_ablated` hands the build a units step of its own
(:class:`Ablation.units`), composed of the steps a build composes
(:class:`~llama_index_pearl.corpus.units_step.CorpusBuild`).

- ``include_originals=False``: no table's own units (original and schema), only the generated ones;
- ``explicit_only`` / ``implicit_only``: the units of one pool's paths only;
- ``random_view``: random column subsets of the tables, no question, as many units as the paths
  would give (appendix B.3), instead of the paths' units;
- ``random_query``: generated questions for every table and no join path, so no join discovery
  either (the single-table questions of appendix E, for every table).

Pipeline step: evaluation (docs/architecture.md).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

import networkx as nx
from llama_index.core.schema import TextNode

from llama_index_pearl.config import PearlConfig, check_field, option
from llama_index_pearl.corpus.augment import AugmentedCorpus
from llama_index_pearl.corpus.build import BuildInputs, build_corpus
from llama_index_pearl.corpus.units import UnitKind, make_unit
from llama_index_pearl.corpus.units_step import CorpusBuild
from llama_index_pearl.foundations.timing import stage
from llama_index_pearl.index import PearlTableIndex
from llama_index_pearl.joins.paths import JoinKind, JoinPath
from llama_index_pearl.tables.inputs import TablesInput
from llama_index_pearl.tables.table import Table
from llama_index_pearl.text.serialization import Serializer

__all__ = ["ABLATION_GROUP", "Ablation", "ablation_fields", "build_ablated", "random_view_units"]

ABLATION_GROUP = "ablations"


@dataclass(frozen=True)
class Ablation:
    """Which part of PEARL an ablated index leaves out (the defaults leave out nothing).

    Args:
        include_originals: Each table's own units (original and schema); ``False``: generated units only.
        explicit_only: Units of explicit paths only.
        implicit_only: Units of implicit paths only.
        random_view: Random column subsets instead of the paths' units (no question).
        random_query: Generated questions for every table, and no join path.
        seed: Seed of the random column subsets.

    Raises:
        ValueError: Two ablations that exclude each other, or a value of the wrong type.
    """

    include_originals: bool = option(
        True,
        ABLATION_GROUP,
        "keep each table's own units (original, and schema)",
        flag="--no-originals",
        off="index only the generated units, not each table's own (original, schema)",
    )
    explicit_only: bool = option(False, ABLATION_GROUP, "units of explicit join paths only")
    implicit_only: bool = option(False, ABLATION_GROUP, "units of implicit join paths only")
    random_view: bool = option(False, ABLATION_GROUP, "random column subsets instead of the paths' units")
    random_query: bool = option(False, ABLATION_GROUP, "generated questions for every table, no join paths")
    seed: int = option(0, ABLATION_GROUP, "seed of --random-view")

    def __post_init__(self) -> None:
        for declared in ablation_fields():
            check_field(declared, getattr(self, declared.name))
        for a, b in (("explicit_only", "implicit_only"), ("random_view", "random_query")):
            if getattr(self, a) and getattr(self, b):
                raise ValueError(f"{a} and {b} exclude each other")

    def names(self) -> list[str]:
        """The ablations this one makes (its flags away from their defaults; the seed is no ablation)."""
        return [f.name for f in ablation_fields() if f.type == "bool" and getattr(self, f.name) != f.default]

    def keeps(self, path: JoinPath) -> bool:
        """Whether the units of ``path`` are kept."""
        if self.explicit_only:
            return path.kind is JoinKind.EXPLICIT
        if self.implicit_only:
            return path.kind is JoinKind.IMPLICIT
        return True

    def units(self, build: CorpusBuild) -> tuple[list[TextNode], nx.Graph | None]:
        """The units step of an ablated build (:func:`~llama_index_pearl.corpus.units_step.corpus_units`, ablated)."""
        if not build.config.augment or build.generator is None:
            raise ValueError("An ablation leaves out a part of PEARL's augmentation: build with augment=True")
        units = build.own_units() if self.include_originals else []
        if self.random_query:  # questions per table only: no join discovery to pay for
            every_table = dataclasses.replace(build.config, single_hop=True)
            return [*units, *build.generate([], [], every_table)], None
        graph, paths, beyond = build.discover()
        paths, beyond = [p for p in paths if self.keeps(p)], [p for p in beyond if self.keeps(p)]
        if self.random_view:
            units.extend(self._random_views(build, [*paths, *beyond]))
        else:
            units.extend(build.generate(paths, beyond))
        return [*units, *build.stars(graph)], graph

    def _random_views(self, build: CorpusBuild, paths: Sequence[JoinPath]) -> list[TextNode]:
        """As many random views as the paths would give units: one per explicit path, one per implicit path's table."""
        with stage(build.report.seconds, "generation"):
            n_units = sum(1 if p.kind is JoinKind.EXPLICIT else len(p.tables) for p in paths)
            units = random_view_units(list(build.tables), n_units, build.serializer, self.seed)
        build.report.add_generation(AugmentedCorpus(units, None, list(paths)))
        return units


def ablation_fields() -> tuple[dataclasses.Field, ...]:
    """The fields of :class:`Ablation` (``pearl eval`` derives its flags from them)."""
    return fields(Ablation)


def random_view_units(tables: Sequence[Table], n_units: int, serializer: Serializer, seed: int = 0) -> list[TextNode]:
    """``n_units`` random projections (uniform non-empty column subsets), no question (appendix B.3)."""
    rng = random.Random(seed)
    units = []
    for i in range(n_units):
        table = tables[i % len(tables)] if n_units >= len(tables) else rng.choice(list(tables))
        size = rng.randint(1, len(table.columns))
        chosen = set(rng.sample(table.columns, size))
        columns = [c for c in table.columns if c in chosen]
        units.append(make_unit(UnitKind.RANDOM_VIEW, [serializer.view(table, columns)], serializer, key=str(i)))
    return units


def build_ablated(
    tables: TablesInput,
    ablation: Ablation,
    *,
    config: PearlConfig | None = None,
    show_progress: bool = False,
    **kwargs: Any,
) -> PearlTableIndex:
    """An index over ``tables`` without the part ``ablation`` leaves out (none: ``PearlTableIndex.from_tables``).

    Args:
        tables: As in ``PearlTableIndex.from_tables``.
        ablation: What to leave out.
        config: The build settings.
        show_progress: Show progress bars.
        **kwargs: ``embed_model``, ``llm``, ``generator``, ``storage_context``, as in ``from_tables``.
    """
    chosen = config if config is not None else PearlConfig()
    if not ablation.names():
        return PearlTableIndex.from_tables(tables, config=chosen, show_progress=show_progress, **kwargs)
    parts = build_corpus(
        BuildInputs(tables=tables, config=chosen, show_progress=show_progress, **kwargs), ablation.units
    )
    return PearlTableIndex(parts)
