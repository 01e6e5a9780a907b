"""Edge scores: value overlap estimates, structural anchors, f."""

from __future__ import annotations

import pytest

from llama_index_pearl.joins import scoring
from llama_index_pearl.joins.profiles import profile_column


def col(values, name="c", table="t"):
    return profile_column(table, name, [str(v) for v in values])


def test_overlap_is_exact_on_small_columns():
    jac, c_ab, c_ba, shared = scoring.value_overlap(col([1, 2, 3, 4]), col([3, 4, 5, 6, 7, 8]))
    assert (jac, c_ab, c_ba, shared) == (pytest.approx(2 / 8), 0.5, pytest.approx(2 / 6), 2)


def test_overlap_estimate_from_truncated_samples_is_close():
    a = profile_column("t", "a", [f"k{i}" for i in range(4000)], sample_size=256)
    b = profile_column("t", "b", [f"k{i}" for i in range(2000)], sample_size=256)
    jac, _c_ab, c_ba, _ = scoring.value_overlap(a, b)
    assert jac == pytest.approx(0.5, abs=0.1)
    assert c_ba == pytest.approx(1.0)


def test_overlap_score_averages_jaccard_and_containment():
    assert scoring.overlap_score(0.2, 1.0) == pytest.approx(0.6)


def test_ints_never_join_prose_or_floats():
    assert not scoring.types_compatible(col([1, 2]), col(["a b", "c"]))
    assert not scoring.types_compatible(col([1, 2]), col([1.5, 2.5]))
    assert scoring.types_compatible(col([1, 2]), col([3, 4]))


def test_structural_score_is_zero_towards_a_non_unique_column_and_for_incompatible_types():
    unique, repeated = col([1, 2, 3]), col([1, 1, 2])
    assert scoring.structural_score("fk_name", unique, True) == 1.0
    assert scoring.structural_score("fk_name", repeated, True) == 0.0
    assert scoring.structural_score("declared", repeated, True) == 1.0
    assert scoring.structural_score("fk_name", unique, False) == 0.0
    assert scoring.structural_score(None, unique, True) == 0.0


def test_inclusion_into_a_unique_sparse_key_anchors_the_edge():
    key = col([1510, 1689, 1381, 1709, 1101])
    fk = col([1510, 1689, 1381, 1510])
    _, c_ab, c_ba, shared = scoring.value_overlap(fk, key)
    assert scoring.inclusion_anchor(fk, key, c_ab, c_ba, shared) == 1


def test_dense_one_to_n_keys_are_not_anchored_by_values_alone():
    key = col(range(1, 31))
    counts = col([1, 2, 3, 4, 5, 3])
    _, c_ab, c_ba, shared = scoring.value_overlap(counts, key)
    assert scoring.inclusion_anchor(counts, key, c_ab, c_ba, shared) == 0


def test_f_is_structural_plus_overlap_for_explicit_and_semantic_plus_overlap_for_implicit():
    assert scoring.explicit_score(0.9, 0.5) == pytest.approx(1.4)
    assert scoring.implicit_score(0.7, 0.5) == pytest.approx(1.2)


def test_overlap_of_two_dense_id_columns_is_coincidental():
    assert scoring.coincidental_overlap(col(range(1, 30)), col(range(1, 50)))


def test_overlap_of_flag_columns_is_coincidental():
    assert scoring.coincidental_overlap(col(["T", "F", "T"]), col(["T", "F", "F", "T", "x", "y", "z"]))


def test_overlap_of_sparse_ids_or_names_is_evidence():
    assert not scoring.coincidental_overlap(
        col([10_482, 99_310, 5_120_007, 77, 31_337]), col([77, 31_337, 10_482, 8, 9])
    )
    assert not scoring.coincidental_overlap(
        col(["ann", "bo", "cy", "di", "ed"]), col(["ann", "bo", "cy", "fay", "gil"])
    )


def test_one_shared_value_of_sparse_ids_is_beyond_chance():
    patients = col([2110, 11408, 12052, 14872, 5_119_703])
    exams = col([14872, 163_109, 4_007_151])
    assert scoring.improbable_overlap(exams, patients)


def test_one_shared_value_of_small_numbers_is_chance():
    assert not scoring.improbable_overlap(col([1, 2, 3, 4, 5]), col([5, 6, 7, 8]))
    assert not scoring.improbable_overlap(col([2110, 11408]), col([90_000, 5_119_703]))  # nothing shared


def test_a_column_without_values_may_hold_any_key_but_never_a_float():
    empty = col([])
    assert scoring.types_compatible(empty, col([1, 2])) and scoring.types_compatible(empty, col(["a b", "c"]))
    assert not scoring.types_compatible(empty, col([1.5, 2.5]))


def test_a_reference_looks_like_its_key_even_when_no_value_is_shared():
    assert scoring.shapes_agree(col(["usa", "fra", "deu"]), col(["abw", "afg", "ago"]))
    assert not scoring.shapes_agree(col(["united states"] * 3), col(["abw", "afg", "ago"]))
    assert not scoring.shapes_agree(col([505942, 155782, 162549]), col(range(1, 11)))
    assert scoring.shapes_agree(col([841, 842]), col(range(1, 11)))
    assert scoring.shapes_agree(col([]), col(["abw", "afg"]))
