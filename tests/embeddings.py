"""Fast deterministic embeddings for unit tests (no model download, no torch)."""

from __future__ import annotations

import hashlib
import re
import zlib

import numpy as np
from llama_index.core.embeddings import BaseEmbedding


class HashingEmbedding(BaseEmbedding):
    """Bag of words hashed into ``dim`` buckets: lexical overlap becomes cosine similarity."""

    dim: int = 64

    def _vector(self, text: str) -> list[float]:
        vector = np.zeros(self.dim, dtype=np.float32)
        for token in re.findall(r"[a-z0-9]+", text.lower()):
            bucket = int(hashlib.md5(token.encode()).hexdigest(), 16) % self.dim
            vector[bucket] += 1.0
        norm = np.linalg.norm(vector)
        return (vector / norm if norm else vector).tolist()

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)


class TrigramEmbedding(BaseEmbedding):
    """Deterministic 64-d embedding of hashed character trigrams."""

    @classmethod
    def class_name(cls) -> str:
        return "TrigramEmbedding"

    def _vec(self, text: str) -> list[float]:
        v = np.zeros(64)
        t = f"  {text.lower()} "
        for i in range(len(t) - 2):
            v[zlib.crc32(t[i : i + 3].encode()) % 64] += 1
        return (v / (np.linalg.norm(v) or 1)).tolist()

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vec(text)

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vec(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vec(query)


WORDS = ("red", "blue", "green", "cat", "dog", "fish", "city", "year")


class DyadicEmbedding(HashingEmbedding):
    """Four of sixteen dimensions at 0.5: unit norm, and every cosine an exact multiple of 0.25 (many exact ties)."""

    def _vector(self, text: str) -> list[float]:
        digest = hashlib.md5(" ".join(sorted(set(w for w in WORDS if w in text))).encode()).digest()
        dims = list(dict.fromkeys(b % 16 for b in digest))[:4]
        vector = np.zeros(16)
        vector[dims] = 0.5
        return vector.tolist()
