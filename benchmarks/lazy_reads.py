"""What a loaded index costs to read: ``load``, the first retrieve, then the tables' rows and the units.

    pearl index ../shared/bench/fetaqa_dev/tables --out IDX
    python benchmarks/lazy_reads.py IDX
    PYTHONPATH=BEFORE_CHECKOUT python benchmarks/lazy_reads.py IDX   # the same folder read by an older commit

One line of JSON: which checkout ran (the package's folder), and the wall seconds of ``PearlTableIndex.load``,
the first ``retrieve`` (it reads ``lexical.npz``), reading every table (``tables.jsonl``) and the units
(``docstore.json``), then of the join graph's check alone (``storage.integrity.check_graph``, part of load; the
median of 3). Run checkouts alternately in fresh processes and compare medians.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import llama_index_pearl
from llama_index_pearl import PearlTableIndex
from llama_index_pearl.storage.integrity import check_graph

QUESTION = "Who won the 2010 election in Ohio?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("index", help="a persisted index folder")
    args = parser.parse_args()
    started = time.perf_counter()
    index = PearlTableIndex.load(args.index)
    loaded = time.perf_counter()
    index.as_retriever(similarity_top_k=5).retrieve(QUESTION)
    retrieved = time.perf_counter()
    list(index.tables.values())
    tables = time.perf_counter()
    assert index.units
    units = time.perf_counter()
    graph_checks = []
    for _ in range(3):
        begun = time.perf_counter()
        check_graph(Path(args.index) / "join_graph.json", index.join_graph, set(index.tables))
        graph_checks.append(time.perf_counter() - begun)
    times = {
        "load": loaded - started,
        "first_retrieve": retrieved - loaded,
        "tables": tables - retrieved,
        "units": units - tables,
        "graph_check": statistics.median(graph_checks),
    }
    checkout = Path(llama_index_pearl.__file__).resolve().parents[1].name
    print(json.dumps({"checkout": checkout, **{k: round(v, 3) for k, v in times.items()}}))


if __name__ == "__main__":
    main()
