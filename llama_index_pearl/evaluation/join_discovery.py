"""Score join discovery against a benchmark's declared foreign keys (``joins.jsonl``).

Discovery runs on ``bench_dir/tables/*.csv`` alone; ``joins.jsonl`` is read only
afterwards, as gold. Pairs are unordered, at two granularities: table pairs and
column pairs (``table.column``, case-insensitive column names).

Pipeline step: evaluation (docs/architecture.md).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding

from llama_index_pearl.evaluation.bench_tables import declare_types, read_bench_tables
from llama_index_pearl.foundations.timing import stage
from llama_index_pearl.joins.conventions import by_convention
from llama_index_pearl.joins.discovery import TAU_2, JoinDiscovery, discover_join_paths
from llama_index_pearl.joins.scoring import DEFAULT_CROSS_SOURCE
from llama_index_pearl.tables.table import normalize_column_name

__all__ = ["evaluate_join_discovery", "format_join_report", "prf", "score_discovery"]

Pair = frozenset[str]


def prf(predicted: set[Pair], gold: set[Pair]) -> dict[str, float | int]:
    """Precision, recall and F1 of unordered pairs.

    Args:
        predicted: Predicted pairs.
        gold: Gold pairs.
    """
    hit = len(predicted & gold)
    precision = hit / len(predicted) if predicted else 0.0
    recall = hit / len(gold) if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "precision": round(precision, 4),
        "recall": round(recall, 4),
        "f1": round(f1, 4),
        "n_pred": len(predicted),
        "n_gold": len(gold),
    }


def _column(table: str, column: str) -> str:
    return f"{table}.{normalize_column_name(column)}"


def _gold(joins_file: Path) -> tuple[set[Pair], set[Pair], dict[Pair, tuple[str, str, str, str]]]:
    """Gold table pairs, column pairs, and each table pair's first key (child table, column, parent, column)."""
    tables, columns, keys = set(), set(), {}
    with joins_file.open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            row = json.loads(line)
            (lt, lc), (rt, rc) = row["left"].split(".", 1), row["right"].split(".", 1)
            tables.add(frozenset((lt, rt)))
            columns.add(frozenset((_column(lt, lc), _column(rt, rc))))
            keys.setdefault(frozenset((lt, rt)), (lt, lc, rt, rc))
    return tables, columns, keys


def _meta(bench_dir: Path) -> dict[str, dict[str, Any]]:
    """Table id -> its row of ``tables_meta.jsonl`` (empty when the file is absent)."""
    path = bench_dir / "tables_meta.jsonl"
    if not path.is_file():
        return {}
    with path.open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return {str(r["id"]): r for r in rows}


def _pairs(column_pairs: Iterable[tuple[str, str, str, str]]) -> tuple[set[Pair], set[Pair]]:
    tables, columns = set(), set()
    for lt, lc, rt, rc in column_pairs:
        tables.add(frozenset((lt, rt)))
        columns.add(frozenset((_column(lt, lc), _column(rt, rc))))
    return tables, columns


def score_discovery(result: JoinDiscovery, joins_file: Path) -> dict[str, Any]:
    """Precision/recall of discovered edges and selected paths against a ``joins.jsonl`` file.

    Args:
        result: What :func:`~llama_index_pearl.joins.discovery.discover_join_paths` found.
        joins_file: Gold joins, one ``{"left": "table.column", "right": "table.column"}`` per line.

    Returns:
        ``table_pairs`` and ``column_pairs`` (explicit edges that pass: declared, named or
        f >= tau_2), ``by_convention`` (their table pairs per naming-convention class,
        :mod:`~llama_index_pearl.joins.conventions`), ``selected`` (pairs on the selected
        paths' joins; all and explicit paths only), ``implicit_table_pairs`` (implicit edges
        with f >= tau_2) and ``n_paths``.
    """
    gold_tables, gold_columns, gold_keys = _gold(joins_file)

    def quad(e: Any) -> tuple[str, str, str, str]:
        return e.left_table, e.left_column, e.right_table, e.right_column

    explicit = [e for e in result.edges if e.explicit and e.passes(TAU_2)]
    explicit_t, explicit_c = _pairs(quad(e) for e in explicit)
    strongest: dict[Pair, tuple[str, str, str, str]] = {}
    for e in explicit:  # strongest first
        strongest.setdefault(frozenset(e.tables), quad(e))
    conventions = {name: prf(p, g) for name, (p, g) in by_convention(strongest, gold_keys).items()}
    implicit_t, _ = _pairs(quad(e) for e in result.edges if not e.explicit and e.score >= TAU_2)
    path_pairs = [quad(p) for path in result.paths for join in path.joins for p in join]
    selected_t, selected_c = _pairs(path_pairs)
    selected_explicit_t, _ = _pairs(
        quad(p) for path in result.paths if path.kind.value == "explicit" for join in path.joins for p in join
    )
    return {
        "table_pairs": prf(explicit_t, gold_tables),
        "column_pairs": prf(explicit_c, gold_columns),
        "by_convention": conventions,
        "selected": {
            "table_pairs": prf(selected_t, gold_tables),
            "column_pairs": prf(selected_c, gold_columns),
            "explicit_table_pairs": prf(selected_explicit_t, gold_tables),
        },
        "implicit_table_pairs": prf(implicit_t - explicit_t, gold_tables),
        "n_paths": {
            "selected": len(result.paths),
            "explicit": sum(p.kind.value == "explicit" for p in result.paths),
            "implicit": sum(p.kind.value == "implicit" for p in result.paths),
            "three_tables": sum(len(p.tables) == 3 for p in result.paths),
            "candidates": result.candidate_paths,
        },
    }


def evaluate_join_discovery(
    bench_dir: Path,
    embed_model: BaseEmbedding | None = None,
    use_declared: bool = False,
    *,
    provenance: bool = True,
    cross_source_joins: str = DEFAULT_CROSS_SOURCE,
    budget: int | None = None,
) -> dict[str, Any]:
    """Discover joins over a benchmark's tables and score them against its declared FKs.

    Args:
        bench_dir: Folder with ``tables/*.csv`` and ``joins.jsonl``; a header-only table gets the
            ``column_types`` of ``tables_meta.jsonl`` (what a DDL declares; a CSV has no types).
        embed_model: Embedding model; ``None``: ``Settings.embed_model`` if set, else MiniLM.
        use_declared: Use declared FKs of the loaded tables (CSV tables declare none).
        provenance: Give each table its ``db`` from ``tables_meta.jsonl`` as source;
            ``False``: the paper's unified pool.
        cross_source_joins: As in :func:`~llama_index_pearl.joins.discovery.discover_join_paths`.
        budget: Paths per pool; ``None``: every candidate path (the heuristic build's default).

    Returns:
        JSON-able dict: ``table_pairs`` and ``column_pairs`` (explicit edges that pass),
        ``by_convention``, ``selected`` (pairs on the selected paths' joins; all and explicit paths only),
        ``implicit_table_pairs`` (implicit edges with f >= tau_2 vs the same gold),
        ``n_paths``, ``stage_seconds`` and ``seconds`` (total).
    """
    bench_dir = Path(bench_dir)
    seconds: dict[str, float] = {}
    with stage(seconds, "total"):
        tables = read_bench_tables(bench_dir / "tables")
        meta = _meta(bench_dir)
        for table in tables:
            info = meta.get(table.id, {})
            table.source = str(info["db"]) if provenance and info.get("db") else None
            declare_types(table, info)
        result = discover_join_paths(
            tables, embed_model, budget=budget, use_declared=use_declared, cross_source_joins=cross_source_joins
        )
    return {
        "bench": bench_dir.name,
        "provenance": provenance,
        "cross_source_joins": cross_source_joins,
        "n_tables": len(tables),
        **score_discovery(result, bench_dir / "joins.jsonl"),
        "stage_seconds": result.seconds,
        "seconds": round(seconds["total"], 3),
    }


def format_join_report(result: dict[str, Any]) -> str:
    """A small text table of :func:`evaluate_join_discovery`'s result.

    Args:
        result: The dict returned by :func:`evaluate_join_discovery`.
    """
    rows = [
        ("explicit edges, table pairs", result["table_pairs"]),
        ("explicit edges, column pairs", result["column_pairs"]),
        ("selected paths, table pairs", result["selected"]["table_pairs"]),
        ("selected paths, column pairs", result["selected"]["column_pairs"]),
        ("selected explicit, table pairs", result["selected"]["explicit_table_pairs"]),
        ("implicit edges, table pairs", result["implicit_table_pairs"]),
    ]
    setting = "provenance" if result.get("provenance", True) else "no provenance (unified pool)"
    lines = [
        f"{result['bench']}: {result['n_tables']} tables, {setting}, "
        f"cross_source_joins={result.get('cross_source_joins', 'evidence')}",
        f"{'':30} {'P':>6} {'R':>6} {'F1':>6} {'pred':>5} {'gold':>5}",
    ]
    for label, m in rows:
        lines.append(
            f"{label:30} {m['precision']:6.3f} {m['recall']:6.3f} {m['f1']:6.3f} {m['n_pred']:5d} {m['n_gold']:5d}"
        )
    if conventions := result.get("by_convention"):
        lines.append("explicit edges, table pairs by naming convention (conventions.CONVENTIONS):")
        for name, m in conventions.items():
            lines.append(
                f"  {name:28} {m['precision']:6.3f} {m['recall']:6.3f} {m['f1']:6.3f} {m['n_pred']:5d} {m['n_gold']:5d}"
            )
    n = result.get("n_paths", {})
    lines.append(
        f"paths selected: {n.get('selected', 0)} (explicit {n.get('explicit', 0)}, implicit {n.get('implicit', 0)}, "
        f"of 3 tables {n.get('three_tables', 0)}); {result['seconds']:.1f}s"
    )
    return "\n".join(lines)
