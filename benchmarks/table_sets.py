"""How a table set is chosen: the confidence fitted, and the bars measured, on every dev set together.

Each benchmark folder is indexed once at the shipped defaults (heuristic generator, MiniLM, column vectors); for
every question, within its own database (``db``: the retrieval of ``filters`` on its source) and in the unified
pool (``pool``), the pooled ranking and its candidates' evidence are computed once, by the package's own answer
step (``SetAnswer.evidence``: the features ``pearl eval`` reads). Then:

- ``--learn`` fits the logistic model of :class:`~llama_index_pearl.retrieval.answer.evidence.Confidence` (and its
  ``without_columns`` twin) on every set's candidates, each set weighted alike, and prints each held-out set's
  AUC and calibration error (the model fitted on the other sets), and how often a bridge is gold;
- ``--rules`` chooses sets with each rule from the same evidence and prints, per set and mode, how often the set
  is complete, its size against gold, its precision, the needed tier's precision, the ECE of the confidences,
  and how often the ranking cut at the set's own size is complete (``Cut``).

    python benchmarks/table_sets.py ../shared/bench/spider ../shared/bench/spider2_lite --learn
    python benchmarks/table_sets.py ../shared/bench/tpch --rules "default,needed=0.6;maybe=0.1" --json OUT

``--no-thesaurus`` reads each question in its own words only (``PearlConfig.thesaurus``).

``--l2 1e-3,3e-3`` fits and holds out under each L2 penalty (``by_l2`` in the JSON; the first penalty's figures
also where one penalty's go), and every held-out set's log-loss, what the shipped penalty was chosen by.
``--without-each`` prints each set's held-out log-loss with each feature left out of the fit in turn.

``--llm-base URL --cache-dir CACHE`` builds each folder with an LLM writing every table's glossary (the heuristic
still writes the questions), as ``pearl eval --llm-base URL --glossary --no-llm-questions --cache-dir CACHE``
does: one cache, so the glossaries ``pearl eval`` wrote are read back and nothing is sent for them.

A rule is ``none`` (the pooled ranking, no set), ``default`` (:class:`SetRule`'s defaults), or ``key=value``
fields of :class:`SetRule` separated by ``;``.
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

import numpy as np
from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters

from llama_index_pearl import PearlConfig, PearlTableIndex
from llama_index_pearl.cli.options import GENERATION_SAMPLING
from llama_index_pearl.evaluation.benchmark import (
    BenchQuery,
    calibration_error,
    evaluate_rankings,
    evaluate_sets,
    load_benchmark,
)
from llama_index_pearl.generation import HeuristicQueryGenerator
from llama_index_pearl.retrieval.answer.evidence import FEATURES, Confidence, content_words
from llama_index_pearl.retrieval.answer.table_sets import SetRule, SetTier, set_first
from llama_index_pearl.retrieval.search.search import Question, Ranked
from llama_index_pearl.store.embedding import normalise
from llama_index_pearl.text.models import embed_queries, openai_compatible_llm

MODES = ("db", "pool")
KS = (1, 2, 5)
# the shipped confidence's penalty, chosen by held-out log-loss (benchmarks/README.md, "The penalty of the
# confidence's fit")
L2 = 3e-3
COLUMN_FEATURES = ("column_gap", "word_column", "word_column_wins", "word_column_margin", "beyond_seed", "seed_answers")


def parse_rule(text: str) -> SetRule | None:
    if text == "none":
        return None
    if text == "default":
        return SetRule()
    kinds = {f.name: f.type for f in dataclasses.fields(SetRule)}
    values: dict[str, Any] = {}
    for part in text.split(";"):
        key, value = part.split("=")
        values[key] = int(value) if kinds[key] in ("int", int) else float(value)
    return SetRule(**values)


def question_rows(index: PearlTableIndex, queries: Sequence[BenchQuery], per_database: bool) -> list[dict[str, Any]]:
    """Per question: its ranking of every table in reach and its candidates' evidence (the answer step's)."""
    state = index.revisions.state()
    search, rule = state.search, SetRule()
    retriever = index.as_retriever()
    vectors = embed_queries(index.embed_model, [q.question for q in queries])
    scopes = [
        state.scope(MetadataFilters(filters=[MetadataFilter(key="source", value=q.db)]))
        if per_database and q.db
        else None
        for q in queries
    ]
    texts = [state.lexical_text(q.question, s) for q, s in zip(queries, scopes)]  # what BM25 and the words read
    words = _word_vectors(index, state, texts)
    rows = []
    for query, vector, text, scope in zip(queries, vectors, texts, scopes):
        boost = state.space.boost(text, retriever.lexical_weight, scope)
        if scope is None:
            pooled = search.search_many(vector.reshape(1, -1), len(state.table_ids), len(state.unit_ids), [boost])[0]
        else:
            pooled = search.search_scoped(vector, len(scope.tables), boost, scope)
        question = Question(text, vector.tolist(), words[text], query.question)
        ranked = Ranked(question, pooled, vector, boost, retriever.lexical_weight)
        evidence = state.answer.evidence(ranked, rule, scope)
        choose = _chooser(state, ranked, scope)
        rows.append({"ranked": [(t.table_id, t.score) for t in pooled], "evidence": evidence, "choose": choose})
    return rows


def _chooser(state: Any, ranked: Ranked, scope: Any) -> Any:
    """The set a rule chooses for this question, as the answer step chooses it (routed in a lake)."""
    return lambda rule: state.answer_in(scope).table_set(ranked, rule, scope)


def _word_vectors(index: PearlTableIndex, state: Any, questions: Sequence[str]) -> dict[str, np.ndarray]:
    """Each question's content-word vectors, as the retriever makes them (the index's, else embedded)."""
    out = {}
    for text in questions:
        asked = content_words(text)
        known, unknown = state.word_vectors(asked)
        if unknown:
            for word, vec in zip(unknown, normalise(index.embed_model.get_text_embedding_batch(unknown))):
                state.word_cache.put((word,), vec)
                known[word] = vec
        out[text] = np.asarray([known[w] for w in asked], dtype=np.float32).reshape(len(asked), -1)
    return out


def labelled(queries: Sequence[BenchQuery], rows: Sequence[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
    """Every candidate's features and whether it is gold."""
    x = [row["evidence"].features for row in rows if len(row["evidence"].tables)]
    y = [
        [float(t in q.gold_tables) for t in row["evidence"].tables]
        for q, row in zip(queries, rows)
        if len(row["evidence"].tables)
    ]
    return np.vstack(x), np.concatenate(y)


def fit(x: np.ndarray, y: np.ndarray, weight: np.ndarray, keep: Sequence[str], l2: float = L2) -> Confidence:
    """Logistic regression on the ``keep`` features (:func:`logistic`), rounded into a :class:`Confidence`."""
    raw, bias = logistic(x[:, [FEATURES.index(n) for n in keep]], y, weight, l2=l2)
    return Confidence.from_weights(round(bias, 2), {n: round(float(v), 2) for n, v in zip(keep, raw)})


def logistic(
    x: np.ndarray, y: np.ndarray, weight: np.ndarray, steps: int = 4000, l2: float = L2
) -> tuple[np.ndarray, float]:
    """Weighted logistic regression (an ``l2`` penalty, gradient descent on standardised features): the weights of
    the features as given, and the bias."""
    mean, spread = x.mean(0), x.std(0) + 1e-9
    z = np.hstack([(x - mean) / spread, np.ones((len(x), 1))])
    w = np.zeros(z.shape[1])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-z @ w))
        w -= 0.5 * (z.T @ ((p - y) * weight) / weight.sum() + l2 * w)
    raw = w[:-1] / spread
    return raw, float(w[-1] - (raw * mean).sum())


def auc(p: np.ndarray, y: np.ndarray) -> float:
    order = np.argsort(p, kind="stable")
    ranks = np.empty(len(p))
    ranks[order] = np.arange(1, len(p) + 1)
    pos = y == 1
    n1, n0 = int(pos.sum()), int((~pos).sum())
    return float((ranks[pos].sum() - n1 * (n1 + 1) / 2) / (n1 * n0)) if n1 and n0 else float("nan")


def log_loss(p: np.ndarray, y: np.ndarray) -> float:
    """Mean negative log-likelihood of the gold labels (what a penalty is chosen by, held out)."""
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def fitted_on(
    data: dict[str, tuple[np.ndarray, np.ndarray]], sets: Sequence[str], keep: Sequence[str] = FEATURES, l2: float = L2
) -> Confidence:
    """The confidence fitted on ``sets`` of ``data`` (each set's features and gold), each set weighted alike."""
    x = np.vstack([data[s][0] for s in sets])
    y = np.concatenate([data[s][1] for s in sets])
    weight = np.concatenate([np.full(len(data[s][1]), 1.0 / len(data[s][1])) for s in sets])
    return fit(x, y, weight, keep, l2)


def held_out(
    data: dict[str, tuple[np.ndarray, np.ndarray]], keep: Sequence[str] = FEATURES, l2: float = L2
) -> dict[str, Confidence]:
    """Each set's confidence fitted on the other sets (leave one dev set out), by set."""
    return {name: fitted_on(data, [s for s in data if s != name], keep, l2) for name in data}


def learn(data: dict[str, tuple[np.ndarray, np.ndarray]], l2: float = L2) -> dict[str, Any]:
    """The two models fitted on every set, and each set's AUC, ECE and log-loss under the model fitted on the others."""
    names = [n for n in FEATURES if n not in COLUMN_FEATURES]
    models = held_out(data, l2=l2)
    held = {}
    for name, model in models.items():
        p = model.probabilities(data[name][0])
        held[name] = {
            "auc": round(auc(p, data[name][1]), 3),
            "ece": round(calibration_error(list(zip(p, data[name][1]))), 3),
            "log_loss": round(log_loss(p, data[name][1]), 4),
        }
    return {
        "confidence": dataclasses.asdict(fitted_on(data, list(data), l2=l2)),
        "without_columns": dataclasses.asdict(fitted_on(data, list(data), names, l2=l2)),
        "held_out": held,
        "held_out_models": {name: dataclasses.asdict(model) for name, model in models.items()},
    }


def without_each(data: dict[str, tuple[np.ndarray, np.ndarray]], l2: float = L2) -> dict[str, dict[str, float]]:
    """Each set's held-out log-loss with every feature, and with each feature left out of the fit in turn."""
    out = {}
    for dropped in ("none", *FEATURES):
        models = held_out(data, [n for n in FEATURES if n != dropped], l2)
        out[dropped] = {name: round(log_loss(models[name].probabilities(x), y), 4) for name, (x, y) in data.items()}
        print(f"# without {dropped}: {json.dumps(out[dropped])}", flush=True)
    return out


def held_out_sets(kept: dict[str, Any], models: dict[str, dict], rules: dict[str, SetRule | None]) -> dict:
    """Each set's sets under each rule, its confidence fitted on the other sets (each question in its ``db``)."""
    out: dict[str, Any] = {}
    for name, (queries, rows) in kept.items():
        confidence = Confidence(**models[name])
        for text, rule in rules.items():
            if rule is None:
                continue
            metrics = evaluate(queries, rows, dataclasses.replace(rule, confidence=confidence))
            out.setdefault(text, {})[name] = metrics
            print(_line(name, "held", text, metrics), flush=True)
    return out


def evaluate(queries: Sequence[BenchQuery], rows: Sequence[dict[str, Any]], rule: SetRule | None) -> dict:
    """``pearl eval``'s metrics of one rule, and ``Cut``: the ranking cut at the set's size is complete."""
    orders, sets, needed, confidences, cuts, bridges = [], [], [], [], [], []
    for query, row in zip(queries, rows):
        ranked_ids = [t for t, _ in row["ranked"]]
        if rule is None:
            orders.append(ranked_ids)
            sets.append(ranked_ids[:1])
            continue
        chosen = row["choose"](rule)
        orders.append(set_first(ranked_ids, chosen))
        sets.append(list(chosen.tables))
        needed.append([t for t in chosen.tables if chosen.tiers[t] is SetTier.NEEDED])
        confidences.append(list(chosen.confidence.items()))
        cuts.append(set(query.gold_tables) <= set(ranked_ids[: len(chosen.tables)]))
        bridges += [
            t in query.gold_tables
            for t in chosen.tables
            if chosen.reasons[t].value == "bridge" and chosen.tiers[t] is SetTier.NEEDED
        ]
    metrics = evaluate_rankings(queries, orders, KS)
    for group, row in evaluate_sets(queries, sets, needed or None, confidences or None).items():
        metrics[group].update(row)
    if cuts:
        metrics["all"]["Cut"] = round(100.0 * sum(cuts) / len(cuts), 2)
        metrics["all"]["BridgeGold"] = round(100.0 * sum(bridges) / max(1, len(bridges)), 2)
    return metrics


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("benches", nargs="+", help="benchmark folders")
    parser.add_argument("--rules", default="none,default", help="comma-separated rules (see the module docstring)")
    parser.add_argument("--modes", default=",".join(MODES), help="db (each question within its db), pool, or both")
    parser.add_argument("--learn", action="store_true", help="fit the confidence on the benches (per database)")
    parser.add_argument("--json", help="write every figure here")
    parser.add_argument(
        "--llm-base",
        help="an OpenAI-compatible server whose LLM writes each table's glossary (the heuristic writes the questions)",
    )
    parser.add_argument("--cache-dir", help="the generation cache the glossaries are read from and written to")
    parser.add_argument("--no-thesaurus", action="store_true", help="questions read in their own words only")
    parser.add_argument(
        "--without-each", action="store_true", help="held-out log-loss with each feature left out of the fit in turn"
    )
    parser.add_argument(
        "--l2", default=str(L2), help="comma-separated L2 penalties: --learn fits and holds out each set under each"
    )
    args = parser.parse_args(argv)
    build = _glossary_build(args.llm_base, args.cache_dir)
    if args.no_thesaurus:
        build["config"] = dataclasses.replace(build["config"], thesaurus=False)
    rules = {text: parse_rule(text) for text in args.rules.split(",")}
    modes = args.modes.split(",")
    out: dict[str, Any] = {"rules": {}, "learn": None}
    samples, kept = {}, {}
    for bench_dir in args.benches:
        started = time.perf_counter()
        bench = load_benchmark(bench_dir)
        index = PearlTableIndex.from_tables(bench.tables, **build)
        for mode in modes:
            rows = question_rows(index, bench.queries, mode == "db")
            if mode == "db":
                samples[bench.name] = labelled(bench.queries, rows)
                kept[bench.name] = (bench.queries, rows)
            for text, rule in rules.items():
                metrics = evaluate(bench.queries, rows, rule)
                out["rules"].setdefault(text, {})[f"{bench.name} {mode}"] = metrics
                print(_line(bench.name, mode, text, metrics), flush=True)
        print(f"# {bench.name}: {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    penalties = [float(v) for v in args.l2.split(",")]
    if args.learn and args.without_each:
        out["without_each"] = without_each(samples, penalties[0])
    for l2 in penalties if args.learn else []:
        learned = learn(samples, l2)
        print(f"# L2 {l2:g}", flush=True)
        print(json.dumps(learned, indent=1))
        held = held_out_sets(kept, learned["held_out_models"], rules)
        if l2 == penalties[0]:  # the figures of the first penalty keep their place in the JSON
            out["learn"], out["held_out_sets"] = learned, held
        out.setdefault("by_l2", {})[f"{l2:g}"] = {"learn": learned, "held_out_sets": held}
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


def _glossary_build(llm_base: str | None, cache_dir: str | None) -> dict[str, Any]:
    """``from_tables``'s arguments: the shipped defaults, or with an LLM writing the glossary only, one at a time."""
    if llm_base is None:
        return {"config": PearlConfig()}
    llm = openai_compatible_llm(llm_base, "local", 120.0, **GENERATION_SAMPLING)  # as pearl eval's: one cache
    config = PearlConfig(concurrency=1, cache_dir=cache_dir, glossary=True)
    return {"config": config, "llm": llm, "generator": HeuristicQueryGenerator()}


def _line(bench: str, mode: str, rule: str, metrics: dict) -> str:
    row = metrics["all"]
    groups = " ".join(
        f"{g.split()[0]}t {metrics[g].get('Set', float('nan')):.1f}/{metrics[g].get('SetSize', float('nan')):.2f}"
        for g in ("1 table", "2 tables", "3 tables", "4+ tables")
        if g in metrics
    )
    if "NeededPrecision" not in row:
        return f"{bench:16s} {mode:4s} {rule:28s} R@2 {row['R@2']:.2f} C@5 {row['C@5']:.2f}"
    return (
        f"{bench:16s} {mode:4s} {rule:28s} Set {row['Set']:5.1f} size {row['SetSize']:.2f}/{row['GoldSize']:.2f} "
        f"prec {row['SetPrecision']:5.1f} needed {row['NeededPrecision']:5.1f} ECE {row['ECE']:.3f} "
        f"Cut {row['Cut']:5.1f} bridge {row['BridgeGold']:5.1f} R@2 {row['R@2']:.2f} C@5 {row['C@5']:.2f} | {groups}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
