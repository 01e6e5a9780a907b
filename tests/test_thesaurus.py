"""The thesaurus: an analyst's business words read as the words schemas spell them with."""

from __future__ import annotations

import pandas as pd
import pytest
from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters

from llama_index_pearl import PearlConfig, PearlTableIndex
from llama_index_pearl.corpus.lexical import text_tokens
from llama_index_pearl.tables.table import Table
from llama_index_pearl.text.thesaurus import (
    BUSINESS_WORDS,
    name_forms,
    parse_business_words,
    schema_words,
    with_schema_words,
)


def test_a_measure_word_reads_as_the_columns_it_is_computed_from():
    assert {"price", "quantity", "amount"} <= set(schema_words("What was our turnover last year?"))


def test_a_role_reads_as_the_table_of_the_people_who_play_it():
    assert schema_words("Which clients were served by our staff?") == ["customer", "employee"]


def test_inflected_words_are_looked_up_in_their_dictionary_form():
    assert schema_words("What did the shop bring in?") == schema_words("What has the shop brought in?")


def test_a_hospitals_words_read_as_its_schemas_do():
    assert schema_words("Which operations are performed most often?") == ["procedure"]
    assert schema_words("Which conditions are coded most often?") == ["diagnosis"]
    assert schema_words("Which blood tests are run most often?") == ["lab", "measurement"]


def test_a_plural_diagnosis_reads_as_the_word_schemas_spell():
    (added,) = schema_words("Which conditions are coded?")
    assert added in text_tokens("diagnoses_icd")


def test_words_the_question_already_holds_are_not_added_again():
    assert "customer" not in schema_words("Which customer clients spent the most?")


def test_the_schema_words_follow_the_question():
    assert with_schema_words("How many singers are there?") == "How many singers are there? artist"


def test_a_question_without_business_words_is_read_as_it_is():
    assert with_schema_words("What is the capacity of each stadium?") == "What is the capacity of each stadium?"


def test_a_schema_word_the_question_holds_in_another_form_is_not_added():
    assert schema_words("Which actors appeared in the most films?") == []
    assert schema_words("Which customers rented the most movies?") == ["film"]


def test_no_business_word_is_among_its_own_schema_words():
    assert not [word for word, spelled in BUSINESS_WORDS.items() if word in spelled]


def test_every_business_word_is_one_lower_case_word():
    assert all(word.isalpha() and word.islower() for word in BUSINESS_WORDS)
    assert all(spelled and all(s.isalpha() and s.islower() for s in spelled) for spelled in BUSINESS_WORDS.values())


def _shop() -> dict[str, pd.DataFrame]:
    """A shop whose revenue is an order line's price × quantity, beside a payments table and the shop's people."""
    return {
        "customers": pd.DataFrame({"customer_id": [1, 2, 3], "full_name": ["Ann Lee", "Bo Chan", "Cy Diaz"]}),
        "orders": pd.DataFrame(
            {"order_id": [10, 11, 12], "customer_id": [1, 2, 3], "status": ["open", "shut", "shut"]}
        ),
        "order_items": pd.DataFrame(
            {
                "order_id": [10, 10, 11, 12],
                "item_no": [1, 2, 1, 1],
                "product_id": [5, 6, 5, 7],
                "list_price": [9.5, 3.0, 9.5, 12.0],
                "quantity": [2, 1, 4, 1],
            }
        ),
        "products": pd.DataFrame({"product_id": [5, 6, 7], "product_name": ["Lamp", "Mug", "Rug"]}),
        "payments": pd.DataFrame({"payment_id": [1, 2, 3], "order_id": [10, 11, 12], "amount": [22.0, 38.0, 12.0]}),
        "stores": pd.DataFrame({"store_id": [1, 2], "store_name": ["Acme", "Bolt"], "state": ["NY", "CA"]}),
        "staffs": pd.DataFrame({"staff_id": [1, 2], "first_name": ["Al", "Di"], "store_id": [1, 2]}),
    }


@pytest.fixture(scope="module")
def shop_indexes(minilm) -> dict[bool, PearlTableIndex]:
    """The shop indexed with the thesaurus and without it."""
    return {
        on: PearlTableIndex.from_tables(_shop(), embed_model=minilm, config=PearlConfig(thesaurus=on))
        for on in (True, False)
    }


def _tiers(index: PearlTableIndex, question: str) -> dict[str, str | None]:
    return {
        n.metadata["table_id"]: n.metadata["set_tier"]
        for n in index.as_retriever(similarity_top_k=3).retrieve(question)
    }


def test_revenue_finds_the_order_lines_price_times_quantity_beside_the_product(shop_indexes):
    question = "What is our turnover per product?"
    with_it, without = _tiers(shop_indexes[True], question), _tiers(shop_indexes[False], question)
    assert with_it["order_items"] == with_it["products"] == "needed"
    assert without.get("order_items") != "needed"  # the encoder alone does not read turnover as price × quantity


def test_what_clients_spend_is_the_payments_beside_the_customers(shop_indexes):
    question = "Which clients spend the most?"
    needed = {t for t, tier in _tiers(shop_indexes[True], question).items() if tier == "needed"}
    assert {"customers", "payments"} <= needed
    assert _tiers(shop_indexes[False], question).get("payments") is None  # without it, no amount is in the set


def test_an_index_saved_without_the_thesaurus_loads_without_it(hashing_embedding, tmp_path):
    index = PearlTableIndex.from_tables(_shop(), embed_model=hashing_embedding, config=PearlConfig(thesaurus=False))
    index.persist(tmp_path / "shop")
    assert PearlTableIndex.load(tmp_path / "shop", embed_model=hashing_embedding).config.thesaurus is False


def test_an_insert_may_turn_the_thesaurus_off(hashing_embedding):
    shop = _shop()
    index = PearlTableIndex.from_tables({"customers": shop["customers"]}, embed_model=hashing_embedding)
    index.insert_tables({"orders": shop["orders"]}, thesaurus=False)
    assert index.config.thesaurus is False


def test_a_business_word_the_schema_spells_itself_is_read_as_it_is():
    assert schema_words("How many cards were sold?", spelled=name_forms(["cards", "card_id"])) == [
        "sales",
        "amount",
        "price",
        "quantity",
        "total",
        "line",
    ]


def test_the_schema_words_of_a_scope_are_those_of_its_tables_and_columns(hashing_embedding):
    shop = _shop()
    tables = [
        Table("clients", shop["customers"], source="crm"),
        Table("orders", shop["orders"], source="crm"),
        Table("visits", shop["stores"], source="web"),
    ]
    index = PearlTableIndex.from_tables(tables, embed_model=hashing_embedding)
    state = index.revisions.state()
    crm = state.scope(MetadataFilters(filters=[MetadataFilter(key="source", value="crm")]))
    web = state.scope(MetadataFilters(filters=[MetadataFilter(key="source", value="web")]))
    assert state.lexical_text("Which clients came back?", crm) == "Which clients came back?"
    assert state.lexical_text("Which clients came back?", web) == "Which clients came back? customer"


def test_in_a_lake_a_word_is_read_as_it_is_only_where_every_database_spells_it(hashing_embedding):
    shop = _shop()
    tables = [Table("clients", shop["customers"], source="crm"), Table("visits", shop["stores"], source="web")]
    state = PearlTableIndex.from_tables(tables, embed_model=hashing_embedding).revisions.state()
    assert state.lexical_text("Which clients came back?", None) == "Which clients came back? customer"


def test_your_own_business_words_are_read_as_you_spell_them(hashing_embedding):
    config = PearlConfig(thesaurus=False, business_words="gmv: sales amount; churned: cancelled")
    state = PearlTableIndex.from_tables(_shop(), embed_model=hashing_embedding, config=config).revisions.state()
    assert state.lexical_text("What was our GMV per client?", None) == "What was our GMV per client? sales amount"


def test_your_own_business_words_come_before_the_thesauruss():
    own = parse_business_words("revenue: fare")
    assert schema_words("What is our revenue?", thesaurus={**BUSINESS_WORDS, **own}) == ["fare"]


@pytest.mark.parametrize("text", ["gmv sales amount", "gmv:", ": sales", "gmv2: sales", "gmv: sales; gmv: amount"])
def test_a_business_words_entry_that_does_not_read_is_an_error_naming_it(text):
    with pytest.raises(ValueError, match="business_words"):
        PearlConfig(business_words=text)
