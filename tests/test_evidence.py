"""How surely a question needs each candidate table: its evidence as features, and a calibrated probability."""

from __future__ import annotations

import numpy as np
import pytest

from llama_index_pearl.evaluation.benchmark import calibration_error
from llama_index_pearl.retrieval.answer.evidence import (
    FEATURES,
    Candidate,
    Confidence,
    content_words,
    features,
    quoted_words,
    word_shares,
)


def _column(matrix: np.ndarray, name: str) -> list[float]:
    return [round(float(x), 3) for x in matrix[:, FEATURES.index(name)]]


def test_content_words_leave_out_what_asks_and_what_joins_words():
    assert content_words("How many tracks does each genre have?") == ["tracks", "genre"]


def test_content_words_are_kept_once_in_order_and_bounded():
    assert content_words("sales sales revenue") == ["sales", "revenue"]
    assert len(content_words(" ".join(f"word{chr(97 + i)}" for i in range(26)))) == 12


def test_a_tie_on_a_joined_unit_is_told_apart_by_the_tables_own_units():
    """Both tables score 0.6 through one unit naming both; only the first (pooling ranks it first for that) has an
    own unit near it."""
    tied = [
        Candidate("film", 0.6, own_score=0.58, unit_tables=2),
        Candidate("actor", 0.6, own_score=0.3, unit_tables=2),
    ]
    matrix = features(tied, [(0.0, 0.0), (0.0, 0.0)], {}, {}, 2)
    assert _column(matrix, "gap") == [0.0, 0.0]
    assert _column(matrix, "own_gap") == [0.02, 0.3]
    p = Confidence().probabilities(matrix)
    assert p[0] > p[1]


def test_a_table_without_units_of_its_own_counts_below_every_candidate():
    cands = [Candidate("a", 0.6, own_score=0.6), Candidate("b", 0.5, own_score=None)]
    assert _column(features(cands, [(0.0, 0.0), (0.0, 0.0)], {}, {}, 2), "own_gap") == [0.0, 0.15]


def test_the_table_whose_column_a_word_matches_best_wins_that_word():
    cands = [
        Candidate("invoice_line", 0.5, column=0.4, word_columns=(0.62, 0.2)),
        Candidate("genre", 0.55, column=0.5, word_columns=(0.30, 0.7)),
    ]
    matrix = features(cands, [(0.0, 0.0), (0.0, 0.0)], {}, {}, 2)
    assert _column(matrix, "word_column_wins") == [0.5, 0.5]
    assert _column(matrix, "word_column_margin") == [0.32, 0.5]
    assert _column(matrix, "word_column") == [0.0, 0.0]
    assert _column(matrix, "column_gap") == [0.1, 0.0]


def test_a_table_that_answers_a_word_the_seed_does_not_adds_to_the_seed():
    """ "What revenue did each product bring in?": the seed ``products`` answers "product"; ``order_items``
    answers "revenue" (its unit price) better by more than ``BEYOND_SEED``; ``categories`` adds nothing."""
    cands = [
        Candidate("products", 0.6, word_columns=(0.40, 0.90, 0.20)),
        Candidate("order_items", 0.5, word_columns=(0.55, 0.60, 0.22)),
        Candidate("categories", 0.5, word_columns=(0.38, 0.70, 0.21)),
    ]
    distances = {"products": 0, "order_items": 1, "categories": 1}
    matrix = features(cands, [(0.0, 0.0)] * 3, distances, {}, 3, seed="products")
    assert _column(matrix, "beyond_seed") == [0.0, 0.333, 0.0]


def test_what_the_seed_answers_of_the_question_is_read_on_every_other_candidate():
    """ "Which albums does each artist have?": the seed ``albums`` answers "albums" and, as well as any candidate
    within ``BEYOND_SEED``, "artist"; a seed that answers every word leaves the others nothing to add."""
    cands = [
        Candidate("albums", 0.6, word_columns=(0.90, 0.66)),
        Candidate("artists", 0.5, word_columns=(0.40, 0.70)),
        Candidate("tracks", 0.4, word_columns=(0.50, 0.30)),
    ]
    matrix = features(cands, [(0.0, 0.0)] * 3, {}, {}, 3, seed="albums")
    assert _column(matrix, "seed_answers") == [0.0, 1.0, 1.0]


def test_a_seed_that_leaves_a_word_to_others_answers_part_of_the_question():
    cands = [Candidate("albums", 0.6, word_columns=(0.90, 0.40)), Candidate("artists", 0.5, word_columns=(0.4, 0.7))]
    matrix = features(cands, [(0.0, 0.0)] * 2, {}, {}, 2, seed="albums")
    assert _column(matrix, "seed_answers") == [0.0, 0.5]


def test_a_word_no_column_matches_well_is_won_by_none():
    cands = [Candidate("a", 0.5, column=0.2, word_columns=(0.3,)), Candidate("b", 0.5, column=0.2, word_columns=(0.2,))]
    assert _column(features(cands, [(0.0, 0.0), (0.0, 0.0)], {}, {}, 2), "word_column_wins") == [0.0, 0.0]


def test_a_value_the_question_quotes_is_held_by_the_table_of_that_value():
    cands = [Candidate("concerts", 0.6), Candidate("cities", 0.5)]
    words = {"concerts": frozenset({"tour", "harbor"}), "cities": frozenset({"toronto"})}
    quoted = quoted_words("Which tickets for the Harbor tour in Toronto?")
    shares = word_shares(cands, words, {"tour": 2.0, "harbor": 1.0, "toronto": 1.0}, quoted)
    assert quoted == {"harbor", "toronto"}
    assert shares == [(0.75, 0.5), (0.25, 0.5)]


def test_the_question_words_a_table_holds_raise_its_share():
    cands = [Candidate("a", 0.5), Candidate("b", 0.5)]
    shares = word_shares(cands, {"b": frozenset({"wembley"})}, {"wembley": 2.0, "joe": 1.0})
    assert [share for share, _ in shares] == [0.0, 1.0]
    p = Confidence().probabilities(features(cands, shares, {}, {}, 2))
    assert p[1] > p[0]


def test_the_farther_below_the_best_score_the_less_sure():
    cands = [Candidate(t, s, own_score=s) for t, s in [("a", 0.7), ("b", 0.6), ("c", 0.4)]]
    p = Confidence().probabilities(features(cands, [(0.0, 0.0)] * 3, {}, {}, 3))
    assert p[0] > p[1] > p[2]


def test_distance_and_adjacency_are_read_from_the_seed():
    cands = [Candidate("a", 0.5), Candidate("b", 0.5), Candidate("c", 0.5)]
    matrix = features(cands, [(0.0, 0.0)] * 3, {"a": 0, "b": 1}, {}, 3)
    assert _column(matrix, "distance") == [0.0, 1.0, 4.0]
    assert _column(matrix, "adjacent") == [0.0, 1.0, 0.0]


def test_an_index_without_column_vectors_has_its_own_model():
    model = Confidence.without_columns()
    assert model.word_column == model.column_gap == model.word_column_margin == 0.0
    assert model != Confidence()


def test_a_model_of_named_weights_weighs_the_others_nothing():
    model = Confidence.from_weights(-1.0, {"gap": -5.0})
    assert model.bias == -1.0 and model.gap == -5.0 and model.words == 0.0


def test_calibration_is_zero_where_confidence_is_the_frequency_and_grows_with_overconfidence():
    """A fixture: in each decile, a tenth of the tables per tenth of confidence are needed."""
    pairs = [(c / 10 + 0.05, i < c) for c in range(10) for i in range(10)]
    assert calibration_error([(p, bool(y)) for p, y in pairs]) == pytest.approx(0.05)
    overconfident = [(min(p + 0.3, 1.0), y) for p, y in pairs]
    assert calibration_error(overconfident) > 0.2
