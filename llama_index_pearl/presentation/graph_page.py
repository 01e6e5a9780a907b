"""A self-contained HTML page of an index's join graph (``pearl graph INDEX --html OUT``).

Tables are nodes sized by row count; join edges are coloured by kind (explicit,
implicit, declared foreign key), labelled with their best column pair, and drawn
thick when a selected join path uses them. Clicking a table shows its columns
and sample rows; clicking a path highlights it; a search box finds tables and
columns. The page inlines the vendored Cytoscape.js (MIT, ``vendor/``) and the
graph as JSON, so it opens from disk with no server and no network.

Pipeline step: presentation (docs/architecture.md).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import networkx as nx

from llama_index_pearl.joins import JoinPath
from llama_index_pearl.joins.graph import JoinEdge, join_edges, joins_between
from llama_index_pearl.tables.table import Table

__all__ = [
    "CYTOSCAPE_VERSION",
    "graph_page_data",
    "join_graph_mermaid",
    "render_graph_page",
    "script_safe_json",
    "write_graph_page",
]

CYTOSCAPE_VERSION = "3.34.4"
SAMPLE_ROWS = 5
MAX_CELL = 60


def _cell(value: Any) -> str:
    missing = value is None or (isinstance(value, float) and math.isnan(value))
    text = "" if missing else str(value)
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


def _node(table: Table, sample_rows: int) -> dict[str, Any]:
    sample = table.df.head(sample_rows)
    return {
        "id": table.id,
        "rows": len(table.df),
        "columns": [str(c) for c in table.df.columns],
        "sample": [[_cell(v) for v in row] for row in sample.itertuples(index=False)],
        "source": table.source,
        "title": table.title,
    }


def _edge(graph: nx.Graph, edge: JoinEdge) -> dict[str, Any]:
    joins = joins_between(graph, edge.left_table, edge.right_table)
    lt, rt = (joins[0].left_table, joins[0].right_table) if joins else (edge.left_table, edge.right_table)
    label = " AND ".join(f"{lc} = {rc}" for lc, rc in joins[0].column_pairs) if joins else "?"
    return {
        "source": lt,
        "target": rt,
        "label": label,
        "pairs": [j.condition() for j in joins],
        "kind": edge.kind,
        "declared": edge.declared,
        "selected": edge.selected,
        "score": round(edge.score, 3),
    }


def graph_page_data(
    graph: nx.Graph, tables: Iterable[Table], paths: Sequence[JoinPath], *, sample_rows: int = SAMPLE_ROWS
) -> dict[str, Any]:
    """The JSON the page draws: ``nodes`` (tables), ``edges`` (joins) and ``paths`` (selected join paths).

    Args:
        graph: A join graph (``PearlTableIndex.join_graph``).
        tables: The tables (for row counts, columns and sample rows).
        paths: The selected join paths to list and highlight.
        sample_rows: Rows shown per table.
    """
    by_id = {t.id: t for t in tables}
    missing = [n for n in graph.nodes if n not in by_id]
    if missing:
        raise ValueError(f"The join graph names tables that are not given: {', '.join(map(str, missing[:5]))}")
    return {
        "nodes": [_node(by_id[n], sample_rows) for n in sorted(graph.nodes)],
        "edges": [_edge(graph, e) for e in sorted(join_edges(graph), key=lambda e: (e.left_table, e.right_table))],
        "paths": [{"tables": list(p.tables), "kind": p.kind.value, "score": p.score} for p in paths],
    }


def _asset(*parts: str) -> str:
    return resources.files("llama_index_pearl.presentation").joinpath(*parts).read_text(encoding="utf-8")


# Inside <script>, the HTML parser still reacts to "</script", and to "<!--" followed by "<script" (the "escaped"
# states, which swallow the page's own later scripts). Written as JSON escapes, <, > and & keep the same string
# values and leave the parser nothing to react to.
_SCRIPT_ESCAPES = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026"}


def script_safe_json(data: Any) -> str:
    """``data`` as JSON that can sit inside an HTML ``<script>`` element whatever its strings hold."""
    return json.dumps(data, ensure_ascii=False).translate(_SCRIPT_ESCAPES)


def render_graph_page(data: dict[str, Any]) -> str:
    """The page's HTML for :func:`graph_page_data`'s output."""
    payload = script_safe_json(data)
    page = _asset("templates", "join_graph.html")
    return page.replace("/*PEARL_DATA*/", payload, 1).replace("/*CYTOSCAPE*/", _asset("vendor", "cytoscape.min.js"), 1)


def write_graph_page(index: Any, out: str | Path, *, sample_rows: int = SAMPLE_ROWS) -> Path:
    """Write the join-graph page of a ``PearlTableIndex`` to ``out`` (an ``.html`` file).

    Args:
        index: The index (its ``join_graph``, ``tables`` and ``join_paths`` are read).
        out: The file to write; its folder is created.
        sample_rows: Rows shown per table.

    Raises:
        ValueError: ``out`` is a folder.
    """
    target = Path(out)
    if target.is_dir():
        raise ValueError(f"--html {str(out)!r} is a folder; give a file name such as graph.html")
    data = graph_page_data(index.join_graph, index.tables.values(), index.join_paths, sample_rows=sample_rows)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render_graph_page(data), encoding="utf-8")
    return target


def join_graph_mermaid(graph: nx.Graph) -> str:
    """The join graph as a Mermaid ``graph LR`` block (thick arrow: explicit, dotted: implicit, ✓: selected).

    Each arrow points from the referencing table and is labelled with the edge's best column pair.

    Args:
        graph: A join graph (``PearlTableIndex.join_graph``).
    """
    lines = ["graph LR"]
    for edge in sorted((_edge(graph, e) for e in join_edges(graph)), key=lambda e: (e["source"], e["target"])):
        arrow = "==>" if edge["kind"] == "explicit" else "-.->"
        kind = edge["kind"] + (", declared" if edge["declared"] else "") + (" ✓" if edge["selected"] else "")
        lines.append(f'    {edge["source"]} {arrow}|"{edge["label"]} ({kind})"| {edge["target"]}')
    return "\n".join(lines)
