"""The pictures of the documentation, drawn from the bundled music database by the code they show.

    python docs/figures.py           # rewrite every figure in the pages that hold one
    python docs/figures.py --check   # exit 1 and name the stale figures (tests/test_docs.py runs this)

A page holds a figure between ``<!-- figure: NAME -->`` and ``<!-- end figure -->``: a Mermaid block (Material
for MkDocs draws it with the vendored ``docs/assets/javascripts/mermaid.min.js``, offline; GitHub draws it too),
and where its words describe the result drawn (the answer set), its caption, written from the same result.
Each one is built here from an index of ``llama_index_pearl.example_data()`` at the default settings (bundled
MiniLM, heuristic questions), so a change to discovery, units, scores or the set shows up as a stale figure.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
FIGURE = re.compile(r"(<!-- figure: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- end figure -->)", flags=re.DOTALL)

# the questions the pictures answer (tests/test_bundled_questions.py holds the bundled database to them)
POOLING_QUESTION = "Which venues hosted concerts by Velvet Harbor?"
SET_QUESTION = "Which cities did artists from Finland play in?"
UNIT_TABLES = ("labels", "albums")


@cache
def bundled_index():
    """The index ``pearl demo`` builds: the bundled music database, default settings."""
    from llama_index_pearl import PearlTableIndex, example_data

    return PearlTableIndex.from_tables(example_data())


def _label(text: str) -> str:
    """Text inside a Mermaid node or edge label (quoted; its own double quotes made single)."""
    return '"' + text.replace('"', "'") + '"'


def _mermaid(lines: list[str]) -> str:
    return "```mermaid\n" + "\n".join(lines) + "\n```\n"


def pipeline() -> str:
    """Offline and online, with the bundled database's counts."""
    index = bundled_index()
    kinds: dict[str, int] = {}
    for unit in index.units:
        kinds[unit.metadata["kind"]] = kinds.get(unit.metadata["kind"], 0) + 1
    by_kind = ", ".join(f"{n} {kind}" for kind, n in kinds.items())
    graph = index.join_graph
    return _mermaid(
        [
            "flowchart LR",  # two columns of boxes: a row of ten would be drawn at about 7 px
            '  subgraph offline["offline: once per build"]',
            "    direction TB",
            f"    T[{_label(f'{len(index.tables)} tables')}]",
            f"    T --> G[{_label(f'join graph: {graph.number_of_edges()} joined table pairs')}]",
            f"    G --> P[{_label(f'{len(index.join_paths)} join paths of 2-3 tables')}]",
            f"    P --> Q[{_label('a question per path + its views')}]",
            f"    Q --> U[{_label(f'{len(index.units)} units: {by_kind}')}]",
            "    T --> U",
            "  end",
            '  subgraph online["online: per question, no LLM"]',
            "    direction TB",
            f"    A[{_label('question')}] --> E[{_label('embed once + BM25 words')}]",
            f"    E --> S[{_label('top units by fused score')}]",
            f"    S --> M[{_label('max-pool units to tables')}]",
            f"    M --> R[{_label('the set first, then the ranking; join hints')}]",
            "  end",
            f"  offline -- {_label('units, in a vector store')} --> online",
        ]
    )


def join_graph() -> str:
    """``join_graph_mermaid`` of the bundled index (also what ``benchmarks/render_join_graph.py`` prints)."""
    from llama_index_pearl.presentation.graph_page import join_graph_mermaid

    return "```mermaid\n" + join_graph_mermaid(bundled_index().join_graph).rstrip("\n") + "\n```\n"


def units() -> str:
    """Two tables of an explicit path, and the units a build makes of them."""
    index = bundled_index()
    wanted = set(UNIT_TABLES)
    explicit = next(
        u for u in index.units if u.metadata["kind"] == "explicit" and set(u.metadata["table_ids"]) == wanted
    )
    lines = ["flowchart LR"]
    for table_id in UNIT_TABLES:
        columns = " | ".join(index.tables[table_id].df.columns)
        lines.append(f"  {table_id}[({_label(f'{table_id}: {columns}')})]")
    view = "<br>".join(f"{t}: {' | '.join(cols)}" for t, cols in explicit.metadata["columns"].items())
    question = explicit.metadata["question"]
    text = f"explicit unit: the path's question, then each table's view (the columns it needs)<br><i>{question}</i>"
    lines.append(f"  X[{_label(f'{text}<br>{view}')}]")
    for table_id in UNIT_TABLES:
        lines.append(f"  {table_id} --> X")
        lines.append(f"  {table_id} --> O_{table_id}[{_label(f'original unit: {table_id}, 10 rows')}]")
        lines.append(f"  {table_id} --> S_{table_id}[{_label(f'schema unit: {table_id}, header + 1 row')}]")
    return _mermaid(lines)


def pooling() -> str:
    """Units to tables: each table takes the score of its best unit."""
    nodes = bundled_index().as_retriever(similarity_top_k=5).retrieve(POOLING_QUESTION)
    lines = ["flowchart LR", f"  Q[{_label(POOLING_QUESTION)}]"]
    units: dict[str, str] = {}
    for node in nodes:
        meta = node.metadata
        unit_id = meta["matched_unit_id"]
        if unit_id not in units:
            units[unit_id] = f"U{len(units)}"
            what = f"{meta['matched_kind']} unit: {', '.join(meta['matched_table_ids'])}"
            lines.append(f"  Q --> {units[unit_id]}[{_label(f'{what}<br>score {node.score:.2f}')}]")
    shown = {node.metadata["table_id"]: f"T{i}" for i, node in enumerate(nodes)}
    for node in nodes:
        meta = node.metadata
        table = f"{meta['table_id']} {node.score:.2f}"
        lines.append(f"  {units[meta['matched_unit_id']]} ==> {shown[meta['table_id']]}[{_label(table)}]")
    lines.append("  %% thin: a unit holds the table too, but another unit scores it higher")
    for node in nodes:
        meta = node.metadata
        for table_id in meta["matched_table_ids"]:
            best = next(n for n in nodes if n.metadata["table_id"] == table_id) if table_id in shown else None
            if best is not None and best.metadata["matched_unit_id"] != meta["matched_unit_id"]:
                edge = f"  {units[meta['matched_unit_id']]} -.-> {shown[table_id]}"
                if edge not in lines:
                    lines.append(edge)
    return _mermaid(lines)


def answer_set() -> str:
    """The set a question gets: matched tables, the bridge that joins them, the other candidates; and its caption,
    written from the same result (what the prose says of it cannot disagree with it)."""
    nodes = bundled_index().as_retriever(similarity_top_k=5).retrieve(SET_QUESTION)
    return _answer_set_drawing(nodes) + "\n" + _answer_set_caption(nodes) + "\n"


def _answer_set_caption(nodes: list) -> str:
    """Each table of the result, in order: its role in the set and how surely the question needs it."""

    def said(meta: dict) -> str:
        if not meta["in_set"]:
            return f"`{meta['table_id']}` (a candidate outside the set)"
        sure = f", confidence {meta['set_confidence']:.2f}" if meta["set_confidence"] is not None else ""
        tier = "needed" if meta["set_tier"] == "needed" else "may be needed"
        return f"`{meta['table_id']}` ({tier}, {meta['set_reason']}{sure})"

    tables = [said(n.metadata) for n in nodes]
    listed = ", ".join(tables[:-1]) + f" and {tables[-1]}" if len(tables) > 1 else tables[0]
    return (
        f'*The result for "{SET_QUESTION}", in order: {listed}. A bridge joins tables that match, though the '
        "question names none of it; the confidence is the probability that the question needs a table. Written, "
        "picture and words, by `python docs/figures.py`.*"
    )


def _answer_set_drawing(nodes: list) -> str:
    lines = ["flowchart TB"]  # a chain of five tables side by side is drawn at about 7 px
    for node in nodes:
        meta = node.metadata
        role = meta["set_reason"] if meta["in_set"] else "candidate"
        tier = {"needed": "needed", "may_be_needed": "may be needed"}.get(meta["set_tier"], "candidate")
        table = f"{meta['table_id']} ({tier}, {meta['set_confidence']:.2f})"
        style = {"needed": role, "may_be_needed": "maybe"}.get(meta["set_tier"], "candidate")
        lines.append(f"  {meta['table_id']}[{_label(table)}]:::{style}")
    drawn = set()
    for node in nodes:
        for hint in node.metadata["join_hints"]:
            for join in hint["joins"]:
                pair = (join["left_table"], join["right_table"])
                if pair in drawn or pair[::-1] in drawn:
                    continue
                drawn.add(pair)
                left, right = join["left_table"], join["right_table"]
                condition = " AND ".join(f"{left}.{a} = {right}.{b}" for a, b in join["column_pairs"])
                lines.append(f"  {pair[0]} --- |{_label(condition)}| {pair[1]}")
    lines += [
        "  classDef matched fill:#c8e6c9,stroke:#2e7d32",
        "  classDef bridge fill:#ffe0b2,stroke:#ef6c00,stroke-dasharray:4",
        "  classDef maybe fill:#fff9c4,stroke:#f9a825",
        "  classDef candidate fill:#eeeeee,stroke:#9e9e9e,color:#616161",
    ]
    return _mermaid(lines)


FIGURES: dict[str, Callable[[], str]] = {
    "pipeline": pipeline,
    "join-graph": join_graph,
    "units": units,
    "pooling": pooling,
    "answer-set": answer_set,
}


def pages() -> list[Path]:
    """The pages that hold a figure: the README and every page of docs/."""
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def redraw(text: str) -> str:
    """``text`` with every figure drawn again."""
    return FIGURE.sub(lambda m: m.group(1) + FIGURES[m.group("name")]() + m.group(4), text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Draw the documentation's figures from the bundled database.")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 naming the stale figures")
    args = parser.parse_args(argv)
    stale = []
    for page in pages():
        text = page.read_text(encoding="utf-8")
        if not FIGURE.search(text):
            continue
        drawn = redraw(text)
        if drawn != text:
            stale.append(str(page.relative_to(ROOT)))
            if not args.check:
                page.write_text(drawn, encoding="utf-8")
    if args.check and stale:
        print(f"stale figures in {', '.join(stale)}: run python docs/figures.py", file=sys.stderr)
        return 1
    print(f"{'stale' if args.check else 'redrawn'}: {', '.join(stale) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
