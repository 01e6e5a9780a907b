"""Synthetic data lake with planted foreign keys, for the join-discovery scale benchmark.

Entity tables own a key column (large random ints, prefixed codes, or dense
1..n surrogate keys); fact tables (and some entity tables) hold FK columns that
draw their values from a referenced key and name it in one of the ways real
lakes do: ``customer_id``, ``cust_id``, ``customerId``, ``billing_customer_id``
or an opaque ``client_ref``-style name that only the values give away. Every
table is padded to ~10 columns with free text, floats, dates, categories and
decoys (small ints, ``<entity>_no`` counters) that overlap each other by chance.

:func:`generate_multisource_lake` builds the other kind of lake: many sources
(databases) with the *same* schema, so table and column names repeat across
sources and every source counts its ids 1..n, plus real cross-source links
through natural keys (emails, ISBNs, country codes) to shared reference sources.

``HashingEmbedding`` is a fast deterministic stand-in for a sentence encoder
(character trigrams hashed into 64 dimensions), so that embedding is not what
the scale benchmark measures.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np
import pandas as pd
from llama_index.core.base.embeddings.base import BaseEmbedding

from llama_index_pearl.tables.table import Table

__all__ = ["HashingEmbedding", "PlantedKey", "VectorEmbedding", "generate_datalake", "generate_multisource_lake"]

_CONSONANTS = list("bdfgklmnprstvz")
_VOWELS = list("aeiou")
_WORDS = [
    "alpha", "river", "stone", "green", "quick", "light", "north", "south", "metal", "paper", "glass", "cloud",
    "field", "ocean", "tiger", "maple", "cedar", "amber", "delta", "sigma", "prime", "urban", "rural", "solar",
]  # fmt: skip
_CATEGORIES = ["active", "inactive", "pending", "closed", "yes", "no", "usa", "france", "germany", "japan"]


@dataclass(frozen=True)
class PlantedKey:
    """A planted foreign key: ``table.column`` references ``ref_table.ref_column``."""

    table: str
    column: str
    ref_table: str
    ref_column: str


class VectorEmbedding(BaseEmbedding):
    """A model-free stand-in encoder: subclasses define ``_vector(text)``; queries and texts embed alike."""

    def _vector(self, text: str) -> list[float]:
        raise NotImplementedError

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]


class HashingEmbedding(VectorEmbedding):
    """Deterministic 64-d embedding from hashed character trigrams (no model, microseconds per text)."""

    dim: int = 64

    @classmethod
    def class_name(cls) -> str:
        return "HashingEmbedding"

    def _vector(self, text: str) -> list[float]:
        vec = np.zeros(self.dim, dtype=np.float32)
        padded = f"  {text.lower()} "
        for i in range(len(padded) - 2):
            h = zlib.crc32(padded[i : i + 3].encode())
            vec[h % self.dim] += 1.0 if (h >> 16) & 1 else -1.0
        norm = float(np.linalg.norm(vec))
        return (vec / norm if norm else vec).tolist()


def _entity_names(n: int, rng: np.random.Generator) -> list[str]:
    names: set[str] = set()
    while len(names) < n:
        syllables = rng.integers(2, 4)
        names.add("".join(rng.choice(_CONSONANTS) + rng.choice(_VOWELS) for _ in range(syllables)) + "r")
    return sorted(names)


def _key_values(kind: str, name: str, n: int, rng: np.random.Generator) -> list[str]:
    if kind == "seq":
        return [str(i) for i in range(1, n + 1)]
    if kind == "code":
        start = int(rng.integers(0, 900_000))
        return [f"{name[:3].upper()}-{start + i:06d}" for i in range(n)]
    return [str(v) for v in rng.choice(10**9, size=n, replace=False) + 10**6]


def _fk_name(entity: str, variant: int, slot: int) -> str:
    return [
        f"{entity}_id",
        f"{entity[:4]}_id",
        f"{entity}Id",
        f"{['billing', 'primary', 'parent', 'owner'][slot % 4]}_{entity}_id",
        f"{['link', 'ref', 'src', 'xref'][slot % 4]}_{slot}_ref",
    ][variant]


def _filler(kind: str, rows: int, rng: np.random.Generator, entity: str) -> tuple[str, list[str]]:
    if kind == "text":
        words = rng.choice(_WORDS, size=(rows, 6))
        return "notes", [" ".join(w) for w in words]
    if kind == "float":
        return "amount", [f"{v:.2f}" for v in rng.normal(100, 30, rows)]
    if kind == "date":
        y, m, d = rng.integers(1, 28, (3, rows))
        return "created", [f"20{a:02d}-{b:02d}-{c:02d}" for a, b, c in zip(y, m, d, strict=True)]
    if kind == "cat":
        return "status", list(rng.choice(_CATEGORIES, rows))
    if kind == "small":
        return "quantity", [str(v) for v in rng.integers(1, 20, rows)]
    return f"{entity}_no", [str(v) for v in rng.integers(1, 50, rows)]  # decoy: looks like a key, is a counter


def generate_datalake(
    n_tables: int, seed: int = 0, columns: int = 10, rows: int = 40, entity_share: float = 0.3
) -> tuple[list[Table], list[PlantedKey]]:
    """Generate ``n_tables`` tables (~``columns`` columns each) and the foreign keys planted among them.

    Args:
        n_tables: Number of tables.
        seed: Random seed (same seed, same lake).
        columns: Target columns per table.
        rows: Rows per fact table (entity tables hold 1.5x as many keys).
        entity_share: Share of tables that are entities with a key column.

    Returns:
        The tables and the planted keys.
    """
    rng = np.random.default_rng(seed)
    n_entities = max(1, int(n_tables * entity_share))
    names = _entity_names(n_tables, rng)
    entities = names[:n_entities]
    key_kind = rng.choice(["rand", "code", "seq"], size=n_entities, p=[0.6, 0.25, 0.15])
    key_rows = int(rows * 1.5)
    keys: dict[str, tuple[str, list[str]]] = {}
    for name, kind in zip(entities, key_kind, strict=False):
        key_col = ["id", f"{name}_id", f"{name}Id", f"{name}_code" if kind == "code" else f"{name}_id"][
            int(rng.integers(0, 4))
        ]
        keys[name] = (key_col, _key_values(str(kind), name, key_rows, rng))
    popularity = 1.0 / np.arange(1, n_entities + 1) ** 0.6  # a few hub entities, a long tail
    popularity /= popularity.sum()

    tables: list[Table] = []
    planted: list[PlantedKey] = []
    fillers = ["text", "float", "date", "cat", "small", "decoy"]
    for t, name in enumerate(names):
        is_entity = t < n_entities
        n = key_rows if is_entity else rows
        data: dict[str, list[str]] = {}
        if is_entity:
            key_col, values = keys[name]
            data[key_col] = values
            data[f"{name}_name"] = [f"{name} {w}" for w in rng.choice(_WORDS, n)]
        n_fk = int(rng.integers(0, 2)) if is_entity else int(rng.integers(1, 4))
        for slot in range(n_fk):
            ref = entities[int(rng.choice(n_entities, p=popularity))]
            if ref == name:
                continue
            col = _fk_name(ref, int(rng.choice(5, p=[0.35, 0.15, 0.2, 0.15, 0.15])), slot)
            if col in data:
                continue
            ref_col, ref_values = keys[ref]
            data[col] = list(rng.choice(ref_values, n))
            planted.append(PlantedKey(name, col, ref, ref_col))
        while len(data) < columns:
            kind = fillers[int(rng.integers(0, len(fillers)))]
            col, values = _filler(kind, n, rng, name)
            col = col if col not in data else f"{col}_{len(data)}"
            data[col] = values
        tables.append(Table(id=name, df=pd.DataFrame(data)))
    return tables, planted


_COUNTRIES = [
    "US", "FR", "DE", "JP", "GB", "IT", "ES", "CA", "BR", "MX", "IN", "CN", "KR", "AU", "NL", "SE", "NO", "DK",
    "FI", "PL", "PT", "IE", "BE", "AT", "CH", "CZ", "GR", "TR", "AR", "CL", "CO", "PE", "ZA", "EG", "NG", "KE",
]  # fmt: skip


def _emails(n: int, rng: np.random.Generator) -> list[str]:
    people = {
        f"{a}.{b}{int(rng.integers(1, 99))}@example.org"
        for a, b in zip(rng.choice(_WORDS, 4 * n), rng.choice(_entity_names(60, rng), 4 * n), strict=True)
    }
    return sorted(people)[:n]


def _fact_table(key: str, n: int, columns: list[tuple[str, int]], rng: np.random.Generator) -> pd.DataFrame:
    """``n`` rows with a 1..n ``key`` and, per ``(name, high)``, integers drawn from 1..high (in column order)."""
    data = {key: [str(i) for i in range(1, n + 1)]}
    for name, high in columns:
        data[name] = [str(v) for v in rng.integers(1, high + 1, n)]
    return pd.DataFrame(data)


def _source_tables(
    source: str, people: list[str], isbns: list[str], rng: np.random.Generator, rows: int
) -> tuple[list[Table], list[PlantedKey]]:
    """One source: customers, products, orders, reviews with dense 1..n ids and the usual names."""
    n_customers, n_products = rows, max(8, rows // 2)
    sells_books = bool(rng.integers(0, 2))
    customers = pd.DataFrame({
        "customer_id": [str(i) for i in range(1, n_customers + 1)],
        "name": [f"{a} {b}" for a, b in zip(*rng.choice(_WORDS, (2, n_customers)), strict=True)],
        "email": list(rng.choice(people, n_customers, replace=False)),
        "country_code": list(rng.choice(_COUNTRIES[: int(rng.integers(8, len(_COUNTRIES)))], n_customers)),
    })  # fmt: skip
    products = pd.DataFrame({
        "product_id": [str(i) for i in range(1, n_products + 1)],
        "title": [f"{a} {b}" for a, b in zip(*rng.choice(_WORDS, (2, n_products)), strict=True)],
        "price": [f"{v:.2f}" for v in rng.uniform(2, 90, n_products)],
    })  # fmt: skip
    if sells_books:
        products["isbn"] = list(rng.choice(isbns, n_products, replace=False))
    orders = _fact_table(
        "order_id", 2 * rows, [("customer_id", n_customers), ("product_id", n_products), ("quantity", 8)], rng
    )
    reviews = _fact_table(
        "review_id", rows, [("product_id", n_products), ("customer_id", n_customers), ("rating", 5)], rng
    )
    frames = {"customers": customers, "products": products, "orders": orders, "reviews": reviews}
    tables = [Table(id=f"{source}__{name}", df=df, name=name, source=source) for name, df in frames.items()]
    keys = [
        PlantedKey(f"{source}__orders", "customer_id", f"{source}__customers", "customer_id"),
        PlantedKey(f"{source}__orders", "product_id", f"{source}__products", "product_id"),
        PlantedKey(f"{source}__reviews", "customer_id", f"{source}__customers", "customer_id"),
        PlantedKey(f"{source}__reviews", "product_id", f"{source}__products", "product_id"),
        PlantedKey(f"{source}__customers", "email", "mdm__people", "person_email"),
        PlantedKey(f"{source}__customers", "country_code", "reference__countries", "iso_code"),
    ]
    if sells_books:
        keys.append(PlantedKey(f"{source}__products", "isbn", "catalog__books", "isbn_13"))
    return tables, keys


def generate_multisource_lake(
    n_sources: int = 12, seed: int = 0, rows: int = 120
) -> tuple[list[Table], list[PlantedKey]]:
    """Sources with identical schemas and 1..n ids, linked only through natural keys.

    Each source holds ``customers``, ``products``, ``orders`` and ``reviews`` (ids
    ``<source>__<table>``, ``Table.source`` set): the same column names and dense
    1..n integer ids in every source, so same-named keys of two sources overlap
    by chance. Three shared sources hold what the others really reference: ``mdm``
    (``people.person_email``: every customer email), ``catalog``
    (``books.isbn_13``: the ISBNs of sources that sell books) and ``reference``
    (``countries.iso_code``).

    Args:
        n_sources: Operational sources (each with 4 tables).
        seed: Random seed.
        rows: Customers per source (orders: twice as many).

    Returns:
        The tables and the planted keys: in-source foreign keys and cross-source natural-key links.
    """
    rng = np.random.default_rng(seed)
    people = _emails(max(n_sources * rows, 500), rng)
    isbns = sorted({f"978{int(v):010d}" for v in rng.choice(10**10, 3000, replace=False)})
    tables: list[Table] = []
    planted: list[PlantedKey] = []
    for s in range(n_sources):
        source_tables, keys = _source_tables(f"shop{s:02d}", people, isbns, rng, rows)
        tables += source_tables
        planted += keys
    tables.append(Table(
        id="mdm__people", name="people", source="mdm",
        df=pd.DataFrame({"person_email": people, "full_name": [p.split("@")[0].replace(".", " ") for p in people]}),
    ))  # fmt: skip
    tables.append(Table(
        id="catalog__books", name="books", source="catalog",
        df=pd.DataFrame({"isbn_13": isbns, "book_title": [f"{w} book" for w in rng.choice(_WORDS, len(isbns))]}),
    ))  # fmt: skip
    tables.append(Table(
        id="reference__countries", name="countries", source="reference",
        df=pd.DataFrame({"iso_code": _COUNTRIES, "country_name": [f"country {c}" for c in _COUNTRIES]}),
    ))  # fmt: skip
    return tables, planted
