"""An insert's result as JSON, to compare two checkouts: build on half a benchmark's tables, insert the rest.

Usage::

    PYTHONPATH=CHECKOUT python benchmarks/insert_snapshot.py BENCH_DIR OUT.json

The index is built on the first half of the tables, the rest inserted in two batches, then the first table
inserted again with ``replace=True``. Written: every unit (id, its text's SHA-256, its metadata), the join
graph's JSON, the update reports and the build report, timings dropped. Two checkouts whose insert does the
same write the same file.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from typing import Any


def _without_timings(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items() if k != "seconds"}
    return [_without_timings(v) for v in value] if isinstance(value, list) else value


def main(argv: list[str] | None = None) -> int:
    from llama_index_pearl import PearlTableIndex
    from llama_index_pearl.evaluation.benchmark import load_benchmark
    from llama_index_pearl.joins.graph import graph_to_json

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bench", help="a benchmark folder (tables/, tables_meta.jsonl)")
    parser.add_argument("out", help="the JSON file to write")
    args = parser.parse_args(argv)
    tables = load_benchmark(args.bench).tables
    half = len(tables) // 2
    index = PearlTableIndex.from_tables(tables[:half])
    reports = [
        index.insert_tables(tables[half:-1]),
        index.insert_tables(tables[-1:]),
        index.insert_tables([tables[0]], replace=True),
    ]
    units = sorted(
        (u.node_id, hashlib.sha256(u.get_content().encode()).hexdigest(), json.dumps(u.metadata, sort_keys=True))
        for u in index.units
    )
    snapshot = {
        "units": units,
        "graph": graph_to_json(index.join_graph),
        "reports": [_without_timings(r.to_dict()) for r in reports],
        "build_report": _without_timings(index.report.to_dict()),
    }
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(snapshot, handle, sort_keys=True, default=str)
    print(f"{args.bench}: {len(units)} units, {index.join_graph.number_of_edges()} joined table pairs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
