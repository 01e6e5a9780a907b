import pytest

from llama_index_pearl.foundations.timing import stage


def test_stage_adds_time_to_a_repeated_stage():
    seconds = {"embed": 1.0}
    with stage(seconds, "embed"):
        pass
    assert seconds["embed"] >= 1.0


def test_stage_records_time_when_the_block_raises():
    seconds: dict[str, float] = {}
    with pytest.raises(RuntimeError), stage(seconds, "discovery"):
        raise RuntimeError("boom")
    assert "discovery" in seconds
