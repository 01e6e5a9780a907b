"""Join paths: the unit of PEARL's offline augmentation (paper section 3.1.1).

A :class:`JoinPath` is an ordered chain of 2 or 3 tables (a path of n tables has n - 1
joins) with the column pairs of the join between each consecutive pair. It is what join discovery selects, what query
generation prompts on, and what vertical partitioning projects.

Pipeline step: joins (docs/architecture.md).
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any

__all__ = ["ColumnPair", "JoinKind", "JoinPath"]


class JoinKind(str, Enum):
    """Explicit: schema-level (FK naming, identical key names, declared FKs).
    Implicit: semantic/value-level only. A path of 3 tables with one join of each kind is
    classified by whether the middle table is a structural bridge."""

    EXPLICIT = "explicit"
    IMPLICIT = "implicit"


@dataclass(frozen=True)
class ColumnPair:
    """``left_table.left_column`` joins ``right_table.right_column``."""

    left_table: str
    left_column: str
    right_table: str
    right_column: str

    def reversed(self) -> ColumnPair:
        return ColumnPair(self.right_table, self.right_column, self.left_table, self.left_column)

    def to_dict(self) -> dict[str, str]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ColumnPair:
        return cls(data["left_table"], data["left_column"], data["right_table"], data["right_column"])


@dataclass(frozen=True)
class JoinPath:
    """An ordered chain of tables and the joins between consecutive ones.

    Args:
        tables: Table ids in path order (2 or 3).
        joins: ``joins[i]`` holds the column pairs of the join of ``tables[i]`` to
            ``tables[i + 1]`` (left side = ``tables[i]``), best first: ``len(tables) - 1`` joins.
        kind: Explicit or implicit (decides the prompt family and unit shape).
        score: The base score f(p) used by selection.
        declared: Every join is backed by a declared foreign key.
    """

    tables: tuple[str, ...]
    joins: tuple[tuple[ColumnPair, ...], ...]
    kind: JoinKind
    score: float
    declared: bool = False
    signals: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if len(self.tables) < 2:
            raise ValueError(f"A join path needs at least 2 tables, got {self.tables}")
        if len(self.joins) != len(self.tables) - 1:
            raise ValueError(f"Path {self.tables} needs {len(self.tables) - 1} joins, got {len(self.joins)}")
        for i, pairs in enumerate(self.joins):
            if not pairs:
                raise ValueError(f"Join {i} of path {self.tables} has no column pair")
            for pair in pairs:
                if (pair.left_table, pair.right_table) != (self.tables[i], self.tables[i + 1]):
                    raise ValueError(f"Column pair {pair} does not join {self.tables[i]} -> {self.tables[i + 1]}")

    @property
    def path_id(self) -> str:
        """Stable signature of the path structure (tables, kind, join columns)."""
        parts = [self.kind.value, *self.tables]
        for pairs in self.joins:
            parts.extend(f"{p.left_column}={p.right_column}" for p in pairs)
        return hashlib.sha1("\x1f".join(parts).encode()).hexdigest()[:16]

    def join_columns(self, table_id: str) -> list[str]:
        """Columns of ``table_id`` used by any join of this path."""
        found: list[str] = []
        for pairs in self.joins:
            for p in pairs:
                for t, c in ((p.left_table, p.left_column), (p.right_table, p.right_column)):
                    if t == table_id and c not in found:
                        found.append(c)
        return found

    def to_dict(self) -> dict[str, Any]:
        return {
            "path_id": self.path_id,
            "tables": list(self.tables),
            "joins": [[p.to_dict() for p in pairs] for pairs in self.joins],
            "kind": self.kind.value,
            "score": self.score,
            "declared": self.declared,
            "signals": list(self.signals),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JoinPath:
        return cls(
            tables=tuple(data["tables"]),
            joins=tuple(tuple(ColumnPair.from_dict(p) for p in pairs) for pairs in data["joins"]),
            kind=JoinKind(data["kind"]),
            score=float(data["score"]),
            declared=bool(data.get("declared", False)),
            signals=tuple(data.get("signals", ())),
        )
