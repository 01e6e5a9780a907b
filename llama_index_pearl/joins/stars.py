"""Stars: a fact table with the dimensions it references, and their own dimensions (star and snowflake joins).

A warehouse question reads a fact table and several of its dimensions at once ("store sales by
month for customers in Texas who bought items of brand X": sales, dates, customers, their
addresses, items). A join path names at most three tables; a star names them all. A table is a
fact when it references at least ``MIN_DIMENSIONS`` other tables by explicit joins (key relations,
read from the referencing side: :func:`~llama_index_pearl.joins.graph.joins_between`); its star
holds every table it references (what its rows hold), then the tables those reference (a
snowflake's outer dimensions), breadth first, while the star has fewer than ``MAX_TABLES``.

Pipeline step: joins (docs/architecture.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx

from llama_index_pearl.joins.graph import Join, key_references

__all__ = ["MAX_TABLES", "MIN_DIMENSIONS", "JoinStar", "join_stars"]

MIN_DIMENSIONS = 4  # a star of 3 ties every table of a 2-table question (benchmarks/README.md, "Stars")
MAX_TABLES = 10  # outer dimensions join while a star is smaller than this: what a question reads at most


@dataclass(frozen=True)
class JoinStar:
    """A fact table and the joins that reach its dimensions, each from a table already in the star.

    Args:
        fact: The fact table.
        joins: Joins from the fact or an inner dimension (left, the referencing side) to a new
            dimension (right), nearest dimensions first.
    """

    fact: str
    joins: tuple[Join, ...]

    @property
    def tables(self) -> tuple[str, ...]:
        """The fact, then its dimensions in the order they were reached."""
        return (self.fact, *(j.right_table for j in self.joins))

    def join_columns(self, table_id: str) -> list[str]:
        """Columns of ``table_id`` that join it within the star."""
        found: list[str] = []
        for join in self.joins:
            for left, right in join.column_pairs:
                for table, column in ((join.left_table, left), (join.right_table, right)):
                    if table == table_id and column not in found:
                        found.append(column)
        return found


def join_stars(graph: nx.Graph, min_dimensions: int = MIN_DIMENSIONS, max_tables: int = MAX_TABLES) -> list[JoinStar]:
    """Every star of a join graph, one per fact table, in table order.

    Args:
        graph: A join graph (:func:`~llama_index_pearl.joins.graph.build_join_graph`).
        min_dimensions: Distinct tables a fact references at least.
        max_tables: Outer (snowflake) dimensions join while the star has fewer tables than this.
    """
    stars = []
    for table in sorted(graph.nodes):
        if len(list(key_references(graph, table))) >= min_dimensions:
            stars.append(_star(graph, table, max_tables))
    return stars


def _star(graph: nx.Graph, fact: str, max_tables: int) -> JoinStar:
    seen, joins, frontier = {fact}, [], [fact]
    while frontier and len(seen) < max_tables:
        reached = []
        for table in frontier:
            for join in key_references(graph, table):
                if join.right_table not in seen and (table == fact or len(seen) < max_tables):
                    seen.add(join.right_table)
                    joins.append(join)
                    reached.append(join.right_table)
        frontier = reached
    return JoinStar(fact, tuple(joins))
