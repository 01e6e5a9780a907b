"""How a table set is chosen: candidate rules measured on every dev set together, from one build per set.

Each benchmark folder is indexed once at the shipped defaults (heuristic generator, MiniLM); every question's
unit scores (cosine plus lexical evidence) are computed once; each rule then ranks and chooses a set from the
same scores, so the rules differ only in what they decide. Per set and rule it prints R@1, R@2, C@5, C@10,
C@G+2 (all questions, 1-table, 4+), how often the set is complete and its size against gold.

    python benchmarks/table_sets.py ../shared/bench/spider ../shared/bench/tpch runs/bench/lahman
    python benchmarks/table_sets.py ../shared/bench/spider --rules none,default,window=0.05 --json OUT

A rule is ``none`` (the pooled ranking, no set), ``default`` (:class:`SetRule`'s defaults), or
``key=value,...`` fields of :class:`SetRule` separated by ``;`` (``window=0.05;min_gain=0.2``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llama_index_pearl import PearlConfig, PearlTableIndex
from llama_index_pearl.evaluation.benchmark import BenchQuery, load_benchmark
from llama_index_pearl.retrieval.table_sets import SetRule, choose_table_set, set_first
from llama_index_pearl.text.models import embed_queries


def parse_rule(text: str) -> SetRule | None:
    if text == "none":
        return None
    if text == "default":
        return SetRule()
    fields = {f.name: f.type for f in dataclasses.fields(SetRule)}
    values: dict[str, Any] = {}
    for part in text.split(";"):
        key, value = part.split("=")
        values[key] = int(value) if fields[key] in ("int", int) else float(value)
    return SetRule(**values)


def question_rankings(index: PearlTableIndex, queries: Sequence[BenchQuery]) -> list[dict[str, Any]]:
    """Per question: the pooled ranking of every table, and the words each table holds."""
    state = index.retrieval_state()
    retriever = index.as_retriever(similarity_top_k=len(state.table_ids))
    vectors = embed_queries(index.embed_model, [q.question for q in queries])
    out = []
    for query, vector in zip(queries, vectors):
        boost = state.lexical_boost(query.question, retriever.lexical_weight)
        pooled = state.search_many(vector.reshape(1, -1), len(state.table_ids), len(state.unit_ids), [boost])[0]
        ranked = [(t.table_id, t.score) for t in pooled]
        words, weights = state.question_words(query.question)
        out.append({"ranked": ranked, "words": words, "weights": weights})
    return out


def evaluate(queries: Sequence[BenchQuery], rows: Sequence[dict[str, Any]], graph: Any, rule: SetRule | None) -> dict:
    sums: dict[str, dict[str, float]] = {}
    for query, row in zip(queries, rows):
        ranked_ids = [t for t, _ in row["ranked"]]
        if rule is None:
            order, chosen = ranked_ids, ranked_ids[:1]
        else:
            table_set = choose_table_set(row["ranked"], row["words"], row["weights"], graph, rule)
            order, chosen = set_first(ranked_ids, table_set), list(table_set.tables)
        gold = set(query.gold_tables)
        g = len(gold)
        scores = {
            "R@1": len(gold & set(order[:1])) / g,
            "R@2": len(gold & set(order[:2])) / g,
            "C@5": float(gold <= set(order[:5])),
            "C@10": float(gold <= set(order[:10])),
            "C@G+2": float(gold <= set(order[: g + 2])),
            "set_complete": float(gold <= set(chosen)),
            "set_size": float(len(chosen)),
            "gold_size": float(g),
        }
        group = "1" if query.n_tables == 1 else ("4+" if query.n_tables >= 4 else "2-3")
        for name in ("all", group):
            bucket = sums.setdefault(name, {"n": 0.0})
            bucket["n"] += 1
            for key, value in scores.items():
                bucket[key] = bucket.get(key, 0.0) + value
    return {
        group: {
            key: (int(v) if key == "n" else round(v / b["n"] * (1 if key.endswith("size") else 100), 2))
            for key, v in b.items()
        }
        for group, b in sums.items()
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("benches", nargs="+", type=Path)
    parser.add_argument("--rules", default="none,default", help="rules separated by ','")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    rules = [(text, parse_rule(text)) for text in args.rules.split(",")]
    results: dict[str, Any] = {}
    for folder in args.benches:
        bench = load_benchmark(folder)
        started = time.perf_counter()
        index = PearlTableIndex.from_tables(bench.tables, config=PearlConfig())
        built = time.perf_counter() - started
        started = time.perf_counter()
        rows = question_rankings(index, bench.queries)
        scored = time.perf_counter() - started
        print(
            f"# {bench.name}: {len(bench.tables)} tables, {len(bench.queries)} questions, "
            f"build {built:.1f} s, scoring {scored:.1f} s",
            flush=True,
        )
        results[bench.name] = {}
        for text, rule in rules:
            metrics = evaluate(bench.queries, rows, index.join_graph, rule)
            results[bench.name][text] = metrics
            for group in ("all", "1", "2-3", "4+"):
                if group in metrics:
                    m = metrics[group]
                    print(
                        f"{bench.name:<16} {text:<32} {group:<4} n={m['n']:<5} R@1 {m['R@1']:6.2f} R@2 {m['R@2']:6.2f} "
                        f"C@5 {m['C@5']:6.2f} C@10 {m['C@10']:6.2f} C@G+2 {m['C@G+2']:6.2f} "
                        f"set {m['set_complete']:6.2f} size {m['set_size']:.2f}/{m['gold_size']:.2f}",
                        flush=True,
                    )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
