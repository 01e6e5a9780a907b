"""Which sources of a pool are named twins (copies of one schema), by names and columns, and by names alone.

Every pair of sources :func:`~llama_index_pearl.retrieval.answer.routing.twin_sources` names, with the tables' columns
(as an index reads them) and without (names alone), so that a rule is judged on pools whose copies are known:

    python benchmarks/twins.py ../shared/bench/spider ../shared/bench/spider2_lite ../shared/bench/real_schemas
    python benchmarks/twins.py ../shared/lakes --folder

A benchmark folder's sources are its ``db``; ``--folder`` reads a folder of tables as ``pearl index`` does (its
sub-folders are the sources).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from llama_index_pearl.evaluation.benchmark import load_benchmark
from llama_index_pearl.retrieval.answer.routing import twin_sources
from llama_index_pearl.tables.inputs import load_tables


def pairs(twins: dict) -> list[tuple[str, str]]:
    return sorted({tuple(sorted((str(a), str(b)))) for a, others in twins.items() for b in others})


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+")
    parser.add_argument("--folder", action="store_true", help="read each as a folder of tables, not a benchmark")
    args = parser.parse_args(argv)
    for folder in args.folders:
        tables = load_tables(folder) if args.folder else load_benchmark(folder).tables
        names: dict[str | None, list[str]] = {}
        columns: dict[tuple[str | None, str], list[str]] = {}
        for table in tables:
            name = table.name or table.id
            names.setdefault(table.source, []).append(name)
            columns[(table.source, name)] = [str(c) for c in table.columns]
        print(f"{folder}: {len(names)} sources")
        print(f"  names and columns: {pairs(twin_sources(names, columns))}")
        print(f"  names alone:       {pairs(twin_sources(names))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
