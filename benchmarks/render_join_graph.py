"""Render the join graph of a table folder to a PNG (needs matplotlib, not a runtime dependency).

    pip install matplotlib
    python benchmarks/render_join_graph.py [TABLES] [--out docs/join_graph.png]

Thick solid edges are explicit joins, dashed ones implicit; edges used by a selected join path are dark.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import networkx as nx

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.cli.commands import EXAMPLE_DATA


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("tables", nargs="?", default=str(EXAMPLE_DATA))
    parser.add_argument("--out", default="docs/join_graph.png")
    args = parser.parse_args()
    graph = PearlTableIndex.from_tables(args.tables).join_graph
    positions = nx.kamada_kawai_layout(graph)
    fig, ax = plt.subplots(figsize=(9, 6))
    for u, v, data in graph.edges(data=True):
        _, left_col, _, right_col = data["column_pairs"][0]
        nx.draw_networkx_edges(
            graph,
            positions,
            edgelist=[(u, v)],
            ax=ax,
            width=2.5 if data["kind"] == "explicit" else 1.5,
            style="solid" if data["kind"] == "explicit" else "dashed",
            edge_color="#1f3b73" if data.get("selected") else "#9aa5b8",
        )
        label = left_col if left_col == right_col else f"{left_col} = {right_col}"
        ax.annotate(
            label,
            xy=((positions[u][0] + positions[v][0]) / 2, (positions[u][1] + positions[v][1]) / 2),
            fontsize=7,
            ha="center",
            color="#333333",
            bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.8},
        )
    nx.draw_networkx_nodes(graph, positions, ax=ax, node_color="#f2c14e", node_size=1600)
    nx.draw_networkx_labels(graph, positions, ax=ax, font_size=9)
    ax.set_title("Join graph of the bundled music database (solid: explicit, dashed: implicit, dark: selected)")
    ax.axis("off")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
