"""An index's revisions: which one is current, what a query reads of it, and the three locks that order them.

Retrievals share the read lock (:meth:`Revisions.reading`); an update's apply step holds the write lock alone
(:meth:`Revisions.applying`), so a retrieval sees a revision whole, before or after an update, never half of it;
updates run one at a time (:meth:`Revisions.updating`), their planning and embedding outside the write lock. The
state of the current revision (what a query reads: ``retrieval.state.RetrievalState``) is built on first use after
a build or load, then by every apply step from the previous revision's state, and swapped in with the change.

Pipeline step: foundations (docs/architecture.md).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager, AbstractContextManager, contextmanager
from typing import Generic, TypeVar

from llama_index_pearl.foundations.locks import ReadWriteLock, check_timeout, holding

__all__ = ["Revisions"]

State = TypeVar("State")


class Revisions(Generic[State]):
    """The revision counter of an index, the state derived from its current revision, and its locks.

    Args:
        build: Makes the state of the current revision, given the previous revision's (``None``: there is none,
            or it was never built).
    """

    def __init__(self, build: Callable[[State | None], State]) -> None:
        self.number = 0  # counts applied updates: state derived from an older revision is stale
        self._build = build
        self._state: State | None = None  # built on first use, then by each apply step
        self._built = threading.Lock()
        self._rw = ReadWriteLock()  # retrievals share it; an update's apply step holds it alone
        self._update = threading.RLock()  # one update at a time

    @property
    def timeout(self) -> float:
        """Seconds a retrieval or an update waits for a lock before raising ``LockTimeout``."""
        return self._rw.timeout

    @timeout.setter
    def timeout(self, seconds: float) -> None:
        self._rw.timeout = check_timeout(seconds, "lock_timeout")

    @property
    def waiting_writers(self) -> int:
        """Apply steps waiting for the write lock (a diagnostic)."""
        return self._rw.waiting_writers

    def state(self) -> State:
        """The state of the current revision (call it holding :meth:`reading` or :meth:`applying`)."""
        state = self._state
        if state is None:
            with self._built:
                state = self._state
                if state is None:
                    state = self._state = self._build(None)
        return state

    def reading(self, timeout: float | None = None) -> AbstractContextManager[None]:
        """Hold off apply steps for the block (re-entrant; see ``foundations.locks``).

        Args:
            timeout: Seconds to wait for an apply step; default :attr:`timeout`.
        """
        return self._rw.reading(timeout)

    def areading(self, timeout: float | None = None) -> AbstractAsyncContextManager[None]:
        """:meth:`reading` for coroutines: waits on the event loop, never on an executor thread.

        Args:
            timeout: Seconds to wait for an apply step; default :attr:`timeout`.
        """
        return self._rw.areading(timeout)

    def updating(self) -> AbstractContextManager[None]:
        """Hold the update lock for the block: one update of the index at a time."""
        return holding(self._update, self.timeout, "another update of the index to finish")

    @contextmanager
    def applying(self) -> Iterator[None]:
        """Hold the write lock while the block changes the index: a new revision, its state swapped in with it.

        The previous state is dropped first, so a block that raises leaves none (the next retrieval builds one).
        A state never built is left for the first retrieval to build.
        """
        with self._rw.writing():
            previous, self._state = self._state, None
            yield
            self.number += 1
            if previous is not None:
                self._state = self._build(previous)
