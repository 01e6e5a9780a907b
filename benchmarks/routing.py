"""How a question finds its database in a lake: the routing fitted, and Source@1 measured, on every dev set with db.

Each benchmark folder is indexed once at the shipped defaults, every database's tables together (the whole lake:
the unified pool with provenance); for each question, the answer step's own ranking (``ROUTE_DEPTH`` tables) and
its sources' evidence (:func:`~llama_index_pearl.retrieval.answer.routing.source_evidence`) are computed once. Then:

- per set, ``Source@1`` of the shipped :class:`~llama_index_pearl.retrieval.answer.routing.Routing` (the chosen source
  is the question's ``db``), with twins counted as the same database beside it, and of the best table's source
  alone (what routing replaces);
- ``--learn`` fits the conditional logit on every set given (each weighted alike) and prints its weights and
  each set's Source@1 under the model fitted on the other sets. ``--held-out NAME`` keeps a set out of the fit
  (our own lake questions are measured, never fitted);
- ``--rank-rates`` fits :data:`~llama_index_pearl.retrieval.answer.routing.RANK_RATES` (how often the table at
  each rank within the question's own database is gold) on the sets but the held-out ones, each weighted alike, and
  prints, per set, the ECE of the rank confidence over the tables it answers for (the ranking's first ten
  of a source neither routed to nor a rival), with the rates fitted on the other sets: of a set of another family
  (the spider sets and their lakes share databases, as do spider2_lite's).

    python benchmarks/routing.py ../shared/bench/spider ../shared/bench/spider2_lite --learn
    python benchmarks/routing.py ../shared/bench/spider runs/lakes/spider_lake --held-out spider_lake --json OUT
    python benchmarks/routing.py ../shared/bench/{spider,business_words} runs/lakes/spider_lake --rank-rates
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from table_sets import _word_vectors

from llama_index_pearl import PearlConfig, PearlTableIndex
from llama_index_pearl.evaluation.benchmark import calibration_error, load_benchmark
from llama_index_pearl.retrieval.answer.routing import (
    RANK_RATES,
    ROUTE_DEPTH,
    Routing,
    rank_confidence,
    route,
    source_evidence,
    source_ranks,
)
from llama_index_pearl.retrieval.search.search import Question, Ranked
from llama_index_pearl.text.models import embed_queries


def question_rows(index: PearlTableIndex, bench: Any) -> list[dict[str, Any]]:
    """Per question: the sources' evidence in its whole-lake ranking (``ROUTE_DEPTH`` tables), that ranking, each
    ranked table's best cosine per content word, and its database."""
    state = index.revisions.state()
    retriever = index.as_retriever()
    questions = [q.question for q in bench.queries]
    vectors = embed_queries(index.embed_model, questions)
    texts = [state.lexical_text(q, None) for q in questions]  # what BM25 and the words read, as the retriever's
    asked = _word_vectors(index, state, texts)
    sizes = Counter(state.sources.values())  # each source's tables, as the answer step counts them
    rows = []
    for query, vector, text in zip(bench.queries, vectors, texts):
        boost = state.space.boost(text, retriever.lexical_weight)
        pooled = state.search.search_many(vector.reshape(1, -1), ROUTE_DEPTH, len(state.unit_ids), [boost])[0]
        ids = [t.table_id for t in pooled]
        words, weights = state.words.of(text, None)
        per_word = {}
        if len(asked[text]) and len(state.columns.vectors):
            matrix = state.columns.best_columns(ids, asked[text])
            per_word = {t: matrix[:, i].tolist() for i, t in enumerate(ids)}
        pairs = [(t.table_id, t.score) for t in pooled]
        evidence = source_evidence(pairs, state.sources, words, weights, per_word, sizes)
        question = Question(text, vector.tolist(), asked[text], query.question)
        rows.append(
            {
                "db": query.db,
                "gold": set(query.gold_tables),
                "evidence": evidence,
                "best": state.sources.get(ids[0]) if ids else None,
                "word_columns": per_word,
                "ranked": Ranked(question, pooled, vector, boost, retriever.lexical_weight),
                "sources": state.sources,
            }
        )
    return rows


def accuracy(rows: Sequence[dict[str, Any]], routing: Routing, twins: dict) -> tuple[float, float, float, float]:
    """Source@1 of the routing, with twins counted as the database, of the best table's source, and the ECE of
    the route's confidence (``route_confidence`` against the route being right)."""
    right = twin_right = best = 0
    sure: list[tuple[float, bool]] = []
    for row in rows:
        chosen = route(row["evidence"], routing, twins)
        right += chosen.source == row["db"]
        twin_right += chosen.source == row["db"] or chosen.source in twins.get(row["db"], ())
        best += row["best"] == row["db"]
        sure.append((chosen.confidence, chosen.source == row["db"]))
    n = max(1, len(rows))
    return 100.0 * right / n, 100.0 * twin_right / n, 100.0 * best / n, round(calibration_error(sure), 3)


def fit(sets: dict[str, Sequence[dict[str, Any]]]) -> Routing:
    """The conditional logit: softmax over each question's sources, cross-entropy on its db, sets weighted alike."""
    xs, ys, group, weight = [], [], [], []
    for rows in sets.values():
        usable = [r for r in rows if any(e.source == r["db"] for e in r["evidence"])]
        for row in usable:
            xs += [e.features() for e in row["evidence"]]
            ys += [float(e.source == row["db"]) for e in row["evidence"]]
            group += [len(weight)] * len(row["evidence"])
            weight.append(1.0 / len(usable))
    raw = conditional_logit(np.asarray(xs), np.asarray(ys), np.asarray(group), np.asarray(weight))
    return Routing(**{f.name: round(float(v), 2) for f, v in zip(dataclasses.fields(Routing), raw)})


def conditional_logit(x: np.ndarray, y: np.ndarray, g: np.ndarray, q: np.ndarray, start: np.ndarray | None = None):
    """Weights of a softmax over each group's rows (``g``: the group of each row, groups contiguous; ``q``: each
    group's weight; ``y``: 1 for the right row), by gradient descent on standardised features, L2 1e-3."""
    spread = x.std(0) + 1e-9
    z = x / spread
    w = np.zeros(z.shape[1]) if start is None else start * spread
    for _ in range(3000):
        logits = z @ w
        logits -= np.maximum.reduceat(logits, np.flatnonzero(np.r_[True, g[1:] != g[:-1]]))[g]
        e = np.exp(logits)
        p = e / np.bincount(g, weights=e)[g]
        w -= 0.5 * ((z.T @ ((p - y) * q[g])) / q.sum() + 1e-3 * w)
    return w / spread


def rank_rates(sets: dict[str, Sequence[dict[str, Any]]]) -> tuple[float, ...]:
    """How often the table at each rank within the question's own database is gold (the last rate for every later
    rank), per set, then the sets' mean."""
    per_set = []
    for rows in sets.values():
        gold, seen = np.zeros(len(RANK_RATES)), np.zeros(len(RANK_RATES))
        for row in rows:
            ids = [t.table_id for t in row["ranked"].tables]
            for table, rank in zip(ids, source_ranks(ids, row["sources"])):
                if row["sources"].get(table) == row["db"]:
                    at = min(rank, len(RANK_RATES)) - 1
                    seen[at] += 1
                    gold[at] += table in row["gold"]
        per_set.append(gold / np.maximum(seen, 1))
    return tuple(round(float(r), 2) for r in np.mean(per_set, axis=0))


def rank_calibration(rows: Sequence[dict[str, Any]], rates: Sequence[float], twins: dict) -> tuple[int, float, float]:
    """Over the tables the rank confidence answers for (the ranking's first ten of a source neither routed to nor
    a close rival): how many, how often gold (percent), and the ECE of their confidence."""
    pairs = []
    for row in rows:
        chosen = route(row["evidence"], Routing(), twins)
        ids = [t.table_id for t in row["ranked"].tables]
        sure = rank_confidence(ids, row["sources"], dict(chosen.probabilities), rates)
        skip = {chosen.source, *chosen.rivals}
        pairs += [(sure[t], t in row["gold"]) for t in ids[:10] if row["sources"].get(t) not in skip]
    gold = 100.0 * sum(g for _, g in pairs) / max(1, len(pairs))
    return len(pairs), round(gold, 1), round(calibration_error(pairs), 3)


def _family(name: str) -> str:
    """Sets over the same databases (a dev set and the lake built from it) are held out together."""
    return "spider2" if name.startswith("spider2") else "spider" if name.startswith("spider") else name


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("benches", nargs="+", help="benchmark folders whose questions name their db")
    parser.add_argument("--learn", action="store_true", help="fit the routing on the sets (but the held-out ones)")
    parser.add_argument("--held-out", action="append", default=[], help="a set measured but never fitted on")
    parser.add_argument("--rank-rates", action="store_true", help="fit RANK_RATES and measure the rank confidence")
    parser.add_argument("--json", help="write every figure here")
    args = parser.parse_args(argv)
    sets, twins_of, out = {}, {}, {"sets": {}, "learn": None}
    for folder in args.benches:
        started = time.perf_counter()
        bench = load_benchmark(folder)
        index = PearlTableIndex.from_tables(bench.tables, config=PearlConfig())
        sets[bench.name] = question_rows(index, bench)
        twins_of[bench.name] = index.revisions.state().router.twins()
        shipped = accuracy(sets[bench.name], Routing(), twins_of[bench.name])
        out["sets"][bench.name] = {
            "Source@1": shipped[0],
            "Source@1 twins": shipped[1],
            "best table": shipped[2],
            "route ECE": shipped[3],
        }
        twins = {k: v for k, v in twins_of[bench.name].items() if v}
        print(
            f"{bench.name:16s} Source@1 {shipped[0]:5.1f}  twins counted {shipped[1]:5.1f}  best table alone "
            f"{shipped[2]:5.1f}  route ECE {shipped[3]:.3f}  ({len(bench.queries)} q., "
            f"{time.perf_counter() - started:.0f} s) twins: {twins}",
            flush=True,
        )
    if args.learn:
        fitted_on = {k: v for k, v in sets.items() if k not in args.held_out}
        model = fit(fitted_on)
        held = {}
        for name in sets:
            other = fit({k: v for k, v in fitted_on.items() if k != name}) if name in fitted_on else model
            held[name] = accuracy(sets[name], other, twins_of[name])  # Source@1, with twins, best table, ECE
        out["learn"] = {"routing": dataclasses.asdict(model), "held_out_source_at_1": held}
        print(json.dumps(out["learn"], indent=1))
    if args.rank_rates:
        fitted_on = {k: v for k, v in sets.items() if k not in args.held_out}
        out["rank_rates"] = {"rates": rank_rates(fitted_on), "held_out": {}}
        for name in sets:
            rates = rank_rates({k: v for k, v in fitted_on.items() if _family(k) != _family(name)})
            out["rank_rates"]["held_out"][name] = rank_calibration(sets[name], rates, twins_of[name])
        print(json.dumps(out["rank_rates"], indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
