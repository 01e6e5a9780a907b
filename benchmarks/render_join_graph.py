"""Regenerate the docs' join graph picture (docs/join_graph.png, in the README and docs/concepts.md), from code.

    python benchmarks/render_join_graph.py [TABLES] [--png docs/join_graph.png]

Builds an index of TABLES (default: the bundled music database, default settings), writes its join-graph page
(the one `pearl graph --html` writes), screenshots it with headless Chromium, and prints the graph as Mermaid
(`python docs/figures.py` draws the same block into docs/concepts.md).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.cli.commands import EXAMPLE_DATA
from llama_index_pearl.presentation.graph_page import join_graph_mermaid, write_graph_page
from llama_index_pearl.presentation.headless import screenshot


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tables", nargs="?", default=str(EXAMPLE_DATA))
    parser.add_argument("--png", default="docs/join_graph.png")
    args = parser.parse_args()
    index = PearlTableIndex.from_tables(args.tables)
    with tempfile.TemporaryDirectory() as folder:
        page = write_graph_page(index, Path(folder) / "graph.html")
        screenshot(page, args.png, window=(1100, 640))
    print(f"wrote {args.png}\n\n```mermaid\n{join_graph_mermaid(index.join_graph)}\n```")


if __name__ == "__main__":
    main()
