"""Replace a folder by another in one step, so a reader sees the old one or the new one.

Linux exchanges two paths atomically with ``renameat2(RENAME_EXCHANGE)`` (glibc
2.28+, most file systems). Elsewhere, or where the file system refuses, the old
folder is renamed aside, the new one renamed in, and the old one removed: a crash
between those two renames leaves no folder at the target but the previous index
intact under ``.NAME.pearl-old-*``, which :func:`recoverable` finds for ``load``.

The new folder is written in a temporary sibling ``.NAME.pearl-tmp-*`` (:func:`temporary_sibling`) that its
writer holds locked (``flock`` on the folder) from its first moment to its removal. A writer killed before
the swap leaves it behind, unlocked: the next persist beside it removes it. A sibling still locked is some
live writer's, and is left alone; without ``flock`` (not POSIX) nothing is removed.

Pipeline step: storage (docs/architecture.md).
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import shutil
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # not POSIX: no stale folder can be proved dead, none is removed
    fcntl = None  # type: ignore[assignment]

__all__ = ["recoverable", "remove_stale", "swap_in", "temporary_sibling"]

logger = logging.getLogger(__name__)

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
OLD_MARK = ".pearl-old-"
TMP_MARK = ".pearl-tmp-"
_NEW_MARK = ".pearl-new-"  # a temporary folder before it is locked: never removed by anyone else


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap ``a`` and ``b``; ``False`` where the platform cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    renameat2.restype = ctypes.c_int
    return renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0


def swap_in(new: Path, target: Path) -> None:
    """Make ``new`` (a complete folder) live at ``target``; the previous ``target`` is deleted.

    Args:
        new: The freshly written folder, a sibling of ``target``.
        target: Where it must end up.
    """
    if not target.exists():
        os.rename(new, target)
    elif _exchange(new, target):
        shutil.rmtree(new, ignore_errors=True)  # now the old folder (which a concurrent remove_stale may take)
    else:
        old = target.parent / f".{target.name}{OLD_MARK}{uuid.uuid4().hex[:8]}"
        os.rename(target, old)
        os.rename(new, target)
        shutil.rmtree(old, ignore_errors=True)
    _sync_dir(target.parent)


@contextlib.contextmanager
def temporary_sibling(target: Path) -> Iterator[Path]:
    """A new empty folder beside ``target``, locked while the block runs and removed after it (if still there).

    Created under another name and renamed once locked, so a ``.NAME.pearl-tmp-*`` folder is locked from
    its first moment: :func:`remove_stale` never takes a live one.
    """
    name = uuid.uuid4().hex[:8]
    new = target.parent / f".{target.name}{_NEW_MARK}{name}"
    tmp = target.parent / f".{target.name}{TMP_MARK}{name}"
    new.mkdir()
    fd = None
    try:
        if fcntl is not None:
            fd = os.open(new, os.O_RDONLY)
            fcntl.flock(fd, fcntl.LOCK_EX)
        os.rename(new, tmp)
        yield tmp
    finally:
        for left in (new, tmp):
            if left.exists():
                shutil.rmtree(left, ignore_errors=True)
        if fd is not None:
            os.close(fd)  # releases the lock


def remove_stale(target: Path) -> list[Path]:
    """Remove the temporary siblings of ``target`` that killed writers left (unlocked); returns those removed."""
    if fcntl is None or not target.parent.is_dir():
        return []
    prefix = f".{target.name}{TMP_MARK}"
    removed = []
    for path in target.parent.iterdir():
        if not path.name.startswith(prefix) or path.is_symlink() or not path.is_dir():
            continue
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue  # gone already
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue  # a live writer's
        try:
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
        finally:
            os.close(fd)
    if removed:
        logger.info("Removed %d temporary folder(s) that interrupted persists left beside %s", len(removed), target)
    return removed


def recoverable(target: Path) -> Path | None:
    """The previous index a crash between the fallback's two renames left beside ``target``."""
    if target.exists() or not target.parent.is_dir():
        return None
    prefix = f".{target.name}{OLD_MARK}"
    left = sorted((p for p in target.parent.iterdir() if p.name.startswith(prefix)), key=lambda p: p.stat().st_mtime)
    return left[-1] if left else None


def _sync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # not every file system syncs directories
    finally:
        os.close(fd)
