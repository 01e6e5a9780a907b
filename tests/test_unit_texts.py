"""What each unit kind's embedded (dense) text and lexical text hold.

The encoder reads the unit's text: names, the generated question and ``embedded_rows`` rows
per view; BM25 reads that text and the view's other rows (``lexical_only``), so cell values
still count as lexical evidence without filling the encoder's window.
"""

from __future__ import annotations

import pandas as pd
import pytest

from llama_index_pearl import PearlConfig, PearlTableIndex, Table
from llama_index_pearl.corpus.augment import path_units, single_hop_units, table_units
from llama_index_pearl.corpus.units import LEXICAL_ONLY, lexical_text
from llama_index_pearl.generation import GeneratedQuery, GenerationResult, SingleTableRequest
from llama_index_pearl.joins import ColumnPair, JoinKind, JoinPath
from llama_index_pearl.text.serialization import Serializer

NAMES = ["Joe", "Ann", "Rosa", "Lin", "Ivo"]
SERIALIZER = Serializer(max_rows=10, embedded_rows=1)


@pytest.fixture
def tables() -> dict[str, Table]:
    singer = pd.DataFrame({"singer_id": [1, 2, 3, 4, 5], "name": NAMES})
    concert = pd.DataFrame({"concert_id": [7, 8], "singer_id": [2, 5], "venue": ["Wembley", "Olympia"]})
    return {
        "singer": Table("singer", singer, source="music"),
        "concert": Table("concert", concert, source="music"),
    }


def _units(tables, **config):
    return {u.metadata["kind"]: u for u in table_units(list(tables.values())[:1], SERIALIZER, PearlConfig(**config))}


def test_the_original_embeds_the_whole_table_and_leaves_nothing_to_the_lexical_index_alone(tables):
    original = _units(tables)["original"]
    assert all(name in original.text for name in NAMES)
    assert original.metadata[LEXICAL_ONLY] == ""


def test_the_schema_unit_embeds_names_and_one_row_and_gives_the_other_rows_to_bm25(tables):
    schema = _units(tables)["schema"]
    assert schema.text == "Table: singer (database music)\nColumns: singer_id | name\n1 | Joe"
    assert schema.metadata[LEXICAL_ONLY].splitlines() == ["2 | Ann", "3 | Rosa", "4 | Lin", "5 | Ivo"]
    assert lexical_text(schema) == schema.text + "\n" + schema.metadata[LEXICAL_ONLY]


def test_the_whole_table_baseline_has_no_schema_units(tables):
    assert set(_units(tables, augment=False)) == {"original"}


def test_a_joined_entry_embeds_the_question_and_one_row_of_each_projected_table(tables):
    path = JoinPath(
        ("singer", "concert"), ((ColumnPair("singer", "singer_id", "concert", "singer_id"),),), JoinKind.EXPLICIT, 1.2
    )
    result = GenerationResult(
        "p", queries=[GeneratedQuery("Where did Ann sing?", {"singer": ["name"], "concert": ["venue"]})]
    )
    (unit,) = path_units(path, result, tables, SERIALIZER)
    blocks = unit.text.split("\n\n")
    assert blocks[0].startswith("Where did Ann sing?\nTable: singer (database music)\nColumns: name\n")
    assert len(blocks[0].splitlines()) == 4 and len(blocks[1].splitlines()) == 3  # one row per table
    assert "Olympia" in unit.metadata[LEXICAL_ONLY] or "Wembley" in unit.metadata[LEXICAL_ONLY]


def test_a_single_hop_unit_embeds_its_question_and_one_row_of_its_columns(tables):
    request = SingleTableRequest(tables["singer"], 1)
    result = GenerationResult(request.request_id, queries=[GeneratedQuery("Who is singer 4?", {"singer": ["name"]})])
    (unit,) = single_hop_units(request, result, SERIALIZER)
    assert unit.text == "Who is singer 4?\nTable: singer (database music)\nColumns: name\nJoe"
    assert unit.metadata[LEXICAL_ONLY].splitlines() == ["Ann", "Rosa", "Lin", "Ivo"]


def test_a_value_only_the_lexical_index_holds_still_finds_its_table(hashing_embedding):
    # long cells: the window holds only the first rows of the original, the last one (Zebulon) reaches BM25 only
    notes = ["a long remark about nothing in particular, " * 3] * 11 + ["Zebulon"]
    people = pd.DataFrame({"person_id": range(12), "note": notes})
    places = pd.DataFrame({"place_id": range(12), "city": [f"city {i}" for i in range(12)]})
    index = PearlTableIndex.from_tables(
        {"people": people, "places": places}, embed_model=hashing_embedding, max_rows=12
    )
    assert not any("Zebulon" in u.text for u in index.units)
    assert any("Zebulon" in u.metadata[LEXICAL_ONLY] for u in index.units)
    hits = index.as_retriever(similarity_top_k=1).retrieve("Zebulon")
    assert hits[0].node.metadata["table_id"] == "people"


def test_a_persisted_config_keeps_its_embedded_rows():
    assert PearlConfig.from_dict(PearlConfig(max_rows=10, embedded_rows=3).to_dict()).embedded_rows == 3


def test_every_unit_carries_exactly_the_keys_unit_meta_declares(music_tables, hashing_embedding):
    from typing import get_type_hints

    from llama_index_pearl.corpus.units import UNIT_META_KEYS, UnitMeta

    assert set(get_type_hints(UnitMeta)) == set(UNIT_META_KEYS)
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)
    assert {frozenset(u.metadata) for u in index.units} == {frozenset(UNIT_META_KEYS)}
