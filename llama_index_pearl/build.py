"""The offline build pipeline behind ``PearlTableIndex.from_tables`` (paper Algorithm 1).

Load tables, serialize an original unit per table, discover and select join
paths, generate questions for them (through the generation cache), build the
augmented units, embed every unit once with normalised vectors and store them
(an exact FAISS inner-product index by default, so inner product equals cosine).
:func:`estimate_generation_cost` is the same pipeline up to the prompts, as a dry run.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import networkx as nx
from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.llms import LLM
from llama_index.core.schema import TextNode

from llama_index_pearl.augment import AugmentOptions, build_augmented_units, plan_requests
from llama_index_pearl.config import BuildReport, PearlConfig, generation_cache
from llama_index_pearl.generation import (
    HeuristicQueryGenerator,
    LLMQueryGenerator,
    QueryGenerator,
    estimate_prompt_tokens,
)
from llama_index_pearl.joins import JoinDiscovery, JoinPath, discover_join_paths, resolve_budget, split_by_budget
from llama_index_pearl.models import encoder_window, resolve_embed_model, resolve_llm, token_counter_for
from llama_index_pearl.serialization import DEFAULT_MAX_ROWS
from llama_index_pearl.sources import DEFAULT_MAX_ROWS_READ, CsvOptions, TableSource, load_tables
from llama_index_pearl.stores import build_vector_index
from llama_index_pearl.table import Table
from llama_index_pearl.units import Serializer, UnitKind, original_unit

__all__ = [
    "BuiltCorpus",
    "build_corpus",
    "count_kinds",
    "default_generator",
    "discover_for_generator",
    "estimate_generation_cost",
    "selection_budget",
    "serializer_for",
]


@dataclass
class BuiltCorpus:
    """Everything a build produced, named as ``PearlTableIndex.__init__`` takes it.

    Args:
        tables: The loaded tables.
        vector_index: The vector store index over ``units``.
        embed_model: The resolved encoder.
        config: The build settings (persisted with the index).
        units: Original and augmented units.
        join_graph: The join graph of the selected paths (``None`` without augmentation).
        llm: The resolved LLM, if any.
        report: Counts and stage timings.
        generator: The query generator used (``None`` without augmentation).
    """

    tables: list[Table]
    vector_index: VectorStoreIndex
    embed_model: BaseEmbedding
    config: PearlConfig
    units: list[TextNode]
    join_graph: nx.Graph | None
    llm: LLM | None
    report: BuildReport
    generator: QueryGenerator | None


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
    )


def count_kinds(units: Sequence[TextNode]) -> dict[str, int]:
    """Units per :class:`~llama_index_pearl.units.UnitKind` value, kinds with none left out."""
    counts = {kind.value: 0 for kind in UnitKind}
    for unit in units:
        counts[unit.metadata["kind"]] += 1
    return {k: v for k, v in counts.items() if v}


def selection_budget(generator: QueryGenerator, budget: int | None) -> int | None:
    """Paths discovery selects: all of them when a free fallback writes those beyond ``budget``."""
    return None if generator.fallback is not None else budget


def discover_for_generator(
    tables: Sequence[Table],
    embed_model: BaseEmbedding,
    generator: QueryGenerator,
    *,
    budget: int | None,
    lambda_div: float,
    use_declared: bool,
    cross_source_joins: str,
    show_progress: bool = False,
) -> tuple[JoinDiscovery, list[JoinPath], list[JoinPath]]:
    """Discover join paths and split them into the generator's budget and the rest (for its fallback).

    Args:
        tables: The corpus.
        embed_model: Encoder for column profiles.
        generator: The query generator (its cost sets the default budget).
        budget: The user's paths per pool (``None``: the generator's default).
        lambda_div: Diversity weight of path selection.
        use_declared: Use declared foreign keys.
        cross_source_joins: Policy for joins across sources.
        show_progress: Show embedding progress bars.

    Returns:
        ``(discovery, paths within the budget, paths beyond it)``.
    """
    k = resolve_budget(budget, len(tables), generator.cost_per_path)
    discovery = discover_join_paths(
        tables,
        embed_model,
        budget=selection_budget(generator, k),
        lambda_div=lambda_div,
        use_declared=use_declared,
        cross_source_joins=cross_source_joins,
        show_progress=show_progress,
    )
    within, beyond = split_by_budget(discovery.paths, k)
    return discovery, within, beyond


def build_corpus(
    tables: TableSource,
    *,
    embed_model: BaseEmbedding | None = None,
    llm: LLM | None = None,
    generator: QueryGenerator | None = None,
    storage_context: StorageContext | None = None,
    augment: bool = True,
    budget: int | None = None,
    lambda_div: float = 0.1,
    use_declared_joins: bool = True,
    cross_source_joins: str = "evidence",
    explicit_only: bool = False,
    implicit_only: bool = False,
    no_originals: bool = False,
    single_hop: bool = False,
    single_hop_questions: int | None = None,
    random_view: bool = False,
    random_query: bool = False,
    concurrency: int = 4,
    cache_dir: str | Path | None = None,
    include_titles: bool = True,
    max_rows: int = DEFAULT_MAX_ROWS,
    max_rows_read: int | None = DEFAULT_MAX_ROWS_READ,
    csv_options: CsvOptions | Mapping[str, Any] | None = None,
    show_progress: bool = False,
) -> BuiltCorpus:
    """Run the offline pipeline; the parameters are documented on ``PearlTableIndex.from_tables``.

    Raises:
        ValueError: No tables, invalid settings, or no units produced.
    """
    started = time.perf_counter()
    loaded = load_tables(tables, max_rows_read=max_rows_read, csv_options=csv_options)
    if not loaded:
        raise ValueError("No tables to index")
    options = AugmentOptions(
        explicit_only=explicit_only,
        implicit_only=implicit_only,
        single_hop=single_hop,
        single_hop_questions=single_hop_questions,
        random_view=random_view,
        random_query=random_query,
    )
    model = resolve_embed_model(embed_model)
    resolved_llm = resolve_llm(llm)
    if augment and generator is None:
        generator = default_generator(resolved_llm)
    config = PearlConfig(
        include_titles=include_titles,
        max_rows=max_rows,
        max_rows_read=max_rows_read,
        include_originals=not no_originals,
        augment=augment,
        budget=budget,
        lambda_div=lambda_div,
        generator=generator.model_name if generator is not None else "none",
        use_declared_joins=use_declared_joins,
        cross_source_joins=cross_source_joins,
        **{k: v for k, v in asdict(options).items() if k != "seed"},
    )
    report = BuildReport(n_tables=len(loaded))
    report.seconds["load"] = time.perf_counter() - started
    serializer = serializer_for(model, config)
    by_id = {t.id: t for t in loaded}

    units = [original_unit(t, serializer) for t in loaded] if config.include_originals else []
    graph = None
    if augment:
        paths: list[JoinPath] = []
        beyond: list[JoinPath] = []
        if not random_query:  # per-table questions only (paper appendix E): no join discovery to pay for
            discovery, paths, beyond = discover_for_generator(
                loaded,
                model,
                generator,
                budget=budget,
                lambda_div=lambda_div,
                use_declared=use_declared_joins,
                cross_source_joins=cross_source_joins,
                show_progress=show_progress,
            )
            graph = discovery.graph
            report.seconds["discovery"] = sum(discovery.seconds.values())
        t0 = time.perf_counter()
        cache = generation_cache(generator, cache_dir)
        corpus = build_augmented_units(
            by_id,
            paths,
            generator,
            serializer,
            options,
            fallback_paths=beyond,
            concurrency=concurrency,
            cache=cache,
            show_progress=show_progress,
        )
        units.extend(corpus.units)
        report.seconds["generation"] = time.perf_counter() - t0
        report.n_paths = len(corpus.paths)
        report.generation = corpus.report.to_dict() if corpus.report is not None else {}
        report.generation["fallback_paths"] = corpus.fallback_paths
    if not units:
        raise ValueError("The build produced no units (originals disabled and no augmented units)")

    t0 = time.perf_counter()
    vector_index = build_vector_index(units, model, storage_context, show_progress=show_progress)
    report.seconds["embed"] = time.perf_counter() - t0
    report.n_units = len(units)
    report.units_by_kind = count_kinds(units)
    report.seconds["total"] = time.perf_counter() - started
    return BuiltCorpus(
        tables=loaded,
        vector_index=vector_index,
        embed_model=model,
        config=config,
        units=units,
        join_graph=graph,
        llm=resolved_llm,
        report=report,
        generator=generator,
    )


def estimate_generation_cost(
    tables: TableSource,
    *,
    embed_model: BaseEmbedding | None = None,
    llm: LLM | None = None,
    generator: QueryGenerator | None = None,
    budget: int | None = None,
    lambda_div: float = 0.1,
    use_declared_joins: bool = True,
    cross_source_joins: str = "evidence",
    cache_dir: str | Path | None = None,
    max_rows_read: int | None = DEFAULT_MAX_ROWS_READ,
    csv_options: CsvOptions | Mapping[str, Any] | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Dry run of the build up to the prompts; see ``PearlTableIndex.estimate_cost``."""
    loaded = load_tables(tables, max_rows_read=max_rows_read, csv_options=csv_options)
    resolved_llm = resolve_llm(llm)
    if generator is None:
        generator = default_generator(resolved_llm)
    _, paid, beyond = discover_for_generator(
        loaded,
        resolve_embed_model(embed_model),
        generator,
        budget=budget,
        lambda_div=lambda_div,
        use_declared=use_declared_joins,
        cross_source_joins=cross_source_joins,
    )
    augment_options = AugmentOptions(**options)
    kept = [p for p in paid if augment_options.keeps(p)]
    requests = plan_requests({t.id: t for t in loaded}, kept, generator, augment_options)
    estimate = estimate_prompt_tokens(requests, generator=generator)
    cache = generation_cache(generator, cache_dir)
    cached = sum(cache.lookup(generator, r) is not None for r in requests) if cache is not None else 0
    return {
        "tables": len(loaded),
        "paths": len(kept),
        "fallback_paths": sum(augment_options.keeps(p) for p in beyond) if generator.fallback is not None else 0,
        "requests": len(requests),
        "cached_requests": cached,
        **estimate,
    }
