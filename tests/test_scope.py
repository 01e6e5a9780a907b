"""A question asked within some tables: LlamaIndex's MetadataFilters on table_id and source scope a retrieval."""

from __future__ import annotations

import asyncio

import pandas as pd
import pytest
from llama_index.core.vector_stores.types import FilterCondition, FilterOperator, MetadataFilter, MetadataFilters
from llama_index.core.vector_stores.utils import build_metadata_filter_fn

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.retrieval.search.scope import tables_in_scope
from llama_index_pearl.tables.table import Table

TABLES = ["shop.orders", "shop.customers", "crm.customers", "notes"]
SOURCES = {"shop.orders": "shop", "shop.customers": "shop", "crm.customers": "crm"}


def _where(*filters: MetadataFilter | MetadataFilters, condition: str = "and") -> MetadataFilters:
    return MetadataFilters(filters=list(filters), condition=FilterCondition(condition))


def _scope(filters: MetadataFilters) -> list[str]:
    return sorted(tables_in_scope(filters, TABLES, SOURCES))


def test_a_source_keeps_its_tables():
    assert _scope(_where(MetadataFilter(key="source", value="shop"))) == ["shop.customers", "shop.orders"]


def test_several_sources_keep_the_tables_of_any():
    wanted = MetadataFilter(key="source", value=["shop", "crm"], operator=FilterOperator.IN)
    assert _scope(_where(wanted)) == ["crm.customers", "shop.customers", "shop.orders"]


def test_table_ids_can_be_left_out():
    left_out = MetadataFilter(key="table_id", value=["shop.orders"], operator=FilterOperator.NIN)
    assert _scope(_where(left_out)) == ["crm.customers", "notes", "shop.customers"]


def test_a_table_without_a_source_is_kept_by_is_empty_and_by_not_equal():
    assert _scope(_where(MetadataFilter(key="source", value=None, operator=FilterOperator.IS_EMPTY))) == ["notes"]
    not_shop = MetadataFilter(key="source", value="shop", operator=FilterOperator.NE)
    assert _scope(_where(not_shop)) == ["crm.customers", "notes"]


def test_conditions_nest_as_llamaindexs_do():
    crm = MetadataFilter(key="source", value="crm")
    orders = MetadataFilter(key="table_id", value="shop.orders")
    assert _scope(_where(crm, orders, condition="or")) == ["crm.customers", "shop.orders"]
    assert _scope(_where(_where(crm, orders, condition="or"), condition="not")) == ["notes", "shop.customers"]


def test_a_key_a_table_does_not_carry_is_refused_naming_it():
    with pytest.raises(ValueError, match="'db'"):
        _scope(_where(MetadataFilter(key="db", value="shop")))


def test_an_operator_a_scope_cannot_read_is_refused_naming_it():
    with pytest.raises(ValueError, match="'>'"):
        _scope(_where(MetadataFilter(key="source", value="shop", operator=FilterOperator.GT)))


# --------------------------------------------------------------------------------- through the retriever
@pytest.fixture
def two_shops(hashing_embedding) -> PearlTableIndex:
    """Two databases with the same schema: a question names a customer of both."""
    tables = []
    for shop, name in [("north", "Ann Lee"), ("south", "Ann Lee")]:
        customers = pd.DataFrame({"customer_id": [1, 2], "customer_name": [name, "Bo Kim"]})
        orders = pd.DataFrame({"order_id": [7, 8, 9], "customer_id": [1, 2, 1], "total": [5.0, 7.5, 2.0]})
        tables += [
            Table(f"{shop}.customers", customers, source=shop, name="customers"),
            Table(f"{shop}.orders", orders, source=shop, name="orders"),
        ]
    return PearlTableIndex.from_tables(tables, embed_model=hashing_embedding)


NORTH = MetadataFilters(filters=[MetadataFilter(key="source", value="north")])


def test_filters_on_a_source_return_that_databases_tables_only(two_shops):
    nodes = two_shops.as_retriever(similarity_top_k=4, filters=NORTH).retrieve("What did Ann Lee order?")
    assert {n.node.metadata["table_id"] for n in nodes} == {"north.customers", "north.orders"}
    assert all(n.node.metadata["source"] == "north" for n in nodes)


def test_a_scoped_set_is_chosen_within_the_scope(two_shops):
    nodes = two_shops.as_retriever(similarity_top_k=4, filters=NORTH).retrieve("What did Ann Lee order?")
    assert {n.node.metadata["table_id"] for n in nodes if n.node.metadata["in_set"]} <= {
        "north.customers",
        "north.orders",
    }


def _scoped_and_alone(index, question: str, embedding) -> tuple[list, list]:
    """The north scope's retrieval, and that of an index holding the north tables alone."""
    scoped = index.as_retriever(similarity_top_k=2, filters=NORTH).retrieve(question)
    north = [index.tables[t] for t in ("north.customers", "north.orders")]
    alone = PearlTableIndex.from_tables(north, embed_model=embedding).as_retriever(similarity_top_k=2)
    return scoped, alone.retrieve(question)


def test_a_scoped_retrieval_ranks_as_an_index_of_those_tables_alone(two_shops, hashing_embedding):
    scoped, single = _scoped_and_alone(two_shops, "What did Ann Lee order?", hashing_embedding)
    assert [n.node.metadata["table_id"] for n in scoped] == [n.node.metadata["table_id"] for n in single]


def test_batch_and_async_retrieval_keep_the_scope(two_shops):
    retriever = two_shops.as_retriever(similarity_top_k=4, filters=NORTH)
    for nodes in [*retriever.retrieve_many(["What did Ann Lee order?"]), asyncio.run(retriever.aretrieve("Ann Lee"))]:
        assert {n.node.metadata["source"] for n in nodes} == {"north"}


def test_filters_that_are_not_metadata_filters_are_refused(two_shops):
    with pytest.raises(ValueError, match="MetadataFilters"):
        two_shops.as_retriever(filters={"source": "north"})


def test_a_scope_with_no_table_returns_nothing(two_shops):
    nowhere = _where(MetadataFilter(key="source", value="north"), MetadataFilter(key="table_id", value="south.orders"))
    assert two_shops.as_retriever(filters=nowhere).retrieve("What did Ann Lee order?") == []


def test_a_source_no_table_has_is_refused_as_the_command_line_refuses_it(two_shops):
    west = MetadataFilters(filters=[MetadataFilter(key="source", value="west")])
    with pytest.raises(ValueError, match=r"^no table of source 'west'; the index's sources: 'north', 'south'$"):
        two_shops.as_retriever(filters=west).retrieve("What did Ann Lee order?")


def test_a_source_no_table_has_is_refused_inside_nested_filters_whatever_the_operator():
    others = MetadataFilter(key="source", value=["shop", "west"], operator=FilterOperator.NIN)
    with pytest.raises(ValueError, match="no table of source 'west'"):
        _scope(_where(_where(others, condition="or"), condition="not"))


def test_the_source_of_every_table_survives_persist_and_load(two_shops, tmp_path, hashing_embedding):
    two_shops.persist(tmp_path / "idx")
    loaded = PearlTableIndex.load(tmp_path / "idx", embed_model=hashing_embedding)
    nodes = loaded.as_retriever(similarity_top_k=4, filters=NORTH).retrieve("What did Ann Lee order?")
    assert {n.node.metadata["source"] for n in nodes} == {"north"}


@pytest.mark.parametrize("store", ["simple", "qdrant"])
def test_another_vector_store_scopes_as_the_default_store_does(two_shops, hashing_embedding, store):
    from llama_index.core import StorageContext
    from llama_index.core.vector_stores import SimpleVectorStore

    if store == "qdrant":
        from llama_index.vector_stores.qdrant import QdrantVectorStore
        from qdrant_client import QdrantClient

        vector_store = QdrantVectorStore(client=QdrantClient(location=":memory:"), collection_name="shops")
    else:
        vector_store = SimpleVectorStore()
    other = PearlTableIndex.from_tables(
        list(two_shops.tables.values()),
        embed_model=hashing_embedding,
        storage_context=StorageContext.from_defaults(vector_store=vector_store),
    )
    question = "What did Ann Lee order?"
    ours = other.as_retriever(similarity_top_k=4, filters=NORTH).retrieve(question)
    default = two_shops.as_retriever(similarity_top_k=4, filters=NORTH).retrieve(question)
    assert [n.node.metadata["table_id"] for n in ours] == [n.node.metadata["table_id"] for n in default]


# ------------------------------------------------------------------------------- None, lexical evidence, hints
def test_none_stands_for_no_source_and_never_for_a_source_named_none():
    sources = {"a": "None", "b": "shop"}  # "c" has no source
    no_source = MetadataFilter(key="source", value=None, operator=FilterOperator.EQ)
    assert sorted(tables_in_scope(_where(no_source), ["a", "b", "c"], sources)) == ["c"]
    some_source = MetadataFilter(key="source", value=None, operator=FilterOperator.NE)
    assert sorted(tables_in_scope(_where(some_source), ["a", "b", "c"], sources)) == ["a", "b"]
    named_none = MetadataFilter(key="source", value="None")
    assert sorted(tables_in_scope(_where(named_none), ["a", "b", "c"], sources)) == ["a"]


EMPTY_NAMED = {"a": "", "b": "shop"}  # "c" has no source (None), "a" the empty name


def _llamaindex_keeps(filters: MetadataFilters, meta: dict) -> bool:
    """LlamaIndex's own reading (its filter function of the simple vector store), nested as it nests conditions."""
    if not any(isinstance(f, MetadataFilters) for f in filters.filters):
        return build_metadata_filter_fn(lambda _: meta, filters)("node")
    results = [_llamaindex_keeps(f if isinstance(f, MetadataFilters) else _where(f), meta) for f in filters.filters]
    if filters.condition is FilterCondition.OR:
        return any(results)
    return not any(results) if filters.condition is FilterCondition.NOT else all(results)


@pytest.mark.parametrize(
    "filters",
    [
        _where(MetadataFilter(key="source", value="")),
        _where(MetadataFilter(key="source", value="", operator=FilterOperator.NE)),
        _where(MetadataFilter(key="source", value=["", "shop"], operator=FilterOperator.IN)),
        _where(MetadataFilter(key="source", value=[""], operator=FilterOperator.NIN)),
        _where(MetadataFilter(key="source", value=""), MetadataFilter(key="table_id", value="b"), condition="or"),
        _where(_where(MetadataFilter(key="source", value=""), condition="not")),
        _where(
            _where(MetadataFilter(key="source", value=["", "shop"], operator=FilterOperator.IN)),
            _where(MetadataFilter(key="table_id", value="b"), condition="not"),
        ),
    ],
    ids=["eq", "ne", "in", "nin", "or", "not", "nested and"],
)
def test_the_empty_source_name_is_read_as_llamaindex_reads_it(filters):
    tables = ["a", "b", "c"]
    expected = [t for t in tables if _llamaindex_keeps(filters, {"table_id": t, "source": EMPTY_NAMED.get(t)})]
    assert sorted(tables_in_scope(filters, tables, EMPTY_NAMED)) == expected


@pytest.fixture
def lamp_shops(hashing_embedding) -> PearlTableIndex:
    """A shop that sold one lamp, beside a lamp maker whose every row says lamp: BM25's best match lies outside."""
    customers = pd.DataFrame({"customer_id": [1, 2], "customer_name": ["Ann Lee", "Bo Kim"]})
    orders = pd.DataFrame({"order_id": [7, 8], "customer_id": [1, 2], "item": ["lamp", "desk"]})
    lamps = pd.DataFrame({"lamp": ["lamp shade", "lamp base", "lamp bulb"], "lamp_kind": ["lamp", "lamp", "lamp"]})
    return PearlTableIndex.from_tables(
        [
            Table("north.customers", customers, source="north", name="customers"),
            Table("north.orders", orders, source="north", name="orders"),
            Table("maker.lamps", lamps, source="maker", name="lamps"),
        ],
        embed_model=hashing_embedding,
    )


def test_a_scoped_retrieval_scores_words_as_an_index_of_those_tables_alone(lamp_shops, hashing_embedding):
    scoped, single = _scoped_and_alone(lamp_shops, "Who ordered a lamp?", hashing_embedding)
    assert [(n.node.metadata["table_id"], n.score) for n in scoped] == [
        (n.node.metadata["table_id"], pytest.approx(n.score, abs=1e-6)) for n in single
    ]


def test_a_scoped_retrieval_on_another_store_scores_words_within_the_scope(lamp_shops, hashing_embedding):
    from llama_index.core import StorageContext
    from llama_index.core.vector_stores import SimpleVectorStore

    other = PearlTableIndex.from_tables(
        list(lamp_shops.tables.values()),
        embed_model=hashing_embedding,
        storage_context=StorageContext.from_defaults(vector_store=SimpleVectorStore()),
    )
    question = "Who ordered a lamp?"
    ours = other.as_retriever(similarity_top_k=2, filters=NORTH).retrieve(question)
    default = lamp_shops.as_retriever(similarity_top_k=2, filters=NORTH).retrieve(question)
    assert [n.score for n in ours] == pytest.approx([n.score for n in default], abs=1e-6)


def test_join_hints_of_a_scoped_retrieval_never_go_through_a_table_outside_it(music_tables, hashing_embedding):
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)
    ends = MetadataFilter(key="table_id", value=["singer", "stadium"], operator=FilterOperator.IN)
    retriever = index.as_retriever(similarity_top_k=2, filters=_where(ends), include_join_hints_in_text=True)
    nodes = retriever.retrieve("Which stadium did Ann Lee sing at?")
    assert {n.node.metadata["table_id"] for n in nodes} == {"singer", "stadium"}
    assert [h for n in nodes for h in n.node.metadata["join_hints"]] == []
    assert not any("concert" in n.node.get_content() for n in nodes)
    assert sorted(index.join_graph["concert"]) == ["singer", "stadium"]  # they join, through concert only
