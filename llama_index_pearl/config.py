"""Build settings and the query generator of an index: what is persisted, and how it is restored."""

from __future__ import annotations

import logging
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from llama_index.core.llms import LLM

from llama_index_pearl.augment import AugmentOptions
from llama_index_pearl.generation import GenerationCache, HeuristicQueryGenerator, LLMQueryGenerator, QueryGenerator
from llama_index_pearl.joins.scoring import CROSS_SOURCE_POLICIES
from llama_index_pearl.serialization import DEFAULT_MAX_ROWS
from llama_index_pearl.sources import DEFAULT_MAX_ROWS_READ

__all__ = ["BuildReport", "PearlConfig", "generation_cache", "generator_from_name"]

logger = logging.getLogger(__name__)


@dataclass
class PearlConfig:
    """Build settings, persisted with the index.

    Args:
        include_titles: Render table titles (and descriptions) in units.
        max_rows: Rows per table view (paper appendix B.2: 10).
        include_originals: Keep one whole-table unit per table.
        augment: Discover join paths and add generated units (``False``: whole-table only).
        budget: Paths selected per pool (paper's K). Default: every candidate path for a
            free generator (the heuristic), ⌊|tables|/2⌋ for an LLM.
        lambda_div: Diversity weight of lazy-greedy selection (paper: 0.1).
        generator: Name of the query generator used (recorded, not configurable).
        use_declared_joins: SQL foreign keys were used as explicit edges.
        cross_source_joins: Joins between tables of two different sources: ``"evidence"``
            (only on value evidence chance does not explain), ``"never"`` or ``"always"``.
        max_rows_read: Leading rows read per table from its source (``None``: all);
            inserts read as many.
        explicit_only, implicit_only, single_hop, single_hop_questions, random_view,
            random_query: The augmentation flags of the build (see
            :class:`~llama_index_pearl.augment.AugmentOptions`); inserts reuse them.
    """

    include_titles: bool = True
    max_rows: int = DEFAULT_MAX_ROWS
    include_originals: bool = True
    augment: bool = True
    budget: int | None = None
    lambda_div: float = 0.1
    generator: str = "none"
    use_declared_joins: bool = True
    cross_source_joins: str = "evidence"
    explicit_only: bool = False
    implicit_only: bool = False
    single_hop: bool = False
    single_hop_questions: int | None = None
    random_view: bool = False
    random_query: bool = False
    max_rows_read: int | None = DEFAULT_MAX_ROWS_READ

    def __post_init__(self) -> None:
        if self.max_rows < 1:
            raise ValueError(f"max_rows must be >= 1, got {self.max_rows}")
        if self.max_rows_read is not None and self.max_rows_read < 1:
            raise ValueError(f"max_rows_read must be >= 1 or None, got {self.max_rows_read}")
        if self.budget is not None and self.budget < 0:
            raise ValueError(f"budget must be >= 0 paths per pool, got {self.budget}")
        if self.cross_source_joins not in CROSS_SOURCE_POLICIES:
            raise ValueError(
                f"cross_source_joins must be one of {CROSS_SOURCE_POLICIES}, got {self.cross_source_joins!r}"
            )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def augment_options(self) -> AugmentOptions:
        """The build's augmentation flags."""
        return AugmentOptions(
            explicit_only=self.explicit_only,
            implicit_only=self.implicit_only,
            single_hop=self.single_hop,
            single_hop_questions=self.single_hop_questions,
            random_view=self.random_view,
            random_query=self.random_query,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PearlConfig:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)


@dataclass
class BuildReport:
    """What a build did and how long each stage took (seconds)."""

    n_tables: int = 0
    n_units: int = 0
    n_paths: int = 0
    units_by_kind: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    generation: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def generator_from_name(name: str, llm: LLM | None) -> QueryGenerator:
    """Rebuild the generator recorded in ``PearlConfig.generator``.

    Args:
        name: The recorded ``model_name``.
        llm: The LLM to use when the index was built with one.

    Raises:
        ValueError: The index was built with an LLM and ``llm`` is ``None``.
    """
    if match := re.fullmatch(r"heuristic\(n_single=(\d+),seed=(-?\d+)\)", name):
        return HeuristicQueryGenerator(n_single=int(match.group(1)), seed=int(match.group(2)))
    if llm is None:
        raise ValueError(
            f"The index was built with generator {name!r}; pass llm= to PearlTableIndex.load() to insert tables"
        )
    generator = LLMQueryGenerator(llm)
    if generator.model_name != name:
        logger.warning("Index built with generator %r, new paths use %r", name, generator.model_name)
    return generator


def generation_cache(generator: QueryGenerator | None, cache_dir: str | Path | None) -> GenerationCache | None:
    """LLM generations are cached by default (they cost minutes); heuristic ones only on request."""
    if cache_dir is not None:
        return GenerationCache(Path(cache_dir))
    if isinstance(generator, LLMQueryGenerator):
        default = Path(os.environ.get("PEARL_CACHE_DIR", Path.home() / ".cache" / "llama-index-pearl"))
        default.mkdir(parents=True, exist_ok=True)
        return GenerationCache(default)
    return None
