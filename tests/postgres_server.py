"""Start and stop a throw-away PostgreSQL server on loopback (stdlib only).

Used by ``.ci/run`` (``eval "$(python3 tests/postgres_server.py start)"`` exports
``PEARL_TEST_POSTGRES_URL`` and ``PEARL_TEST_POSTGRES_DIR``; ``stop DIR`` shuts the
server down and removes its folder) and by the test fixture when no URL is given.
The cluster lives in a new folder under the system temp folder, with trust
authentication on 127.0.0.1 only and its socket in that folder; PostgreSQL refuses
to run as root, so as root the server runs as the ``postgres`` user the Debian
package creates (the folder is handed to it).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["find_bin", "start", "stop"]

USER = "pearl"
DATABASE = "pearl_test"


def find_bin() -> Path | None:
    """The folder holding ``pg_ctl`` and ``initdb`` (PATH first, then Debian's versioned folders)."""
    on_path = shutil.which("pg_ctl")
    if on_path and shutil.which("initdb"):
        return Path(on_path).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4]))
    return Path(versions[-1]).parent if versions else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _as_server_user(command: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return command
    runuser = shutil.which("runuser")
    if runuser is None:
        raise RuntimeError("running as root without runuser: cannot start PostgreSQL as an unprivileged user")
    return [runuser, "-u", "postgres", "--", *command]


def start(timeout: int = 60) -> tuple[str, Path]:
    """Initialise a cluster in a new temp folder, start it on a free loopback port, create the test database.

    Returns:
        A SQLAlchemy URL (``postgresql+psycopg://pearl@127.0.0.1:PORT/pearl_test``) and the folder.

    Raises:
        RuntimeError: no PostgreSQL binaries, or the server did not start (the log is included).
    """
    bin_dir = find_bin()
    if bin_dir is None:
        raise RuntimeError("no PostgreSQL server binaries (pg_ctl, initdb) found; apt-get install postgresql")
    folder = Path(tempfile.mkdtemp(prefix="pearl-pg-"))
    if os.geteuid() == 0:
        shutil.chown(folder, user="postgres")
    data, log, port = folder / "data", folder / "server.log", _free_port()

    def run(*command: str) -> None:
        done = subprocess.run(_as_server_user(list(command)), capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            detail = log.read_text()[-2000:] if log.exists() else ""
            raise RuntimeError(f"{' '.join(command)} failed: {done.stderr[-2000:]}{detail}")

    run(str(bin_dir / "initdb"), "-D", str(data), "-U", USER, "-A", "trust", "-E", "UTF8", "--no-sync")
    options = f"-c listen_addresses=127.0.0.1 -p {port} -k {folder} -c fsync=off"
    run(str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options, "-w", "-t", str(timeout), "start")
    run(str(bin_dir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", USER, DATABASE)
    return f"postgresql+psycopg://{USER}@127.0.0.1:{port}/{DATABASE}", folder


def stop(folder: Path) -> None:
    """Stop the server of ``folder`` (fast shutdown) and remove the folder."""
    bin_dir = find_bin()
    data = Path(folder).resolve() / "data"
    if bin_dir is not None and (data / "postmaster.pid").exists():
        command = [str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"]
        subprocess.run(_as_server_user(command), capture_output=True, timeout=60, check=False)
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["start"] and len(sys.argv) == 2:
        url, where = start()
        print(f"export PEARL_TEST_POSTGRES_URL={url} PEARL_TEST_POSTGRES_DIR={where}")
    elif sys.argv[1:2] == ["stop"] and len(sys.argv) == 3:
        stop(Path(sys.argv[2]))
    else:
        sys.exit("usage: postgres_server.py start | stop DIR")
