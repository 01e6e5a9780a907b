"""Retrieval stays correct while insert_tables/delete_table run on another thread."""

from __future__ import annotations

import asyncio
import threading
import time

import pandas as pd
import pytest

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.storage.locks import ReadWriteLock

QUESTIONS = ["Wembley capacity", "singer Ann Lee", "concert Gala", "album sales chart", "city population"]
CYCLES = 12


def _extra_tables(i: int) -> dict[str, pd.DataFrame]:
    return {
        f"album_{i}": pd.DataFrame({"album_id": [1, 2, 3], "singer_id": [1, 2, 3], "title": ["A", "B", f"C{i}"]}),
        f"chart_{i}": pd.DataFrame({"album_id": [1, 2, 3], "sales": [10, 20, 30], "week": [1, 2, 3]}),
    }


@pytest.fixture
def index(music_tables, hashing_embedding):
    return PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)


def _churn(index: PearlTableIndex, errors: list[BaseException]) -> None:
    try:
        for i in range(CYCLES):
            index.insert_tables(_extra_tables(i))
            index.insert_tables(_extra_tables(i), replace=True)
            for table_id in _extra_tables(i):
                index.delete_table(table_id)
    except BaseException as exc:  # reported by the test, not lost in the thread
        errors.append(exc)


def test_retrieval_during_inserts_and_deletes_never_fails(index):
    errors: list[BaseException] = []
    done = threading.Event()
    results = []

    def retrieve_until_done() -> None:
        retriever = index.as_retriever(similarity_top_k=3)
        try:
            for n in range(100_000):  # bounded; stops as soon as the writer is done
                if done.is_set():
                    return
                nodes = retriever.retrieve(QUESTIONS[n % len(QUESTIONS)])
                results.append([node.node.metadata["table_id"] for node in nodes])
        except BaseException as exc:
            errors.append(exc)

    readers = [threading.Thread(target=retrieve_until_done) for _ in range(4)]
    for reader in readers:
        reader.start()
    _churn(index, errors)
    done.set()
    for reader in readers:
        reader.join(timeout=60)
    assert not any(r.is_alive() for r in readers)
    assert errors == []
    assert len(results) > 4 and all(len(r) == 3 for r in results)
    assert set(index.tables) == {"singer", "concert", "stadium"}


async def test_async_retrieval_during_updates_never_fails(index):
    errors: list[BaseException] = []
    writer = threading.Thread(target=_churn, args=(index, errors))
    retriever = index.as_retriever(similarity_top_k=2)
    writer.start()
    rounds = 0
    while writer.is_alive() and rounds < 2_000:
        nodes = await asyncio.gather(*(retriever.aretrieve(q) for q in QUESTIONS))
        assert all(len(n) == 2 for n in nodes)
        rounds += 1
    writer.join(timeout=60)
    assert errors == [] and rounds > 0


def test_a_waiting_writer_is_not_starved_by_readers():
    lock = ReadWriteLock()
    order: list[str] = []
    lock.acquire_read()
    writer = threading.Thread(target=lambda: (lock.acquire_write(), order.append("write"), lock.release_write()))
    writer.start()
    time.sleep(0.05)  # the writer now waits on the first reader
    late_reader = threading.Thread(target=lambda: (lock.acquire_read(), order.append("read"), lock.release_read()))
    late_reader.start()
    time.sleep(0.05)
    assert order == []  # the late reader queues behind the waiting writer
    lock.release_read()
    writer.join(timeout=5)
    late_reader.join(timeout=5)
    assert order == ["write", "read"]


def test_the_writing_thread_may_write_again_and_read():
    lock = ReadWriteLock()
    with lock.writing(), lock.writing(), lock.reading():
        pass
    with lock.reading():  # everything released
        pass
