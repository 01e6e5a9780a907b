"""P_B: column pairs with similar names, via FAISS k-nearest neighbours (paper appendix B.1).

Distinct normalised column names are embedded once (by
:func:`~llama_index_pearl.joins.embedding.embed_names`) and searched with an
exact inner-product index (an IVF index above ``FLAT_LIMIT`` names). A neighbour
pair counts when its similarity reaches the adaptive threshold: the 85th
percentile of all neighbour similarities of the corpus.

Pipeline step: joins (docs/architecture.md).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import faiss
import numpy as np

from llama_index_pearl.joins.profiles import ColumnProfile
from llama_index_pearl.joins.signals import Pairs, Signals, pair_key

__all__ = ["FLAT_LIMIT", "KNN", "MAX_EXPANSION", "SIM_PERCENTILE", "name_candidates"]

KNN = 10
SIM_PERCENTILE = 85.0  # paper: adaptive threshold = 85th percentile of corpus-wide similarities
MAX_EXPANSION = 64  # a similar-name pair yields at most this many column pairs
FLAT_LIMIT = 20_000  # above this many columns, an IVF index keeps kNN sub-quadratic


def name_candidates(profiles: Sequence[ColumnProfile], pairs: Pairs, k: int = KNN) -> float:
    """P_B: name-embedding nearest neighbours above the 85th percentile of neighbour similarities.

    The search runs over *distinct* normalised names: identical names are P_S's
    business (with its key-likeness rules), and a corpus with a thousand
    ``notes`` columns would otherwise fill every neighbour list with copies of
    one name. A similar name pair is expanded to its column pairs only while that
    stays small (``MAX_EXPANSION``): two names each used by hundreds of tables
    are generic, not evidence of a join.

    Args:
        profiles: Embedded column profiles.
        pairs: Accumulator, updated in place.
        k: Neighbours per distinct name.

    Returns:
        The adaptive threshold used (``nan`` when there were too few names).
    """
    by_name: dict[str, list[int]] = defaultdict(list)
    for i, p in enumerate(profiles):
        if p.joinable and p.name_vec is not None:
            by_name[p.norm_name].append(i)
    names = list(by_name)
    if len(names) < 2:
        return float("nan")
    matrix = np.ascontiguousarray(np.stack([profiles[by_name[n][0]].name_vec for n in names]).astype(np.float32))
    n, dim = matrix.shape
    k = min(k + 1, n)
    if n <= FLAT_LIMIT:
        index: faiss.Index = faiss.IndexFlatIP(dim)
    else:
        nlist = int(4 * np.sqrt(n))
        index = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, nlist, faiss.METRIC_INNER_PRODUCT)
        index.train(matrix[np.random.default_rng(0).choice(n, size=min(n, 50 * nlist), replace=False)])
        index.nprobe = 8
    index.add(matrix)
    sims, nbrs = index.search(matrix, k)
    valid = (nbrs >= 0) & (nbrs != np.arange(n)[:, None])
    if not valid.any():
        return float("nan")
    tau = float(np.percentile(sims[valid], SIM_PERCENTILE))
    rows, cols = np.nonzero(valid & (sims >= tau))
    seen: set[tuple[int, int]] = set()
    for r, c in zip(rows.tolist(), cols.tolist(), strict=False):
        a, b = r, int(nbrs[r, c])
        if (min(a, b), max(a, b)) in seen:
            continue
        seen.add((min(a, b), max(a, b)))
        left, right = by_name[names[a]], by_name[names[b]]
        if len(left) * len(right) > MAX_EXPANSION:
            continue
        for i in left:
            for j in right:
                if profiles[i].table_id != profiles[j].table_id:
                    sig = pairs.setdefault(pair_key(i, j), Signals())
                    sig.found_by.add("B")
                    sig.name_sim = max(sig.name_sim, float(sims[r, c]))
    return tau
