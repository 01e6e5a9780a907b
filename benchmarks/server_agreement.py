"""Does an index on a Milvus server retrieve the tables the default FAISS store retrieves?

Builds one dev set's index twice with the shipped defaults (bundled MiniLM, heuristic questions): once on the
default FAISS store, once on ``MilvusVectorStore`` (``llama-index-vector-stores-milvus``) against a server
on loopback, then retrieves the top-k tables of every question from both (lexical evidence on, as shipped)
and prints how many questions get the same top-k tables (as a set, and in the same order), and the
questions that differ.

    python benchmarks/server_agreement.py --bench ../shared/bench/spider --server "$PEARL_TEST_MILVUS_URL"
"""

from __future__ import annotations

import argparse
import json
import time
import uuid

from llama_index.core import StorageContext

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.evaluation.benchmark import load_benchmark
from llama_index_pearl.text.models import default_embed_model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bench", required=True, help="a benchmark folder (../shared/bench/spider)")
    parser.add_argument("--server", required=True, help="the Milvus server's URL (http://127.0.0.1:PORT)")
    parser.add_argument("-k", type=int, default=10)
    args = parser.parse_args()
    from llama_index.vector_stores.milvus import MilvusVectorStore

    bench = load_benchmark(args.bench)
    model = default_embed_model()
    faiss_index = PearlTableIndex.from_tables(bench.tables, embed_model=model)
    dim = len(model.get_query_embedding("dimension"))
    collection = f"agreement_{uuid.uuid4().hex[:8]}"
    store = MilvusVectorStore(uri=args.server, collection_name=collection, dim=dim, overwrite=True)
    server_index = PearlTableIndex.from_tables(
        bench.tables, embed_model=model, storage_context=StorageContext.from_defaults(vector_store=store)
    )
    rankings = {}
    for name, index in (("faiss", faiss_index), ("milvus", server_index)):
        retriever = index.as_retriever(similarity_top_k=args.k)
        start = time.perf_counter()
        rankings[name] = [[n.node.metadata["table_id"] for n in retriever.retrieve(q.question)] for q in bench.queries]
        print(f"{name}: {len(bench.queries)} questions in {time.perf_counter() - start:.1f} s")
    pairs = list(zip(rankings["faiss"], rankings["milvus"]))
    same_set = sum(set(a) == set(b) for a, b in pairs)
    same_order = sum(a == b for a, b in pairs)
    n = len(pairs)
    print(
        json.dumps(
            {
                "bench": bench.name,
                "questions": n,
                "units": len(faiss_index.units),
                f"same_top{args.k}_tables": same_set,
                f"same_top{args.k}_tables_pct": round(100 * same_set / n, 2),
                f"same_top{args.k}_order": same_order,
                f"same_top{args.k}_order_pct": round(100 * same_order / n, 2),
            }
        )
    )
    for query, (a, b) in zip(bench.queries, pairs):
        if set(a) != set(b):
            print(f"differs: {query.id}: faiss {a} / milvus {b}")
    store.client.drop_collection(collection)


if __name__ == "__main__":
    main()
