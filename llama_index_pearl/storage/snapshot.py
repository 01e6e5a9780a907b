"""The files of one persisted build, held open from ``load``: whatever is read later is what ``load`` checked.

``load`` opens the index folder once and, through that handle, every file its manifest lists, and checks each
file's size and SHA-256 through the open file. Files read later (the units, the tables' rows, the BM25 arrays)
are read through the same open files and their SHA-256 checked again then:

- a persist that replaces the folder (a rebuild, in this process or another) swaps in new files and deletes
  the old ones; a deleted file stays readable by whoever holds it open (POSIX), so a loaded index goes on
  reading its own build (the old files' disk space is freed when the index is dropped);
- a file changed in place after load (appended to, written over) fails the second check with the
  :class:`~llama_index_pearl.storage.integrity.IndexFileError` that ``load`` raises, naming the file.

A folder replaced while ``load`` runs is :class:`FolderReplaced`; ``load`` then starts again on the new build.

Pipeline step: storage (docs/architecture.md).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import json
import os
import stat
import weakref
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from llama_index_pearl.storage.integrity import IndexFileError, read_at, reading, sha256_of

__all__ = ["FolderReplaced", "FolderSnapshot"]

_CHUNK = 1 << 20
T = TypeVar("T")
_DIFFERS = "content differs from the SHA-256 the manifest recorded"
_DIR_FDS = os.open in os.supports_dir_fd and os.stat in os.supports_dir_fd and hasattr(os, "O_DIRECTORY")
# never follow a link (where the platform can say so), never wait for a pipe's writer
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
_LINK = "a symbolic link: an index folder holds its own files, it never reads outside itself"


class FolderReplaced(Exception):
    """The folder was replaced (a persist swapped in another build) while it was being loaded."""


class FolderSnapshot:
    """One build of an index folder: the manifest, and the files it lists held open and checked.

    Args:
        folder: The index folder.
        manifest: The manifest's file name in it.

    Raises:
        ValueError: The folder or its manifest is missing.
    """

    def __init__(self, folder: Path, manifest: str) -> None:
        self.folder = folder
        self._fds: dict[str, int] = {}
        self._records: dict[str, Mapping[str, Any]] = {}
        self._dir: int | None = None
        # closes the files when the loaded index that holds this snapshot is dropped
        self._closer = weakref.finalize(self, _close_all, self._fds)
        if not folder.is_dir():
            raise ValueError(f"No PEARL index at {str(folder)!r}: folder does not exist")
        if _DIR_FDS:
            try:
                self._dir = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
            except OSError as exc:
                raise ValueError(f"Cannot open the PEARL index folder {str(folder)!r}: {exc}") from exc
            self._fds["."] = self._dir
        try:
            fd = self._open(manifest)
        except FileNotFoundError:
            raise ValueError(f"{str(folder)!r} is not a PEARL index folder: {manifest} is missing") from None
        except OSError as exc:
            raise IndexFileError(folder / manifest, f"{type(exc).__name__}: {exc}") from exc
        try:
            self.manifest_bytes = _read_all(fd)
        finally:
            os.close(fd)

    def path(self, name: str) -> Path:
        return self.folder / name

    def hold(self, manifest_path: Path, files: Mapping[str, Any]) -> None:
        """Open each file the manifest lists and check its size and SHA-256 (an :class:`IndexFileError` if not).

        Args:
            manifest_path: The manifest, named when one of its entries is malformed.
            files: The manifest's ``files``: ``{name: {"bytes": size, "sha256": hex}}``.
        """
        for name, recorded in files.items():
            if not isinstance(recorded, Mapping) or not {"bytes", "sha256"} <= set(recorded):
                raise IndexFileError(manifest_path, f"bad entry for {name!r} in 'files'")
            if not name or "/" in name or "\\" in name or name.startswith(".") or "\x00" in name:
                raise IndexFileError(manifest_path, f"file name {name!r} leaves the folder")
            path = self.path(name)
            try:
                fd = self._open(name)
            except FileNotFoundError:
                if self._replaced():
                    raise FolderReplaced(str(self.folder)) from None
                raise IndexFileError(path, "missing (listed in the manifest)") from None
            except OSError as exc:
                raise IndexFileError(path, f"{type(exc).__name__}: {exc}") from exc
            self._fds[name] = fd
            self._records[name] = recorded
            _check_file(path, fd, recorded)

    def read(self, name: str) -> bytes:
        """The bytes of a held file, checked again against the manifest's SHA-256 (changed in place: an error)."""
        data = _read_all(self._held(name))
        self._unchanged(name, hashlib.sha256(data).hexdigest())
        return data

    def parse_lines(self, name: str, parse: Callable[[Iterable[str]], T]) -> T:
        """``parse`` of the lines of a held UTF-8 file, streamed (not held in memory), its SHA-256 checked too.

        A file changed since load is that ``IndexFileError`` (:meth:`read`), whatever ``parse`` made of it;
        ``parse`` must read every line.
        """
        fd = self._held(name)
        reader = _HashingReader(fd)
        try:
            with io.TextIOWrapper(io.BufferedReader(reader, _CHUNK), encoding="utf-8") as text:
                parsed = parse(text)
        except Exception:
            self._unchanged(name, sha256_of(fd))  # a parse error of a changed file is the change
            raise
        self._unchanged(name, reader.sha.hexdigest())
        return parsed

    def _unchanged(self, name: str, digest: str) -> None:
        """An :class:`IndexFileError` naming the file unless ``digest`` is the one checked at load."""
        if digest != self._records[name]["sha256"]:
            raise IndexFileError(self.path(name), f"{_DIFFERS} (changed since load)")

    def keep_only(self, names: set[str]) -> None:
        """Close every held file but ``names`` (those still to be read) and the folder's handle."""
        for name in [n for n in self._fds if n not in names]:
            with contextlib.suppress(OSError):
                os.close(self._fds.pop(name))
        self._dir = None

    def json(self, name: str) -> Any:
        """The decoded JSON of a held file (:meth:`read`); malformed JSON names the file."""
        data = self.read(name)
        with reading(self.path(name)):
            return json.loads(data.decode("utf-8"))

    def _held(self, name: str) -> int:
        fd = self._fds.get(name)
        if fd is None:
            raise IndexFileError(self.path(name), "not listed in the manifest's 'files'")
        return fd

    def _open(self, name: str) -> int:
        """The folder's own regular file ``name``, opened without following a link or waiting on a pipe.

        An index folder is data from whoever wrote it: a listed file that is a symbolic link would read
        a file outside the folder, and a named pipe (or a device) would block ``open`` or the read, so
        each is refused before it is opened (``lstat``), and again on the descriptor (a swap in between).
        """
        path = self.path(name)
        where = {"dir_fd": self._dir} if self._dir is not None else {}
        target = name if self._dir is not None else path
        info = os.stat(target, follow_symlinks=False, **where)
        _check_kind(path, info)
        try:
            fd = os.open(target, _READ_FLAGS, **where)
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # replaced by a link since the lstat
                raise IndexFileError(path, _LINK) from None
            raise
        try:
            _check_kind(path, os.fstat(fd))
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _replaced(self) -> bool:
        """Whether the folder's path now names another folder than the one this snapshot opened."""
        if self._dir is None:
            return False
        try:
            now = os.stat(self.folder)
        except OSError:
            return True
        held = os.fstat(self._dir)
        return (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino)


def _check_kind(path: Path, info: os.stat_result) -> None:
    """A file of the folder's own: a regular file, not a link, a folder, a pipe or a device."""
    if stat.S_ISLNK(info.st_mode):
        raise IndexFileError(path, _LINK)
    if not stat.S_ISREG(info.st_mode):
        raise IndexFileError(path, "not a file of its own: a folder, a named pipe or a device")


def _check_file(path: Path, fd: int, recorded: Mapping[str, Any]) -> None:
    """A held file is of the recorded size and SHA-256."""
    info = os.fstat(fd)
    if info.st_size != recorded["bytes"]:
        raise IndexFileError(
            path, f"{info.st_size} bytes, the manifest recorded {recorded['bytes']!r:.40} (modified after persist)"
        )
    try:
        digest = sha256_of(fd)
    except OSError as exc:
        raise IndexFileError(path, f"{type(exc).__name__}: {exc}") from exc
    if digest != recorded["sha256"]:
        raise IndexFileError(path, f"{_DIFFERS} (modified after persist)")


class _HashingReader(io.RawIOBase):
    """An open file read from its start by offset (its position is never moved), hashing what it reads."""

    def __init__(self, fd: int) -> None:
        self._fd, self._offset = fd, 0
        self.sha = hashlib.sha256()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        chunk = read_at(self._fd, len(buffer), self._offset)
        buffer[: len(chunk)] = chunk
        self._offset += len(chunk)
        self.sha.update(chunk)
        return len(chunk)


def _read_all(fd: int) -> bytes:
    size = os.fstat(fd).st_size
    parts, offset = [], 0
    while True:
        chunk = read_at(fd, max(_CHUNK, size - offset), offset)
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        offset += len(chunk)


def _close_all(fds: dict[str, int]) -> None:
    for fd in fds.values():
        with contextlib.suppress(OSError):
            os.close(fd)
    fds.clear()
