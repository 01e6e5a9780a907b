"""Retrieval stays correct while insert_tables/delete_table run on another thread, and nothing hangs.

The probes that used to hang wait with deadlines (``LONG``): a regression fails, it does not hang.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import pandas as pd
import pytest
from embeddings import HashingEmbedding
from test_locks import LONG, until

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.retrieval.query_cache import QueryEmbeddingCache

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


def _queued_update(index: PearlTableIndex, tables: dict[str, pd.DataFrame]) -> tuple[threading.Thread, list]:
    """An insert on another thread, returned once it waits for the write lock; its errors go to the list."""
    errors: list[BaseException] = []

    def insert() -> None:
        try:
            index.insert_tables(tables)
        except BaseException as exc:
            errors.append(exc)

    writer = threading.Thread(target=insert)
    writer.start()
    until(lambda: index.revisions.waiting_writers == 1)  # the lock's diagnostic: the insert is queued
    return writer, errors


def test_a_retrieval_inside_read_lock_while_an_insert_waits_returns(index):
    retriever = index.as_retriever(similarity_top_k=2)
    with index.read_lock():
        writer, errors = _queued_update(index, _extra_tables(0))
        assert retriever.retrieve("Wembley capacity")  # used to wait for the insert, which waited for us
    writer.join(LONG)
    assert not writer.is_alive() and errors == []
    assert "album_0" in index.tables


def test_an_update_inside_read_lock_raises_instead_of_hanging(index):
    with index.read_lock(), pytest.raises(RuntimeError, match="would wait for itself"):
        index.insert_tables(_extra_tables(0))
    assert "album_0" not in index.tables


def test_a_lock_wait_past_the_index_limit_raises_a_clear_error(index):
    index.lock_timeout = 0.05
    with index.read_lock():
        writer, errors = _queued_update(index, _extra_tables(0))
        writer.join(LONG)
    assert len(errors) == 1 and "Gave up after 0.05s" in str(errors[0])
    assert "album_0" not in index.tables


class ThreadedAsyncEmbedding(HashingEmbedding):
    """Async query embeddings in a worker of the loop's default executor, as HuggingFaceEmbedding does.

    ``gate`` holds them there until the test opens it; ``entered`` is set once one waits there.
    """

    gate: threading.Event
    entered: threading.Event

    async def _aget_query_embedding(self, query: str) -> list[float]:
        def embed() -> list[float]:
            self.entered.set()
            if not self.gate.wait(LONG):
                raise TimeoutError("the gate never opened")
            return self._vector(query)

        return await asyncio.get_running_loop().run_in_executor(None, embed)


async def test_many_async_retrievals_during_an_insert_all_finish(music_tables):
    loop = asyncio.get_running_loop()
    loop.set_default_executor(ThreadPoolExecutor(max_workers=6))
    model = ThreadedAsyncEmbedding(gate=threading.Event(), entered=threading.Event())
    index = PearlTableIndex.from_tables(music_tables, embed_model=model)
    retriever = index.as_retriever(similarity_top_k=2)
    early = [asyncio.create_task(retriever.aretrieve(f"stadium question {i}")) for i in range(64)]
    with ThreadPoolExecutor(max_workers=1) as own:  # the default executor's workers are all embedding
        assert await loop.run_in_executor(own, model.entered.wait, LONG)  # readers hold the lock, embedding
        writer, errors = await loop.run_in_executor(own, _queued_update, index, _extra_tables(0))
    late = [asyncio.create_task(retriever.aretrieve(f"late question {i}")) for i in range(16)]
    model.gate.set()
    results = await asyncio.wait_for(asyncio.gather(*early, *late), LONG)
    writer.join(LONG)
    assert all(len(r) == 2 for r in results)
    assert not writer.is_alive() and errors == [] and "album_0" in index.tables


class FailingEmbedding(HashingEmbedding):
    """Fails on the ``fail_on``-th batch of texts once armed; runs ``during`` before each batch."""

    calls: int = 0
    fail_on: int | None = None
    during: object = None

    reading: bool = False

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        if self.reading:  # a reader's own encoder call (its question's words), made inside ``during``
            return [self._vector(t) for t in texts]
        self.calls += 1
        if callable(self.during):
            self.reading = True
            try:
                self.during()
            finally:
                self.reading = False
        if self.fail_on is not None and self.calls >= self.fail_on:
            raise RuntimeError("encoder down")
        return [self._vector(t) for t in texts]


def test_a_failed_replace_keeps_the_old_table_and_no_reader_sees_it_missing(music_tables):
    model = FailingEmbedding()
    index = PearlTableIndex.from_tables(music_tables, embed_model=model)
    units_before = sorted(u.node_id for u in index.units)
    seen: list[list[str]] = []
    model.during = lambda: seen.append(_tables_for(index, "Wembley capacity stadium"))
    model.fail_on = model.calls + 2
    replacement = {"stadium": pd.DataFrame({"stadium_id": [7], "stadium_name": ["New Wembley"], "capacity": [91]})}
    with pytest.raises(RuntimeError, match="encoder down"):
        index.insert_tables(replacement, replace=True)
    assert "stadium" in index.tables and sorted(u.node_id for u in index.units) == units_before
    assert seen and all("stadium" in tables for tables in seen)  # during the replace too
    assert "stadium" in _tables_for(index, "Wembley capacity stadium")


def test_a_replace_applies_in_one_step(music_tables, hashing_embedding):
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)
    revision = index.revisions.number
    report = index.insert_tables(
        {"stadium": pd.DataFrame({"stadium_id": [7], "stadium_name": ["New Wembley"]})}, replace=True
    )
    assert index.revisions.number == revision + 1
    assert report.removed_tables == ["stadium"] and report.added_tables == ["stadium"]
    assert "New Wembley" in index.table_text("stadium")


def test_the_query_cache_is_safe_under_many_threads():
    cache = QueryEmbeddingCache(size=8)
    start = threading.Barrier(16)
    errors: list[BaseException] = []

    def hammer(n: int) -> None:
        start.wait(LONG)
        try:
            for i in range(2_000):
                key = (f"q{(n + i) % 24}",)
                if cache.get(key) is None:
                    cache.put(key, [float(i)])
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=hammer, args=(n,)) for n in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(LONG)
    assert errors == [] and len(cache) <= 8


async def test_async_updates_leave_the_event_loop_free(music_tables):
    opened = threading.Event()
    model = FailingEmbedding(during=lambda: opened.wait(LONG))  # each batch waits for the loop to answer

    async def open_from_the_loop() -> None:
        opened.set()  # runs only if the loop is free while the build, insert and delete run

    async def with_the_loop_free(update):
        opened.clear()
        return (await asyncio.wait_for(asyncio.gather(update, open_from_the_loop()), LONG))[0]

    index = await with_the_loop_free(PearlTableIndex.afrom_tables(music_tables, embed_model=model))
    await with_the_loop_free(index.ainsert_tables(_extra_tables(0)))
    await with_the_loop_free(index.adelete_table("album_0"))
    assert "chart_0" in index.tables and "album_0" not in index.tables


def _tables_for(index: PearlTableIndex, question: str) -> list[str]:
    return [n.node.metadata["table_id"] for n in index.as_retriever(similarity_top_k=3).retrieve(question)]
