"""Join-path discovery, one staged pipeline for builds and inserts: profiles -> candidate edges -> paths -> lazy greedy.

Thresholds (the paper leaves them open; chosen by measurement on the Spider
benchmark, 81 tables / 63 declared FKs, declared FKs *not* used):

* ``tau_2 = 1.05`` (the paper's τ_2h: the least f of a path of 2 tables; f ranges over [0, 2]).
  An explicit edge passes only with a structural anchor *and* some value evidence: a name pattern alone
  (S_str <= 1) needs S_ovlp >= 0.05, i.e. the join must actually match rows, which
  removes same-named columns of unrelated databases whose values never meet.
  A declared FK always passes, whatever its values, and so does a *named* edge: inside
  one source, a column whose name resolves to one parent alone with S_str >=
  ``scoring.NAME_ALONE`` and values shaped like the key's (``CandidateEdge.named``):
  header-only tables, 10-row samples whose keys do not meet, empty or constant FK
  columns. Value-only inclusion edges (S_str = 0.6) need S_ovlp >= 0.45, i.e.
  containment near 1 onto a unique column.
* ``tau_3 = 1.3`` (the paper's τ_3h): each join of a path of 3 tables must be clearly better
  than the floor of a path of 2 (paper: τ_3h > τ_2h); on Spider this keeps FK chains such as
  Treatments-Dogs-Owners and drops chains through weak same-name links.
* S_str: see :data:`llama_index_pearl.joins.scoring.PATTERN_STRENGTH`.
* Implicit edges get S_ovlp = 0 when chance explains the overlap
  (:func:`llama_index_pearl.joins.scoring.coincidental_overlap`): before that
  rule, most implicit paths selected on Spider joined unrelated 1..n id
  columns of different databases.

The measured numbers are in ``benchmarks/README.md``.

Pools and budget: an edge with a structural anchor (S_str > 0) is explicit, any
other edge from P_B or P_V is implicit; a table pair already joined explicitly
gets no implicit path of those 2 tables (it would spend a generation call on the same pair).
A path of 3 tables with an explicit and an implicit join is explicit when its middle table is a
*structural bridge*: the middle table's column on the implicit join is itself a key-like column or a
column of one of its explicit joins. The budget K (default floor(|C|/2), as in
the paper) applies to each pool separately, since the paper runs the lazy
greedy independently on both; pass ``budget`` to change it. ``budget=None``
selects every candidate path, ranked (the build resolves the default from the
generator's cost: :func:`~llama_index_pearl.joins.selection.resolve_budget`).

Provenance: columns of two different sources (``Table.source``) join only on
value evidence (``cross_source_joins="evidence"``, see
:func:`~llama_index_pearl.joins.sources.cross_source_evidence`): on a corpus of
many databases, nearly every false explicit table pair joined two different
databases through same-named 1..n keys ("Constants" in benchmarks/README.md).

Pipeline step: joins (docs/architecture.md).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import networkx as nx
from llama_index.core.base.embeddings.base import BaseEmbedding

from llama_index_pearl.foundations.timing import stage
from llama_index_pearl.joins import candidates as cand
from llama_index_pearl.joins.composite import composite_edges
from llama_index_pearl.joins.edges import (
    CandidateEdge,
    admissible_pairs,
    drop_sibling_references,
    drop_value_alternatives,
    group_joins,
    keep_best_parents,
    score_admissible,
    strongest_first,
)
from llama_index_pearl.joins.embedding import embed_names, embed_values
from llama_index_pearl.joins.graph import build_join_graph, edges_from_graph, paths_from_graph
from llama_index_pearl.joins.paths import ColumnPair, JoinKind, JoinPath
from llama_index_pearl.joins.profiles import ColumnProfile, profile_tables
from llama_index_pearl.joins.scoring import DEFAULT_CROSS_SOURCE
from llama_index_pearl.joins.selection import LAMBDA_DIV, lazy_greedy
from llama_index_pearl.tables.table import Table
from llama_index_pearl.text.models import resolve_embed_model

__all__ = ["TAU_2", "TAU_3", "JoinDiscovery", "build_paths", "discover_join_paths"]

logger = logging.getLogger(__name__)

TAU_2 = 1.05
TAU_3 = 1.3
JOIN_PAIRS = 2  # column pairs a path shows per join, a composite key whole: its views and questions name them


@dataclass
class JoinDiscovery:
    """What :func:`discover_join_paths` found.

    Args:
        paths: Selected paths, explicit first, each in selection order (after an insert: the new ones).
        edges: Every scored candidate column-pair edge, strongest first (after an insert: the new ones).
        graph: Table graph over the edges that passed ``tau_2``.
        seconds: Wall time per stage: profile, embed, candidates, score, paths, select.
        candidate_paths: Size of each pool before selection (``explicit``/``implicit``).
        name_threshold: The adaptive P_B threshold used.
    """

    paths: list[JoinPath]
    edges: list[CandidateEdge]
    graph: nx.Graph
    seconds: dict[str, float]
    candidate_paths: dict[str, int] = field(default_factory=dict)
    name_threshold: float = float("nan")


def _pair(edge: CandidateEdge, left: str) -> ColumnPair:
    p = ColumnPair(edge.left_table, edge.left_column, edge.right_table, edge.right_column)
    return p if edge.left_table == left else p.reversed()


def _join_pairs(edges: list[CandidateEdge], left: str) -> tuple[ColumnPair, ...]:
    """The column pairs a path shows between two tables: the strongest join whole, then the next joins'
    pairs while fewer than ``JOIN_PAIRS`` (a second reference: source and destination airports)."""
    pairs: list[ColumnPair] = []
    for join in group_joins(edges):
        if len(pairs) >= JOIN_PAIRS:
            break
        pairs.extend(_pair(e, left) for e in join)
    return tuple(pairs)


@dataclass
class _Link:
    """Best column-pair edges between two tables within one pool."""

    edges: list[CandidateEdge]
    score: float
    kind: JoinKind


def _links(edges: Sequence[CandidateEdge], tau: float) -> dict[frozenset[str], _Link]:
    grouped: dict[frozenset[str], dict[JoinKind, list[CandidateEdge]]] = defaultdict(lambda: defaultdict(list))
    for e in edges:
        kind = JoinKind.EXPLICIT if e.explicit else JoinKind.IMPLICIT
        if e.declared or e.named or (e.score >= tau and (e.explicit or set(e.signals) & {"B", "V"})):
            grouped[frozenset(e.tables)][kind].append(e)
    links = {}
    for key, by_kind in grouped.items():
        kind = JoinKind.EXPLICIT if JoinKind.EXPLICIT in by_kind else JoinKind.IMPLICIT
        chosen = sorted(by_kind[kind], key=lambda e: -e.score)
        links[key] = _Link(chosen, chosen[0].score, kind)
    return links


def build_paths(edges: Sequence[CandidateEdge], tau_2: float = TAU_2, tau_3: float = TAU_3) -> list[JoinPath]:
    """All candidate paths of 2 and 3 tables (both pools) from scored edges.

    Args:
        edges: Scored candidate edges.
        tau_2: Minimum f of a path of 2 tables.
        tau_3: Minimum f of each join of a path of 3 tables.

    Returns:
        Candidate paths, deterministic order.
    """
    links = _links(edges, tau_2)
    paths = []
    for link in links.values():
        best = link.edges[0]
        paths.append(_path((best.left_table, best.right_table), [link], link.kind))
    # Join columns of each table's explicit links: what makes a middle table a structural bridge.
    bridge_cols: dict[str, set[str]] = defaultdict(set)
    adjacency: dict[str, list[tuple[str, _Link]]] = defaultdict(list)
    for key, link in links.items():
        for e in link.edges:
            if link.kind is JoinKind.EXPLICIT:
                bridge_cols[e.left_table].add(e.left_column)
                bridge_cols[e.right_table].add(e.right_column)
        if link.score >= tau_3:
            a, b = sorted(key)
            adjacency[a].append((b, link))
            adjacency[b].append((a, link))
    for middle in sorted(adjacency):
        best: dict[JoinKind, tuple[tuple[float, float], JoinPath]] = {}
        nbrs = sorted(adjacency[middle], key=lambda nl: (-nl[1].score, nl[0]))
        for x in range(len(nbrs)):
            for y in range(x + 1, min(len(nbrs), x + 4)):  # the best min() is among the top few neighbours
                (ti, li), (tj, lj) = nbrs[x], nbrs[y]
                if li.kind == lj.kind:
                    kind = li.kind
                else:
                    implicit = li if li.kind is JoinKind.IMPLICIT else lj
                    col = _side_column(implicit.edges[0], middle)
                    kind = JoinKind.EXPLICIT if col in bridge_cols[middle] else JoinKind.IMPLICIT
                rank = (min(li.score, lj.score), li.score + lj.score)
                if kind not in best or rank > best[kind][0]:
                    best[kind] = (rank, _path((ti, middle, tj), [li, lj], kind))
        paths.extend(p for _, p in (best[k] for k in (JoinKind.EXPLICIT, JoinKind.IMPLICIT) if k in best))
    return paths


def _side_column(edge: CandidateEdge, table: str) -> str:
    return edge.left_column if edge.left_table == table else edge.right_column


def _path(tables: tuple[str, ...], links: list[_Link], kind: JoinKind) -> JoinPath:
    joins = tuple(_join_pairs(link.edges, tables[i]) for i, link in enumerate(links))
    signals = sorted({s for link in links for e in link.edges if _side_column(e, e.left_table) for s in e.signals})
    return JoinPath(
        tables=tables,
        joins=joins,
        kind=kind,
        score=round(sum(link.score for link in links) / len(links), 4),
        declared=all(link.edges[0].declared for link in links),
        signals=tuple(signals),
    )


def discover_join_paths(
    tables: Sequence[Table],
    embed_model: BaseEmbedding | None = None,
    *,
    budget: int | None = None,
    lambda_div: float = LAMBDA_DIV,
    tau_2: float = TAU_2,
    tau_3: float = TAU_3,
    use_declared: bool = True,
    cross_source_joins: str = DEFAULT_CROSS_SOURCE,
    show_progress: bool = False,
    touching: Collection[str] | None = None,
    previous: nx.Graph | None = None,
) -> JoinDiscovery:
    """Discover and select join paths over a table corpus (PEARL offline step 1).

    One staged pipeline: profile -> embed names -> candidates -> embed values -> score -> paths -> select.
    An incremental insert (paper appendix C.3) is the same pipeline with ``touching``:
    only candidate pairs with a column of those tables are scored, the edges and paths
    of ``previous`` are kept, and only new paths through a touched table compete for
    the budget those paths leave.

    Args:
        tables: The corpus (after an insert: existing and new tables).
        embed_model: Embedding model for names and values; ``None``: ``Settings.embed_model`` if set, else MiniLM.
        budget: Paths selected per pool (K), kept paths of ``previous`` included;
            ``None``: every candidate path, ranked.
        lambda_div: Weight of newly covered tables in the selection gain.
        tau_2: Minimum f of a path of 2 tables.
        tau_3: Minimum f of each join of a path of 3 tables (should exceed ``tau_2``).
        use_declared: Add ``Table.foreign_keys`` as explicit edges.
        cross_source_joins: ``"evidence"`` (joins across two sources need value evidence),
            ``"never"`` or ``"always"`` (provenance ignored).
        show_progress: Show embedding progress bars.
        touching: Ids of the tables whose joins are wanted (the added ones); ``None``: all.
        previous: The join graph before the insert (from :func:`build_join_graph`), over
            tables outside ``touching``; needs ``touching``.

    Returns:
        A :class:`JoinDiscovery`: the newly selected paths, the newly scored edges, the
        join graph (kept and new edges and paths) and timings.

    Raises:
        ValueError: ``previous`` without ``touching``, a touched id not among ``tables``,
            or one already a node of ``previous``.
    """
    _check_scope(tables, touching, previous)
    seconds: dict[str, float] = {}
    with stage(seconds, "profile"):
        # "always": provenance ignored, one unified pool as in the paper
        profiles = profile_tables(tables, provenance=cross_source_joins != "always")
    model = resolve_embed_model(embed_model) if len(tables) > 1 else None
    with stage(seconds, "embed"):
        if model is not None:
            embed_names([p for p in profiles if p.joinable], model, show_progress)
    with stage(seconds, "candidates"):
        pairs, tau_sim = _candidate_pairs(tables, profiles, use_declared, touching)
        admitted = admissible_pairs(profiles, pairs, cross_source_joins)
    with stage(seconds, "embed"):  # only scoring reads value vectors: just the admitted pairs' columns
        if model is not None:
            embed_values(_paired(profiles, admitted), model, show_progress)
    with stage(seconds, "score"):
        edges = keep_best_parents(score_admissible(profiles, admitted))
        edges = strongest_first(edges + composite_edges(tables, profiles, touching))
        identifiers = {(p.table_id, p.column) for p in profiles if p.identifier}
        edges = drop_value_alternatives(drop_sibling_references(edges, tau_2, identifiers), tau_2, identifiers)
    with stage(seconds, "paths"):
        kept_edges, kept_paths = _kept(previous)
        pools = _path_pools(strongest_first(kept_edges + edges), tau_2, tau_3, touching, kept_paths)
    with stage(seconds, "select"):
        selected = [p for kind in JoinKind for p in _select(pools[kind], kept_paths, kind, budget, lambda_div)]
        passed = [e for e in edges if e.passes(tau_2)]
        graph = build_join_graph([t.id for t in tables], kept_edges + passed, kept_paths + selected)
    _log_outcome(len(tables), edges, pools, selected, tau_2, touching)
    return JoinDiscovery(
        paths=selected,
        edges=edges,
        graph=graph,
        seconds={k: round(v, 4) for k, v in seconds.items()},
        candidate_paths={kind.value: len(pools[kind]) for kind in JoinKind},
        name_threshold=tau_sim,
    )


def _check_scope(tables: Sequence[Table], touching: Collection[str] | None, previous: nx.Graph | None) -> None:
    if touching is None:
        if previous is not None:
            raise ValueError("previous needs touching: the ids of the tables added since that graph")
        return
    ids = {t.id for t in tables}
    if missing := sorted(set(touching) - ids):
        raise ValueError(f"New table ids not in the corpus: {', '.join(missing)}")
    if previous is not None and (present := sorted(t for t in set(touching) if t in previous)):
        raise ValueError(f"Tables already in the join graph: {', '.join(present)}")


def _kept(previous: nx.Graph | None) -> tuple[list[CandidateEdge], list[JoinPath]]:
    """The edges and selected paths an insert keeps from the previous graph (none for a full discovery)."""
    if previous is None:
        return [], []
    return edges_from_graph(previous), paths_from_graph(previous)


def _candidate_pairs(
    tables: Sequence[Table],
    profiles: list[ColumnProfile],
    use_declared: bool,
    touching: Collection[str] | None,
) -> tuple[cand.Pairs, float]:
    """Candidate column pairs (P_S, P_B, P_V and declared keys) and the adaptive P_B threshold.

    With ``touching``, only pairs with a column of those tables are kept. The
    generators still see every profile (the adaptive P_B threshold and the name and
    value indexes are corpus-wide, as in a full build); only scoring, the expensive
    part, is restricted.
    """
    if len(tables) < 2:
        return {}, float("nan")
    pairs: cand.Pairs = {}
    if use_declared:
        cand.declared_candidates(tables, profiles, pairs)
    cand.structural_candidates(profiles, pairs)
    tau_sim = cand.name_candidates(profiles, pairs)
    skipped = cand.value_candidates(profiles, pairs)
    cand.key_lookup_candidates(profiles, pairs)
    if skipped:
        logger.debug("Value index skipped %d values held by more than %d columns", skipped, cand.MAX_POSTING)
    if touching is not None:
        wanted = set(touching)
        pairs = {
            key: sig
            for key, sig in pairs.items()
            if profiles[key[0]].table_id in wanted or profiles[key[1]].table_id in wanted
        }
    return pairs, tau_sim


def _paired(profiles: Sequence[ColumnProfile], pairs: Collection[tuple[int, int]]) -> list[ColumnProfile]:
    """Joinable profiles of the columns in some pair, in profile order."""
    paired = {i for key in pairs for i in key}
    return [p for i, p in enumerate(profiles) if i in paired and p.joinable]


def _path_pools(
    edges: Sequence[CandidateEdge],
    tau_2: float,
    tau_3: float,
    touching: Collection[str] | None,
    kept: Sequence[JoinPath],
) -> dict[JoinKind, list[JoinPath]]:
    """Candidate paths per pool; with ``touching``, only new paths through a touched table."""
    paths = build_paths(edges, tau_2, tau_3)
    if touching is not None:
        wanted, kept_ids = set(touching), {p.path_id for p in kept}
        paths = [p for p in paths if wanted & set(p.tables) and p.path_id not in kept_ids]
    return {kind: [p for p in paths if p.kind is kind] for kind in JoinKind}


def _select(
    candidates: Sequence[JoinPath], kept: Sequence[JoinPath], kind: JoinKind, budget: int | None, lambda_div: float
) -> list[JoinPath]:
    """Lazy greedy over one pool; kept paths of that pool use up budget and count as covering their tables."""
    existing = [p for p in kept if p.kind is kind]
    covered = {t for p in existing for t in p.tables}
    left = None if budget is None else max(0, budget - len(existing))
    return lazy_greedy(candidates, left, lambda_div, covered=covered)


def _log_outcome(
    n_tables: int,
    edges: Sequence[CandidateEdge],
    pools: dict[JoinKind, list[JoinPath]],
    selected: Sequence[JoinPath],
    tau_2: float,
    touching: Collection[str] | None,
) -> None:
    scope = "" if touching is None else f" touching {len(touching)} new tables"
    if not selected and touching is None:
        logger.warning(
            "Join discovery found no join path among %d tables (%d candidate edges, none with f >= %.2f)",
            n_tables,
            len(edges),
            tau_2,
        )
        return
    logger.info(
        "Join discovery%s: %d tables, %d candidate edges, %d explicit / %d implicit candidate paths, %d selected",
        scope,
        n_tables,
        len(edges),
        len(pools[JoinKind.EXPLICIT]),
        len(pools[JoinKind.IMPLICIT]),
        len(selected),
    )
