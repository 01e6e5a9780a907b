"""What the candidate generators (P_S, P_B, P_V, declared keys) record per column pair.

Each generator adds to one shared accumulator, :data:`Pairs`, keyed by the
ordered pair of profile indexes; :func:`~llama_index_pearl.joins.edges.admissible_pairs` then
keeps those that may join and :func:`~llama_index_pearl.joins.edges.score_admissible` scores each once.

Pipeline step: joins (docs/architecture.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from llama_index_pearl.joins import scoring

__all__ = ["Pairs", "Signals", "pair_key"]


@dataclass
class Signals:
    """What the generators found for one column pair ``(i, j)``, ``i < j`` by profile index."""

    found_by: set[str] = field(default_factory=set)  # the generators that found it: S, B, V, D
    pattern: str | None = None
    strength: float = 0.0
    referencing: int | None = None  # profile index of the FK side when a pattern says so
    name_sim: float = 0.0
    named: bool = False  # the name resolves to this parent alone (references.reference_candidates)
    key_by_name: bool = False  # the referenced column's name makes it its table's key

    def add_pattern(
        self, pattern: str, referencing: int, factor: float = 1.0, named: bool = False, key_by_name: bool = False
    ) -> None:
        """Record a structural anchor; the strongest one is kept.

        Args:
            pattern: Key of ``scoring.PATTERN_STRENGTH``.
            referencing: Profile index of the FK side.
            factor: The name evidence the pattern's strength is multiplied by.
            named: The FK column's name resolves to this parent alone.
            key_by_name: The referenced column's name makes it its table's key.
        """
        strength = scoring.PATTERN_STRENGTH[pattern] * factor
        self.found_by.add("S" if pattern != "declared" else "D")
        if strength > self.strength:
            self.pattern, self.strength, self.referencing = pattern, strength, referencing
        # what the name says holds whichever pattern is strongest (same_key_name and fk_name often tie)
        self.named = self.named or named
        self.key_by_name = self.key_by_name or key_by_name


Pairs = dict[tuple[int, int], Signals]


def pair_key(i: int, j: int) -> tuple[int, int]:
    """The accumulator key of a column pair: smaller profile index first."""
    return (i, j) if i < j else (j, i)
