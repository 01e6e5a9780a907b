"""Routing by the answer each database gives: a trial of re-ranking a lake question's likeliest databases by
the set chosen within each (issue 57, item 2). Measured, not shipped: see ``benchmarks/README.md``.

Each benchmark folder is indexed once at the shipped defaults, every database's tables together. For each
question, the shipped :class:`~llama_index_pearl.retrieval.answer.routing.Routing` ranks the databases; within each of
the ``TOP`` likeliest the answer step chooses its set, and the set is read for what it covers of the question:

- ``coverage``: the mean over the question's content words of the best cosine with a column of the needed tier;
- ``uncovered``: the share of those words whose best such cosine is under ``WORD_MATCH`` (they name nothing);
- ``best_confidence`` and ``mean_confidence`` of the needed tier, and its size (log).

A conditional logit over the ``TOP`` databases (the shipped route's logit a feature beside these) is fitted on
every set but one, each set weighted alike, and Source@1 of the held-out set is measured against the shipped
route's.

    python benchmarks/route_by_sets.py ../shared/bench/{spider,spider_realistic,spider2_lite,business_words} \\
        runs/lakes/spider_lake runs/lakes/spider2_lake --json OUT
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from routing import conditional_logit
from routing import question_rows as routing_rows

from llama_index_pearl import PearlConfig, PearlTableIndex
from llama_index_pearl.evaluation.benchmark import load_benchmark
from llama_index_pearl.retrieval.answer.evidence import WORD_MATCH
from llama_index_pearl.retrieval.answer.routing import Route, Routing
from llama_index_pearl.retrieval.answer.table_sets import SetRule
from llama_index_pearl.retrieval.search.search import Ranked

TOP = 3  # databases re-ranked: the right one is among the shipped route's first three for 74-100 % of questions
MODELS = {
    "shipped": ("logit",),
    "+coverage": ("logit", "coverage"),
    "+uncovered": ("logit", "uncovered"),
    "+confidence": ("logit", "best_confidence", "mean_confidence"),
    "+size": ("logit", "log_needed"),
    "all": ("logit", "coverage", "uncovered", "best_confidence", "mean_confidence", "log_needed"),
}


def question_rows(index: PearlTableIndex, bench: Any) -> list[dict[str, Any]]:
    """Per question: its database and, for each of the ``TOP`` likeliest databases, what its set covers."""
    answer, rule = index.revisions.state().answer, SetRule()
    rows = []
    for row in routing_rows(index, bench):
        evidence, ranked = row["evidence"], row["ranked"]
        logits = np.asarray([e.features() for e in evidence]) @ Routing().weights()
        likeliest = [(evidence[i].source, float(logits[i])) for i in np.argsort(-logits, kind="stable")[:TOP]]
        asked = ranked.question.word_vectors
        rows.append(
            {"db": row["db"], "databases": [_set_read(answer, ranked, rule, s, x, asked) for s, x in likeliest]}
        )
    return rows


def _set_read(answer: Any, ranked: Ranked, rule: SetRule, source: str | None, logit: float, asked: np.ndarray) -> dict:
    """What the set within ``source`` covers of the question."""
    within, inside = answer._within(ranked, rule, Route(source, 1.0), None)
    chosen = answer._chosen(within, rule, inside)
    needed = list(chosen.needed) or list(chosen.tables[:1])
    best = answer.columns.best_columns(needed, asked).max(axis=1) if len(asked) and needed else np.zeros(0)
    sure = [chosen.confidence.get(t, 0.0) for t in needed]
    return {
        "source": source,
        "logit": logit,
        "coverage": float(best.mean()) if len(best) else 0.0,
        "uncovered": float((best < WORD_MATCH).mean()) if len(best) else 1.0,
        "best_confidence": max(sure, default=0.0),
        "mean_confidence": float(np.mean(sure)) if sure else 0.0,
        "log_needed": math.log(max(1, len(needed))),
    }


def fit(sets: dict[str, list[dict]], names: Sequence[str]) -> np.ndarray:
    """The conditional logit over each question's ``TOP`` databases, every set weighted alike."""
    xs, ys, group, weight = [], [], [], []
    for rows in sets.values():
        usable = [r for r in rows if any(d["source"] == r["db"] for d in r["databases"])]
        for row in usable:
            xs += [[d[n] for n in names] for d in row["databases"]]
            ys += [float(d["source"] == row["db"]) for d in row["databases"]]
            group += [len(weight)] * len(row["databases"])
            weight.append(1.0 / len(usable))
    return conditional_logit(np.asarray(xs), np.asarray(ys), np.asarray(group), np.asarray(weight))


def source_at_1(rows: Sequence[dict], names: Sequence[str], w: np.ndarray) -> float:
    right = sum(
        max(row["databases"], key=lambda d: float(np.dot([d[n] for n in names], w)))["source"] == row["db"]
        for row in rows
    )
    return 100.0 * right / max(1, len(rows))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("benches", nargs="+", help="benchmark folders whose questions name their db")
    parser.add_argument("--json", help="write every figure here")
    args = parser.parse_args(argv)
    sets = {}
    for folder in args.benches:
        bench = load_benchmark(folder)
        sets[bench.name] = question_rows(PearlTableIndex.from_tables(bench.tables, config=PearlConfig()), bench)
    out: dict[str, dict[str, float]] = {}
    for model, names in MODELS.items():
        out[model] = {}
        for name, rows in sets.items():
            w = np.ones(1) if model == "shipped" else fit({k: v for k, v in sets.items() if k != name}, names)
            out[model][name] = round(source_at_1(rows, names, w), 2)
        print(f"{model:12s} " + "  ".join(f"{k} {v:5.1f}" for k, v in out[model].items()), flush=True)
    top = {
        k: round(100.0 * sum(any(d["source"] == r["db"] for d in r["databases"]) for r in v) / len(v), 2)
        for k, v in sets.items()
    }
    print(f"{'in the top ' + str(TOP):12s} " + "  ".join(f"{k} {v:5.1f}" for k, v in top.items()))
    if args.json:
        Path(args.json).write_text(json.dumps({"held_out_source_at_1": out, "top": top}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
