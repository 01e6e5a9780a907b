"""The sets of a release without scopes, per database and pooled: the "before" rows of benchmarks/README.md.

A release before ``MetadataFilters`` scoped a retrieval cannot ask a question within its database. This script
asks it the way a user of that release would: the pooled ranking of every table, kept to the question's database
(each table scores on its own units, so the order within the database is the pooled one), the question's words
held by that database's tables and weighed over them, and that release's own ``choose_table_set`` over the join
graph among them. It calls that release's API (``RetrievalState.search_many``, ``question_words``), not this
tree's: run it with the release's package first on the path:

    git worktree add /tmp/before 9293a66
    PYTHONPATH=/tmp/before python benchmarks/sets_before.py ../shared/bench/spider2_lite --json OUT

It prints and writes, per mode (``pool``, ``db``) and group of questions: how often the set is complete, its
precision, size and the gold's, R@2, C@5 and C@G+2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llama_index_pearl.retrieval.table_sets import choose_table_set, set_first, word_weights

from llama_index_pearl import PearlConfig, PearlTableIndex
from llama_index_pearl.evaluation.benchmark import evaluate_rankings, evaluate_sets, group_means, load_benchmark
from llama_index_pearl.text.models import embed_queries


def _rows(index: PearlTableIndex, queries: Sequence[Any], tables: dict[str, str | None], per_db: bool) -> list:
    state = index.revisions.state()
    weight = index.as_retriever().lexical_weight
    vectors = embed_queries(index.embed_model, [q.question for q in queries])
    rows = []
    for query, vector in zip(queries, vectors):
        boost = state.lexical_boost(query.question, weight)
        pooled = state.search_many(vector.reshape(1, -1), len(state.table_ids), len(state.unit_ids), [boost])[0]
        ranked = [(t.table_id, t.score) for t in pooled]
        words, weights = state.question_words(query.question)
        graph = state.nodes.graph
        if per_db and query.db is not None:
            keep = {t for t, source in tables.items() if source == query.db}
            ranked = [(t, s) for t, s in ranked if t in keep]
            words = {t: w for t, w in words.items() if t in keep}
            holders: dict[str, int] = defaultdict(int)
            for held in words.values():
                for word in held:
                    holders[word] += 1
            weights, graph = word_weights(holders, len(keep)), graph.subgraph(keep)
        table_set = choose_table_set(ranked, words, weights, graph)
        rows.append((query, set_first([t for t, _ in ranked], table_set), list(table_set.tables)))
    return rows


def _metrics(rows: list) -> dict[str, dict[str, float]]:
    """The release's own metrics of the set-first orders and the sets, and the sets' precision beside them."""
    queries = [query for query, _, _ in rows]
    metrics = evaluate_rankings(queries, [order for _, order, _ in rows], (2, 5))
    precision = [{"SetPrecision": len(set(q.gold_tables) & set(chosen)) / max(1, len(chosen))} for q, _, chosen in rows]
    for extra in (evaluate_sets(queries, [chosen for _, _, chosen in rows]), group_means(queries, precision)):
        for group, row in extra.items():
            metrics[group].update(row)
    return metrics


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bench", type=Path)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    bench = load_benchmark(args.bench)
    index = PearlTableIndex.from_tables(bench.tables, config=PearlConfig())
    tables = {t.id: t.source for t in bench.tables}
    result = {mode: _metrics(_rows(index, bench.queries, tables, mode == "db")) for mode in ("pool", "db")}
    for mode, metrics in result.items():
        for group, row in metrics.items():
            print(bench.name, mode, group, json.dumps(row))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
