"""A fast deterministic embedding for unit tests (no model download, no torch)."""

from __future__ import annotations

import hashlib
import re

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
