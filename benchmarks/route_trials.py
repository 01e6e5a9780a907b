"""Evidence for routing tried beside the shipped one: each trial adds a feature per source, refits the conditional
logit with each dev set held out in turn, and prints Source@1 and the route's ECE.

- ``distinct``: how far above every other source a source answers the content word it answers best beyond them
  (the largest, over the question's content words, of its best column cosine less the other sources' best): a word
  only one database holds a column for ("shipper").
- ``values``: how many values the question names that the source's rows hold (``log1p``): a word group of the
  question equal to a text value of one of its tables, read as the answer step reads them
  (``named_values.value_groups``, ``corpus.values.table_values``), the longest such groups only ("AC/DC", "classic
  cars", "PG-13").

Sets given with ``--held-out`` are measured with the model fitted on all the others, never fitted on.

    python benchmarks/route_trials.py ../shared/bench/{spider,spider_realistic,spider2_lite,business_words} \\
        runs/lakes/spider_lake runs/lakes/spider2_lake --held-out spider2_lake
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Container, Sequence
from typing import Any

import numpy as np
from routing import conditional_logit, question_rows

from llama_index_pearl import PearlConfig, PearlTableIndex
from llama_index_pearl.corpus.values import table_values
from llama_index_pearl.evaluation.benchmark import calibration_error, load_benchmark
from llama_index_pearl.retrieval.answer.named_values import value_groups


def source_values(index: PearlTableIndex) -> dict[str | None, set[str]]:
    """Each source's text values, as the index keeps them (:func:`~llama_index_pearl.corpus.values.table_values`)."""
    held: dict[str | None, set[str]] = {}
    for table_id, source in index.revisions.state().sources.items():
        held.setdefault(source, set()).update(table_values(index.tables[table_id]))
    return held


def named_values(question: str, cells: Container[str]) -> list[str]:
    """The question's word groups (:func:`~llama_index_pearl.retrieval.answer.named_values.value_groups`, as the answer
    step reads them) that are cells, the longest only."""
    found = [g for g in value_groups(question) if g in cells]
    return [g for g in found if not any(g != o and f" {g} " in f" {o} " for o in found)]


def distinct(row: dict[str, Any], sources: dict[str, str | None]) -> list[float]:
    """Per source of the row's evidence: its largest margin over the other sources on one content word."""
    per_word = row["word_columns"]
    width = max((len(v) for v in per_word.values()), default=0)
    if not width:
        return [0.0] * len(row["evidence"])
    matrix = np.zeros((len(row["evidence"]), width))
    for i, e in enumerate(row["evidence"]):
        own = [v for t, v in per_word.items() if sources.get(t) == e.source and len(v) == width]
        if own:
            matrix[i] = np.max(np.asarray(own), axis=0)
    margins = []
    for i in range(len(matrix)):
        others = np.delete(matrix, i, axis=0)
        margins.append(float((matrix[i] - (others.max(axis=0) if len(others) else 0.0)).max()))
    return margins


TRIALS: dict[str, Callable[[dict[str, Any]], list[list[float]]]] = {
    "shipped features": lambda row: [[] for _ in row["evidence"]],
    "+ distinct": lambda row: [[d] for d in row["distinct"]],
    "+ values": lambda row: [[math.log1p(len(v))] for v in row["values"]],
}


def _matrix(row: dict[str, Any], trial: str) -> np.ndarray:
    extra = TRIALS[trial](row)
    return np.asarray([e.features() + x for e, x in zip(row["evidence"], extra)], dtype=np.float64)


def fit(sets: dict[str, Sequence[dict[str, Any]]], trial: str) -> np.ndarray:
    xs, ys, group, weight = [], [], [], []
    for rows in sets.values():
        usable = [r for r in rows if any(e.source == r["db"] for e in r["evidence"])]
        for row in usable:
            xs.append(_matrix(row, trial))
            ys += [float(e.source == row["db"]) for e in row["evidence"]]
            group += [len(weight)] * len(row["evidence"])
            weight.append(1.0 / len(usable))
    return conditional_logit(np.vstack(xs), np.asarray(ys), np.asarray(group), np.asarray(weight))


def measured(rows: Sequence[dict[str, Any]], weights: np.ndarray, trial: str) -> tuple[float, float]:
    """Source@1 and the route's ECE."""
    sure = []
    for row in rows:
        logits = _matrix(row, trial) @ weights
        p = np.exp(logits - logits.max())
        best = int(np.argmax(p))
        sure.append((float(p[best] / p.sum()), row["evidence"][best].source == row["db"]))
    return 100.0 * sum(right for _, right in sure) / max(1, len(sure)), calibration_error(sure)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("benches", nargs="+")
    parser.add_argument("--held-out", action="append", default=[])
    args = parser.parse_args(argv)
    sets = {}
    for folder in args.benches:
        bench = load_benchmark(folder)
        index = PearlTableIndex.from_tables(bench.tables, config=PearlConfig())
        rows, cells = question_rows(index, bench), source_values(index)
        for query, row in zip(bench.queries, rows):
            row["distinct"] = distinct(row, index.revisions.state().sources)
            row["values"] = [named_values(query.question, cells.get(e.source, set())) for e in row["evidence"]]
        sets[bench.name] = rows
    fitted_on = {k: v for k, v in sets.items() if k not in args.held_out}
    print("| trial | " + " | ".join(sets) + " |")
    for trial in TRIALS:
        model = fit(fitted_on, trial)
        cells = []
        for name, rows in sets.items():
            weights = fit({k: v for k, v in fitted_on.items() if k != name}, trial) if name in fitted_on else model
            right, ece = measured(rows, weights, trial)
            cells.append(f"{right:.1f} ({ece:.3f})")
        print(f"| {trial} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
