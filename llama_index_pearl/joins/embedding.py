"""Name and value embeddings of column profiles: what S_sem and P_B read, embedded once per distinct text.

Discovery embeds every joinable column's name (:func:`embed_names`) and, once candidates are admitted, the
sample values of the columns of those pairs only (:func:`embed_values`).

Pipeline step: joins (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding

from llama_index_pearl.joins.profiles import ColumnProfile
from llama_index_pearl.text.models import unit_rows

__all__ = ["embed_names", "embed_values"]


def embed_names(profiles: Sequence[ColumnProfile], embed_model: BaseEmbedding, show_progress: bool = False) -> None:
    """Set ``name_vec`` on every profile, in one batched call over the distinct names.

    Args:
        profiles: Profiles to embed in place.
        embed_model: Any LlamaIndex embedding model.
        show_progress: Show LlamaIndex's progress bar.
    """
    names = list(dict.fromkeys(p.name_text for p in profiles))
    matrix, row = _embed_distinct(names, embed_model, show_progress)
    for p in profiles:
        p.name_vec = matrix[row[p.name_text]]


def embed_values(profiles: Sequence[ColumnProfile], embed_model: BaseEmbedding, show_progress: bool = False) -> None:
    """Set ``value_vec`` (the normalised mean of the examples' embeddings) on every profile with examples.

    Only scoring reads value vectors, so discovery embeds just the columns of
    admitted candidate pairs (well under half of spider's distinct example values:
    benchmarks/README.md, "Constants"), and after an insert only those of pairs
    touching the new tables.

    Args:
        profiles: Profiles to embed in place.
        embed_model: Any LlamaIndex embedding model.
        show_progress: Show LlamaIndex's progress bar.
    """
    values = list(dict.fromkeys(v for p in profiles for v in p.examples))
    matrix, row = _embed_distinct(values, embed_model, show_progress)
    for p in profiles:
        if p.examples:
            mean = matrix[[row[v] for v in p.examples]].mean(axis=0)
            p.value_vec = unit_rows(mean[None, :])[0]


def _embed_distinct(
    texts: list[str], embed_model: BaseEmbedding, show_progress: bool
) -> tuple[np.ndarray, dict[str, int]]:
    """Unit-norm embeddings of distinct texts and each text's row.

    Column names and small values repeat a lot across a corpus, so callers pass
    each text once: deduplication is the cheapest speed-up there is.
    """
    if not texts:
        return np.zeros((0, 0), dtype=np.float32), {}
    matrix = unit_rows(np.asarray(embed_model.get_text_embedding_batch(texts, show_progress=show_progress)))
    return matrix, {text: i for i, text in enumerate(texts)}
