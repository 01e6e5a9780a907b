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
from typing import Any

import networkx as nx
from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.llms import LLM
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import BasePydanticVectorStore

from llama_index_pearl.config import PearlConfig
from llama_index_pearl.corpus.augment import (
    AugmentedCorpus,
    build_augmented_units,
    keeps_path,
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
    "IndexParts",
    "build_corpus",
    "count_kinds",
    "default_generator",
    "discover_for_generator",
    "estimate_generation_cost",
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

    def recount(self, tables: Collection[Table], units: Iterable[TextNode], join_graph: nx.Graph) -> None:
        """Counts of an index after an insert or delete (the build's timings stay)."""
        units = list(units)
        self.n_tables = len(tables)
        self.n_units = len(units)
        self.n_paths = len(join_graph.graph.get("paths", []))
        self.units_by_kind = count_kinds(units)


@dataclass
class IndexParts:
    """Everything an index is made of, named as ``PearlTableIndex.__init__`` takes it.

    A build produces it; ``load`` reads it back, leaving what a query does not read to be read
    when first used: the units and LlamaIndex's stores (``open_units``), the tables' rows
    (``tables`` as a lazy mapping) and the BM25 arrays (``lexical``).

    Args:
        tables: The loaded tables (a list, or a mapping by id that reads them on first use).
        vector_index: The vector store index over ``units`` (``None``: ``open_units`` makes it).
        embed_model: The resolved encoder.
        config: The build settings (persisted with the index).
        units: Original and augmented units (``None``: ``open_units`` reads them).
        join_graph: The join graph of the selected paths (``None`` without augmentation).
        llm: The resolved LLM, if any.
        report: Counts and stage timings.
        generator: The query generator used (``None`` without augmentation, or after a load).
        generator_spec: What :meth:`QueryGenerator.to_spec` wrote, when ``generator`` is not built yet.
        catalog: Table texts and unit infos (default: read off ``units``, texts rendered when asked for).
        vector_store: The store of the unit vectors, when ``vector_index`` is left to ``open_units``.
        open_units: Reads and checks ``(vector_index, units)`` the first time either is needed.
        lexical: Reads the BM25 index of the catalog's units (in catalog order) when first needed.
    """

    tables: list[Table] | MutableMapping[str, Table]
    vector_index: VectorStoreIndex | None
    embed_model: BaseEmbedding
    config: PearlConfig
    units: list[TextNode] | None
    join_graph: nx.Graph | None
    llm: LLM | None
    report: BuildReport
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


def build_corpus(
    tables: TablesInput,
    config: PearlConfig,
    *,
    embed_model: BaseEmbedding | None = None,
    llm: LLM | None = None,
    generator: QueryGenerator | None = None,
    storage_context: StorageContext | None = None,
    show_progress: bool = False,
) -> IndexParts:
    """Run the offline pipeline; the arguments are documented on ``PearlTableIndex.from_tables``.

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
        with stage(report.seconds, "tables"):
            units = table_units(loaded, serializer, config)
        graph = None
        if config.augment and generator is not None:
            augmented, graph = _augment(loaded, model, generator, serializer, config, report, show_progress)
            units.extend(augmented)
        if not units:
            raise ValueError("The build produced no units (originals disabled and no augmented units)")
        with stage(report.seconds, "embed"):
            vector_index = build_vector_index(units, model, storage_context, show_progress=show_progress)
        with stage(report.seconds, "tables"):
            catalog = Catalog.of(loaded, units, serializer, config.table_text_chars)
    report.n_tables = len(loaded)
    report.n_units = len(units)
    report.units_by_kind = count_kinds(units)
    return IndexParts(loaded, vector_index, model, config, units, graph, resolved_llm, report, generator, None, catalog)


def _read(tables: TablesInput, config: PearlConfig) -> TablesRead:
    return read_tables(tables, max_rows_read=config.max_rows_read, csv_options=config.csv_options, strict=config.strict)


def _augment(
    loaded: Sequence[Table],
    model: BaseEmbedding,
    generator: QueryGenerator,
    serializer: Serializer,
    config: PearlConfig,
    report: BuildReport,
    show_progress: bool,
) -> tuple[list[TextNode], nx.Graph | None]:
    """Discovery and generation: the augmented units and the join graph (``None`` for ``random_query``)."""
    paths: list[JoinPath] = []
    beyond: list[JoinPath] = []
    graph = None
    if not config.random_query:  # per-table questions only (paper appendix E): no join discovery to pay for
        with stage(report.seconds, "discovery"):
            discovery, paths, beyond = discover_for_generator(loaded, model, generator, config, show_progress)
        graph = discovery.graph
    with stage(report.seconds, "generation"):
        corpus = build_augmented_units(
            {t.id: t for t in loaded},
            paths,
            generator,
            serializer,
            config,
            fallback_paths=beyond,
            cache=cache_for(generator, config.cache_dir),
            show_progress=show_progress,
        )
    _record_generation(report, corpus)
    units = corpus.units
    if graph is not None and config.star_units:
        units = [*units, *star_units(join_stars(graph), {t.id: t for t in loaded}, serializer)]
    return units, graph


def _record_generation(report: BuildReport, corpus: AugmentedCorpus) -> None:
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
    kept = [p for p in paid if keeps_path(config, p)]
    requests = plan_requests({t.id: t for t in loaded}, kept, generator, config)
    estimate = estimate_prompt_tokens(requests, generator=generator)
    cache = cache_for(generator, config.cache_dir)
    cached = sum(cache.lookup(generator, r) is not None for r in requests) if cache is not None else 0
    return {
        "tables": len(loaded),
        "path_kinds": sorted(generator.path_kinds) if generator.path_kinds is not None else ["explicit", "implicit"],
        "paths": len(kept),
        "fallback_paths": sum(keeps_path(config, p) for p in beyond) if generator.fallback is not None else 0,
        "cached_requests": cached,
        **estimate,
    }
