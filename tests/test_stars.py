"""Stars: a fact table with the dimensions it references, indexed as one unit and retrieved together."""

from __future__ import annotations

import pandas as pd
from embeddings import TrigramEmbedding

from llama_index_pearl import PearlTableIndex, Table
from llama_index_pearl.joins import discover_join_paths
from llama_index_pearl.joins.stars import join_stars
from llama_index_pearl.retrieval.answer.join_hints import compute_join_hints

EMB = TrigramEmbedding()


def warehouse() -> dict[str, pd.DataFrame]:
    """sales -> dates, items, stores, promotions; stores -> regions (a snowflake); and an unrelated table."""
    return {
        "dw__regions": pd.DataFrame({"r_region_sk": ["1", "2"], "r_name": ["North", "South"]}),
        "dw__stores": pd.DataFrame(
            {
                "s_store_sk": [str(i) for i in range(1, 7)],
                "s_city": ["Oslo", "Rome", "Lima", "Pune", "Kiev", "Riga"],
                "s_region_sk": ["1", "2"] * 3,
            }
        ),
        "dw__items": pd.DataFrame(
            {"i_item_sk": [str(i) for i in range(1, 9)], "i_brand": [f"Brand {c}" for c in "ABCDEFGH"]}
        ),
        "dw__dates": pd.DataFrame(
            {"d_date_sk": [str(100 + i) for i in range(12)], "d_month": [str(i + 1) for i in range(12)]}
        ),
        "dw__promotions": pd.DataFrame(
            {"p_promo_sk": [str(i) for i in range(1, 5)], "p_channel": ["mail", "radio", "press", "web"]}
        ),
        "dw__sales": pd.DataFrame(
            {
                "ss_date_sk": [str(100 + i % 12) for i in range(48)],
                "ss_item_sk": [str(1 + i % 8) for i in range(48)],
                "ss_store_sk": [str(1 + i % 6) for i in range(48)],
                "ss_promo_sk": [str(1 + i % 4) for i in range(48)],
                "ss_quantity": [str(i % 5 + 1) for i in range(48)],
            }
        ),
        "zoo__animals": pd.DataFrame({"animal": ["Lion", "Yak"], "legs": ["4", "4"]}),
    }


def test_a_table_referencing_four_tables_is_a_fact_with_its_snowflake():
    tables = [Table(name, df) for name, df in warehouse().items()]
    (star,) = join_stars(discover_join_paths(tables, EMB).graph)
    assert star.fact == "dw__sales"
    assert set(star.tables) == {"dw__sales", "dw__dates", "dw__items", "dw__stores", "dw__promotions", "dw__regions"}
    assert star.tables.index("dw__regions") > star.tables.index("dw__stores")  # reached through its store


def test_a_table_referencing_three_tables_is_no_star():
    tables = [Table(name, df) for name, df in warehouse().items() if name != "dw__promotions"]
    frame = next(t for t in tables if t.id == "dw__sales").df
    tables = [t if t.id != "dw__sales" else Table("dw__sales", frame.drop(columns="ss_promo_sk")) for t in tables]
    assert join_stars(discover_join_paths(tables, EMB).graph) == []


def test_a_star_is_one_unit_and_its_tables_are_retrieved_together():
    index = PearlTableIndex.from_tables(warehouse(), embed_model=EMB)
    (unit,) = [u for u in index.units if u.metadata["kind"] == "star"]
    assert unit.metadata["table_ids"][0] == "dw__sales" and len(unit.metadata["table_ids"]) == 6
    top = index.as_retriever(similarity_top_k=5).retrieve("sales quantity by month, brand and region of the store")
    assert "zoo__animals" not in {n.node.metadata["table_id"] for n in top}


def test_join_hints_connect_every_table_of_a_star_once():
    tables = [Table(name, df) for name, df in warehouse().items()]
    graph = discover_join_paths(tables, EMB).graph
    hints = compute_join_hints(graph, ["dw__sales", "dw__dates", "dw__items", "dw__stores", "dw__regions"])
    joined = [frozenset(h.tables) for h in hints]
    assert len(joined) == len(set(joined)) == 4  # a tree over five tables: every table reached, each join once


def test_an_insert_adds_the_star_its_fact_table_makes():
    tables = warehouse()
    sales = tables.pop("dw__sales")
    index = PearlTableIndex.from_tables(tables, embed_model=EMB)
    assert not [u for u in index.units if u.metadata["kind"] == "star"]
    index.insert_tables({"dw__sales": sales})
    assert [u.metadata["table_ids"][0] for u in index.units if u.metadata["kind"] == "star"] == ["dw__sales"]
