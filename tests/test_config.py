import math

import pytest

from llama_index_pearl.config import PearlConfig, option_fields


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("budget", -1, "budget must be >= 0"),
        ("lambda_div", math.nan, "lambda_div must be a finite number"),
        ("max_rows", "5", "max_rows must be an integer"),
        ("max_rows", 0, "max_rows must be >= 1"),
        ("include_titles", 1, "include_titles must be True or False"),
        ("cross_source_joins", "sometimes", "cross_source_joins must be one of"),
        ("concurrency", 0, "concurrency must be >= 1"),
        ("max_rows_read", 0, "max_rows_read must be >= 1"),
    ],
)
def test_a_bad_value_is_refused_naming_the_field(field, value, message):
    with pytest.raises(ValueError, match=message):
        PearlConfig(**{field: value})


def test_optional_numbers_accept_none():
    config = PearlConfig(budget=None, max_rows_read=None, single_hop_questions=None)
    assert config.budget is None and config.max_rows_read is None


def test_an_unknown_override_names_the_closest_option():
    with pytest.raises(TypeError, match="did you mean 'budget'"):
        PearlConfig.with_overrides(None, budjet=3)


def test_overrides_replace_fields_of_the_given_config():
    config = PearlConfig.with_overrides(PearlConfig(max_rows=5), budget=3)
    assert (config.max_rows, config.budget) == (5, 3)


def test_csv_options_given_as_a_dict_are_validated():
    with pytest.raises(ValueError, match="delimiter must be one character"):
        PearlConfig(csv_options={"delimiter": ";;"})


def test_the_persisted_dict_round_trips_without_per_machine_settings():
    config = PearlConfig(budget=7, cache_dir="/somewhere", concurrency=2, csv_options={"delimiter": ";"})
    data = config.to_dict()
    assert "cache_dir" not in data and "concurrency" not in data
    restored = PearlConfig.from_dict(data)
    assert restored == PearlConfig(budget=7, csv_options={"delimiter": ";"})


def test_a_persisted_config_reads_back_and_an_unknown_key_is_refused():
    assert PearlConfig.from_dict(PearlConfig(max_rows=4).to_dict()) == PearlConfig(max_rows=4)
    with pytest.raises(ValueError, match=r"unknown build option\(s\) \['generator'\]"):
        PearlConfig.from_dict({"generator": "heuristic(n_single=2,seed=0)", "max_rows": 4})


def test_an_insert_may_change_how_it_reads_but_not_what_the_build_fixed():
    config = PearlConfig(max_rows=5)
    assert config.for_update(concurrency=1).concurrency == 1
    with pytest.raises(ValueError, match="max_rows is fixed by the build"):
        config.for_update(max_rows=3)


def test_every_option_has_a_group_and_help():
    assert all(f.metadata.get("group") and f.metadata.get("help") for f in option_fields())


def test_every_option_on_by_default_says_what_turning_it_off_does():
    on = [f for f in option_fields() if f.default is True]
    assert on and all(f.metadata.get("off") for f in on)


def _numeric(declared) -> bool:
    return str(declared.type).startswith(("int", "float"))


def test_every_number_option_declares_its_range():
    unbounded = [f.name for f in option_fields() if _numeric(f) and not {"min", "max"} <= set(f.metadata)]
    assert unbounded == []


@pytest.mark.parametrize("declared", [f for f in option_fields() if _numeric(f)], ids=lambda f: f.name)
def test_a_number_past_its_option_bound_is_refused_naming_it(declared):
    too_big = declared.metadata["max"] + (1 if str(declared.type).startswith("int") else 1.0)
    with pytest.raises(ValueError, match=rf"{declared.name} must be <= "):
        PearlConfig(**{declared.name: too_big})


def test_the_second_bar_of_the_set_may_not_pass_the_first():
    with pytest.raises(ValueError, match="maybe_confidence"):
        PearlConfig(needed_confidence=0.3, maybe_confidence=0.4)


def test_the_bars_of_the_set_are_probabilities():
    with pytest.raises(ValueError, match="needed_confidence"):
        PearlConfig(needed_confidence=1.5)


def test_an_insert_may_change_the_bars_but_not_the_column_vectors():
    config = PearlConfig()
    assert config.for_update(needed_confidence=0.6).needed_confidence == 0.6
    with pytest.raises(ValueError, match="column_vectors"):
        config.for_update(column_vectors=False)
