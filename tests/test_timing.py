import gc

import pytest

from llama_index_pearl.foundations.timing import gc_paused, stage


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


def test_gc_paused_restores_an_enabled_collector():
    gc.enable()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_gc_paused_leaves_a_disabled_collector_disabled():
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
