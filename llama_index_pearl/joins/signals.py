"""What the candidate generators (P_S, P_B, P_V, declared keys) record per column pair.

Each generator adds to one shared accumulator, :data:`Pairs`, keyed by the
ordered pair of profile indexes; :func:`~llama_index_pearl.joins.edges.score_candidates`
then scores every pair once.

Pipeline step: joins (docs/architecture.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from llama_index_pearl.joins import scoring

__all__ = ["Pairs", "Signals", "pair_key"]


@dataclass
class Signals:
    """What the generators found for one column pair ``(i, j)``, ``i < j`` by profile index."""

    sources: set[str] = field(default_factory=set)
    pattern: str | None = None
    strength: float = 0.0
    referencing: int | None = None  # profile index of the FK side when a pattern says so
    name_sim: float = 0.0

    def add_pattern(self, pattern: str, referencing: int, factor: float = 1.0) -> None:
        strength = scoring.PATTERN_STRENGTH[pattern] * factor
        self.sources.add("S" if pattern != "declared" else "D")
        if strength > self.strength:
            self.pattern, self.strength, self.referencing = pattern, strength, referencing


Pairs = dict[tuple[int, int], Signals]


def pair_key(i: int, j: int) -> tuple[int, int]:
    """The accumulator key of a column pair: smaller profile index first."""
    return (i, j) if i < j else (j, i)
