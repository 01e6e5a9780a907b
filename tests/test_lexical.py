"""Lexical (BM25) evidence: tokens, normalised scores, and fusion with dense scores."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pytest
from embeddings import TrigramEmbedding
from indexes import lexical_scorer

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.retrieval.retriever import embed_query
from llama_index_pearl.retrieval.search.lexical import LexicalScorer, lexical_tokens
from llama_index_pearl.retrieval.search.pooling import UnitHit, max_pool
from llama_index_pearl.text.words import family_forms, singular, split_identifiers


def test_tokens_are_lower_case_singular_and_without_stop_words():
    assert lexical_tokens(["The Pets of the Students"]) == [["pet", "student"]]


@pytest.mark.parametrize(
    "text",
    [
        "Which singers performed at Stadium_Name 'Hampden Park' in 2014?",
        "Table: car_makers\nColumns: Id | Maker | FullName | Country\n1 | amc | American Motor Company | 1",
        "Has_Pet carMakers HTTPServer über-Straße, naïve cafés; x y 42 7",
        "",
        "the of and AND The",
        "classes glasses boxes churches wishes countries is bus ss",
    ],
)
def test_tokens_are_those_of_bm25s_tokenize_with_the_same_rules(text):
    import bm25s

    expected = bm25s.tokenize(
        [split_identifiers(text)],
        token_pattern=r"(?u)\b\w\w+\b",
        stopwords="en",
        stemmer=lambda tokens: [singular(t) for t in tokens],
        return_ids=False,
        show_progress=False,
    )
    assert lexical_tokens([text]) == expected


def test_scores_are_relative_to_the_best_matching_document():
    scorer = LexicalScorer(["a", "b", "c"], ["pet owners", "pet pet type", "concert stadium"])
    scores = scorer.scores("which pet type")
    assert max(scores.values()) == 1.0
    assert scores["b"] == 1.0 and 0 < scores["a"] < 1
    assert "c" not in scores


def test_a_question_sharing_no_word_scores_nothing():
    scorer = LexicalScorer(["a"], ["pet owners"])
    assert scorer.scores("zebra") == {}
    assert scorer.rank("zebra", 3) == []


def test_a_question_word_no_document_spells_reads_as_the_forms_of_its_family_they_hold():
    scorer = LexicalScorer(["rental", "film", "payment"], ["rental date", "film title", "payment amount"])
    assert set(scorer.scores("films most often rented")) == {"rental", "film"}
    assert set(scorer.scores("what each customer paid")) == {"payment"}


def test_a_question_word_a_document_spells_is_read_as_written():
    scorer = LexicalScorer(["rented", "rental"], ["rented flag", "rental date"])
    assert set(scorer.scores("rented")) == {"rented"}


def test_a_table_named_by_the_family_of_a_question_verb_holds_the_word():
    tables = {
        "rental": pd.DataFrame({"rental_date": ["2005-05-24"], "film_id": [1]}),
        "film": pd.DataFrame({"film_id": [1], "title": ["Academy Dinosaur"]}),
    }
    index = PearlTableIndex.from_tables(tables, embed_model=TrigramEmbedding(), augment=False)
    held, _ = index.revisions.state().words.of("Which films are rented most?")
    assert "rental" in held["rental"] and "rental" not in held.get("film", frozenset())


@pytest.mark.parametrize(
    ("word", "forms"),
    [
        ("rented", ("rental",)),  # an ending that names the verb's act
        ("shipped", ("shipping",)),  # its last consonant doubled
        ("played", ()),  # a verb's actor is another thing: games played are no player
        ("approved", ("approval",)),  # its last "e" dropped
        ("invoiced", ("invoice",)),  # the dictionary form alone
        ("sold", ()),  # "sell" does not start as "sold": another word to a reader
        ("came", ()),  # nor does "come" start as "came"
        ("lowest", ()),  # a comparative is its own word
        ("one", ()),  # a word in its dictionary form is read as written
    ],
)
def test_a_words_family_is_its_dictionary_form_and_the_nouns_made_of_it(word, forms):
    known = {"rental", "shipping", "player", "approval", "invoice", "sale", "comment", "low", "oney"}
    assert family_forms(word, known) == forms


def test_scorer_rejects_mismatched_ids_and_texts():
    with pytest.raises(ValueError, match="2 ids for 1 documents"):
        LexicalScorer(["a", "b"], ["only one"])


def _brute_force_ranking(index: PearlTableIndex, question: str, weight: float) -> list[tuple[str, float]]:
    """Fused max-pooling over every unit, from the stored vectors."""
    from llama_index_pearl.store.any_store import unit_vectors

    units = index.units
    vectors = unit_vectors(index.vector_index.vector_store, [u.node_id for u in units])
    dense = vectors @ np.asarray(embed_query(index.embed_model, question))
    lexical = lexical_scorer(index).scores(question)
    hits = [
        UnitHit(u.node_id, u.metadata["table_ids"], float(d) + weight * lexical.get(u.node_id, 0.0))
        for u, d in zip(units, dense)
    ]
    return [(t.table_id, round(t.score, 5)) for t in max_pool(hits)]


@pytest.fixture
def many_tables_index() -> PearlTableIndex:
    rng = np.random.default_rng(7)
    words = ["venue", "band", "album", "label", "city", "genre", "ticket", "tour", "song", "fan", "award", "chart"]
    tables = {}
    for i in range(40):
        cols = list(rng.choice(words, size=3, replace=False))
        tables[f"t{i}_{cols[0]}"] = pd.DataFrame({c: [f"{c}{j}" for j in range(3)] for c in cols})
    return PearlTableIndex.from_tables(tables, embed_model=TrigramEmbedding(), augment=False)


@pytest.mark.parametrize("question", ["which award did the band get", "ticket prices per city", "chart songs"])
def test_fused_retrieval_equals_brute_force_fusion_over_all_units(many_tables_index, question):
    # fetch_k=2 forces the retriever to look up units the store did not return
    retriever = many_tables_index.as_retriever(similarity_top_k=3, fetch_k=2, lexical_weight=0.3, set_rule=None)
    got = [(n.node.metadata["table_id"], round(n.score, 5)) for n in retriever.retrieve(question)]
    expected = _brute_force_ranking(many_tables_index, question, 0.3)[:3]
    assert [s for _, s in got] == [s for _, s in expected]
    assert {t for t, _ in got} == {t for t, _ in expected}


def test_lexical_weight_zero_ranks_by_the_encoder_alone(many_tables_index):
    question = "which award did the band get"
    retriever = many_tables_index.as_retriever(similarity_top_k=3, lexical_weight=0.0, set_rule=None)
    got = [round(n.score, 5) for n in retriever.retrieve(question)]
    assert got == [s for _, s in _brute_force_ranking(many_tables_index, question, 0.0)[:3]]


def test_lexical_weight_must_be_finite_and_not_negative(many_tables_index):
    for bad in (-0.1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="lexical_weight"):
            many_tables_index.as_retriever(lexical_weight=bad)


def test_inserted_tables_are_scored_lexically(many_tables_index):
    many_tables_index.insert_tables({"zebra_sightings": pd.DataFrame({"zebra": ["z1"], "park": ["p1"]})})
    matched = lexical_scorer(many_tables_index).scores("zebra sightings")
    assert [many_tables_index.catalog.units[u].table_ids for u in matched] == [["zebra_sightings"]]


def test_building_the_lexical_index_logs_nothing_below_the_applications_level():
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    root = logging.getLogger()
    previous = root.level
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    try:
        LexicalScorer(["a"], ["pet owners"])
    finally:
        root.removeHandler(handler)
        root.setLevel(previous)
    assert [r.getMessage() for r in records if r.name.startswith("bm25s")] == []


def test_the_stop_words_are_bm25s_english_list():
    from bm25s.stopwords import STOPWORDS_EN

    from llama_index_pearl.corpus.lexical import STOP_WORDS

    assert frozenset(STOPWORDS_EN) == STOP_WORDS


def test_scores_equal_bm25s_own_to_the_bit_and_after_reordering_the_documents():
    import bm25s

    from llama_index_pearl.corpus.lexical import LexicalIndex

    texts = ["pet owners of Pets", "pet pet type", "concert stadium", "Stadium_Name Hampden Park", "owner owner pet"]
    bm25 = bm25s.BM25()
    bm25.index(lexical_tokens(texts), show_progress=False)
    index = LexicalIndex.build(texts)
    order = [3, 0, 4, 1, 2]
    reordered = index.reordered(order)
    for question in ["which pet owner types", "stadium pet pet", "Hampden Park concerts", "nothing shared"]:
        tokens = [t for t in lexical_tokens([question])[0] if t in bm25.vocab_dict]
        expected = bm25.get_scores(tokens) if tokens else np.zeros(len(texts), dtype=np.float32)
        assert index.raw_scores(question).tobytes() == np.asarray(expected, dtype=np.float32).tobytes()
        assert reordered.raw_scores(question).tobytes() == index.raw_scores(question)[order].tobytes()
