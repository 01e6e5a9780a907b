"""Recent query embeddings of one index, shared by its retrievers and safe under threads.

Repeated questions (chat turns, retries, an agent asking again) skip the encoder. The cache belongs to the
index's retrieval state (:mod:`~llama_index_pearl.retrieval.state`), which hands it on to the state of the
next revision: an index keeps its encoder, so its vectors stay valid across updates.

Pipeline step: retrieval (docs/architecture.md).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

__all__ = ["QUERY_CACHE_SIZE", "QueryEmbeddingCache"]

QUERY_CACHE_SIZE = 256  # questions


class QueryEmbeddingCache:
    """A least-recently-used map from the strings a query embeds to its normalised vector.

    Args:
        size: Entries kept; default :data:`QUERY_CACHE_SIZE`.
    """

    def __init__(self, size: int | None = None) -> None:
        self._size = size if size is not None else QUERY_CACHE_SIZE
        self._entries: OrderedDict[tuple[str, ...], tuple[float, ...]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, strings: Sequence[str]) -> list[float] | None:
        """The cached vector of these embedding strings (a copy), else ``None``."""
        key = tuple(strings)
        with self._lock:
            vector = self._entries.get(key)
            if vector is None:
                return None
            self._entries.move_to_end(key)
        return list(vector)

    def put(self, strings: Sequence[str], vector: Sequence[float]) -> None:
        """Remember a vector, dropping the least recently used entries beyond the size."""
        with self._lock:
            self._entries[tuple(strings)] = tuple(vector)
            self._entries.move_to_end(tuple(strings))
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)
