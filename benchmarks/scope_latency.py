"""What a scoped retrieval costs: the first question of each database's scope, and the next one.

A scope (``filters=`` on ``source``) is built on its first question: its tables, units and joins, and the BM25 of
its units alone. For a benchmark folder with ``db`` fields, the index of all its tables is built once, then each
database is asked its first benchmark question twice, through a retriever scoped to it.

    python benchmarks/scope_latency.py ../shared/bench/spider2_lite
"""

from __future__ import annotations

import argparse
import statistics
import time

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.cli.options import source_filters
from llama_index_pearl.evaluation.benchmark import load_benchmark


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bench")
    args = parser.parse_args()
    bench = load_benchmark(args.bench)
    index = PearlTableIndex.from_tables(bench.tables)
    index.as_retriever().retrieve("a first question, to warm the encoder")
    questions: dict[str, str] = {}
    for query in bench.queries:
        questions.setdefault(query.db, query.question)
    first, next_ = [], []
    for db, question in sorted(questions.items()):
        retriever = index.as_retriever(similarity_top_k=5, filters=source_filters([db]))
        for times, asked in ((first, question), (next_, question + "?")):
            started = time.perf_counter()
            retriever.retrieve(asked)
            times.append(1000 * (time.perf_counter() - started))
    print(f"{len(questions)} databases, {len(index.units):,} units")
    for name, times in (("first question of a scope", first), ("next question", next_)):
        print(f"  {name}: p50 {statistics.median(times):.1f} ms, max {max(times):.1f} ms")


if __name__ == "__main__":
    main()
