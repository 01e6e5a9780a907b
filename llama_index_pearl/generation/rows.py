"""Which rows of each table to show for a join path (paper appendix B.2).

Only a few rows of each table fit a prompt or an encoder window. Rows whose
join-column values also occur in the neighbouring table are moved first, so the
rows shown actually join; the rest keep their original order. A middle table
takes the union of the overlaps of both its joins. Beyond the paper, rows matching
the rows already chosen for the previous table rank first of all, so the LLM sees
chains it can follow rather than two unrelated samples of overlapping rows.

Pipeline step: generation (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Mapping

from llama_index_pearl.joins.paths import JoinPath
from llama_index_pearl.tables.table import Table, cell_text, normalize_column_name
from llama_index_pearl.text.serialization import DEFAULT_MAX_ROWS

__all__ = ["join_values", "reorder_rows_for_path", "resolve_column", "shown_rows"]


def resolve_column(table: Table, column: str) -> str | None:
    """The table's own spelling of ``column`` (case/space-insensitive), or ``None``."""
    if column in table.df.columns:
        return column
    wanted = normalize_column_name(column)
    for name in table.columns:
        if normalize_column_name(name) == wanted:
            return name
    return None


def _key(value: object) -> str:
    # join values compare as text so 3 == "3" == 3.0; case and surrounding space
    # differ across sources too often to matter
    return cell_text(value).strip().lower()


def join_values(table: Table, column: str) -> tuple[str, ...]:
    """Normalised join key of every row of ``table`` in ``column`` ("" when missing); once per table and column."""
    name = resolve_column(table, column)
    if name is None:
        return ("",) * table.n_rows
    return table.derived(f"join_values:{name}", lambda: tuple(_key(v) for v in table.df[name].tolist()))


def reorder_rows_for_path(
    path: JoinPath, tables: Mapping[str, Table], max_rows: int = DEFAULT_MAX_ROWS
) -> dict[str, list[int]]:
    """Row positions to show for each table of ``path``, join-overlapping rows first.

    Args:
        path: The join path.
        tables: Tables by id; must hold every table of the path.
        max_rows: Most rows returned per table.

    Returns:
        For each table id of the path, up to ``max_rows`` row positions: rows
        matching the rows chosen for the previous table, then other rows whose
        join value occurs in a neighbour table, then the rest, each group in
        original order.
    """
    n = len(path.tables)
    overlap_rows: dict[int, set[int]] = {i: set() for i in range(n)}
    join_keys: dict[int, list[tuple[tuple[str, ...], tuple[str, ...]]]] = {}  # join j -> (left, right) values
    for j, pairs in enumerate(path.joins):
        left, right = tables[path.tables[j]], tables[path.tables[j + 1]]
        join_keys[j] = []
        for pair in pairs:
            lk, rk = join_values(left, pair.left_column), join_values(right, pair.right_column)
            shared = (set(lk) & set(rk)) - {""}
            overlap_rows[j].update(i for i, k in enumerate(lk) if k in shared)
            overlap_rows[j + 1].update(i for i, k in enumerate(rk) if k in shared)
            join_keys[j].append((lk, rk))

    chosen: dict[str, list[int]] = {}
    previous: list[int] = []
    for i, table_id in enumerate(path.tables):
        n_rows = tables[table_id].n_rows
        linked: set[int] = set()
        if i > 0 and previous:
            for lk, rk in join_keys[i - 1]:
                wanted = {lk[r] for r in previous} - {""}
                linked.update(r for r, k in enumerate(rk) if k in wanted)
        tiers: tuple[list[int], list[int], list[int]] = ([], [], [])
        for r in range(n_rows):
            tier = 0 if r in linked else 1 if r in overlap_rows[i] else 2
            if len(tiers[tier]) < max_rows:
                tiers[tier].append(r)
        rows = (tiers[0] + tiers[1] + tiers[2])[:max_rows]
        chosen[table_id] = rows
        previous = rows
    return chosen


def shown_rows(request: object, max_rows: int = DEFAULT_MAX_ROWS) -> dict[str, list[int]]:
    """Rows shown for a path or single-table request (the first rows for a single table).

    Args:
        request: A ``PathRequest`` or ``SingleTableRequest``.
        max_rows: Most rows per table.

    Returns:
        Row positions per table id.
    """
    path = getattr(request, "path", None)
    if path is not None:
        return reorder_rows_for_path(path, request.tables, max_rows)  # type: ignore[attr-defined]
    table: Table = request.table  # type: ignore[attr-defined]
    return {table.id: list(range(min(max_rows, table.n_rows)))}
