"""Incremental indexing: insert_tables / delete_table match a full rebuild on the tables they touch."""

from __future__ import annotations

import pandas as pd
import pytest
from embeddings import HashingEmbedding

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.generation import HeuristicQueryGenerator

QUESTIONS = (
    "Wembley stadium capacity for the Fest concert",
    "ticket price for the Gala concert",
    "singer Ann Lee concert",
    "Maracana stadium",
)


class CountingGenerator(HeuristicQueryGenerator):
    """The heuristic generator, counting the requests it answers."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[str] = []

    async def agenerate(self, request):
        self.requests.append(request.request_id)
        return await super().agenerate(request)


EMBEDDED: list[str] = []


class CountingEmbedding(HashingEmbedding):
    """The hashing embedding, recording the texts it embeds in EMBEDDED."""

    def _get_text_embedding(self, text: str) -> list[float]:
        EMBEDDED.append(text)
        return super()._get_text_embedding(text)


@pytest.fixture
def tables(music_tables) -> dict[str, pd.DataFrame]:
    return {
        **music_tables,
        "ticket": pd.DataFrame({"ticket_id": [100, 101], "concert_id": [10, 11], "price": [35, 60]}),
    }


def _build(tables, names, **kwargs) -> PearlTableIndex:
    # budget=10 keeps every candidate path, so the rebuild and the update select the same paths
    return PearlTableIndex.from_tables(
        {n: tables[n] for n in names}, embed_model=HashingEmbedding(), budget=10, **kwargs
    )


def _ranked(index: PearlTableIndex, question: str) -> list[tuple[str, float]]:
    return [(n.node.metadata["table_id"], n.score) for n in index.as_retriever(similarity_top_k=4).retrieve(question)]


def _assert_same_retrieval(left: PearlTableIndex, right: PearlTableIndex) -> None:
    for question in QUESTIONS:
        a, b = _ranked(left, question), _ranked(right, question)
        assert [t for t, _ in a] == [t for t, _ in b], question
        assert [s for _, s in a] == pytest.approx([s for _, s in b], abs=1e-5), question


def test_insert_then_query_equals_a_full_rebuild(tables):
    index = _build(tables, ["singer", "concert"])
    index.insert_tables({n: tables[n] for n in ("stadium", "ticket")})
    _assert_same_retrieval(index, _build(tables, tables))


def test_insert_keeps_existing_paths_and_adds_the_rebuilds_paths_through_new_tables(tables):
    index = _build(tables, ["singer", "concert", "stadium"])
    before = {p.path_id for p in index.join_paths}
    index.insert_tables({"ticket": tables["ticket"]})
    rebuilt = {p.path_id for p in _build(tables, tables).join_paths if "ticket" in p.tables}
    after = {p.path_id for p in index.join_paths}
    assert before <= after and rebuilt <= after


def test_insert_generates_only_for_paths_through_new_tables(tables):
    generator = CountingGenerator()
    index = _build(tables, ["singer", "concert", "stadium"], generator=generator)
    before = len(generator.requests)
    report = index.insert_tables({"ticket": tables["ticket"]})
    new_requests = generator.requests[before:]
    assert len(new_requests) == report.requests == len(report.new_paths) > 0
    paths = {p.path_id: p for p in index.join_paths}
    assert all("ticket" in paths[p].tables for p in report.new_paths)


def test_insert_embeds_only_new_units(tables):
    embedding = CountingEmbedding()
    index = PearlTableIndex.from_tables({n: tables[n] for n in ("singer", "concert")}, embed_model=embedding)
    EMBEDDED.clear()
    report = index.insert_tables({"stadium": tables["stadium"]})
    unit_texts = [t for t in EMBEDDED if "Table:" in t]  # column-name and value profiles are not units
    assert len(unit_texts) == report.new_units


def test_insert_reuses_the_generation_cache(tables, tmp_path):
    generator = CountingGenerator()
    index = _build(tables, ["singer", "concert", "stadium"], generator=generator, cache_dir=tmp_path)
    index.delete_table("stadium")
    before = len(generator.requests)
    report = index.insert_tables({"stadium": tables["stadium"]})
    assert report.cached == report.requests > 0
    assert len(generator.requests) == before


def test_inserting_an_existing_table_id_is_refused_and_names_it(tables):
    index = _build(tables, ["singer", "concert"])
    with pytest.raises(ValueError, match="already in the index: concert"):
        index.insert_tables({"concert": tables["concert"]})


def test_insert_with_replace_swaps_the_table_content(tables):
    index = _build(tables, ["singer", "concert", "stadium"])
    renamed = tables["stadium"].assign(stadium_name=["Olympiastadion", "Azteca"])
    index.insert_tables({"stadium": renamed}, replace=True)
    assert "Azteca" in index.table_text("stadium")
    assert _ranked(index, "Olympiastadion Azteca stadium capacity")[0][0] == "stadium"
    assert not any("Maracana" in u.text for u in index.units)


def test_deleting_an_unknown_table_names_it(tables):
    index = _build(tables, ["singer", "concert"])
    with pytest.raises(ValueError, match="'nope'"):
        index.delete_table("nope")


def test_delete_removes_the_table_its_edges_and_paths_through_it(tables):
    index = _build(tables, tables)
    report = index.delete_table("stadium")
    assert "stadium" not in index.tables and "stadium" not in index.join_graph
    assert all("stadium" not in p.tables for p in index.join_paths)
    assert all("stadium" not in u.metadata["table_ids"] for u in index.units)
    assert report.removed_paths and report.removed_units > len(report.removed_paths)
    assert all(n.node.metadata["table_id"] != "stadium" for n in index.as_retriever(4).retrieve("Wembley stadium"))


def test_delete_keeps_units_of_paths_that_do_not_touch_the_table(tables):
    index = _build(tables, tables)
    kept = {u.node_id for u in index.units if u.metadata.get("path_id") and "stadium" not in str(u.metadata)}
    index.delete_table("stadium")
    assert kept <= {u.node_id for u in index.units}


def test_delete_then_query_equals_a_rebuild_without_the_table(tables):
    # deleting only invalidates: a rebuild may pick a new path of 3 tables through the remaining
    # tables, so the fixture deletes a table whose removal opens no new path
    index = _build(tables, tables)
    index.delete_table("singer")
    _assert_same_retrieval(index, _build(tables, ["concert", "stadium", "ticket"]))


def test_delete_then_reinsert_restores_the_original_retrieval(tables):
    index = _build(tables, tables)
    index.delete_table("singer")
    index.insert_tables({"singer": tables["singer"]})
    _assert_same_retrieval(index, _build(tables, tables))


def test_update_survives_persist_and_load_with_identical_scores(tables, tmp_path):
    index = _build(tables, ["singer", "concert"])
    index.insert_tables({"stadium": tables["stadium"]})
    index.persist(tmp_path / "idx")
    loaded = PearlTableIndex.load(tmp_path / "idx", embed_model=HashingEmbedding())
    _assert_same_retrieval(loaded, index)
    loaded.insert_tables({"ticket": tables["ticket"]})  # the heuristic generator is restored from its name
    loaded.delete_table("singer")
    loaded.persist(tmp_path / "idx2")
    again = PearlTableIndex.load(tmp_path / "idx2", embed_model=HashingEmbedding())
    _assert_same_retrieval(again, loaded)


def test_whole_table_index_supports_insert_and_delete(tables):
    index = PearlTableIndex.from_tables({"singer": tables["singer"]}, embed_model=HashingEmbedding(), augment=False)
    index.insert_tables({"stadium": tables["stadium"]})
    assert _ranked(index, "Wembley")[0][0] == "stadium"
    index.delete_table("singer")
    assert [t for t, _ in _ranked(index, "singer")] == ["stadium"]


def test_deleting_the_last_table_is_refused(tables):
    index = PearlTableIndex.from_tables({"singer": tables["singer"]}, embed_model=HashingEmbedding())
    with pytest.raises(ValueError, match="last table"):
        index.delete_table("singer")


def test_store_that_cannot_delete_fails_clearly_and_leaves_the_index_intact(tables):
    import faiss
    from llama_index.core import StorageContext
    from llama_index.vector_stores.faiss import FaissVectorStore

    store = FaissVectorStore(faiss_index=faiss.IndexFlatIP(64))
    index = PearlTableIndex.from_tables(
        tables, embed_model=HashingEmbedding(), storage_context=StorageContext.from_defaults(vector_store=store)
    )
    with pytest.raises(NotImplementedError, match="FaissVectorStore cannot delete"):
        index.delete_table("stadium")
    assert "stadium" in index.tables


def test_an_unbounded_lock_timeout_never_times_out_and_an_insert_goes_through(music_tables, hashing_embedding):
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)
    index.lock_timeout = float("inf")
    index.insert_tables({"tour": pd.DataFrame({"tour_id": [1], "singer_id": [2]})})
    index.delete_table("tour")
    with index.read_lock():
        assert index.as_retriever(similarity_top_k=1).retrieve("Wembley capacity")
    assert index.lock_timeout == float("inf")


@pytest.mark.parametrize("seconds", [1e10, 1e300])  # past threading.TIMEOUT_MAX (292 years), still finite
def test_a_lock_timeout_past_what_the_platform_can_wait_is_no_limit_and_an_insert_goes_through(
    music_tables, hashing_embedding, seconds
):
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)
    index.lock_timeout = seconds
    index.insert_tables({"tour": pd.DataFrame({"tour_id": [1], "singer_id": [2]})})
    assert "tour" in index.tables


@pytest.mark.parametrize("bad", [0, -5, float("nan"), "10"])
def test_a_lock_timeout_that_is_no_number_of_seconds_is_refused_at_the_setter(music_tables, hashing_embedding, bad):
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)
    with pytest.raises(ValueError, match=r"lock_timeout must be a number of seconds > 0 \(float\('inf'\): no limit\)"):
        index.lock_timeout = bad


def _tiers(index: PearlTableIndex, question: str) -> list[tuple[str, str | None]]:
    nodes = index.as_retriever(similarity_top_k=4).retrieve(question)
    return [(n.node.metadata["table_id"], n.node.metadata["set_tier"]) for n in nodes]


def test_an_inserts_bars_become_the_indexs_as_a_build_with_them_would_have_them(tables, tmp_path):
    index = _build(tables, ["singer", "concert"])
    index.insert_tables({n: tables[n] for n in ("stadium", "ticket")}, needed_confidence=0.9, maybe_confidence=0.4)
    assert (index.config.needed_confidence, index.config.maybe_confidence) == (0.9, 0.4)
    rebuilt = _build(tables, tables, needed_confidence=0.9, maybe_confidence=0.4)
    for question in QUESTIONS:
        assert _tiers(index, question) == _tiers(rebuilt, question), question
    index.persist(tmp_path / "idx")
    assert PearlTableIndex.load(tmp_path / "idx", embed_model=HashingEmbedding()).config.needed_confidence == 0.9


def test_an_insert_that_names_no_bar_keeps_the_indexs(tables):
    index = _build(tables, ["singer", "concert"], needed_confidence=0.7)
    index.insert_tables({"stadium": tables["stadium"]}, concurrency=2)
    assert index.config.needed_confidence == 0.7
    assert index.config.concurrency != 2  # how one insert reads its tables is not kept
