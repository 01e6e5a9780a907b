"""A readers-writer lock: many retrievals at once, one index update at a time, never both.

Writers are preferred (a waiting update is not starved by a steady stream of
queries) and re-entrant, and the thread that holds the write lock may read. The
lock is counted, not owned, by readers, so an ``async`` retrieval can take it on
a worker thread (the event loop never blocks on a writer) and give it back on the
loop's thread after its awaits. Hand-written because the maintained locks
(``fasteners``, ``readerwriterlock``) tie a read hold to the acquiring thread.

Pipeline step: storage (docs/architecture.md).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

__all__ = ["ReadWriteLock"]


class ReadWriteLock:
    """Shared reads, exclusive writes; see the module docstring for the rules."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0
        self._writer: int | None = None  # thread id of the writer
        self._writes = 0  # re-entrant depth of the writer
        self._waiting_writers = 0

    def acquire_read(self) -> bool:
        """Block until no writer holds or waits; ``False`` (nothing taken) for the writing thread itself."""
        with self._cond:
            if self._writer == threading.get_ident():
                return False
            while self._writer is not None or self._waiting_writers:
                self._cond.wait()
            self._readers += 1
            return True

    def release_read(self) -> None:
        with self._cond:
            self._readers -= 1
            if self._readers == 0:
                self._cond.notify_all()

    def acquire_write(self) -> None:
        me = threading.get_ident()
        with self._cond:
            if self._writer == me:
                self._writes += 1
                return
            self._waiting_writers += 1
            try:
                while self._writer is not None or self._readers:
                    self._cond.wait()
            finally:
                self._waiting_writers -= 1
            self._writer, self._writes = me, 1

    def release_write(self) -> None:
        with self._cond:
            self._writes -= 1
            if self._writes == 0:
                self._writer = None
                self._cond.notify_all()

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Hold a shared read for the block."""
        taken = self.acquire_read()
        try:
            yield
        finally:
            if taken:
                self.release_read()

    @asynccontextmanager
    async def areading(self) -> AsyncIterator[None]:
        """:meth:`reading` for coroutines: waiting happens on a worker thread, not on the event loop."""
        taken = await asyncio.to_thread(self.acquire_read)
        try:
            yield
        finally:
            if taken:
                self.release_read()

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Hold the exclusive write for the block."""
        self.acquire_write()
        try:
            yield
        finally:
            self.release_write()
