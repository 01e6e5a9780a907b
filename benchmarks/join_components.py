"""Which multi-table questions the join graph can answer as one joined set: gold tables in one component.

Usage::

    python benchmarks/join_components.py BENCH [BENCH ...] [--json OUT] [--quiet]

A set grows from the question's best table through the join graph (``retrieval.answer.table_sets``): a gold table in
another connected component of the graph, within the question's database, can come in only unjoined. For every
question with two gold tables or more, the graph that an index build discovers (``discover_join_paths`` with the
shipped defaults, each table's ``source`` its ``db``) is restricted to the question's database and the script
counts the questions whose gold tables lie in one component. It prints each question that stays split, with its
gold tables grouped by component, so that a missing join can be read off. Embeddings: the bundled MiniLM.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def split_questions(bench_dir: Path, embed_model: Any) -> dict[str, Any]:
    """Discover the join graph of one benchmark and group each multi-table question's gold by component."""
    import networkx as nx

    from llama_index_pearl.evaluation.benchmark import load_benchmark
    from llama_index_pearl.joins import discover_join_paths

    bench = load_benchmark(bench_dir)
    graph = discover_join_paths(bench.tables, embed_model).graph
    source = {t.id: t.source for t in bench.tables}
    components: dict[str | None, dict[str, int]] = {}
    for db in set(source.values()):
        within = graph.subgraph([t for t, s in source.items() if s == db])
        components[db] = {t: n for n, part in enumerate(nx.connected_components(within)) for t in part}
    rows = []
    for q in bench.queries:
        gold = sorted(set(q.gold_tables))
        if len(gold) < 2:
            continue
        db = q.db if q.db in components else source.get(gold[0])
        groups: dict[int, list[str]] = {}
        for table in gold:
            groups.setdefault(components[db].get(table, -1), []).append(table)
        row = {"id": q.id, "db": db, "hops": len(gold), "joined": len(groups) == 1, "groups": list(groups.values())}
        rows.append(row)
    joined = sum(r["joined"] for r in rows)
    return {
        "bench": bench_dir.name,
        "multi_table": len(rows),
        "joined": joined,
        "share": round(joined / len(rows), 4) if rows else 0.0,
        "edges": graph.number_of_edges(),
        "questions": rows,
    }


def main(argv: list[str] | None = None) -> int:
    from llama_index_pearl.text.models import resolve_embed_model

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("benchmarks", nargs="+", type=Path)
    parser.add_argument("--json", dest="json_out")
    parser.add_argument("--quiet", action="store_true", help="only the counts, not the questions that stay split")
    args = parser.parse_args(argv)
    model = resolve_embed_model(None)
    results = []
    for bench_dir in args.benchmarks:
        result = split_questions(bench_dir, model)
        results.append(result)
        print(
            f"{result['bench']}: {result['joined']} of {result['multi_table']} multi-table questions have their gold "
            f"tables in one component of their database's join graph ({result['edges']} joined table pairs)"
        )
        if not args.quiet:
            for row in result["questions"]:
                if not row["joined"]:
                    parts = " | ".join(", ".join(t.split("__", 1)[-1] for t in g) for g in row["groups"])
                    print(f"  split {row['id']} ({row['db']}, {row['hops']} tables): {parts}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
