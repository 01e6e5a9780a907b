"""A server for the tests on loopback: the one ``.ci/run`` started (its URL in an environment variable), else
one the tests start. Outside CI a missing server skips its tests, saying why; with ``CI=true`` (or the server's
own ``PEARL_REQUIRE_...`` variable set) it fails them."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

__all__ = ["loopback_server"]


def loopback_server(
    name: str,
    url_variable: str,
    start: Callable[[], tuple[str, Path]],
    stop: Callable[[Path], None],
    client: str,
    require_variable: str | None = None,
) -> Iterator[str]:
    """Yield the server's URL (a fixture's body: ``yield from loopback_server(...)``), stopping one it started.

    Args:
        name: The server, as messages name it.
        url_variable: The variable holding the URL of a running server.
        start: Starts one here: ``(url, folder)``; raises saying why it cannot.
        stop: Stops the one started here, given its folder.
        client: The client module the tests need (a skip or failure names it when it is missing).
        require_variable: Set (as ``.ci/run`` sets it), a missing server fails the tests.
    """

    def unavailable(reason: str) -> None:
        if os.environ.get("CI") == "true" or (require_variable and os.environ.get(require_variable)):
            pytest.fail(f"{name} tests must run here (CI=true or {require_variable} set), and cannot: {reason}")
        pytest.skip(f"{name} tests need a server: {reason} (set {url_variable}, or pip install -e '.[test]')")

    try:
        found = importlib.util.find_spec(client) is not None
    except ModuleNotFoundError:
        found = False
    if not found:
        unavailable(f"the client {client} is not installed (pip install -e '.[test]')")
    url = os.environ.get(url_variable)
    if url:
        yield url
        return
    try:
        url, folder = start()
    except Exception as exc:  # no binaries, no unprivileged user, port trouble: say which
        unavailable(f"no local server could be started ({exc})")
    yield url
    stop(folder)
