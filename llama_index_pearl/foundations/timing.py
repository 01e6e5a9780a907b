"""Stage timing shared by the build, join discovery and updates.

Pipeline step: foundations (docs/architecture.md); imports nothing from the pipeline.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager

__all__ = ["stage"]


@contextmanager
def stage(seconds: MutableMapping[str, float], name: str) -> Iterator[None]:
    """Add the block's wall time to ``seconds[name]`` (also when it raises).

    Args:
        seconds: A report's per-stage timings.
        name: The stage; repeated stages add up.
    """
    started = time.perf_counter()
    try:
        yield
    finally:
        seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - started
