"""Cold start: ``pearl query`` against the floor of importing what it needs, and ``load`` + first ``retrieve``.

    python benchmarks/cold_start.py                                  # builds runs/cold_start/fetaqa_dev once
    python benchmarks/cold_start.py --index IDX --repeats 5 --json OUT

Each repeat runs, in fresh processes and in this order:

- the floor: ``python -c "import llama_index.core, onnxruntime, faiss"``;
- ``pearl query IDX QUESTION`` (``python -m llama_index_pearl.cli``, as the ``pearl`` script runs it);
- a process that imports the floor's libraries and the package (timed), then times
  ``PearlTableIndex.load(IDX)`` and the first ``retrieve`` (and a second one, the warm query);
- the same after one ``gc.collect()``: in a fresh process Python's first full collection, which rescans
  every object the imports made (about 200,000), falls into whatever runs next; in a long-running
  process (a notebook, a server) it has long happened.

Reported: medians over the repeats of each wall time, ``pearl query`` / floor, and the peak resident memory
of the ``pearl query`` process (``wait4``'s ``ru_maxrss``). Without ``--index`` it builds the index of
``fetaqa_dev``'s 992 tables with ``pearl index`` (default settings) and reuses it on later runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_TABLES = ROOT.parent / "shared" / "bench" / "fetaqa_dev" / "tables"
DEFAULT_INDEX = ROOT / "runs" / "cold_start" / "fetaqa_dev"
QUESTION = "Who won the 2010 election in Ohio?"
FLOOR = "import llama_index.core, onnxruntime, faiss"
IN_PROCESS = """
import gc, json, sys, time
importing = time.perf_counter()
import llama_index.core, onnxruntime, faiss
import llama_index_pearl.index
from llama_index_pearl import PearlTableIndex
imported = time.perf_counter()
index_dir, question, collect = sys.argv[1], sys.argv[2], sys.argv[3] == "collect"
if collect:
    gc.collect()
started = time.perf_counter()
index = PearlTableIndex.load(index_dir)
loaded = time.perf_counter()
index.as_retriever(similarity_top_k=5).retrieve(question)
first = time.perf_counter()
index.as_retriever(similarity_top_k=5).retrieve(question + " Which year?")
second = time.perf_counter()
times = {"load": loaded - started, "first_retrieve": first - loaded, "second_retrieve": second - first}
print(json.dumps({**times, "import": imported - importing}))
"""


def timed(argv: list[str]) -> tuple[float, int, str]:
    """Wall seconds, peak resident KiB and stdout of one child process (``wait4`` reads its own rusage)."""
    started = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = child.stdout.read() if child.stdout is not None else ""
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited with {child.returncode}")
    return seconds, usage.ru_maxrss, out


def build(tables: Path, index: Path) -> None:
    if (index / "pearl.json").is_file():
        return
    index.parent.mkdir(parents=True, exist_ok=True)
    print(f"building {index} from {tables} (once) ...", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "llama_index_pearl.cli", "-q", "index", str(tables), "--out", str(index)])


def measure(index: Path, repeats: int) -> dict[str, object]:
    names = ("load", "first_retrieve", "second_retrieve")
    runs: dict[str, list[float]] = {"floor": [], "query": [], "import": []}
    runs.update({name: [] for name in names})
    runs.update({f"{name}_after_collect": [] for name in names})
    peak = []
    for _ in range(repeats):
        runs["floor"].append(timed([sys.executable, "-c", FLOOR])[0])
        seconds, kib, _ = timed([sys.executable, "-m", "llama_index_pearl.cli", "query", str(index), QUESTION])
        runs["query"].append(seconds)
        peak.append(kib)
        inside = json.loads(timed([sys.executable, "-c", IN_PROCESS, str(index), QUESTION, "fresh"])[2])
        for name in (*names, "import"):
            runs[name].append(inside[name])
        collected = json.loads(timed([sys.executable, "-c", IN_PROCESS, str(index), QUESTION, "collect"])[2])
        for name in names:
            runs[f"{name}_after_collect"].append(collected[name])
    medians = {name: statistics.median(values) for name, values in runs.items()}
    return {
        "index": str(index),
        "repeats": repeats,
        "median_seconds": {name: round(value, 4) for name, value in medians.items()},
        "query_over_floor": round(medians["query"] / medians["floor"], 3),
        "query_peak_mib": round(statistics.median(peak) / 1024, 1),
        "runs": runs,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", type=Path, help=f"an index folder (default: build {DEFAULT_INDEX} once)")
    parser.add_argument("--tables", type=Path, default=DEFAULT_TABLES, help="tables to build the default index of")
    parser.add_argument("--repeats", type=int, default=5, help="fresh-process rounds (default 5)")
    parser.add_argument("--json", help="also write the result as JSON to this file")
    args = parser.parse_args()
    index = args.index or DEFAULT_INDEX
    if args.index is None:
        build(args.tables, index)
    result = measure(index, args.repeats)
    m = result["median_seconds"]
    print(f"index: {index} ({args.repeats} rounds, medians)")
    print(f"floor (import llama_index.core, onnxruntime, faiss): {m['floor']:.3f} s")
    ratio, peak = result["query_over_floor"], result["query_peak_mib"]
    print(f"pearl query: {m['query']:.3f} s = {ratio:.2f}x the floor, peak {peak} MiB")
    print(f"in one process: imports {m['import']:.3f} s, then")
    for suffix, what in (("", "right after the imports"), ("_after_collect", "after one gc.collect()")):
        print(
            f"  {what}: load {m['load' + suffix]:.3f} s, first retrieve {m['first_retrieve' + suffix]:.3f} s, "
            f"second {m['second_retrieve' + suffix]:.4f} s"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
