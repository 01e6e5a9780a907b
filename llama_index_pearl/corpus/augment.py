"""Vertical partitioning: generated questions and join paths become indexed units.

Paper section 3.1.3: each table of a path is projected onto the columns chosen
for the question (T̂_i = Π_{c_i}(T_i)), with the path's join-overlapping rows
first (appendix B.2). An implicit path gives one implicit unit per table
(question ∥ T̂_i); an explicit path gives one explicit unit
(question ∥ T̂_1 ∥ … ∥ T̂_n) whose ``table_ids`` run from T_n back to T_1, the
question's target first, so max-pooling ties favour it. Single-hop questions (appendix E) give one
question-conditioned sub-table each. The paper's ablations are no part of a build: ``pearl eval`` makes
them (:mod:`~llama_index_pearl.evaluation.ablations`) from these same functions.

Pipeline step: corpus (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from llama_index.core.schema import TextNode

from llama_index_pearl.config import PearlConfig
from llama_index_pearl.corpus.units import TABLE_IDS, UnitKind, make_unit, original_unit, schema_unit, unit_meta
from llama_index_pearl.generation import (
    GeneratedQuery,
    GenerationCache,
    GenerationReport,
    GenerationRequest,
    GenerationResult,
    PathRequest,
    QueryGenerator,
    SingleTableRequest,
    generate_all,
    reorder_rows_for_path,
    shown_rows,
)
from llama_index_pearl.generation.heuristic import choose_columns, star_question
from llama_index_pearl.joins.paths import JoinKind, JoinPath
from llama_index_pearl.joins.stars import JoinStar
from llama_index_pearl.tables.table import Table
from llama_index_pearl.text.serialization import Serializer

__all__ = [
    "AugmentedCorpus",
    "build_augmented_units",
    "path_requests",
    "path_units",
    "plan_requests",
    "single_hop_units",
    "star_units",
    "table_units",
]


def table_units(tables: Sequence[Table], serializer: Serializer, config: PearlConfig) -> list[TextNode]:
    """The units each table gets on its own: its original unit, and with augmentation its schema unit.

    The original is the whole table (header and ``max_rows`` rows), which a question naming
    cell values matches; the schema unit is the header with ``embedded_rows`` rows, which a
    question naming the table's entities and attributes matches: MiniLM's 256-token window
    spent on cells blurs the names (benchmarks/README.md, "Constants": corpus.augment.table_units).

    Args:
        tables: The tables.
        serializer: The index's serializer.
        config: ``augment`` (off: original units only, the whole-table baseline).
    """
    units = [original_unit(t, serializer) for t in tables]
    if config.augment:
        units.extend(schema_unit(t, serializer) for t in tables)
    return units


def path_units(
    path: JoinPath, result: GenerationResult, tables: Mapping[str, Table], serializer: Serializer
) -> list[TextNode]:
    """Units for one generated path: one implicit unit per table, or one explicit unit of them all."""
    if not result.ok:
        return []
    query = result.queries[0]
    rows = reorder_rows_for_path(path, tables, serializer.max_rows)
    views = [_projected_view(tables[t], query.columns.get(t), rows.get(t), serializer) for t in path.tables]
    if path.kind is JoinKind.EXPLICIT:
        unit = make_unit(UnitKind.EXPLICIT, views, serializer, question=query.question, path_id=path.path_id)
        # All tables of an explicit unit share its score, and max pooling breaks such ties by
        # ``table_ids`` order. Generated questions ask for attributes at the far end of the
        # chain (anchored at the first table), so list the far end first and walk back.
        unit_meta(unit)[TABLE_IDS] = list(reversed(unit_meta(unit)[TABLE_IDS]))
        return [unit]
    return [
        make_unit(UnitKind.IMPLICIT, [view], serializer, question=query.question, path_id=path.path_id)
        for view in views
    ]


def single_hop_units(request: SingleTableRequest, result: GenerationResult, serializer: Serializer) -> list[TextNode]:
    """One question-conditioned sub-table unit per generated question."""
    if not result.ok:
        return []
    table = request.table
    rows = shown_rows(request, serializer.max_rows).get(table.id)
    units = []
    for i, query in enumerate(result.queries):
        view = _projected_view(table, query.columns.get(table.id), rows, serializer)
        units.append(
            make_unit(UnitKind.SINGLE_HOP, [view], serializer, question=query.question, key=f"{i}:{query.question}")
        )
    return units


def star_units(stars: Sequence[JoinStar], tables: Mapping[str, Table], serializer: Serializer) -> list[TextNode]:
    """One unit per star: a question naming the fact and each dimension by what describes it.

    The encoder embeds the question alone (``What are the quantity and price of the lineitem by the date of
    the orders, the name of the part, ...?``); the tables' headers, projected to their join keys and
    describing columns, reach the lexical index. All the star's tables share its score, so a question reading
    a fact and several dimensions finds them together.

    Args:
        stars: From :func:`~llama_index_pearl.joins.stars.join_stars`.
        tables: The tables by id.
        serializer: The index's serializer.
    """
    headers = replace(serializer, embedded_rows=0)
    units = []
    for star in stars:
        members = [tables[t] for t in star.tables if t in tables]
        if len(members) != len(star.tables):
            continue
        columns = {t.id: choose_columns(t, star.join_columns(t.id), low=2, high=4, prose=False) for t in members}
        views = [headers.view(t, columns[t.id]) for t in members]
        question = star_question(members, {t.id: star.join_columns(t.id) for t in members}, columns)
        units.append(make_unit(UnitKind.STAR, views, headers, question=question, key=star.fact, question_only=True))
    return units


def _projected_view(table: Table, columns: list[str] | None, rows: list[int] | None, serializer: Serializer):
    kept = [c for c in (columns or []) if c in table.df.columns]
    return serializer.view(table, kept or None, rows)


def with_fallback_columns(result: GenerationResult, request: PathRequest, fallback: QueryGenerator) -> GenerationResult:
    """The generated questions with each view widened by the free fallback's column choice.

    An LLM names the minimal columns a question needs, often one per table; the
    heuristic adds the join keys and the columns that say what a table holds
    (benchmarks/README.md, "Constants": corpus.augment.with_fallback_columns).

    Args:
        result: An accepted generation.
        request: Its path request.
        fallback: The generator's free fallback (run here, no call made).
    """
    extra = fallback.generate(request)
    if not extra.ok:
        return result
    wider = extra.queries[0].columns
    queries = [
        GeneratedQuery(
            q.question,
            {t: list(dict.fromkeys([*q.columns.get(t, []), *wider.get(t, [])])) for t in request.path.tables},
        )
        for q in result.queries
    ]
    return replace(result, queries=queries)


def path_requests(paths: Sequence[JoinPath], tables: Mapping[str, Table]) -> list[PathRequest]:
    """One generation request per path, each holding only its own tables."""
    return [PathRequest(p, {t: tables[t] for t in p.tables}) for p in paths]


@dataclass
class AugmentedCorpus:
    """What augmentation produced: units, the generation report, the paths used.

    ``fallback_paths`` counts the paths whose units came from the generator's free
    fallback (beyond its budget, or skipped by it); they are not in ``report``.
    """

    units: list[TextNode]
    report: GenerationReport | None
    paths: list[JoinPath]
    fallback_paths: int = 0


def build_augmented_units(
    tables: Mapping[str, Table],
    paths: Sequence[JoinPath],
    generator: QueryGenerator,
    serializer: Serializer,
    config: PearlConfig,
    *,
    fallback_paths: Sequence[JoinPath] = (),
    cache: GenerationCache | None = None,
    show_progress: bool = False,
) -> AugmentedCorpus:
    """Generate questions for the kept paths (and single-hop tables) and build their units.

    Args:
        tables: All tables by id.
        paths: Selected join paths, for ``generator``.
        generator: LLM or heuristic generator.
        serializer: The index's serializer.
        config: Which units to make (``single_hop``, ``single_hop_questions``) and the requests in flight.
        fallback_paths: Paths beyond the generator's budget: they, and the paths
            ``generator`` skips, go to ``generator.fallback`` (when it has one).
        cache: Generation cache; cached paths make no LLM call.
        show_progress: Progress bar during generation.
    """
    kept, extra = list(paths), list(fallback_paths)
    requests = plan_requests(tables, kept, generator, config)
    units: list[TextNode] = []
    report = None
    if requests:
        run = generate_all(
            generator, requests, concurrency=config.concurrency, cache=cache, show_progress=show_progress
        )
        report = run.report
        for request, result in zip(requests, run.results):
            if isinstance(request, PathRequest):
                if result.ok and generator.fallback is not None:
                    result = with_fallback_columns(result, request, generator.fallback)
                units.extend(path_units(request.path, result, tables, serializer))
                if not result.ok:
                    extra.append(request.path)
            else:
                units.extend(single_hop_units(request, result, serializer))
    fallback = generator.fallback
    if fallback is None or not extra:
        return AugmentedCorpus(units, report, kept)
    # the fallback is free (no cache, no concurrency to speak of): same requests, its own questions
    backup_requests = path_requests(extra, tables)
    backup = generate_all(fallback, backup_requests, concurrency=1)
    for request, result in zip(backup_requests, backup.results):
        units.extend(path_units(request.path, result, tables, serializer))
    covered = {p.path_id for p in kept}
    return AugmentedCorpus(units, report, [*kept, *(p for p in extra if p.path_id not in covered)], len(extra))


def plan_requests(
    tables: Mapping[str, Table], kept: Sequence[JoinPath], generator: QueryGenerator, config: PearlConfig
) -> list[GenerationRequest]:
    """The generation requests a build sends: one per kept path, then single-hop tables."""
    requests: list[GenerationRequest] = list(path_requests(kept, tables))
    n_questions = config.single_hop_questions or generator.questions_per_table
    requests.extend(SingleTableRequest(t, n_questions) for t in _single_hop_tables(tables, kept, config))
    return requests


def _single_hop_tables(tables: Mapping[str, Table], kept: Sequence[JoinPath], config: PearlConfig) -> list[Table]:
    if not config.single_hop:
        return []
    covered = {t for p in kept for t in p.tables}
    return [t for tid, t in tables.items() if tid not in covered]
