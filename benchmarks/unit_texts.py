"""What each unit's dense (embedded) text and lexical (BM25) text should hold, measured on every dev set together.

    python benchmarks/unit_texts.py --bench ../shared/bench/spider --bench ../shared/bench/spider_realistic \
        --bench runs/variants/spider_rows10 [--variant default --variant paper ...] [--weights 0.05,0.1]
    python benchmarks/unit_texts.py --bench ../shared/bench/fetaqa_dev --random-query [--no-titles]

Builds each benchmark's index once (shipped defaults; the heuristic generator, or an LLM with --llm-base), then
re-renders every unit under each variant with the library's serializer, embeds the dense texts with the index's
encoder, builds BM25 over the lexical texts, and scores every question as the retriever does (cosine +
lexical_weight * BM25 / best BM25, max-pooled to tables, ties by next-best unit). Prints R@1/R@2/R@5/C@5 per set
and variant; ``default`` reproduces ``pearl eval`` exactly.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from llama_index_pearl import PearlConfig, PearlTableIndex
from llama_index_pearl.cli.options import GENERATION_SAMPLING
from llama_index_pearl.evaluation.ablations import Ablation, build_ablated
from llama_index_pearl.evaluation.benchmark import Benchmark, evaluate_rankings, load_benchmark
from llama_index_pearl.generation import reorder_rows_for_path
from llama_index_pearl.retrieval.search.lexical import DEFAULT_LEXICAL_WEIGHT, LexicalScorer
from llama_index_pearl.retrieval.search.pooling import UnitHit, max_pool
from llama_index_pearl.tables.table import Table
from llama_index_pearl.text.models import embed_queries, encoder_window, openai_compatible_llm, token_counter_for
from llama_index_pearl.text.serialization import DEFAULT_MAX_ROWS, TableView, serialize_views


@dataclass(frozen=True)
class Variant:
    """Rows per view in each unit kind's dense text; what BM25 reads; whether sources are named."""

    original_rows: int = DEFAULT_MAX_ROWS  # the whole-table unit
    schema_rows: int | None = None  # one more unit per table with this many rows (None: no schema units)
    unit_rows: int = DEFAULT_MAX_ROWS  # generated units (explicit, implicit, single_hop)
    lexical_rows: int | None = DEFAULT_MAX_ROWS  # rows BM25 reads per view (None: the dense text only)
    source: bool = True  # "Table: name (database source)"


VARIANTS = {
    # every unit embeds its 10 rows and BM25 reads the same text (the release before issue 22)
    "paper": Variant(lexical_rows=None, source=False),
    "paper_source": Variant(lexical_rows=None),
    "rows3": Variant(original_rows=3, unit_rows=3),
    "rows1": Variant(original_rows=1, unit_rows=1),
    "rows0": Variant(original_rows=0, unit_rows=0),
    "rows1_nosource": Variant(original_rows=1, unit_rows=1, source=False),
    # shipped: originals keep 10 rows, a schema unit per table and the generated units embed 1
    "default": Variant(schema_rows=1, unit_rows=1),
    "default_nosource": Variant(schema_rows=1, unit_rows=1, source=False),
    "schema0": Variant(schema_rows=0, unit_rows=1),
    "units0": Variant(schema_rows=1, unit_rows=0),
    "units3": Variant(schema_rows=1, unit_rows=3),
}


@dataclass
class Built:
    bench: Benchmark
    index: PearlTableIndex
    questions: np.ndarray


def build(bench_dir: str, titles: bool, random_query: bool, llm: Any = None, cache_dir: str | None = None) -> Built:
    bench = load_benchmark(bench_dir, titles=titles)
    config = PearlConfig(include_titles=titles)
    kwargs: dict[str, Any] = {}
    if llm is not None:
        from llama_index_pearl import LLMQueryGenerator

        # a shared local server can queue a request for minutes; a timeout would only drop paid-for work
        kwargs = {"llm": llm, "generator": LLMQueryGenerator(llm, timeout=900)}
        config = PearlConfig.with_overrides(config, concurrency=1, cache_dir=cache_dir)
    index = build_ablated(bench.tables, Ablation(random_query=random_query), config=config, **kwargs)
    questions = embed_queries(index.embed_model, [q.question for q in bench.queries])
    return Built(bench, index, questions)


def _views(index: PearlTableIndex, unit: Any, source: bool) -> list[TableView]:
    """The unit's views (columns and rows as the build chose them), tables without their source if asked."""
    meta, tables = unit.metadata, index.tables
    ids = list(meta["table_ids"])
    if meta["kind"] == "explicit":
        ids.reverse()  # explicit units list the far end first; the text runs in path order
    if meta["kind"] in ("explicit", "implicit"):
        path = next(p for p in index.join_paths if p.path_id == meta["path_id"])
        rows = reorder_rows_for_path(path, tables, DEFAULT_MAX_ROWS)
    else:
        rows = {t: list(range(min(DEFAULT_MAX_ROWS, tables[t].n_rows))) for t in ids}
    views = []
    for t in ids:
        table = tables[t] if source else _without_source(tables[t])
        views.append(TableView(table, meta["columns"][t], rows[t], max_rows=DEFAULT_MAX_ROWS))
    return views


def _without_source(table: Table) -> Table:
    return Table(table.id, table.df, title=table.title, description=table.description, name=table.name)


def texts_for(built: Built, variant: Variant, titles: bool) -> tuple[list[str], list[str], list[list[str]]]:
    """Dense texts, lexical texts and the tables of every unit (schema units first when the variant has them)."""
    index = built.index
    window, count = encoder_window(index.embed_model), token_counter_for(index.embed_model)

    def texts(views: list[TableView], question: str | None, rows: int) -> tuple[str, str]:
        dense = serialize_views(
            views, prefix=question, max_tokens=window, count_tokens=count, include_titles=titles, rows=rows
        )
        if variant.lexical_rows is None:
            return dense, dense
        lexical = serialize_views(views, prefix=question, include_titles=titles, rows=variant.lexical_rows)
        return dense, lexical

    dense: list[str] = []
    lexical: list[str] = []
    owners: list[list[str]] = []

    def add(dense_text: str, lexical_text: str, tables: list[str]) -> None:
        dense.append(dense_text)
        lexical.append(lexical_text)
        owners.append(list(tables))

    if variant.schema_rows is not None:
        for table in index.tables.values():
            shown = table if variant.source else _without_source(table)
            view = TableView(shown, None, None, max_rows=DEFAULT_MAX_ROWS)
            add(*texts([view], None, variant.schema_rows), [table.id])
    for unit in index.units:
        kind = unit.metadata["kind"]
        if kind == "schema":
            continue  # re-made above when the variant has them
        rows = variant.original_rows if kind == "original" else variant.unit_rows
        add(
            *texts(_views(index, unit, variant.source), unit.metadata.get("question"), rows), unit.metadata["table_ids"]
        )
    return dense, lexical, owners


def score(built: Built, dense: list[str], lexical: list[str], owners: list[list[str]], weight: float) -> list:
    """Every question's top-10 tables: cosine plus lexical evidence, max-pooled as PearlRetriever does."""
    vectors = np.asarray(built.index.embed_model.get_text_embedding_batch(dense), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [str(i) for i in range(len(dense))]
    scorer = LexicalScorer(ids, lexical)
    rankings = []
    for query, vector in zip(built.bench.queries, built.questions):
        scores = vectors @ vector
        raw = scorer.raw_scores(query.question)
        if weight > 0 and raw.max(initial=0.0) > 0:
            scores = scores + weight * raw / raw.max()
        hits = [UnitHit(ids[i], owners[i], float(scores[i])) for i in range(len(ids))]
        rankings.append([t.table_id for t in max_pool(hits, 10)])
    return rankings


def _llm(base: str) -> Any:
    return openai_compatible_llm(base, "local", 900, **GENERATION_SAMPLING)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", action="append", required=True, help="benchmark folder (repeat)")
    parser.add_argument("--variant", action="append", choices=sorted(VARIANTS), help="default: all")
    parser.add_argument("--no-titles", action="store_true")
    parser.add_argument(
        "--random-query",
        action="store_true",
        help="ablation: questions for every table, no paths (FeTaQA)",
    )
    parser.add_argument("--weights", default="", help="lexical weights to try besides the shipped one")
    parser.add_argument("--llm-base", help="OpenAI-compatible server: LLM-written questions (default: heuristic)")
    parser.add_argument("--cache-dir", default="runs/llm_cache", help="generation cache (with --llm-base)")
    parser.add_argument("--json", help="write every metric here")
    args = parser.parse_args(argv)
    llm = _llm(args.llm_base) if args.llm_base else None
    weights = [DEFAULT_LEXICAL_WEIGHT] + [float(w) for w in args.weights.split(",") if w]
    results = {}
    for bench_dir in args.bench:
        built = build(bench_dir, not args.no_titles, args.random_query, llm, args.cache_dir)
        for name in args.variant or list(VARIANTS):
            dense, lexical, owners = texts_for(built, VARIANTS[name], not args.no_titles)
            for weight in weights:
                metrics = evaluate_rankings(
                    built.bench.queries, score(built, dense, lexical, owners, weight), (1, 2, 5)
                )
                key = f"{Path(bench_dir).name}/{name}/w{weight}"
                results[key] = {"units": len(dense), **metrics}
                a, multi = metrics["all"], metrics.get("multi")
                line = f"{key:<42} units {len(dense):>5}  R@1 {a['R@1']:6.2f} R@2 {a['R@2']:6.2f} R@5 {a['R@5']:6.2f}"
                line += f" C@5 {a['C@5']:6.2f}" + (
                    f" | multi R@2 {multi['R@2']:6.2f} C@5 {multi['C@5']:6.2f}" if multi else ""
                )
                print(line, flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    sys.exit(main())
