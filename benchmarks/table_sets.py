"""How a table set is chosen: candidate rules measured on every dev set together, from one build per set.

Each benchmark folder is indexed once at the shipped defaults (heuristic generator, MiniLM); every question's
pooled ranking (cosine plus lexical evidence) and the words each table holds are computed once, in the unified
pool and within the question's own database (``--per-database``: the retrieval of ``filters`` on its ``db``); each
rule then chooses a set from the same scores, so the rules differ only in what they decide. Per set, mode and rule
it prints how often the set is complete, its size against gold, C@G+2 and R@2 (all questions, 1 table, 4+).

    python benchmarks/table_sets.py ../shared/bench/spider ../shared/bench/tpch runs/bench/lahman
    python benchmarks/table_sets.py ../shared/bench/spider --rules "none,default,min_confidence=0.2" --json OUT

A rule is ``none`` (the pooled ranking, no set), ``default`` (:class:`SetRule`'s defaults), or ``key=value`` fields
of :class:`SetRule` or of its :class:`Evidence` (``words=5``) separated by ``;``. ``--learn`` prints the logistic
regression that :class:`Evidence`'s defaults round (the four features of each candidate against the seed, every
set weighted alike).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters

from llama_index_pearl import PearlConfig, PearlTableIndex
from llama_index_pearl.evaluation.benchmark import BenchQuery, evaluate_rankings, evaluate_sets, load_benchmark
from llama_index_pearl.retrieval.table_sets import (
    MAX_DISTANCE,
    QUESTION_WORDS,
    Evidence,
    SetRule,
    choose_table_set,
    set_first,
)
from llama_index_pearl.text.models import embed_queries

MODES = ("pool", "db")
KS = (1, 2, 5)


def parse_rule(text: str) -> SetRule | None:
    if text == "none":
        return None
    if text == "default":
        return SetRule()
    rule_fields = {f.name: f.type for f in dataclasses.fields(SetRule)}
    values: dict[str, Any] = {}
    evidence: dict[str, float] = {}
    for part in text.split(";"):
        key, value = part.split("=")
        if key in rule_fields:
            values[key] = int(value) if rule_fields[key] in ("int", int) else float(value)
        else:
            evidence[key] = float(value)
    return SetRule(**values, evidence=Evidence(**evidence))


def question_rows(index: PearlTableIndex, queries: Sequence[BenchQuery], per_database: bool) -> list[dict[str, Any]]:
    """Per question: the pooled ranking of every table in reach, the words each holds, their weights, the graph."""
    state = index.retrieval_state()
    search = state.search  # the default store's: it ranks every table in reach
    retriever = index.as_retriever()
    vectors = embed_queries(index.embed_model, [q.question for q in queries])
    rows = []
    for query, vector in zip(queries, vectors):
        boost = state.space.boost(query.question, retriever.lexical_weight)
        scope = None
        if per_database and query.db:
            scope = state.scope(MetadataFilters(filters=[MetadataFilter(key="source", value=query.db)]))
        if scope is None:
            pooled = search.search_many(vector.reshape(1, -1), len(state.table_ids), len(state.unit_ids), [boost])[0]
        else:
            pooled = search.search_scoped(vector, len(scope.tables), boost, scope)
        words, weights = state.words.of(query.question, scope)
        graph = scope.graph if scope is not None else state.nodes.graph
        rows.append(
            {"ranked": [(t.table_id, t.score) for t in pooled], "words": words, "weights": weights, "graph": graph}
        )
    return rows


def evaluate(
    queries: Sequence[BenchQuery], rows: Sequence[dict[str, Any]], sources: dict, rule: SetRule | None
) -> dict:
    """``pearl eval``'s metrics of one rule: R@k, C@k and C@G+2 of the set-first order, and the set's."""
    orders, sets = [], []
    for row in rows:
        ranked_ids = [t for t, _ in row["ranked"]]
        if rule is None:
            orders.append(ranked_ids)
            sets.append(ranked_ids[:1])
            continue
        table_set = choose_table_set(row["ranked"], row["words"], row["weights"], row["graph"], rule, sources)
        orders.append(set_first(ranked_ids, table_set))
        sets.append(list(table_set.tables))
    metrics = evaluate_rankings(queries, orders, KS)
    for group, row in evaluate_sets(queries, sets).items():
        metrics[group].update(row)
    return metrics


def candidate_features(queries: Sequence[BenchQuery], rows: Sequence[dict[str, Any]], rule: SetRule) -> tuple:
    """Each candidate's four features against the seed, and whether it is gold (the data ``--learn`` fits)."""
    features, gold = [], []
    for query, row in zip(queries, rows):
        ranked, words, graph = row["ranked"], row["words"], row["graph"]
        asked = {w: x for w, x in row["weights"].items() if w not in QUESTION_WORDS}
        total = sum(asked.get(w, 0.0) for w in set().union(*words.values())) if words else 0.0
        candidates = ranked[: rule.depth]
        if not candidates:
            continue
        seed = max(candidates, key=lambda ts: ts[1] + rule.coverage * _share(words.get(ts[0], ()), asked, total))[0]
        seen = words.get(seed, frozenset())
        lengths = nx.single_source_shortest_path_length(graph, seed, cutoff=MAX_DISTANCE) if seed in graph else {}
        for table, score in candidates:
            if table == seed:
                continue
            gain = _share(words.get(table, frozenset()) - seen, asked, total)
            degree = graph.degree(table) if table in graph else 0
            features.append([ranked[0][1] - score, gain, lengths.get(table, MAX_DISTANCE), math.log1p(degree)])
            gold.append(float(table in query.gold_tables))
    return np.asarray(features), np.asarray(gold)


def _share(held: Any, asked: dict[str, float], total: float) -> float:
    return sum(asked.get(w, 0.0) for w in held) / total if total else 0.0


def learn(samples: Sequence[tuple[np.ndarray, np.ndarray]]) -> dict[str, float]:
    """Logistic regression of gold membership, each set's candidates weighted alike (L2 1e-3, gradient descent)."""
    x = np.vstack([s[0] for s in samples])
    y = np.concatenate([s[1] for s in samples])
    weight = np.concatenate([np.full(len(s[1]), 1.0 / max(1, len(s[1]))) for s in samples])
    mean, spread = x.mean(0), x.std(0) + 1e-9
    z = np.hstack([(x - mean) / spread, np.ones((len(x), 1))])
    w = np.zeros(z.shape[1])
    for _ in range(5000):
        p = 1.0 / (1.0 + np.exp(-z @ w))
        w -= 0.1 * (z.T @ ((p - y) * weight) / weight.sum() + 1e-3 * w)
    raw = w[:-1] / spread
    names = ["score_gap", "words", "distance", "centrality"]
    return {"bias": round(float(w[-1] - raw @ mean), 3), **{n: round(float(v), 3) for n, v in zip(names, raw)}}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("benches", nargs="+", type=Path)
    parser.add_argument("--rules", default="none,default", help="rules separated by ','")
    parser.add_argument("--modes", default="pool,db", help="pool (the unified pool), db (within each question's db)")
    parser.add_argument("--learn", action="store_true", help="fit Evidence's weights on the benches (per database)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    rules = [(text, parse_rule(text)) for text in args.rules.split(",")]
    modes = [m for m in args.modes.split(",") if m]
    results: dict[str, Any] = {}
    samples = []
    for folder in args.benches:
        bench = load_benchmark(folder)
        started = time.perf_counter()
        index = PearlTableIndex.from_tables(bench.tables, config=PearlConfig())
        built = time.perf_counter() - started
        sources = {t.id: t.source for t in bench.tables}
        one_db = len({q.db for q in bench.queries}) == 1 and len(set(sources.values())) == 1
        print(f"# {bench.name}: {len(bench.tables)} tables, {len(bench.queries)} questions, build {built:.1f} s")
        results[bench.name] = {}
        for mode in modes:
            if mode == "pool" and one_db and "db" in modes:
                continue  # one database: the pool is the database
            rows = question_rows(index, bench.queries, mode == "db")
            if args.learn and mode == "db":
                samples.append(candidate_features(bench.queries, rows, SetRule()))
            for text, rule in rules:
                metrics = evaluate(bench.queries, rows, sources, rule)
                results[bench.name][f"{mode} {text}"] = metrics
                _print(bench.name, mode, text, metrics)
    if args.learn:
        print("Evidence fitted:", learn(samples))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


def _print(name: str, mode: str, text: str, metrics: dict) -> None:
    for group in ("all", "1 table", "2 tables", "3 tables", "4+ tables"):
        if group in metrics:
            m = metrics[group]
            print(
                f"{name:<16} {mode:<4} {text:<28} {group:<9} n={m['n']:<5} set {m['Set']:6.2f} "
                f"size {m['SetSize']:.2f}/{m['GoldSize']:.2f} prec {m['SetPrecision']:6.2f} "
                f"R@1 {m['R@1']:6.2f} R@2 {m['R@2']:6.2f} C@5 {m['C@5']:6.2f} C@G+2 {m['C@G+2']:6.2f}",
                flush=True,
            )


if __name__ == "__main__":
    sys.exit(main())
