"""PEARL's store at 10^5-10^6 units: the default store exact and as an HNSW graph, and a Milvus server.

Synthetic tables and units stand in for a large lake: ``units / 20`` tables, each a random unit vector (its
centre); a unit stands for 1 table (60 %), 2 (30 %) or 3 (10 %), its vector the normalised sum of its tables'
centres plus noise of the same norm (cosine about 0.7 with a one-table unit's centre, as a real unit with the
question that names its table); a query names 1 or 2 tables the same way, a little noisier. With
``--domain-tables N`` tables come in domains of N (a database, a topic) whose centres share a direction, and the
second and third tables of a unit or a question come from its first table's domain, as joined tables come from one
database (``--joins-anywhere``: from any domain, the harder lake). For each size it
builds, through :class:`~llama_index_pearl.store.faiss_store.PearlFaissStore`'s own ``add``, the exact store and the
HNSW store (``PearlConfig``'s ``hnsw_*`` defaults), and reports build time, the resident memory each added,
query p50/p95 of ``FaissSearch.search_many`` (top-n search and max-pooling to tables, one query at a time,
k = 10, the retriever's first fetch; no encoder, no lexical evidence), and table-level recall@10 against the
exact store's top-10 tables. ``--server URL`` does the same for a Milvus server on loopback
(``llama-index-vector-stores-milvus``'s ``MilvusVectorStore``: insert, then top-n queries over-fetched until
the max-pooled top-10 is final, as the retriever does with any store), at ``--server-units``.

    nice -n 5 python benchmarks/scale.py --sizes 100000,1000000 --queries 300 --domain-tables 20 \\
        --server "$PEARL_TEST_MILVUS_URL" --server-units 1000000 --json /tmp/scale.json
"""

from __future__ import annotations

import argparse
import gc
import json
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import networkx as nx
import numpy as np
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import VectorStoreQuery

from llama_index_pearl.config import PearlConfig
from llama_index_pearl.corpus.catalog import Catalog, UnitInfo
from llama_index_pearl.retrieval.search.pooling import UnitHit, max_pool, ranking_is_final
from llama_index_pearl.retrieval.search.search import MIN_FETCH
from llama_index_pearl.retrieval.state import RetrievalState, Revision
from llama_index_pearl.store.faiss_store import PearlFaissStore, new_faiss_store
from llama_index_pearl.store.hnsw import HnswSettings

DIM = 384
UNITS_PER_TABLE = 20
BATCH = 20_000
K = 10
# Milvus Lite answered a top-10,240 query in minutes, a top-2,560 in well under a second
MAX_SERVER_FETCH = 2_560


class Lake:
    """Synthetic tables (centres) and units (vectors and the tables each stands for)."""

    def __init__(self, n_units: int, seed: int = 0, per_domain: int = 0, joins_anywhere: bool = False) -> None:
        rng = np.random.default_rng(seed)
        self.n_tables = max(K, n_units // UNITS_PER_TABLE)
        self.centres = _normalised(rng.standard_normal((self.n_tables, DIM), dtype=np.float32))
        if per_domain:  # tables of one database or topic lean one way: centre = domain + as much noise
            domains = _normalised(rng.standard_normal((-(-self.n_tables // per_domain), DIM), dtype=np.float32))
            self.centres = _normalised(domains[np.arange(self.n_tables) // per_domain] + self.centres)
        self._join_domain = 0 if joins_anywhere else per_domain  # tables joined within one domain
        sizes = rng.choice([1, 2, 3], size=n_units, p=[0.6, 0.3, 0.1])
        self.tables = self._joined(rng, sizes)
        self.vectors = np.empty((n_units, DIM), dtype=np.float32)
        for start in range(0, n_units, BATCH):
            chunk = self.tables[start : start + BATCH]
            self.vectors[start : start + len(chunk)] = _noisy(rng, self.centres, chunk, 1.0)
        self.unit_ids = [str(uuid.UUID(int=i + 1)) for i in range(n_units)]

    def queries(self, n: int, seed: int = 1) -> np.ndarray:
        rng = np.random.default_rng(seed)
        return _noisy(rng, self.centres, self._joined(rng, rng.choice([1, 2], size=n)), 1.2)

    def _joined(self, rng: np.random.Generator, sizes: np.ndarray) -> list[list[int]]:
        """Tables a unit or a question names: any first table; with domains, the others from its domain (tables
        that join are tables of one database), else (or with ``joins_anywhere``) from anywhere."""
        if not self._join_domain:
            return [rng.choice(self.n_tables, size=s, replace=False).tolist() for s in sizes]
        named = []
        for size, first in zip(sizes, rng.integers(self.n_tables, size=len(sizes))):
            start = first - first % self._join_domain
            mates = np.arange(start, min(start + self._join_domain, self.n_tables))
            others = rng.choice(mates[mates != first], size=min(size - 1, len(mates) - 1), replace=False)
            named.append([int(first), *others.tolist()])
        return named

    def nodes(self, start: int, stop: int) -> list[TextNode]:
        return [
            TextNode(
                id_=self.unit_ids[i],
                text="",
                embedding=self.vectors[i].tolist(),
                metadata={"table_ids": [f"t{t}" for t in self.tables[i]]},
            )
            for i in range(start, stop)
        ]


def _normalised(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _noisy(rng: np.random.Generator, centres: np.ndarray, named: Sequence[list[int]], noise: float) -> np.ndarray:
    mixed = np.stack([centres[t].sum(axis=0) for t in named])
    mixed = _normalised(mixed)
    jitter = _normalised(rng.standard_normal(mixed.shape, dtype=np.float32)) * noise
    return _normalised(mixed + jitter).astype(np.float32)


def synthetic_revision(store: PearlFaissStore, lake: Lake) -> Revision:
    """What ``RetrievalState`` reads of an index's revision (a ``Revision``), for a store and a lake."""
    units = {u: UnitInfo("explicit", [f"t{t}" for t in ts], None) for u, ts in zip(lake.unit_ids, lake.tables)}
    return Revision(
        number=0,
        table_ids=[f"t{i}" for i in range(lake.n_tables)],
        catalog=Catalog(units=units),
        join_graph=nx.Graph(),
        vector_store=store,
        config=PearlConfig(),
        table_text=lambda table_id: table_id,
        lexical_texts=lambda unit_ids: ["" for _ in unit_ids],
        persisted_lexical=lambda: None,
    )


def rss_mb() -> float:
    with open("/proc/self/status") as handle:
        line = next(row for row in handle if row.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def build_store(lake: Lake, approximate: HnswSettings | None) -> tuple[PearlFaissStore, float, float]:
    """The store with every unit, through its own ``add`` in batches; seconds and resident MB it added."""
    gc.collect()
    before, start = rss_mb(), time.perf_counter()
    store = new_faiss_store(DIM, approximate)
    for first in range(0, len(lake.unit_ids), BATCH):
        store.add(lake.nodes(first, min(first + BATCH, len(lake.unit_ids))))
    seconds = time.perf_counter() - start
    gc.collect()
    return store, seconds, rss_mb() - before


def top_tables(state: RetrievalState, queries: np.ndarray) -> tuple[list[list[str]], list[float]]:
    fetch = min(len(state.unit_ids), max(MIN_FETCH, 4 * K))
    tables, times = [], []
    for row in queries:
        start = time.perf_counter()
        pooled = state.search.search_many(row[None, :], K, fetch)[0]
        times.append((time.perf_counter() - start) * 1000)
        tables.append([p.table_id for p in pooled])
    return tables, times


def recall(got: Sequence[list[str]], exact: Sequence[list[str]]) -> float:
    return float(np.mean([len(set(g) & set(e)) / max(1, len(e)) for g, e in zip(got, exact)]))


def percentiles(ms: Sequence[float]) -> dict[str, float]:
    p50, p95 = np.percentile(ms, [50, 95])
    return {"p50_ms": round(float(p50), 2), "p95_ms": round(float(p95), 2)}


def measure_size(
    n_units: int, n_queries: int, settings: HnswSettings, ef_searches: list[int], lake_shape: dict[str, Any]
) -> dict[str, Any]:
    """Both stores at one size; the graph searched with each ``efSearch`` of ``ef_searches`` (built once)."""
    lake = Lake(n_units, **lake_shape)
    queries = lake.queries(n_queries)
    result: dict[str, Any] = {"units": n_units, "tables": lake.n_tables}
    exact_tables: list[list[str]] = []
    for name, approximate in (("exact", None), ("hnsw", settings)):
        store, seconds, memory = build_store(lake, approximate)
        state = RetrievalState(synthetic_revision(store, lake))
        built = {"build_s": round(seconds, 1), "memory_mb": round(memory)}
        for ef in [0] if approximate is None else ef_searches:
            if ef:
                store.approximate(replace(settings, ef_search=ef))
            top_tables(state, queries[:5])  # warm: the first query reads the arrays into the caches
            tables, times = top_tables(state, queries)
            exact_tables = tables if name == "exact" else exact_tables
            key = f"hnsw_ef{ef}" if ef else name
            result[key] = {**built, **percentiles(times), "table_recall_at_10": round(recall(tables, exact_tables), 4)}
            print(n_units, key, json.dumps(result[key]), flush=True)
        del store, state
    return result


def measure_server(url: str, n_units: int, n_queries: int, lake_shape: dict[str, Any]) -> dict[str, Any]:
    """Insert into a Milvus server and query it as the retriever queries any store; recall against exact."""
    from llama_index.vector_stores.milvus import MilvusVectorStore

    lake = Lake(n_units, **lake_shape)
    queries = lake.queries(n_queries)
    exact, _, _ = build_store(lake, None)
    exact_tables, _ = top_tables(RetrievalState(synthetic_revision(exact, lake)), queries)
    del exact
    collection = f"scale_{uuid.uuid4().hex[:8]}"
    store = MilvusVectorStore(uri=url, collection_name=collection, dim=DIM, overwrite=True)
    start = time.perf_counter()
    for first in range(0, n_units, BATCH):
        store.add(lake.nodes(first, min(first + BATCH, n_units)))
    seconds = time.perf_counter() - start
    membership = dict(zip(lake.unit_ids, ([f"t{t}" for t in ts] for ts in lake.tables)))
    tables, times, fetched = [], [], []
    for row in queries:
        begin = time.perf_counter()
        pooled, n = _over_fetched(
            lambda n, row=row: store.query(VectorStoreQuery(query_embedding=row.tolist(), similarity_top_k=n)),
            membership,
        )
        times.append((time.perf_counter() - begin) * 1000)
        tables.append([p.table_id for p in pooled])
        fetched.append(n)
    store.client.drop_collection(collection)
    return {
        "units": n_units,
        "insert_s": round(seconds, 1),
        **percentiles(times),
        "median_units_fetched": int(np.median(fetched)),
        "capped_at_max_fetch": int(sum(n >= MAX_SERVER_FETCH for n in fetched)),
        "table_recall_at_10": round(recall(tables, exact_tables), 4),
    }


def _over_fetched(query: Callable[[int], Any], membership: dict[str, list[str]]) -> tuple[list[Any], int]:
    """Top-n units, four times as many until the set of the top-10 tables is final (a tie across the 10th
    place needs the tied tables' next-best units) or ``MAX_SERVER_FETCH`` units were fetched."""
    n = max(MIN_FETCH, 4 * K)
    while True:
        result = query(n)
        hits = [UnitHit(u, membership[u], float(s)) for u, s in zip(result.ids, result.similarities)]
        pooled = max_pool(hits)
        decided = len(pooled) > K and pooled[K - 1].score > pooled[K].score
        if len(hits) < n or decided or ranking_is_final(pooled, K) or n >= MAX_SERVER_FETCH:
            return pooled[:K], n
        n *= 4


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100000,1000000", help="unit counts, comma-separated ('': none)")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--server", help="a Milvus server's URL (http://127.0.0.1:PORT)")
    parser.add_argument("--server-units", type=int, default=100_000)
    parser.add_argument("--ef-search", default="", help="efSearch values to search the graph with (default: config's)")
    parser.add_argument(
        "--domain-tables",
        type=int,
        default=0,
        help="tables per domain (a database, a topic): their centres share a direction (default 0: every table's "
        "centre independent of the others)",
    )
    parser.add_argument(
        "--joins-anywhere",
        action="store_true",
        help="with --domain-tables, a unit's or question's second and third tables come from any domain, not the "
        "first table's (the harder lake: 40 %% of units lie between two unrelated domains)",
    )
    parser.add_argument("--hnsw-m", type=int, help="the graph's M (default: the config's)")
    parser.add_argument("--ef-construction", type=int, help="the graph's efConstruction (default: the config's)")
    parser.add_argument("--json", help="write the results here too")
    args = parser.parse_args()
    config = PearlConfig()
    settings = HnswSettings(
        1,
        args.hnsw_m or config.hnsw_m,
        args.ef_construction or config.hnsw_ef_construction,
        config.hnsw_ef_search,
    )
    print(
        f"HNSW M={settings.m} efConstruction={settings.ef_construction} efSearch={settings.ef_search}; "
        f"default store approximate from {config.approximate_from:,} units"
    )
    results: dict[str, Any] = {"hnsw": vars(settings) if hasattr(settings, "__dict__") else str(settings)}
    efs = [int(e) for e in args.ef_search.split(",")] if args.ef_search else [settings.ef_search]
    sizes = [int(n) for n in args.sizes.split(",") if n]  # --sizes "": the server alone
    shape = {"per_domain": args.domain_tables, "joins_anywhere": args.joins_anywhere}
    results["lake"] = shape
    results["sizes"] = [measure_size(n, args.queries, settings, efs, shape) for n in sizes]
    if args.server:
        results["server"] = measure_server(args.server, args.server_units, args.queries, shape)
        print("server", json.dumps(results["server"]), flush=True)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=2, default=str)


if __name__ == "__main__":
    main()
