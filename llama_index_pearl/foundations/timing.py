"""Stage timing and garbage-collector pauses shared by the build, join discovery and updates.

Pipeline step: foundations (docs/architecture.md); imports nothing from the pipeline.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager

__all__ = ["gc_paused", "stage"]


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


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block, restoring its previous state.

    Column profiling allocates millions of small dicts and lists that all stay alive
    until discovery ends; with the cyclic GC on, every collection rescans them and
    profiling turns super-linear in the pool size.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
