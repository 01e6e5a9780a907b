"""Headless Chromium for the join-graph page: find the browser, dump the rendered DOM, take a screenshot.

Used by the browser test and by ``benchmarks/render_join_graph.py`` (the PNG in
``docs/``). Chromium runs with no sandbox, GPU or background networking, on a
local file, with a bounded virtual time budget so the page's scripts finish.

Pipeline step: presentation (docs/architecture.md).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

__all__ = ["dump_dom", "find_chromium", "screenshot"]

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--hide-scrollbars")
VIRTUAL_TIME_MS = 5000


def find_chromium() -> str | None:
    """The Chromium executable: ``$CHROMIUM`` if set, else the first known name on ``PATH``."""
    explicit = os.environ.get("CHROMIUM")
    if explicit:
        return explicit
    return next((found for name in CANDIDATES if (found := shutil.which(name))), None)


def _run(page: Path, *extra: str, timeout: float) -> str:
    browser = find_chromium()
    if browser is None:
        raise RuntimeError("Chromium not found: install the 'chromium' package or set CHROMIUM")
    with tempfile.TemporaryDirectory(prefix="pearl-chromium-") as profile:
        command = [
            browser,
            *FLAGS,
            f"--user-data-dir={profile}",
            f"--virtual-time-budget={VIRTUAL_TIME_MS}",
            *extra,
            page.resolve().as_uri(),
        ]
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"Chromium exited with {done.returncode}: {done.stderr[-2000:]}")
    return done.stdout


def dump_dom(page: str | Path, *, window: tuple[int, int] = (1280, 800), timeout: float = 120.0) -> str:
    """The page's DOM after its scripts ran (``--dump-dom``)."""
    return _run(Path(page), f"--window-size={window[0]},{window[1]}", "--dump-dom", timeout=timeout)


def screenshot(
    page: str | Path, png: str | Path, *, window: tuple[int, int] = (1280, 800), timeout: float = 120.0
) -> Path:
    """A PNG of the rendered page."""
    target = Path(png).resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    _run(Path(page), f"--window-size={window[0]},{window[1]}", f"--screenshot={target}", timeout=timeout)
    if not target.is_file():
        raise RuntimeError(f"Chromium wrote no screenshot to {str(target)!r}")
    return target
