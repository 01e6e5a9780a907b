"""The index's readers-writer lock: the rules that keep it from hanging, each stated by one test.

Every wait here has a deadline: a regression fails with ``LockTimeout`` or by the suite's timeout, never hangs.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest

from llama_index_pearl.foundations.locks import LockTimeout, ReadWriteLock

SHORT = 0.05  # seconds a wait that must give up is allowed
LONG = 10.0  # seconds a wait that must succeed is allowed


def until(condition: Callable[[], bool], deadline: float = LONG) -> None:
    """Wait for a state another thread reaches (checked every few ms), failing past the deadline."""
    tick = threading.Event()
    for _ in range(int(deadline / 0.005)):
        if condition():
            return
        tick.wait(0.005)
    raise AssertionError("the expected state was not reached")


def queue_writer(lock: ReadWriteLock) -> tuple[threading.Thread, threading.Event]:
    """A thread waiting for the write (returns once it is queued); its event is set once it wrote."""
    wrote = threading.Event()

    def write() -> None:
        with lock.writing(timeout=LONG):
            wrote.set()

    writer = threading.Thread(target=write)
    writer.start()
    until(lambda: lock.waiting_writers == 1)
    return writer, wrote


def test_a_read_inside_a_read_does_not_wait_for_a_queued_writer():
    lock = ReadWriteLock()
    with lock.reading():
        writer, wrote = queue_writer(lock)
        with lock.reading(timeout=SHORT):  # the old lock waited here for the writer, which waited for us
            assert not wrote.is_set()
    writer.join(LONG)
    assert wrote.is_set()


def test_a_new_reader_waits_behind_a_queued_writer():
    lock = ReadWriteLock()
    lock.acquire_read()
    writer, _ = queue_writer(lock)
    failures: list[BaseException] = []
    reader = threading.Thread(target=lambda: _record(failures, lambda: lock.acquire_read(timeout=SHORT)))
    reader.start()
    reader.join(LONG)
    lock.release_read()
    writer.join(LONG)
    assert [type(f) for f in failures] == [LockTimeout]


def test_readers_queued_behind_a_writer_that_gave_up_go_on():
    lock = ReadWriteLock()
    lock.acquire_read()
    gave_up: list[BaseException] = []
    writer = threading.Thread(target=lambda: _record(gave_up, lambda: lock.acquire_write(timeout=SHORT)))
    writer.start()
    writer.join(LONG)
    with lock.reading(timeout=SHORT):  # another thread's context: not a re-entrant read
        pass
    lock.release_read()
    assert [type(f) for f in gave_up] == [LockTimeout]


def test_a_reader_that_tries_to_write_raises_instead_of_waiting_for_itself():
    lock = ReadWriteLock()
    with lock.reading(), pytest.raises(RuntimeError, match="would wait for itself"):
        lock.acquire_write(timeout=LONG)


def test_the_writing_thread_may_write_again_and_read():
    lock = ReadWriteLock()
    with lock.writing(), lock.writing(), lock.reading():
        pass
    with lock.reading(timeout=SHORT):  # everything released
        pass


def test_a_reader_waiting_past_the_limit_is_told_what_held_the_lock():
    lock = ReadWriteLock(timeout=SHORT)
    with lock.writing():
        failures: list[BaseException] = []
        reader = threading.Thread(target=lambda: _record(failures, lock.acquire_read))
        reader.start()
        reader.join(LONG)
    assert len(failures) == 1 and isinstance(failures[0], LockTimeout)
    assert "Gave up after 0.05s waiting for an index update" in str(failures[0])


def test_a_writer_waiting_past_the_limit_is_told_how_many_readers_held_the_lock():
    lock = ReadWriteLock(timeout=SHORT)
    with lock.reading(), pytest.raises(LockTimeout, match="1 reader"):
        _in_thread(lock.acquire_write)


async def test_coroutines_waiting_to_read_hold_no_executor_thread():
    loop = asyncio.get_running_loop()
    loop.set_default_executor(ThreadPoolExecutor(max_workers=1))
    lock = ReadWriteLock()
    release = threading.Event()
    holding = threading.Event()

    def write() -> None:
        with lock.writing():
            holding.set()
            release.wait(LONG)

    writer = threading.Thread(target=write)
    writer.start()
    assert await loop.run_in_executor(None, holding.wait, LONG)
    readers = [asyncio.create_task(_read(lock)) for _ in range(8)]
    # the old areading() parked each waiting reader on an executor thread: this call found none
    assert await asyncio.wait_for(loop.run_in_executor(None, lambda: "free"), LONG) == "free"
    release.set()
    assert await asyncio.wait_for(asyncio.gather(*readers), LONG) == [True] * 8
    writer.join(LONG)


async def test_a_coroutine_reading_inside_its_own_read_does_not_wait_for_a_queued_writer():
    lock = ReadWriteLock()
    async with lock.areading():
        writer, wrote = await asyncio.to_thread(queue_writer, lock)
        async with lock.areading(timeout=SHORT):
            assert not wrote.is_set()
    await asyncio.to_thread(writer.join, LONG)
    assert wrote.is_set()


async def test_a_coroutine_waiting_past_the_limit_raises_lock_timeout():
    lock = ReadWriteLock()
    release = threading.Event()
    held = threading.Event()
    writer = threading.Thread(target=lambda: _write_until(lock, held, release))
    writer.start()
    await asyncio.to_thread(held.wait, LONG)
    with pytest.raises(LockTimeout):
        async with lock.areading(timeout=SHORT):
            pass
    release.set()
    writer.join(LONG)


async def _read(lock: ReadWriteLock) -> bool:
    async with lock.areading(timeout=LONG):
        return True


def _write_until(lock: ReadWriteLock, held: threading.Event, release: threading.Event) -> None:
    with lock.writing():
        held.set()
        release.wait(LONG)


def _record(failures: list[BaseException], call: Callable[[], object]) -> None:
    try:
        call()
    except BaseException as exc:  # reported by the test
        failures.append(exc)


def _in_thread(call: Callable[[], object]) -> None:
    """Run ``call`` on another thread (another context) and raise what it raised."""
    failures: list[BaseException] = []
    thread = threading.Thread(target=lambda: _record(failures, call))
    thread.start()
    thread.join(LONG)
    if failures:
        raise failures[0]


def test_an_unbounded_timeout_waits_until_the_writer_is_done():
    lock = ReadWriteLock(timeout=float("inf"))
    writing, release, read = threading.Event(), threading.Event(), threading.Event()

    def write() -> None:
        with lock.writing():
            writing.set()
            release.wait(LONG)

    def read_after() -> None:
        with lock.reading():
            read.set()

    writer = threading.Thread(target=write)
    writer.start()
    assert writing.wait(LONG)
    reader = threading.Thread(target=read_after)
    reader.start()
    assert not read.wait(SHORT)  # waiting, without an OverflowError
    release.set()
    assert read.wait(LONG)
    writer.join(LONG)
    reader.join(LONG)


async def test_a_coroutine_with_an_unbounded_timeout_reads_once_the_writer_is_done():
    lock = ReadWriteLock(timeout=float("inf"))
    release = threading.Event()
    held = threading.Event()
    writer = threading.Thread(target=lambda: _write_until(lock, held, release))
    writer.start()
    await asyncio.to_thread(held.wait, LONG)
    reader = asyncio.create_task(_read_unbounded(lock))
    done, _ = await asyncio.wait([reader], timeout=SHORT)
    assert not done  # waiting, without an OverflowError
    release.set()
    assert await asyncio.wait_for(reader, LONG) is True
    writer.join(LONG)


async def _read_unbounded(lock: ReadWriteLock) -> bool:
    async with lock.areading():
        return True


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), "10", True, None])
def test_a_timeout_that_is_no_number_of_seconds_is_refused_where_it_is_set(bad):
    with pytest.raises(ValueError, match=r"timeout must be a number of seconds > 0"):
        ReadWriteLock(timeout=bad)
    if bad is not None:  # None: the lock's own limit
        with pytest.raises(ValueError, match=r"timeout must be a number of seconds > 0"), ReadWriteLock().reading(bad):
            pass


def test_lock_timeout_is_importable_from_the_package():
    import llama_index_pearl

    assert llama_index_pearl.LockTimeout is LockTimeout
