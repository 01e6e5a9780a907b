"""``pearl eval``'s result as records: what a method's run gives, and what the evaluation reports.

A run (:class:`MethodRun`) is a method's rankings of a benchmark's questions and what they cost; the result
(:class:`EvalResult`) is what ``pearl eval`` prints and writes with ``--json``, one declaration of its keys.

Pipeline step: evaluation (docs/architecture.md).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, TypedDict

from llama_index_pearl.evaluation.ablations import Ablation

__all__ = ["Anchor", "EvalResult", "GeneratorUse", "MethodRun", "RunFigures", "SetAnswers"]

Metrics = dict[str, dict[str, float]]  # group of questions -> metric -> value


class GeneratorUse(TypedDict):
    """What the index's question generator did (``llm`` of a PEARL result)."""

    model: str  # the generator's name
    paths: int  # join paths it was given
    prompt_tokens: int
    completion_tokens: int
    skipped: int  # paths it gave no question for
    cached: int  # requests answered from the cache


class Anchor(TypedDict):
    """LlamaIndex's ObjectIndex measured beside the method (``pearl eval --anchor``)."""

    method: str
    metrics: Metrics


@dataclass(frozen=True)
class SetAnswers:
    """Each question's set, read off its result nodes, in question order.

    Args:
        tables: The set's tables.
        needed: The set's own needed tier (a close rival database's needed tables are not the set's).
        confidences: Each returned table with a confidence, and that confidence.
    """

    tables: list[list[str]]
    needed: list[list[str]]
    confidences: list[list[tuple[str, float]]]


@dataclass(frozen=True)
class RunFigures:
    """What a run cost and what it indexed: written as they are in the result.

    Args:
        n_units: Units indexed (a baseline: tables).
        index_seconds: Seconds to build the index.
        query_latency_ms: ``p50`` and ``p95`` of single questions, in milliseconds.
        batch_ms_per_query: Milliseconds per question of one batch; ``None``: not timed.
        units_by_kind: Units per unit kind.
        build_seconds: Seconds per build stage.
    """

    n_units: int
    index_seconds: float
    query_latency_ms: dict[str, float]
    batch_ms_per_query: float | None = None
    units_by_kind: dict[str, int] = field(default_factory=dict)
    build_seconds: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class MethodRun:
    """A method's run over a benchmark's questions, before it is measured.

    Args:
        rankings: Each question's ranked table ids.
        figures: What it cost.
        sets: Each question's set (PEARL's set rule only), else ``None``.
        copies: Each question's copies of its database that its answer names (``route_twins``), else ``None``.
        slot_metrics: Slot R@k per group of questions (PEARL in the unified pool only), else empty.
        ablation: The parts of PEARL left out of the index.
    """

    rankings: list[list[str]]
    figures: RunFigures
    sets: SetAnswers | None = None
    copies: list[list[str | None]] | None = None
    slot_metrics: Metrics = field(default_factory=dict)
    ablation: Ablation = field(default_factory=Ablation)


_MEASURED_BY_SOME = ("ablations", "llm", "join_hints", "anchor")  # in the JSON only where measured


@dataclass
class EvalResult:
    """``pearl eval``'s result; :meth:`to_json` is its ``--json`` file.

    Args:
        bench: The benchmark's name.
        method: ``pearl`` or a baseline (``whole-table``, ``bm25``, ``llamaindex``).
        per_database: Each question was asked within its database.
        titles: Tables' titles were indexed.
        provenance: Tables kept their provenance (``False``: the unified pool).
        lexical_weight: The lexical weight of a method that fuses one, else ``None``.
        table_set: PEARL chose a set.
        n_tables: Tables in the benchmark.
        figures: What the run cost.
        metrics: Each metric per group of questions.
        ablations: PEARL's parts left out and views off their default (PEARL only).
        llm: What the question generator did (PEARL only).
        join_hints: Join-hint recall and precision per k against gold SQL (PEARL, with SQL only).
        anchor: LlamaIndex's ObjectIndex measured beside (``--anchor``).
    """

    bench: str
    method: str
    per_database: bool
    titles: bool
    provenance: bool
    lexical_weight: float | None
    table_set: bool
    n_tables: int
    figures: RunFigures
    metrics: Metrics
    ablations: list[str] | None = None
    llm: GeneratorUse | None = None
    join_hints: Metrics | None = None
    anchor: Anchor | None = None

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` output: the fields in order, the figures' in their place, what was not measured left out."""
        data: dict[str, Any] = {}
        for name in (f.name for f in dataclasses.fields(self)):
            value = getattr(self, name)
            if isinstance(value, RunFigures):
                data.update(dataclasses.asdict(value))
            elif value is not None or name not in _MEASURED_BY_SOME:
                data[name] = value
        return data

    def table(self) -> str:
        """A fixed-width text table of the result (one row per group of questions)."""
        figures, metrics = self.figures, self.metrics
        columns = [c for c in next(iter(metrics.values())) if c != "n"] if metrics else []
        header = f"{'group':<9} {'n':>5} " + " ".join(f"{c:>7}" for c in columns)
        latency = figures.query_latency_ms
        lines = [
            f"bench={self.bench} method={self.method} tables={self.n_tables} "
            f"units={figures.n_units} index_seconds={figures.index_seconds:.1f} "
            f"latency_ms p50={latency['p50']:.1f} p95={latency['p95']:.1f}",
            header,
        ]
        for group, row in metrics.items():
            lines.append(f"{group:<9} {row['n']:>5} " + " ".join(f"{row[c]:>7.2f}" for c in columns))
        return "\n".join(lines)
