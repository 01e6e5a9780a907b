"""Stage timing shared by the build, join discovery and updates, and the progress bar a person sees of each stage.

Pipeline step: foundations (docs/architecture.md); imports nothing from the pipeline.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from typing import Any

__all__ = ["REFRESH_SECONDS", "shown_stage", "stage"]

# How often a shown stage's bar is redrawn: a stage that counts nothing (discovery of 426 tables, 30 s) still shows
# its time going by.
REFRESH_SECONDS = 0.5
NAME_WIDTH = 10  # the longest stage's name, "generation": the bars of a build start in one column
UNCOUNTED_FORMAT = "{desc}: {percentage:3.0f}%|{bar}| {elapsed}"


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
def shown_stage(
    seconds: MutableMapping[str, float], name: str, show: bool, total: int | None = None, unit: str = "it"
) -> Iterator[Any]:
    """:func:`stage`, with a tqdm bar named after the stage (on stderr, or a notebook's widget) when ``show``.

    The bar is redrawn every :data:`REFRESH_SECONDS` while the stage runs, and shows it whole once it is done.

    Args:
        seconds: A report's per-stage timings.
        name: The stage, the bar's name.
        show: Show the bar; ``False``: nothing is printed (the bar yielded counts nothing).
        total: What the stage counts (the block calls ``bar.update(n)``); ``None``: the stage counts nothing.
        unit: What ``total`` counts.

    Yields:
        The bar.
    """
    from tqdm.auto import tqdm

    counted = total is not None
    bar = tqdm(
        total=total if counted else 1,
        desc=f"{name:<{NAME_WIDTH}}",
        unit=unit,
        disable=not show,
        leave=True,
        bar_format=None if counted else UNCOUNTED_FORMAT,
    )
    done = threading.Event()
    ticker = threading.Thread(target=_redraw, args=(bar, done), name=f"pearl-bar-{name}", daemon=True)
    if show:
        ticker.start()
    try:
        with stage(seconds, name):
            yield bar
        if show and not counted:
            bar.update(1)
    finally:
        done.set()
        if ticker.is_alive():
            ticker.join()
        bar.close()


def _redraw(bar: Any, done: threading.Event) -> None:
    while not done.wait(REFRESH_SECONDS):
        bar.refresh()
