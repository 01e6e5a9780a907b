"""Replace a folder by another in one step, so a reader sees the old one or the new one.

Linux exchanges two paths atomically with ``renameat2(RENAME_EXCHANGE)`` (glibc
2.28+, most file systems). Elsewhere, or where the file system refuses, the old
folder is renamed aside, the new one renamed in, and the old one removed: a crash
between those two renames leaves no folder at the target but the previous index
intact under ``.NAME.pearl-old-*``, which :func:`recoverable` finds for ``load``.

Pipeline step: storage (docs/architecture.md).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import sys
import uuid
from pathlib import Path

__all__ = ["recoverable", "swap_in"]

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
OLD_MARK = ".pearl-old-"


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
        shutil.rmtree(new)  # now the old folder
    else:
        old = target.parent / f".{target.name}{OLD_MARK}{uuid.uuid4().hex[:8]}"
        os.rename(target, old)
        os.rename(new, target)
        shutil.rmtree(old, ignore_errors=True)
    _sync_dir(target.parent)


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
