"""Other forms of the confidence, tried beside the shipped logistic model on the same evidence, each dev set held
out of the fit in turn (the others weighted alike).

- ``logistic``: the shipped form (``table_sets.logistic``).
- ``trees depth 2`` / ``trees depth 3``: gradient-boosted trees (scikit-learn's ``HistGradientBoostingClassifier``,
  learning rate 0.05, 150 / 200 trees, 40 rows a leaf at the least, no early stopping): the features'
  interactions, which a logistic model cannot weigh. Their figures move by a few questions from run to run: a
  split falls on float differences in the evidence that the logistic model does not feel.
- ``logistic + values``: the shipped form with one more feature, how many values the question names that the
  candidate's rows hold (``log1p``; the question's word groups equal to a text value, as the answer step reads
  both, the longest groups only: ``route_trials.named_values``), as the LLM-free schema linkers read values.
- ``values as a floor``: the shipped form, then every candidate holding a value the question names at least at the
  second bar (``MAYBE``): a rule, not a weight, so the header-only sets (no values) are left as they are.
- ``by expected count``: the logistic model's logit recalibrated by how many tables it expects the question to
  need (the sum of its probabilities over the candidates): a second logistic model on ``logit``,
  ``logit * log(expected)`` and ``log(expected)``, so that a question expected to need one table can be surer of
  it and less sure of the rest.

Per held-out set: the AUC, and a set read from the probabilities alone (every candidate at the second bar, 0.12,
and up; no tiers, no bridges): how often it holds every gold table, its size, and the ECE over single-table and
4+ questions' candidates.

    python benchmarks/confidence_trials.py ../shared/bench/{spider,spider_realistic,spider2_lite,tpch,nycflights13,\\
business_words} runs/bench/{lahman,tpcds,analyst_words,analyst_words_s2}
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

import numpy as np
from route_trials import named_values
from table_sets import auc, labelled, logistic, question_rows

from llama_index_pearl import PearlConfig, PearlTableIndex
from llama_index_pearl.corpus.values import table_values
from llama_index_pearl.evaluation.benchmark import calibration_error, load_benchmark

MAYBE = 0.12
Rows = dict[str, np.ndarray]  # x: features, y: gold, q: question number, size: its gold tables, values: named
Model = Callable[[Sequence[Rows]], Callable[[Rows], np.ndarray]]


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def _stacked(sets: Sequence[Rows]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = np.vstack([s["x"] for s in sets])
    y = np.concatenate([s["y"] for s in sets])
    weight = np.concatenate([np.full(len(s["y"]), 1.0 / len(s["y"])) for s in sets])
    return x, y, weight


def logistic_model(sets: Sequence[Rows]) -> Callable[[Rows], np.ndarray]:
    raw, bias = logistic(*_stacked(sets))
    return lambda rows: _sigmoid(rows["x"] @ raw + bias)


def with_values(sets: Sequence[Rows]) -> Callable[[Rows], np.ndarray]:
    def widened(rows: Rows) -> Rows:
        return {**rows, "x": np.column_stack([rows["x"], np.log1p(rows["values"])])}

    model = logistic_model([widened(s) for s in sets])
    return lambda rows: model(widened(rows))


def values_as_floor(sets: Sequence[Rows]) -> Callable[[Rows], np.ndarray]:
    model = logistic_model(sets)
    return lambda rows: np.where(rows["values"] > 0, np.maximum(model(rows), MAYBE), model(rows))


def trees(depth: int, rounds: int) -> Model:
    def model(sets: Sequence[Rows]) -> Callable[[Rows], np.ndarray]:
        from sklearn.ensemble import HistGradientBoostingClassifier

        x, y, weight = _stacked(sets)
        found = HistGradientBoostingClassifier(
            max_depth=depth,
            max_iter=rounds,
            learning_rate=0.05,
            min_samples_leaf=40,
            l2_regularization=1.0,
            early_stopping=False,
            random_state=0,
        ).fit(x, y, sample_weight=weight * len(weight))
        return lambda rows: found.predict_proba(rows["x"])[:, 1]

    return model


def _by_count(logit: np.ndarray, question: np.ndarray) -> np.ndarray:
    expected = np.bincount(question, weights=_sigmoid(logit))[question]
    log_count = np.log(np.maximum(expected, 1e-3))
    return np.column_stack([logit, logit * log_count, log_count])


def by_expected_count(sets: Sequence[Rows]) -> Callable[[Rows], np.ndarray]:
    raw, bias = logistic(*_stacked(sets))
    offsets = np.cumsum([0] + [int(s["q"].max()) + 1 for s in sets[:-1]])
    question = np.concatenate([s["q"] + o for s, o in zip(sets, offsets)])
    _, y, weight = _stacked(sets)
    second, second_bias = logistic(_by_count(np.vstack([s["x"] for s in sets]) @ raw + bias, question), y, weight)
    return lambda rows: _sigmoid(_by_count(rows["x"] @ raw + bias, rows["q"]) @ second + second_bias)


MODELS: dict[str, Model] = {
    "logistic": logistic_model,
    "trees depth 2": trees(2, 150),
    "trees depth 3": trees(3, 200),
    "logistic + values": with_values,
    "values as a floor": values_as_floor,
    "by expected count": by_expected_count,
}


def measured(p: np.ndarray, rows: Rows) -> str:
    complete, sizes = [], []
    for question in np.unique(rows["q"]):
        mine = rows["q"] == question
        chosen = p[mine] >= MAYBE
        complete.append(rows["y"][mine][chosen].sum() >= rows["size"][mine][0])
        sizes.append(chosen.sum())
    one, many = rows["size"] == 1, rows["size"] >= 4
    ece = [calibration_error(list(zip(p[m], rows["y"][m]))) if m.any() else float("nan") for m in (one, many)]
    return (
        f"{auc(p, rows['y']):.3f} / {100 * np.mean(complete):.1f} / {np.mean(sizes):.2f} / {ece[0]:.3f} / {ece[1]:.3f}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("benches", nargs="+")
    args = parser.parse_args(argv)
    data: dict[str, Rows] = {}
    for folder in args.benches:
        bench = load_benchmark(folder)
        index = PearlTableIndex.from_tables(bench.tables, config=PearlConfig())
        rows = question_rows(index, bench.queries, True)
        x, y = labelled(bench.queries, rows)
        cells = {table_id: set(table_values(table)) for table_id, table in index.tables.items()}
        asked = [(n, q, r) for n, (q, r) in enumerate(zip(bench.queries, rows)) if len(r["evidence"].tables)]
        data[bench.name] = {
            "x": x,
            "y": y,
            "q": np.concatenate([np.full(len(r["evidence"].tables), n) for n, _, r in asked]),
            "size": np.concatenate([np.full(len(r["evidence"].tables), len(q.gold_tables)) for _, q, r in asked]),
            "values": np.asarray(
                [len(named_values(q.question, cells.get(t, set()))) for _, q, r in asked for t in r["evidence"].tables]
            ),
        }
    for name, rows in data.items():
        named = rows["values"] > 0
        share = f"{100 * rows['y'][named].mean():.0f} %" if named.any() else "-"
        print(
            f"{name}: {int(named.sum())} candidates hold a value the question names, {share} of them gold "
            f"(of all candidates: {100 * rows['y'].mean():.0f} %)"
        )
    print("AUC / set complete / set size / ECE 1 table / ECE 4+, each set held out")
    print("| model | " + " | ".join(data) + " |")
    for name, model in MODELS.items():
        cells = [measured(model([data[s] for s in data if s != held])(data[held]), data[held]) for held in data]
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
