"""A result node's metadata is the record ``ResultMetadata`` declares: every key written is declared, and written."""

from __future__ import annotations

from typing import get_type_hints

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.retrieval.answer.result_nodes import HintMetadata, JoinMetadata, ResultMetadata, result_metadata


def test_every_result_node_holds_exactly_the_keys_result_metadata_declares(music_tables, hashing_embedding):
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)
    hits = index.as_retriever(similarity_top_k=3).retrieve("Which singers gave concerts in which stadium?")
    assert {frozenset(result_metadata(hit)) for hit in hits} == {frozenset(get_type_hints(ResultMetadata))}


def test_every_join_hint_of_a_result_holds_exactly_the_keys_hint_metadata_declares(music_tables, hashing_embedding):
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)
    hits = index.as_retriever(similarity_top_k=3).retrieve("Which singers gave concerts in which stadium?")
    hints = [hint for hit in hits for hint in result_metadata(hit)["join_hints"]]
    joins = [join for hint in hints for join in (*hint["joins"], *hint["alternatives"])]
    assert hints and {frozenset(hint) for hint in hints} == {frozenset(get_type_hints(HintMetadata))}
    assert {frozenset(join) for join in joins} == {frozenset(get_type_hints(JoinMetadata))}


def test_a_result_nodes_metadata_stays_a_plain_dict_users_read_by_key(music_tables, hashing_embedding):
    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)
    hit = index.as_retriever(similarity_top_k=1).retrieve("stadium capacity")[0]
    assert type(hit.node.metadata) is dict and hit.node.metadata["table_id"] == "stadium"
    assert result_metadata(hit) is hit.node.metadata
