"""The objects an index is made of: its revisions and their locks, its units read when first needed, its query
generator rebuilt when first needed, and the scope an insert adds to."""

from __future__ import annotations

import threading

import networkx as nx
import pytest
from llama_index.core.schema import TextNode

from llama_index_pearl.corpus.units import KIND, TABLE_IDS, UnitKind
from llama_index_pearl.corpus.units_step import InsertScope
from llama_index_pearl.foundations.revisions import Revisions
from llama_index_pearl.generation import HeuristicQueryGenerator, IndexGenerator
from llama_index_pearl.joins.graph import build_join_graph
from llama_index_pearl.joins.paths import ColumnPair, JoinKind, JoinPath
from llama_index_pearl.storage.unit_stores import IndexUnits


def _built_from(log: list):
    def build(previous):
        log.append(previous)
        return f"state {len(log)}"

    return build


def test_the_state_of_a_revision_is_built_once_on_first_use():
    log: list = []
    revisions = Revisions(_built_from(log))
    assert log == []
    assert revisions.state() == revisions.state() == "state 1"
    assert log == [None] and revisions.number == 0


def test_an_apply_step_makes_a_new_revision_and_builds_its_state_from_the_previous_one():
    log: list = []
    revisions = Revisions(_built_from(log))
    first = revisions.state()
    with revisions.applying():
        pass
    assert revisions.number == 1 and log == [None, first] and revisions.state() == "state 2"


def test_an_apply_step_before_any_retrieval_leaves_the_state_to_the_first_one():
    log: list = []
    revisions = Revisions(_built_from(log))
    with revisions.applying():
        pass
    assert log == [] and revisions.number == 1
    revisions.state()
    assert log == [None]


def test_an_apply_step_that_raises_makes_no_revision_and_keeps_no_stale_state():
    log: list = []
    revisions = Revisions(_built_from(log))
    revisions.state()
    with pytest.raises(RuntimeError), revisions.applying():
        raise RuntimeError("the store refused")
    assert revisions.number == 0
    assert revisions.state() == "state 2" and log == [None, None]


def test_a_revision_is_not_applied_while_it_is_read():
    revisions = Revisions(_built_from([]))
    applied = threading.Event()

    def apply() -> None:
        with revisions.applying():
            applied.set()

    with revisions.reading():
        writer = threading.Thread(target=apply)
        writer.start()
        assert not applied.wait(0.2)
    writer.join(5)
    assert applied.is_set() and revisions.number == 1


def test_a_lock_timeout_of_zero_or_less_is_refused():
    revisions = Revisions(_built_from([]))
    with pytest.raises(ValueError):
        revisions.timeout = 0


def _unit(unit_id: str, kind: UnitKind = UnitKind.ORIGINAL, tables: tuple[str, ...] = ("t",)) -> TextNode:
    return TextNode(id_=unit_id, text=unit_id, metadata={KIND: kind.value, TABLE_IDS: list(tables)})


def test_units_given_are_never_read_again():
    units = IndexUnits([_unit("a")], vector_index=object(), open_units=None)  # type: ignore[arg-type]
    assert units.read and list(units.opened()[1]) == ["a"]


def test_units_of_a_load_are_read_once_when_first_needed():
    calls = []

    def open_units():
        calls.append(1)
        return "vector index", [_unit("a"), _unit("b")]

    units = IndexUnits(None, None, open_units)
    assert not units.read and calls == []
    threads = [threading.Thread(target=units.opened) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert calls == [1] and units.opened() == ("vector index", {"a": _unit("a"), "b": _unit("b")})


def test_a_loaded_index_rebuilds_its_generator_from_its_spec_once_and_names_it_before():
    spec = HeuristicQueryGenerator().to_spec()
    generator = IndexGenerator(None, spec, llm=None)
    assert generator.name == spec["model_name"] and generator.built is None
    rebuilt = generator.get()
    assert isinstance(rebuilt, HeuristicQueryGenerator) and generator.get() is rebuilt


def test_a_whole_table_index_has_no_generator():
    assert IndexGenerator(None, None, llm=None).get() is None
    assert IndexGenerator(None, None, llm=None).name == "none"


def test_an_insert_scope_after_a_delete_holds_what_the_delete_leaves():
    units = [_unit("a"), _unit("b"), _unit("s", UnitKind.STAR, ("t", "u"))]
    scope = InsertScope({"t": "T", "u": "U"}, nx.Graph(), lambda: units)  # type: ignore[dict-item]
    after = scope.without(["u"], ["s"], nx.Graph([("t", "x")]))
    assert list(after.tables) == ["t"] and [u.node_id for u in after.units] == ["a", "b"]
    assert scope.stars() == {"s"} and after.stars() == set()
    assert list(after.join_graph.edges) == [("t", "x")]


def test_the_paths_an_index_holds_count_against_each_pool_up_to_the_paid_budget():
    ab, bc = (ColumnPair("a", "id", "b", "a_id"),), (ColumnPair("b", "id", "c", "b_id"),)
    paths = [JoinPath(("a", "b"), (ab,), JoinKind.EXPLICIT, 1.0), JoinPath(("b", "c"), (bc,), JoinKind.EXPLICIT, 0.9)]
    scope = InsertScope({}, build_join_graph(["a", "b", "c"], [], paths), list)
    assert scope.used(None)[JoinKind.EXPLICIT] == 2
    assert scope.used(1)[JoinKind.EXPLICIT] == 1
