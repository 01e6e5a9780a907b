"""Print `pearl eval` JSON results as one markdown table: python benchmarks/summarize.py runs/*.json"""

from __future__ import annotations

import json
import sys
from pathlib import Path

COLUMNS = ("R@1", "R@2", "R@5", "R@10", "C@5", "PaperR@2", "SlotR@2")


def row(path: Path) -> str | None:
    result = json.loads(path.read_text())
    if "metrics" not in result:
        return None
    metrics = result["metrics"]
    cells = [f"{metrics['all'][c]:.2f}" if c in metrics["all"] else "–" for c in COLUMNS]
    three = metrics.get("3 tables", {})
    cells += [f"{three[c]:.2f}" if c in three else "–" for c in ("R@2", "R@5")]
    units = result.get("n_units", "")
    head = f"| {path.stem} | {units} | {result['index_seconds']:.0f} | {result['query_latency_ms']['p50']:.1f} | "
    return head + " | ".join(cells) + " |"


def main(paths: list[str]) -> None:
    print("| run | units | index s | p50 ms | " + " | ".join(COLUMNS) + " | 3 tables R@2 | 3 tables R@5 |")
    print("|---" * (4 + len(COLUMNS) + 2) + "|")
    for name in paths:
        line = row(Path(name))
        if line:
            print(line)


if __name__ == "__main__":
    main(sys.argv[1:])
