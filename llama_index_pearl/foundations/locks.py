"""A readers-writer lock that cannot deadlock: many retrievals at once, one index update at a time, never both.

Rules, each one a way a lock like this hangs otherwise:

- **Writers are preferred**: once an update waits, new readers wait behind it, so a steady stream of
  queries cannot starve it.
- **Reads are re-entrant**: a reader that already holds the lock never waits for a queued writer (the writer
  waits for that reader, so the reader waiting for the writer would hang both). Who holds a read is kept in a
  ``ContextVar``: it follows a thread, a coroutine, and the tasks and ``asyncio.to_thread`` calls it starts.
- **No upgrade**: a reader asking to write raises ``RuntimeError`` instead of waiting for itself. The writing
  thread may read and write again.
- **Coroutines wait on their event loop**: a waiting ``areading()`` is an asyncio future that the releasing
  thread resolves, never a thread of the loop's default executor (the executor that the encoder's own
  ``run_in_executor`` needs while the lock is held).
- **Every wait is bounded**: past ``timeout`` seconds a :class:`LockTimeout` says what it waited for;
  ``float("inf")`` waits as long as it takes (the rules above keep that from hanging on the lock itself).

The lock is counted, not owned, by readers, so an ``async`` retrieval may take it on the loop's thread and give
it back after awaits that ran elsewhere. Hand-written because the maintained locks (``fasteners``,
``readerwriterlock``) tie a read hold to the acquiring thread and know nothing of event loops.

Pipeline step: foundations (docs/architecture.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar

__all__ = ["DEFAULT_LOCK_TIMEOUT", "LockTimeout", "ReadWriteLock", "check_timeout", "holding"]

# an update's apply step and a retrieval each take milliseconds; a wait this long means something is stuck
DEFAULT_LOCK_TIMEOUT = 120.0


class LockTimeout(TimeoutError):
    """A wait for an index lock ran past its time limit; the message says what held it."""


class ReadWriteLock:
    """Shared reads, exclusive writes; see the module docstring for the rules.

    Args:
        timeout: Seconds any acquisition may wait before raising :class:`LockTimeout` (``float("inf")``: no limit).
    """

    def __init__(self, timeout: float = DEFAULT_LOCK_TIMEOUT) -> None:
        self.timeout = check_timeout(timeout)
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0
        self._writer: int | None = None  # thread id of the writer
        self._writes = 0  # re-entrant depth of the writer
        self._waiting_writers = 0
        self._async_waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._depth: ContextVar[int] = ContextVar(f"pearl_read_depth_{id(self)}", default=0)

    @property
    def waiting_writers(self) -> int:
        """Updates queued for the write (a diagnostic: new readers wait behind them)."""
        with self._cond:
            return self._waiting_writers

    # ---------------------------------------------------------------- reads
    def _may_read(self) -> bool:
        return self._writer is None and (self._depth.get() > 0 or not self._waiting_writers)

    def _enter(self) -> None:
        self._readers += 1
        self._depth.set(self._depth.get() + 1)

    def acquire_read(self, timeout: float | None = None) -> bool:
        """Take a shared read; ``False`` (nothing taken) for the writing thread itself.

        Raises:
            LockTimeout: A writer held or waited for the lock longer than ``timeout``.
        """
        deadline = self._deadline(timeout)
        with self._cond:
            if self._writer == threading.get_ident():
                return False
            while not self._may_read():
                self._wait(deadline, "an index update to apply its change")
            self._enter()
            return True

    async def aacquire_read(self, timeout: float | None = None) -> bool:
        """:meth:`acquire_read` for coroutines: waits on the event loop, takes no thread."""
        deadline = self._deadline(timeout)
        loop = asyncio.get_running_loop()
        while True:
            with self._cond:
                if self._writer == threading.get_ident():
                    return False
                if self._may_read():
                    self._enter()
                    return True
                waiter: asyncio.Future[None] = loop.create_future()
                self._async_waiters.append((loop, waiter))
            try:
                await asyncio.wait_for(waiter, _seconds_left(deadline))
            except asyncio.TimeoutError:
                raise _timeout(deadline[1], "an index update to apply its change") from None
            finally:
                with self._cond:
                    if (loop, waiter) in self._async_waiters:
                        self._async_waiters.remove((loop, waiter))

    def release_read(self) -> None:
        with self._cond:
            self._readers -= 1
            self._depth.set(max(0, self._depth.get() - 1))
            if self._readers == 0:
                self._cond.notify_all()

    # --------------------------------------------------------------- writes
    def acquire_write(self, timeout: float | None = None) -> None:
        """Take the exclusive write (re-entrant for the writing thread).

        Raises:
            RuntimeError: The caller holds a read: it would wait for itself.
            LockTimeout: Readers or another writer held the lock longer than ``timeout``.
        """
        me = threading.get_ident()
        deadline = self._deadline(timeout)
        with self._cond:
            if self._writer == me:
                self._writes += 1
                return
            if self._depth.get() > 0:
                raise RuntimeError(
                    "An index update was started while holding the index's read lock (read_lock() or a retrieval); "
                    "it would wait for itself: update outside the read_lock() block"
                )
            self._waiting_writers += 1
            try:
                while self._writer is not None or self._readers:
                    holder = "another update" if self._writer is not None else f"{self._readers} reader(s)"
                    self._wait(deadline, f"{holder} holding the index's lock to finish")
            finally:
                self._waiting_writers -= 1
                self._wake_readers()  # readers queued behind this writer may go if it gave up
            self._writer, self._writes = me, 1

    def release_write(self) -> None:
        with self._cond:
            self._writes -= 1
            if self._writes == 0:
                self._writer = None
                self._wake_readers()

    # ------------------------------------------------------------- contexts
    @contextmanager
    def reading(self, timeout: float | None = None) -> Iterator[None]:
        """Hold a shared read for the block."""
        taken = self.acquire_read(timeout)
        try:
            yield
        finally:
            if taken:
                self.release_read()

    @asynccontextmanager
    async def areading(self, timeout: float | None = None) -> AsyncIterator[None]:
        """:meth:`reading` for coroutines: waiting happens on the event loop, never on a worker thread."""
        taken = await self.aacquire_read(timeout)
        try:
            yield
        finally:
            if taken:
                self.release_read()

    @contextmanager
    def writing(self, timeout: float | None = None) -> Iterator[None]:
        """Hold the exclusive write for the block."""
        self.acquire_write(timeout)
        try:
            yield
        finally:
            self.release_write()

    # -------------------------------------------------------------- helpers
    def _deadline(self, timeout: float | None) -> tuple[float, float]:
        """``(deadline, limit)`` of a wait that may last ``timeout`` seconds (``None``: the lock's own)."""
        limit = self.timeout if timeout is None else check_timeout(timeout)
        return time.monotonic() + limit, limit

    def _wait(self, deadline: tuple[float, float], what: str) -> None:
        """One wait on the condition (its lock held), or :class:`LockTimeout` once past the deadline."""
        remaining = _seconds_left(deadline)
        if remaining is not None and remaining <= 0:
            raise _timeout(deadline[1], what)
        self._cond.wait(remaining)

    def _wake_readers(self) -> None:
        """Wake threads and coroutines waiting to read (the condition's lock held)."""
        self._cond.notify_all()
        waiters, self._async_waiters = self._async_waiters, []
        for loop, waiter in waiters:
            with contextlib.suppress(RuntimeError):  # its loop is closed: nobody waits any more
                loop.call_soon_threadsafe(_resolve, waiter)


def check_timeout(seconds: float, what: str = "timeout") -> float:
    """``seconds`` as a float if it is a wait limit (> 0; ``float("inf")``: no limit), else a ``ValueError``.

    A limit past what the platform's waits take (``threading.TIMEOUT_MAX``, about 292 years) is no limit:
    a wait given it would raise ``OverflowError`` instead of waiting.
    """
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds > 0:
        raise ValueError(f"{what} must be a number of seconds > 0 (float('inf'): no limit), got {seconds!r}")
    return float(seconds) if seconds <= threading.TIMEOUT_MAX else math.inf


def _seconds_left(deadline: tuple[float, float]) -> float | None:
    """Seconds to the deadline (at least 0), ``None`` for no limit: what ``wait`` and ``wait_for`` take."""
    if math.isinf(deadline[0]):
        return None
    return max(0.0, deadline[0] - time.monotonic())


def _timeout(limit: float, what: str) -> LockTimeout:
    return LockTimeout(
        f"Gave up after {limit:g}s waiting for {what}; if that work is expected to take longer, raise the limit "
        "(PearlTableIndex.lock_timeout, or the timeout= of read_lock())"
    )


def _resolve(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


@contextmanager
def holding(lock: threading.RLock, timeout: float, what: str) -> Iterator[None]:
    """Hold a plain (re-entrant) lock for the block, waiting at most ``timeout`` seconds.

    Args:
        lock: The lock.
        timeout: Seconds to wait.
        what: What holds it, for the :class:`LockTimeout` message ("another update").
    """
    if not lock.acquire(timeout=-1 if math.isinf(timeout) else timeout):
        raise _timeout(timeout, what)
    try:
        yield
    finally:
        lock.release()
