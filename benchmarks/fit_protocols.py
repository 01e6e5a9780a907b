"""Which data the confidence is fitted on: each dev set's sets held out of the fit, under four ways to fit it.

Every question is answered as the shipped retriever answers it, its words read through the thesaurus; the
confidence that chooses each dev set's sets is fitted on the *other* dev sets (each weighted alike), in one of
four ways: on rows read without the thesaurus or through it, and on the eight dev sets of the first fit or on
every set given. The default is chosen on the worst held-out set (``benchmarks/README.md``).

    python benchmarks/fit_protocols.py ../shared/bench/spider ../shared/bench/business_words \
        runs/bench/analyst_words --json OUT
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from table_sets import evaluate, fitted_on, labelled, question_rows

from llama_index_pearl import PearlConfig, PearlTableIndex
from llama_index_pearl.evaluation.benchmark import load_benchmark
from llama_index_pearl.retrieval.answer.table_sets import SetRule

FIRST_FIT = ("spider", "spider_realistic", "spider2_lite", "tpch", "nycflights13", "business_words", "lahman", "tpcds")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("benches", nargs="+", help="benchmark folders")
    parser.add_argument("--maybe", default="0.12", help="comma-separated second bars to measure the sets at")
    parser.add_argument("--json", help="write every figure here")
    args = parser.parse_args(argv)
    asked: dict[str, Any] = {}  # set -> (queries, rows read through the thesaurus)
    samples: dict[bool, dict[str, tuple[np.ndarray, np.ndarray]]] = {True: {}, False: {}}
    for folder in args.benches:
        bench = load_benchmark(folder)
        index = PearlTableIndex.from_tables(bench.tables, config=PearlConfig())
        rows = question_rows(index, bench.queries, True)
        samples[True][bench.name] = labelled(bench.queries, rows)
        asked[bench.name] = (bench.queries, rows)
        # the same index read without the thesaurus: what PearlConfig(thesaurus=False) changes, without a second build
        index.revisions.state().thesaurus = {}
        samples[False][bench.name] = labelled(bench.queries, question_rows(index, bench.queries, True))
        print(f"# {bench.name}", file=sys.stderr, flush=True)
    out: dict[str, Any] = {}
    for thesaurus in (False, True):
        for first_only in (True, False):
            name = f"{'through' if thesaurus else 'without'} the thesaurus, {'first eight' if first_only else 'all'}"
            fit_on = [s for s in samples[thesaurus] if s in FIRST_FIT or not first_only]
            for held in asked:
                model = fitted_on(samples[thesaurus], [s for s in fit_on if s != held])
                for bar in args.maybe.split(","):
                    metrics = evaluate(*asked[held], SetRule(maybe=float(bar), confidence=model))
                    out.setdefault(name, {}).setdefault(bar, {})[held] = metrics
                    row, nan = metrics["all"], float("nan")
                    one, many = metrics.get("1 table", {}), metrics.get("4+ tables", {})
                    print(
                        f"{name:36s} {bar:5s} {held:18s} Set {row['Set']:5.1f} size {row['SetSize']:.2f} "
                        f"prec {row['SetPrecision']:5.1f} 1t {one.get('SetSize', nan):.2f} "
                        f"4+ {many.get('Set', nan):5.1f} ECE {row['ECE']:.3f}",
                        flush=True,
                    )
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
