"""One search interface for every store: a revision takes the search of its store, each search ranks the same
tables through ``rank``, and only a search that reads the stored vectors scores given tables (``ScopedScoring``)."""

from __future__ import annotations

import dataclasses

import pytest
from embeddings import HashingEmbedding
from llama_index.core import StorageContext
from llama_index.core.vector_stores import SimpleVectorStore

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.retrieval.retriever import embed_query
from llama_index_pearl.retrieval.search.faiss_search import FaissSearch
from llama_index_pearl.retrieval.search.grouped_search import GroupedSearch
from llama_index_pearl.retrieval.search.pooling import UnitHit
from llama_index_pearl.retrieval.search.search import Fetch, Question, ScopedScoring, SearchRequest, SearchSpace
from llama_index_pearl.retrieval.search.store_search import StoreSearch

QUESTIONS = ("Wembley capacity", "singer Ann Lee", "Which concert was at Maracana?")


def _qdrant() -> StorageContext:
    from llama_index.vector_stores.qdrant import QdrantVectorStore
    from qdrant_client import QdrantClient

    store = QdrantVectorStore(client=QdrantClient(location=":memory:"), collection_name="units")
    return StorageContext.from_defaults(vector_store=store)


STORES = {
    "faiss": (None, FaissSearch),
    "qdrant": (_qdrant, GroupedSearch),
    "any other": (lambda: StorageContext.from_defaults(vector_store=SimpleVectorStore()), StoreSearch),
}


def _index(music_tables, store: str) -> PearlTableIndex:
    context = STORES[store][0]
    return PearlTableIndex.from_tables(
        music_tables, embed_model=HashingEmbedding(), storage_context=context() if context else None
    )


def _run(index: PearlTableIndex, steps):
    """Run a search's steps in place, as the retriever's sync driver does."""
    answer = None
    try:
        while True:
            step = steps.send(answer)
            if isinstance(step, Fetch):
                nodes = index.vector_index.as_retriever(similarity_top_k=step.n).retrieve(step.query)
                answer = [
                    UnitHit(n.node.node_id, index.catalog.units[n.node.node_id].table_ids, n.score) for n in nodes
                ]
            else:
                answer = step.run()
    except StopIteration as done:
        return done.value


def _request(lexical_weight: float = 0.075, depth: int = 16) -> SearchRequest:
    return SearchRequest(depth=depth, fetch_k=None, lexical_weight=lexical_weight, scope=None)


def _questions(index: PearlTableIndex) -> list[Question]:
    return [Question(q, embed_query(index.embed_model, q)) for q in QUESTIONS]


@pytest.mark.parametrize("store", list(STORES))
def test_a_revision_searches_its_store_with_the_search_of_that_store(music_tables, store):
    index = _index(music_tables, store)
    with index.read_lock():
        assert type(index.revisions.state().search) is STORES[store][1]


@pytest.mark.parametrize("store", ["qdrant", "any other"])
@pytest.mark.parametrize("lexical_weight", [0.0, 0.075])
def test_every_search_ranks_the_tables_the_default_store_ranks(music_tables, store, lexical_weight):
    default, other = _index(music_tables, "faiss"), _index(music_tables, store)
    request = _request(lexical_weight)
    with default.read_lock(), other.read_lock():
        want = _run(default, default.revisions.state().search.rank(_questions(default), request))
        got = _run(other, other.revisions.state().search.rank(_questions(other), request))
    for a, b in zip(got, want):
        assert [t.table_id for t in a.tables] == [t.table_id for t in b.tables]
        assert [t.score for t in a.tables] == pytest.approx([t.score for t in b.tables], abs=1e-5)


def test_the_default_search_scores_a_table_outside_its_ranking_from_its_own_units(music_tables):
    index = _index(music_tables, "faiss")
    with index.read_lock():
        search = index.revisions.state().search
        ranked = _run(index, search.rank(_questions(index)[:1], _request(depth=1)))[0]
        deeper = _run(index, search.rank(_questions(index)[:1], _request(depth=3)))[0]
        outside = [t for t in deeper.tables if t.table_id not in {r.table_id for r in ranked.tables[:1]}]
        scored = search.score(ranked, [t.table_id for t in outside])
    assert [(t.table_id, t.unit_id) for t in scored] == [(t.table_id, t.unit_id) for t in outside]
    assert [t.score for t in scored] == pytest.approx([t.score for t in outside])


@pytest.mark.parametrize("store", ["qdrant", "any other"])
def test_a_store_known_only_through_llamaindex_has_no_scoring_of_given_tables(music_tables, store):
    index = _index(music_tables, store)
    with index.read_lock():
        search = index.revisions.state().search
    assert not isinstance(search, ScopedScoring)
    assert not any(hasattr(search, name) for name in ("score", "own_scores", "rank_within"))


def test_the_default_search_has_the_scoring_of_given_tables(music_tables):
    index = _index(music_tables, "faiss")
    with index.read_lock():
        assert isinstance(index.revisions.state().search, ScopedScoring)


def test_a_search_request_holds_what_every_search_reads_and_never_the_set_rule():
    assert [f.name for f in dataclasses.fields(SearchRequest)] == ["depth", "fetch_k", "lexical_weight", "scope"]


def test_a_search_space_reads_bm25_only_when_lexical_evidence_is_asked_for():
    read = []

    def texts(unit_ids):
        read.append(list(unit_ids))
        return ["wembley stadium", "ann lee singer"]

    space = SearchSpace(["u0", "u1"], ["t"], {}, texts, lambda: None, ["u0", "u1"])
    assert space.boost("Wembley", 0.0) is None and read == []
    boost = space.boost("Wembley", 0.5)
    assert read == [["u0", "u1"]] and boost.tolist() == [0.5, 0.0]
    assert space.boost("nothing shared", 0.5) is None
