"""Where join hints disagree with the gold SQL of a benchmark: missed gold pairs and unused hinted pairs.

    python benchmarks/join_hint_misses.py ../shared/bench/spider [-k 5] [--examples 10]

Builds the default index (heuristic generator), retrieves the top k for every multi-table question whose gold SQL
joins something and whose gold tables are all retrieved, and counts (1) gold join pairs missing from the hints,
split by whether the join graph has an edge between the two tables, and (2) hinted pairs between two gold tables
that the gold query does not use, split by whether the two columns share a name.
"""

from __future__ import annotations

import argparse
from collections import Counter

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.evaluation.benchmark import load_benchmark
from llama_index_pearl.evaluation.hint_recall import SqlSchema, gold_join_pairs, hint_pairs
from llama_index_pearl.retrieval.answer.join_hints import compute_join_hints


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bench_dir")
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--examples", type=int, default=10)
    args = parser.parse_args()
    bench = load_benchmark(args.bench_dir)
    index = PearlTableIndex.from_tables(bench.tables)
    schema, graph = SqlSchema(bench.tables), index.join_graph
    retriever = index.as_retriever(similarity_top_k=args.k)
    missed, unused, examples = Counter(), Counter(), []
    for query in bench.queries:
        gold = gold_join_pairs(query.sql, query.db, schema) if query.sql and query.db else set()
        if query.n_tables < 2 or not gold:
            continue
        ranked = [n.node.metadata["table_id"] for n in retriever.retrieve(query.question)]
        if not set(query.gold_tables) <= set(ranked):
            continue
        hinted = hint_pairs(compute_join_hints(graph, ranked))
        for pair in gold - hinted:
            left, right = sorted(pair)
            edge = graph.has_edge(left.split(".")[0], right.split(".")[0])
            missed["edge carries other pairs" if edge else "no edge between the tables"] += 1
            examples.append(f"missed {left} = {right}")
        for pair in hinted - gold:
            left, right = sorted(pair)
            if {left.split(".")[0], right.split(".")[0]} <= set(query.gold_tables):
                same = left.split(".", 1)[1] == right.split(".", 1)[1]
                unused["same-named" if same else "differently named"] += 1
                examples.append(f"unused {left} = {right}")
    print(f"top {args.k}: missed gold pairs {sum(missed.values())} {dict(missed)}")
    print(f"top {args.k}: hinted pairs between gold tables not in the gold SQL {sum(unused.values())} {dict(unused)}")
    for line, count in Counter(examples).most_common(args.examples):
        print(f"  {count:>3} x {line}")


if __name__ == "__main__":
    main()
