"""The offline build pipeline behind ``PearlTableIndex.from_tables`` (paper Algorithm 1).

Load tables, make the units (:mod:`~llama_index_pearl.corpus.units_step`: serialize an original unit per table,
discover and select join paths, generate questions for them through the generation cache, a unit per star),
embed every unit once with normalised vectors and store them (an exact FAISS inner-product index by default, so
inner product equals cosine). :func:`estimate_generation_cost` is the same pipeline up to the prompts, as a dry
run. Both read one :class:`BuildInputs`; every step takes the one :class:`~llama_index_pearl.config.PearlConfig`.

Pipeline step: corpus (docs/architecture.md).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection, Iterable, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.llms import LLM
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import BasePydanticVectorStore

from llama_index_pearl.config import PearlConfig
from llama_index_pearl.corpus.augment import AugmentedCorpus, plan_requests
from llama_index_pearl.corpus.catalog import Catalog
from llama_index_pearl.corpus.columns import ColumnIndex
from llama_index_pearl.corpus.lexical import LexicalIndex
from llama_index_pearl.corpus.units import count_kinds
from llama_index_pearl.corpus.units_step import CorpusBuild, StepsReport, corpus_units, discover_for_generator
from llama_index_pearl.foundations.timing import shown_stage, stage
from llama_index_pearl.generation import (
    HeuristicQueryGenerator,
    LLMQueryGenerator,
    QueryGenerator,
    cache_for,
    estimate_glossary,
    estimate_prompt_tokens,
    glossary_writer,
    paid_work_cache,
)
from llama_index_pearl.joins.graph import stored_paths
from llama_index_pearl.store.embedding import build_vector_index
from llama_index_pearl.store.hnsw import HnswSettings
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
    "BuildInputs",
    "BuildReport",
    "IndexParts",
    "build_corpus",
    "default_generator",
    "estimate_generation_cost",
    "serializer_for",
]


@dataclass(frozen=True, kw_only=True)
class BuildInputs:
    """What a build starts from, the one record of its inputs (``PearlTableIndex.from_tables`` documents each).

    Args:
        tables: Anything :func:`~llama_index_pearl.tables.inputs.load_tables` accepts.
        config: The build settings.
        embed_model: The encoder (``None``: ``Settings.embed_model`` if set, else the bundled MiniLM).
        llm: The LLM of query generation (``None``: none).
        generator: The query generator (``None``: from ``llm``, else the heuristic one).
        storage_context: Where the vectors go (``None``: a new FAISS store).
        show_progress: A progress bar per stage, named after it (``foundations.timing.shown_stage``).
    """

    tables: TablesInput
    config: PearlConfig
    embed_model: BaseEmbedding | None = None
    llm: LLM | None = None
    generator: QueryGenerator | None = None
    storage_context: StorageContext | None = None
    show_progress: bool = False


@dataclass
class BuildReport(StepsReport):
    """What a build did and how long each stage took (seconds).

    Args:
        n_tables: Tables indexed.
        n_units: Units embedded.
        n_paths: Join paths selected.
        units_by_kind: Units per kind.
        seconds: Wall time per stage; ``total`` is the whole build, its stages included.
        generation: What query generation sent and got.
        glossary: What the glossary's LLM was sent and cost (:class:`~llama_index_pearl.generation.GlossaryReport`;
            empty without an LLM).
        skipped: Table files that could not be read (``{"path", "reason"}``), when the build skipped them.
        bad_lines: CSV files whose rows with more fields than the header were skipped (``skip_bad_lines``):
            ``{"path", "rows", "lines"}`` (the first lines skipped).
    """

    n_tables: int = 0
    n_units: int = 0
    n_paths: int = 0
    units_by_kind: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    generation: dict[str, Any] = field(default_factory=dict)
    glossary: dict[str, Any] = field(default_factory=dict)
    skipped: list[dict[str, str]] = field(default_factory=list)
    bad_lines: list[dict[str, Any]] = field(default_factory=list)

    def add_generation(self, corpus: AugmentedCorpus) -> None:
        """The paths and the generation report of the build's augmented units."""
        self.n_paths = len(corpus.paths)
        self.generation = corpus.report.to_dict() if corpus.report is not None else {}
        self.generation["fallback_paths"] = corpus.fallback_paths

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

    def store(self) -> BasePydanticVectorStore:
        """The store of the unit vectors: ``vector_store``, else ``vector_index``'s.

        Raises:
            ValueError: Neither the units nor ``open_units`` and ``vector_store`` to read them later are given.
        """
        if self.units is None and (self.open_units is None or self.vector_store is None):
            raise ValueError("PearlTableIndex needs its units, or open_units and vector_store to read them later")
        if self.vector_store is not None:
            return self.vector_store
        if self.vector_index is None:
            raise ValueError("PearlTableIndex needs the vector_index of its units, or their vector_store")
        return self.vector_index.vector_store


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


def build_corpus(
    inputs: BuildInputs,
    units_step: Callable[[CorpusBuild], tuple[list[TextNode], nx.Graph | None]] = corpus_units,
) -> IndexParts:
    """Run the offline pipeline.

    Args:
        inputs: What the build starts from.
        units_step: Makes the units (default :func:`~llama_index_pearl.corpus.units_step.corpus_units`;
            ``pearl eval``'s ablations pass their own).

    Raises:
        ValueError: No tables, or no units produced.
    """
    config, show = inputs.config, inputs.show_progress
    report = BuildReport()
    with stage(report.seconds, "total"):
        with shown_stage(report.seconds, "load", show):
            read = _read(inputs.tables, config)
        loaded = read.tables
        report.skipped = [f.to_dict() for f in read.skipped]
        report.bad_lines = [b.to_dict() for b in read.bad_lines]
        if not loaded:
            raise ValueError("No tables to index")
        with shown_stage(report.seconds, "encoder", show):  # the bundled encoder's one-time ONNX export is paid here
            model = resolve_embed_model(inputs.embed_model, announce=_announcer(show))
            prepare_encoder(model)
            serializer = serializer_for(model, config)
        resolved_llm = resolve_llm(inputs.llm)
        generator = inputs.generator
        if config.augment and generator is None:
            generator = default_generator(resolved_llm)
        writer = glossary_writer(resolved_llm, generator, config)
        if writer is not None:
            with shown_stage(report.seconds, "glossary", show, total=len(loaded), unit="table") as bar:
                loaded, glossary = writer.write_all(loaded, paid_work_cache(config.cache_dir), bar.update)
            report.glossary = glossary.to_dict()
        build = CorpusBuild(loaded, model, generator, serializer, config, report, show)
        units, graph = units_step(build)
        if not units:
            raise ValueError("The build produced no units")
        with shown_stage(report.seconds, "embed", show, total=len(units), unit="unit") as bar:
            vector_index = build_vector_index(
                units, model, inputs.storage_context, progress=bar.update, approximate=HnswSettings.of(config)
            )
        with shown_stage(report.seconds, "columns", show):
            columns = ColumnIndex.build(loaded, model) if config.column_vectors else None
        with stage(report.seconds, "tables"):
            catalog = Catalog.of(loaded, units, serializer, config.table_text_chars, columns)
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


def _announcer(show: bool) -> Callable[[str], None] | None:
    """Where a shown build says a one-off pause is coming (the bundled encoder's export): above the bars."""
    if not show:
        return None
    from tqdm.auto import tqdm

    return lambda message: tqdm.write(message, file=sys.stderr)


def _read(tables: TablesInput, config: PearlConfig) -> TablesRead:
    return read_tables(
        tables,
        max_rows_read=config.max_rows_read,
        csv_options=config.csv_options,
        strict=config.strict,
        skip_bad_lines=config.skip_bad_lines,
    )


def estimate_generation_cost(inputs: BuildInputs) -> dict[str, Any]:
    """Dry run of the build up to the prompts; see ``PearlTableIndex.estimate_cost``.

    Args:
        inputs: What the build would start from (its ``storage_context`` and ``show_progress`` are not read).
    """
    config = inputs.config
    loaded = _read(inputs.tables, config).tables
    generator, llm = inputs.generator, resolve_llm(inputs.llm)
    if generator is None:
        generator = default_generator(llm)
    _, paid, beyond = discover_for_generator(loaded, resolve_embed_model(inputs.embed_model), generator, config)
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
        **estimate_glossary(loaded, llm, generator, config),
    }
