"""The offline build pipeline behind ``PearlTableIndex.from_tables`` (paper Algorithm 1).

Load tables, serialize an original unit per table, discover and select join
paths, generate questions for them (through the generation cache), build the
augmented units, embed every unit once with normalised vectors and store them
(an exact FAISS inner-product index by default, so inner product equals cosine).
:func:`estimate_generation_cost` is the same pipeline up to the prompts, as a dry run.
Every step takes the one :class:`~llama_index_pearl.config.PearlConfig`.

Pipeline step: corpus (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, MutableMapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

import networkx as nx
from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.llms import LLM
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import BasePydanticVectorStore

from llama_index_pearl.config import PearlConfig
from llama_index_pearl.corpus.approximate import ApproximateSearch
from llama_index_pearl.corpus.augment import (
    AugmentedCorpus,
    build_augmented_units,
    plan_requests,
    star_units,
    table_units,
)
from llama_index_pearl.corpus.catalog import Catalog
from llama_index_pearl.corpus.lexical import LexicalIndex
from llama_index_pearl.corpus.stores import build_vector_index
from llama_index_pearl.corpus.units import KIND, UnitKind, unit_meta
from llama_index_pearl.foundations.timing import stage
from llama_index_pearl.generation import (
    HeuristicQueryGenerator,
    LLMQueryGenerator,
    QueryGenerator,
    cache_for,
    estimate_prompt_tokens,
)
from llama_index_pearl.joins import JoinDiscovery, JoinPath, discover_join_paths, resolve_budget, split_by_budget
from llama_index_pearl.joins.graph import stored_paths
from llama_index_pearl.joins.stars import join_stars
from llama_index_pearl.tables.inputs import TablesInput, TablesRead, read_tables
from llama_index_pearl.tables.table import Table
from llama_index_pearl.text.models import (
    encoder_window,
    prepare_encoder,
    resolve_embed_model,
    resolve_llm,
    token_counter_for,
)
from llama_index_pearl.text.serialization import Serializer

__all__ = [
    "BuildReport",
    "CorpusBuild",
    "IndexParts",
    "UnitsSteps",
    "build_corpus",
    "corpus_units",
    "count_kinds",
    "default_generator",
    "discover_for_generator",
    "estimate_generation_cost",
    "record_generation",
    "selection_budget",
    "serializer_for",
    "split_for_generator",
]


@dataclass
class BuildReport:
    """What a build did and how long each stage took (seconds).

    Args:
        n_tables: Tables indexed.
        n_units: Units embedded.
        n_paths: Join paths selected.
        units_by_kind: Units per kind.
        seconds: Wall time per stage; ``total`` is the whole build, its stages included.
        generation: What query generation sent and got.
        skipped: Table files that could not be read (``{"path", "reason"}``), when the build skipped them.
    """

    n_tables: int = 0
    n_units: int = 0
    n_paths: int = 0
    units_by_kind: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    generation: dict[str, Any] = field(default_factory=dict)
    skipped: list[dict[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BuildReport:
        """Inverse of :meth:`to_dict` (a persisted index's ``report``).

        Raises:
            TypeError: A key that is no field.
        """
        return cls(**data)

    def recount(self, tables: Collection[Table], units: Iterable[TextNode], join_graph: nx.Graph) -> None:
        """Counts of an index after an insert or delete (the build's timings stay)."""
        units = list(units)
        self.n_tables = len(tables)
        self.n_units = len(units)
        self.n_paths = len(stored_paths(join_graph))
        self.units_by_kind = count_kinds(units)


@dataclass(kw_only=True)
class IndexParts:
    """Everything an index is made of: what ``PearlTableIndex(parts)`` takes, built by keyword only.

    A build produces it (:func:`build_corpus`); ``load`` reads it back, leaving what a query does not
    read to be read when first used: the units and LlamaIndex's stores (``open_units``), the tables'
    rows (``tables`` as a lazy mapping) and the BM25 arrays (``lexical``); ``persist`` writes it.

    Args:
        tables: The loaded tables (a list, or a mapping by id that reads them on first use).
        embed_model: The resolved encoder.
        config: The build settings (persisted with the index).
        vector_index: The vector store index over ``units`` (``None``: ``open_units`` makes it).
        units: Original and augmented units (``None``: ``open_units`` reads them).
        join_graph: The join graph of the selected paths (``None``: a node per table, no edge).
        llm: The resolved LLM, if any.
        report: Counts and stage timings (``None``: the counts of ``tables`` and the units).
        generator: The query generator used (``None`` without augmentation, or after a load).
        generator_spec: What :meth:`QueryGenerator.to_spec` wrote, when ``generator`` is not built yet.
        catalog: Table texts and unit infos (default: read off ``units``, texts rendered when asked for).
        vector_store: The store of the unit vectors, when ``vector_index`` is left to ``open_units``.
        open_units: Reads and checks ``(vector_index, units)`` the first time either is needed.
        lexical: Reads the BM25 index of the catalog's units (in catalog order) when first needed.
    """

    tables: Sequence[Table] | MutableMapping[str, Table]
    embed_model: BaseEmbedding
    config: PearlConfig
    vector_index: VectorStoreIndex | None = None
    units: Sequence[TextNode] | None = None
    join_graph: nx.Graph | None = None
    llm: LLM | None = None
    report: BuildReport | None = None
    generator: QueryGenerator | None = None
    generator_spec: dict[str, Any] | None = None
    catalog: Catalog | None = None
    vector_store: BasePydanticVectorStore | None = None
    open_units: Callable[[], tuple[VectorStoreIndex, list[TextNode]]] | None = None
    lexical: Callable[[], LexicalIndex] | None = None


def default_generator(llm: LLM | None) -> QueryGenerator:
    """``LLMQueryGenerator(llm)`` when an LLM resolved, else the offline heuristic generator."""
    return LLMQueryGenerator(llm) if llm is not None else HeuristicQueryGenerator()


def serializer_for(embed_model: BaseEmbedding, config: PearlConfig) -> Serializer:
    """The unit serializer of an index: the encoder's window and tokenizer, the config's rows and titles."""
    return Serializer(
        max_tokens=encoder_window(embed_model),
        count_tokens=token_counter_for(embed_model),
        include_titles=config.include_titles,
        max_rows=config.max_rows,
        embedded_rows=min(config.embedded_rows, config.max_rows),
    )


def count_kinds(units: Sequence[TextNode]) -> dict[str, int]:
    """Units per :class:`~llama_index_pearl.corpus.units.UnitKind` value, kinds with none left out."""
    counts = {kind.value: 0 for kind in UnitKind}
    for unit in units:
        counts[unit_meta(unit)[KIND]] += 1
    return {k: v for k, v in counts.items() if v}


def selection_budget(generator: QueryGenerator, budget: int | None) -> int | None:
    """Paths discovery selects: all of them when a free fallback writes those beyond ``budget``."""
    return None if generator.fallback is not None else budget


def discover_for_generator(
    tables: Sequence[Table],
    embed_model: BaseEmbedding,
    generator: QueryGenerator,
    config: PearlConfig,
    show_progress: bool = False,
) -> tuple[JoinDiscovery, list[JoinPath], list[JoinPath]]:
    """Discover join paths and split them into the generator's budget and the rest (for its fallback).

    Args:
        tables: The corpus.
        embed_model: Encoder for column profiles.
        generator: The query generator (its cost sets the default budget).
        config: The discovery settings (budget, diversity, declared joins, cross-source policy).
        show_progress: Show embedding progress bars.

    Returns:
        ``(discovery, paths within the budget, paths beyond it)``.
    """
    k = resolve_budget(config.budget, len(tables), generator.cost_per_path)
    discovery = discover_join_paths(
        tables,
        embed_model,
        budget=selection_budget(generator, k),
        lambda_div=config.lambda_div,
        use_declared=config.use_declared_joins,
        cross_source_joins=config.cross_source_joins,
        show_progress=show_progress,
    )
    within, beyond = split_for_generator(discovery.paths, k, generator)
    return discovery, within, beyond


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


@dataclass
class CorpusBuild:
    """What the units step of a build reads, and the report it writes (one build's tables, encoder, generator).

    :func:`corpus_units` composes its steps into the units a build makes; ``pearl eval``'s ablations
    (:mod:`~llama_index_pearl.evaluation.ablations`) compose them otherwise. Each step times itself in
    ``report.seconds``.

    Args:
        tables: The tables read.
        model: The encoder (join discovery embeds column names and values with it).
        generator: The query generator (``None``: no augmentation).
        serializer: The index's serializer.
        config: The build settings.
        report: The build's report.
        show_progress: Show progress bars.
    """

    tables: Sequence[Table]
    model: BaseEmbedding
    generator: QueryGenerator | None
    serializer: Serializer
    config: PearlConfig
    report: BuildReport
    show_progress: bool = False

    def own_units(self) -> list[TextNode]:
        """Each table's own units: its original unit, and with augmentation its schema unit."""
        with stage(self.report.seconds, "tables"):
            return table_units(self.tables, self.serializer, self.config)

    def discover(self) -> tuple[nx.Graph, list[JoinPath], list[JoinPath]]:
        """The join graph, the paths the generator writes and those beyond its budget (for its fallback)."""
        assert self.generator is not None
        with stage(self.report.seconds, "discovery"):
            discovery, paths, beyond = discover_for_generator(
                self.tables, self.model, self.generator, self.config, self.show_progress
            )
        return discovery.graph, paths, beyond

    def generate(
        self, paths: Sequence[JoinPath], beyond: Sequence[JoinPath], config: PearlConfig | None = None
    ) -> list[TextNode]:
        """Units of generated questions for ``paths`` (``beyond``: the fallback's), recorded in the report.

        Args:
            paths: Paths the generator writes.
            beyond: Paths for the generator's free fallback.
            config: The settings of this generation (default: the build's).
        """
        assert self.generator is not None
        chosen = config or self.config
        with stage(self.report.seconds, "generation"):
            corpus = build_augmented_units(
                {t.id: t for t in self.tables},
                paths,
                self.generator,
                self.serializer,
                chosen,
                fallback_paths=beyond,
                cache=cache_for(self.generator, chosen.cache_dir),
                show_progress=self.show_progress,
            )
        record_generation(self.report, corpus)
        return corpus.units

    def stars(self, graph: nx.Graph) -> list[TextNode]:
        """A unit per fact table of ``graph`` and its dimensions (``config.star_units``; none when off)."""
        if not self.config.star_units:
            return []
        return star_units(join_stars(graph), {t.id: t for t in self.tables}, self.serializer)


class UnitsSteps(Protocol):
    """The steps :func:`corpus_units` composes: a build's (:class:`CorpusBuild`) or an insert's
    (``storage.incremental``), which makes units for the new tables and the paths through them."""

    @property
    def config(self) -> PearlConfig: ...

    def own_units(self) -> list[TextNode]: ...

    def discover(self) -> tuple[nx.Graph, list[JoinPath], list[JoinPath]]: ...

    def generate(self, paths: Sequence[JoinPath], beyond: Sequence[JoinPath]) -> list[TextNode]: ...

    def stars(self, graph: nx.Graph) -> list[TextNode]: ...


def corpus_units(build: UnitsSteps) -> tuple[list[TextNode], nx.Graph | None]:
    """The units a build or an insert makes, and its join graph (``None`` without augmentation).

    Each table's own units; with augmentation (paper Algorithm 1) the units of the generated questions of
    the selected join paths, then a unit per star.
    """
    units = build.own_units()
    if not build.config.augment:
        return units, None
    graph, paths, beyond = build.discover()
    return [*units, *build.generate(paths, beyond), *build.stars(graph)], graph


def build_corpus(
    tables: TablesInput,
    config: PearlConfig,
    *,
    embed_model: BaseEmbedding | None = None,
    llm: LLM | None = None,
    generator: QueryGenerator | None = None,
    storage_context: StorageContext | None = None,
    show_progress: bool = False,
    units_step: Callable[[CorpusBuild], tuple[list[TextNode], nx.Graph | None]] = corpus_units,
) -> IndexParts:
    """Run the offline pipeline; the arguments are documented on ``PearlTableIndex.from_tables``.

    Args:
        units_step: Makes the units (default :func:`corpus_units`; ``pearl eval``'s ablations pass their own).

    Raises:
        ValueError: No tables, or no units produced.
    """
    report = BuildReport()
    with stage(report.seconds, "total"):
        with stage(report.seconds, "load"):
            read = _read(tables, config)
        loaded = read.tables
        report.skipped = [f.to_dict() for f in read.skipped]
        if not loaded:
            raise ValueError("No tables to index")
        with stage(report.seconds, "encoder"):  # the bundled encoder's one-time ONNX export is paid here
            model = resolve_embed_model(embed_model)
            prepare_encoder(model)
            serializer = serializer_for(model, config)
        resolved_llm = resolve_llm(llm)
        if config.augment and generator is None:
            generator = default_generator(resolved_llm)
        build = CorpusBuild(loaded, model, generator, serializer, config, report, show_progress)
        units, graph = units_step(build)
        if not units:
            raise ValueError("The build produced no units")
        with stage(report.seconds, "embed"):
            vector_index = build_vector_index(
                units, model, storage_context, show_progress=show_progress, approximate=ApproximateSearch.of(config)
            )
        with stage(report.seconds, "tables"):
            catalog = Catalog.of(loaded, units, serializer, config.table_text_chars)
    report.n_tables = len(loaded)
    report.n_units = len(units)
    report.units_by_kind = count_kinds(units)
    return IndexParts(
        tables=loaded,
        embed_model=model,
        config=config,
        vector_index=vector_index,
        units=units,
        join_graph=graph,
        llm=resolved_llm,
        report=report,
        generator=generator,
        catalog=catalog,
    )


def _read(tables: TablesInput, config: PearlConfig) -> TablesRead:
    return read_tables(tables, max_rows_read=config.max_rows_read, csv_options=config.csv_options, strict=config.strict)


def record_generation(report: BuildReport, corpus: AugmentedCorpus) -> None:
    """The paths and the generation report of augmented units, in the build's report."""
    report.n_paths = len(corpus.paths)
    report.generation = corpus.report.to_dict() if corpus.report is not None else {}
    report.generation["fallback_paths"] = corpus.fallback_paths


def estimate_generation_cost(
    tables: TablesInput,
    config: PearlConfig,
    *,
    embed_model: BaseEmbedding | None = None,
    llm: LLM | None = None,
    generator: QueryGenerator | None = None,
) -> dict[str, Any]:
    """Dry run of the build up to the prompts; see ``PearlTableIndex.estimate_cost``."""
    loaded = _read(tables, config).tables
    if generator is None:
        generator = default_generator(resolve_llm(llm))
    _, paid, beyond = discover_for_generator(loaded, resolve_embed_model(embed_model), generator, config)
    requests = plan_requests({t.id: t for t in loaded}, paid, generator, config)
    estimate = estimate_prompt_tokens(requests, generator=generator)
    cache = cache_for(generator, config.cache_dir)
    cached = sum(cache.lookup(generator, r) is not None for r in requests) if cache is not None else 0
    return {
        "tables": len(loaded),
        "path_kinds": sorted(generator.path_kinds) if generator.path_kinds is not None else ["explicit", "implicit"],
        "paths": len(paid),
        "fallback_paths": len(beyond) if generator.fallback is not None else 0,
        "cached_requests": cached,
        **estimate,
    }
