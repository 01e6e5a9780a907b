"""Evidence tried for the confidence: does a new feature raise each dev set's held-out AUC and calibration?

Each benchmark folder is indexed at the shipped defaults and every question's candidates are read as
``benchmarks/table_sets.py`` reads them (per database). Beside the shipped features, candidate features that
follow from how data works are computed for each candidate:

- ``links``: how many of the ranking's first three tables it joins (a link table joins two tables that match);
- ``references``: how many tables it references by key (a fact table references its dimensions);
- ``measures``: its numeric columns that are no key (a measure lives there), and ``asks_measure`` times it
  (the question asks an amount: total, average, revenue, spent ...);
- ``spread``: how many candidates are the best column match of some content word of the question (a question
  whose words land on several tables needs several);
- ``names``: each content word against the words of a table's *name* alone (``writer`` means ``authors``,
  ``staff`` means ``employee``): how far its best match lies below the best table's, and the share of words its
  name matches best;
- ``own_columns`` (in place of the shipped word-column features and ``beyond_seed``): the same features with each
  table's reference columns left out (a column that references another table's key answers for that table: a
  link table's ``category_id`` names the category, not the link).

The logistic model is fitted with each dev set held out in turn (dev sets weighed alike) with the shipped
features and each trial's features added; each held-out set's AUC, ECE, and ECE over its single-table and 4+
table questions are printed:

    python benchmarks/evidence_trials.py \
        ../shared/bench/{business_words,spider2_lite,tpch,nycflights13,spider,spider_realistic}
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from table_sets import _word_vectors, auc, logistic, question_rows

from llama_index_pearl import PearlConfig, PearlTableIndex
from llama_index_pearl.evaluation.benchmark import calibration_error, load_benchmark
from llama_index_pearl.joins.graph import joins_between
from llama_index_pearl.retrieval.answer.evidence import (
    FEATURES,
    WORD_MATCH,
    _beyond_seed,
    _word_features,
)
from llama_index_pearl.text.words import identifier_words

TRIALS = {
    "links": ["links"],
    "references": ["references"],
    "measures": ["measures", "asks_measure_measures"],
    "spread": ["spread"],
    "names": ["name_word", "name_word_wins"],
    "own_columns": ["own_word_column", "own_word_column_wins", "own_word_column_margin", "own_beyond_seed"],
}
EXTRA = [
    *("links", "references", "measures", "asks_measure_measures", "spread"),
    *("name_word", "name_word_wins"),
    *("own_word_column", "own_word_column_wins", "own_word_column_margin", "own_beyond_seed"),
]
# a trial's features that take the place of shipped ones (the rest are added to them)
REPLACES = {"own_columns": ["word_column", "word_column_wins", "word_column_margin", "beyond_seed"]}
KEY_WORDS = frozenset({"id", "key", "code", "no", "num", "sk", "uuid", "guid"})
ASKS_MEASURE = re.compile(
    r"\b(total|average|sum|how much|revenue|sales|amount|cost|price|paid|pay|spent|spend|earn\w*|income|profit|"
    r"value|salary|salaries|quantity|turnover|budget)\b",
    re.I,
)


def measures(table) -> int:
    """Numeric columns whose name has no key word."""
    return sum(
        1
        for c in table.columns
        if not KEY_WORDS & set(identifier_words(str(c))) and str(table.df[c].dtype).lower().startswith(("int", "float"))
    )


def name_matrix(words: np.ndarray, tables: Sequence[str], names: dict[str, np.ndarray]) -> np.ndarray:
    """Words × tables: each content word's best cosine with a word of the table's name (-1: no name words)."""
    out = np.full((len(words), len(tables)), -1.0)
    for i, table in enumerate(tables):
        vectors = names.get(table)
        if vectors is not None and len(vectors) and len(words):
            out[:, i] = (words @ vectors.T).max(axis=1)
    return out


def name_features(matrix: np.ndarray) -> np.ndarray:
    """Per table: how far its name's best word match lies below the best table's (``name_word``), and the share
    of words its name matches best, above ``WORD_MATCH`` (``name_word_wins``)."""
    if not matrix.size:
        return np.zeros((matrix.shape[1], 2))
    best = matrix.max(axis=1, keepdims=True)
    gap = (matrix - best).max(axis=0)
    wins = ((matrix >= best) & (best > WORD_MATCH)).mean(axis=0)
    return np.stack([gap, wins], axis=1)


def reference_columns(graph, table: str) -> set[str]:
    """A table's columns that reference another table's key (the referencing side of an explicit join)."""
    if table not in graph:
        return set()
    joins = (j for other in graph.neighbors(table) for j in joins_between(graph, table, other))
    return {left for j in joins if j.kind == "explicit" and j.left_table == table for left, _ in j.column_pairs}


def own_column_features(evidence, columns, words: np.ndarray) -> np.ndarray:
    """The shipped word-column features and ``beyond_seed``, each table's reference columns left out: a column
    that references another table's key answers the question's words for that table, not its own."""
    if not len(words) or not len(columns.vectors):
        return np.zeros((len(evidence.tables), 4))
    matrix = np.full((len(words), len(evidence.tables)), -1.0)
    for i, table in enumerate(evidence.tables):
        skip = reference_columns(evidence.graph, table)
        rows = [r for r in columns.rows_of(table) if columns.columns[r] not in skip]
        if rows:
            matrix[:, i] = (columns.vectors[rows] @ words.T).max(axis=0)
    seed = evidence.tables.index(evidence.seed) if evidence.seed in evidence.tables else None
    return np.asarray(
        [[*_word_features(matrix, i), _beyond_seed(matrix, i, seed)] for i in range(len(evidence.tables))]
    )


def extra_features(evidence, question: str, held: dict[str, int], names=None, own=None) -> np.ndarray:
    graph, tables = evidence.graph, evidence.tables
    wins = evidence.features[:, FEATURES.index("word_column_wins")] > 0
    asks = float(bool(ASKS_MEASURE.search(question)))
    rows = []
    for table in tables:
        near = set(graph.neighbors(table)) if table in graph else set()
        links = sum(1 for other in tables[:3] if other != table and other in near)
        refs = sum(1 for other in near if any(j.left_table == table for j in joins_between(graph, table, other)))
        count = np.log1p(held.get(table, 0))
        rows.append([links, np.log1p(refs), count, asks * count, np.log1p(wins.sum())])
    named = names if names is not None else np.zeros((len(tables), 2))
    owned = own if own is not None else np.zeros((len(tables), 4))
    return np.hstack([np.asarray(rows, dtype=np.float64), named, owned])


def collect(folder: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    bench = load_benchmark(folder)
    index = PearlTableIndex.from_tables(bench.tables, config=PearlConfig())
    held = {t.id: measures(t) for t in bench.tables}
    state = index.revisions.state()
    word_vectors = _word_vectors(index, state, [q.question for q in bench.queries])
    names = {}
    for table in bench.tables:
        found = [state.columns.word_vector(w) for w in identifier_words(table.name or table.id)]
        names[table.id] = np.asarray([v for v in found if v is not None], dtype=np.float64)
    x, y, n = [], [], []
    for query, row in zip(bench.queries, question_rows(index, bench.queries, True)):
        evidence = row["evidence"]
        if not len(evidence.tables):
            continue
        words = word_vectors[query.question].astype(np.float64)
        named = name_features(name_matrix(words, evidence.tables, names))
        own = own_column_features(evidence, state.columns, words)
        extra = extra_features(evidence, query.question, held, named, own)
        x.append(np.hstack([evidence.features, extra]))
        y += [float(t in query.gold_tables) for t in evidence.tables]
        n += [len(query.gold_tables)] * len(evidence.tables)
    return np.vstack(x), np.asarray(y), np.asarray(n)


def held_out(data: dict, columns: list[int]) -> dict[str, tuple[float, float, float, float]]:
    out = {}
    for name, (x, y, n) in data.items():
        others = [o for o in data if o != name]
        xs = np.vstack([data[o][0][:, columns] for o in others])
        ys = np.concatenate([data[o][1] for o in others])
        weight = np.concatenate([np.full(len(data[o][1]), 1.0 / len(data[o][1])) for o in others])
        raw, bias = logistic(xs, ys, weight, steps=3000)
        p = 1.0 / (1.0 + np.exp(-(bias + x[:, columns] @ raw)))
        masks = (np.ones(len(y), bool), n == 1, n >= 4)
        eces = [calibration_error(list(zip(p[m], y[m]))) if m.any() else float("nan") for m in masks]
        out[name] = (auc(p, y), *eces)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("benches", nargs="+")
    parser.add_argument("--trials", type=lambda t: t.split(","), help="comma-separated trials (default: all)")
    args = parser.parse_args(argv)
    data = {Path(folder).name: collect(folder) for folder in args.benches}
    shipped = list(range(len(FEATURES)))
    for trial, names in {"shipped": [], **{k: v for k, v in TRIALS.items() if k in (args.trials or TRIALS)}}.items():
        dropped = {FEATURES.index(n) for n in REPLACES.get(trial, [])}
        columns = [c for c in shipped if c not in dropped] + [len(FEATURES) + EXTRA.index(n) for n in names]
        for name, (a, e, e1, e4) in held_out(data, columns).items():
            print(f"{trial:10s} {name:18s} AUC {a:.3f} ECE {e:.3f} ECE 1 table {e1:.3f} ECE 4+ {e4:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
