"""A release's sets over a whole lake: how often they lie within the question's database, and how complete they are.

Run it against any release (its package first on ``PYTHONPATH``), for the "before" of ``Source@1`` (a release
before routing has no such metric in ``pearl eval``): every table of the benchmark in one index, each question's
set read off ``in_set`` of ``retrieve_many``'s nodes (10 tables returned, as ``pearl eval`` asks).

    PYTHONPATH=<release checkout> python benchmarks/sets_within_db.py ../shared/bench/spider2_lite

Prints one JSON line: ``Source@1`` (the set holds only tables of the question's ``db``), ``Set``,
``SetPrecision``, ``SetSize`` and the single-table questions' R@2, in percent (sizes in tables).
"""

from __future__ import annotations

import json
import sys

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.evaluation.benchmark import load_benchmark


def main(bench_dir: str) -> dict[str, float | str]:
    bench = load_benchmark(bench_dir)
    index = PearlTableIndex.from_tables(bench.tables)
    sources = {t.id: t.source for t in bench.tables}
    results = index.as_retriever(similarity_top_k=10).retrieve_many([q.question for q in bench.queries])
    within = complete = 0
    precision = size = 0.0
    single = [0, 0]
    for query, nodes in zip(bench.queries, results):
        chosen = [n.node.metadata["table_id"] for n in nodes if n.node.metadata.get("in_set")]
        gold = set(query.gold_tables)
        within += bool(chosen) and all(sources[t] == query.db for t in chosen)
        complete += gold <= set(chosen)
        precision += len(set(chosen) & gold) / max(1, len(chosen))
        size += len(chosen)
        if len(gold) == 1:
            single[0] += 1
            single[1] += query.gold_tables[0] in [n.node.metadata["table_id"] for n in nodes][:2]
    n = max(1, len(bench.queries))
    return {
        "bench": bench.name,
        "Source@1": round(100 * within / n, 2),
        "Set": round(100 * complete / n, 2),
        "SetPrecision": round(100 * precision / n, 2),
        "SetSize": round(size / n, 2),
        "1 table R@2": round(100 * single[1] / max(1, single[0]), 2),
    }


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
