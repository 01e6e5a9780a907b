"""Start and stop a throw-away Milvus server on loopback (stdlib only).

The server is Milvus Lite's own ``milvus`` binary (the C++ Milvus engine the ``milvus-lite`` wheel ships, 2.x
series), listening on a free 127.0.0.1 port; clients speak the same gRPC API (``pymilvus``) as to a Milvus
cluster. Used by ``.ci/run`` (``eval "$(python tests/milvus_server.py start)"`` exports
``PEARL_TEST_MILVUS_URL`` and ``PEARL_TEST_MILVUS_DIR``; ``stop DIR`` ends the server and removes its folder)
and by the test fixture when no URL is given. The binary is found without importing ``milvus_lite``, whose
``__init__`` needs setuptools' ``pkg_resources``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["find_binary", "start", "stop"]

PID_FILE = "server.pid"


def find_binary() -> Path | None:
    """The ``milvus`` executable of the installed ``milvus-lite`` wheel, else ``None``."""
    spec = importlib.util.find_spec("milvus_lite")
    if spec is None or not spec.submodule_search_locations:
        return None
    binary = Path(next(iter(spec.submodule_search_locations))) / "lib" / "milvus"
    return binary if binary.is_file() else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def start(timeout: float = 60.0) -> tuple[str, Path]:
    """Start a server on a free loopback port, its data in a new temp folder; wait until it accepts connections.

    Returns:
        The URL pymilvus connects to (``http://127.0.0.1:PORT``) and the folder.

    Raises:
        RuntimeError: no ``milvus-lite`` installed, or the server exited or did not listen within ``timeout``
            seconds (its log is included).
    """
    binary = find_binary()
    if binary is None:
        raise RuntimeError("no Milvus server binary: pip install 'milvus-lite>=2.4,<3' (the test extra has it)")
    folder = Path(tempfile.mkdtemp(prefix="pearl-milvus-"))
    port, log = _free_port(), folder / "server.log"
    env = {**os.environ, "LD_LIBRARY_PATH": f"{binary.parent}:{os.environ.get('LD_LIBRARY_PATH', '')}"}
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(binary), str(folder / "pearl.db"), f"127.0.0.1:{port}", "ERROR"],
            cwd=folder,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # the server outlives this helper (.ci/run stops it by its pid)
        )
    (folder / PID_FILE).write_text(str(process.pid))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        if _answers(port):
            return f"http://127.0.0.1:{port}", folder
        time.sleep(0.2)
    stop(folder)
    raise RuntimeError(f"Milvus did not start on 127.0.0.1:{port} within {timeout:.0f} s: {log.read_text()[-2000:]}")


def stop(folder: Path | str, timeout: float = 30.0) -> None:
    """End the server started in ``folder`` (SIGTERM, then SIGKILL after ``timeout`` s) and remove the folder."""
    folder = Path(folder)
    pid_file = folder / PID_FILE
    if pid_file.is_file():
        pid = int(pid_file.read_text())
        try:
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and _alive(pid):
                time.sleep(0.1)
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        finished, _ = os.waitpid(pid, os.WNOHANG)  # our child: reap it
        if finished:
            return False
    except ChildProcessError:
        pass  # started by another process (.ci/run's helper run): ask the kernel
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()


if __name__ == "__main__":
    if sys.argv[1:2] == ["start"]:
        url, where = start()
        print(f"export PEARL_TEST_MILVUS_URL={url} PEARL_TEST_MILVUS_DIR={where}")
    elif sys.argv[1:2] == ["stop"] and len(sys.argv) == 3:
        stop(sys.argv[2])
    else:
        sys.exit("usage: milvus_server.py start | stop DIR")


def close_clients() -> None:
    """Close every connection pymilvus holds open in this process.

    pymilvus shares one gRPC channel per server and keeps it, idle, for the life of the process, pinging the
    server every 10 s; a server that saw too many pings on a channel with no calls answers the next client on it
    with GOAWAY ("Too many pings"). The tests close their channels when a test or page is done with the server, so
    none idles across the suite.
    """
    try:
        from pymilvus.client.connection_manager import ConnectionManager
    except ImportError:  # pymilvus 2.5: connections by alias
        from pymilvus import connections

        for alias, _ in connections.list_connections():
            connections.disconnect(alias)
        return
    ConnectionManager.get_instance().close_all()
