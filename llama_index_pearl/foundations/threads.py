"""Run blocking work from a coroutine on a thread of its own.

``asyncio.to_thread`` borrows a worker of the event loop's default executor. An index update waits for the
index's locks, and retrievals holding those locks may need the same workers to embed their questions
(LlamaIndex's local encoders run there): an update parked on a borrowed worker could starve them. A thread
of its own costs a thread start (tens of microseconds), nothing beside work that takes seconds.

Pipeline step: foundations (docs/architecture.md); imports nothing from the pipeline.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["run_in_thread"]

T = TypeVar("T")


async def run_in_thread(call: Callable[[], T], name: str = "llama-index-pearl") -> T:
    """``call()`` on a new daemon thread, in a copy of the caller's context (tracing spans, lock holds).

    Args:
        call: The blocking work.
        name: The thread's name.

    Returns:
        What ``call`` returns; what it raises is raised here.
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def target() -> None:
        try:
            result: Any = context.run(call)
        except BaseException as exc:  # handed to the awaiting coroutine
            _settle(loop, done, None, exc)
        else:
            _settle(loop, done, result, None)

    threading.Thread(target=target, name=name, daemon=True).start()
    return await done


def _settle(loop: asyncio.AbstractEventLoop, done: asyncio.Future[Any], result: Any, exc: BaseException | None) -> None:
    def finish() -> None:
        if done.done():  # the awaiting coroutine was cancelled
            return
        if exc is not None:
            done.set_exception(exc)
        else:
            done.set_result(result)

    with contextlib.suppress(RuntimeError):  # the loop is closed: nobody awaits the result any more
        loop.call_soon_threadsafe(finish)
