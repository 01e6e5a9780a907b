"""The paper's ablations: indexes built without one part of PEARL, for pearl eval only (no build option)."""

from __future__ import annotations

import pandas as pd
import pytest

from llama_index_pearl import PearlConfig, PearlTableIndex
from llama_index_pearl.cli import full_parser
from llama_index_pearl.evaluation.ablations import Ablation, build_ablated, random_view_units
from llama_index_pearl.tables.table import Table
from llama_index_pearl.text.serialization import Serializer


@pytest.fixture
def chain_tables() -> dict[str, pd.DataFrame]:
    """singer -> performance -> stadium, with FK names and overlapping values."""
    return {
        "singer": pd.DataFrame({"singer_id": [1, 2, 3], "singer_name": ["Joe Sharp", "Ann Lee", "Rosa Park"]}),
        "performance": pd.DataFrame({"performance_id": [10, 11, 12], "singer_id": [1, 2, 3], "stadium_id": [7, 8, 7]}),
        "stadium": pd.DataFrame({"stadium_id": [7, 8], "stadium_name": ["Wembley", "Maracana"], "capacity": [90, 78]}),
    }


def _kinds(index: PearlTableIndex) -> set[str]:
    return set(index.report.units_by_kind)


def test_random_query_questions_every_table_and_discovers_no_join(chain_tables, hashing_embedding):
    index = build_ablated(chain_tables, Ablation(random_query=True), embed_model=hashing_embedding)
    assert _kinds(index) == {"original", "schema", "single_hop"}
    singles = [u for u in index.units if u.metadata["kind"] == "single_hop"]
    assert {u.metadata["table_ids"][0] for u in singles} == set(chain_tables)
    assert "discovery" not in index.report.seconds and index.join_graph.number_of_edges() == 0


def test_random_views_replace_the_path_units_one_for_one(chain_tables, hashing_embedding):
    built = PearlTableIndex.from_tables(chain_tables, embed_model=hashing_embedding)
    ablated = build_ablated(chain_tables, Ablation(random_view=True), embed_model=hashing_embedding)
    generated = sum(n for kind, n in built.report.units_by_kind.items() if kind in ("explicit", "implicit"))
    assert ablated.report.units_by_kind["random_view"] == generated
    assert _kinds(ablated) == {"original", "schema", "random_view"}


def test_random_views_match_the_requested_count_and_carry_no_question():
    tables = [Table("t", pd.DataFrame({"a": [1], "b": [2], "c": [3]}))]
    units = random_view_units(tables, 5, Serializer(), seed=1)
    assert len(units) == 5 and len({u.node_id for u in units}) == 5
    assert all(u.metadata["question"] is None and u.metadata["kind"] == "random_view" for u in units)


def test_explicit_only_keeps_the_units_of_explicit_paths(chain_tables, hashing_embedding):
    index = build_ablated(chain_tables, Ablation(explicit_only=True), embed_model=hashing_embedding)
    assert "implicit" not in _kinds(index) and "explicit" in _kinds(index)


def test_without_originals_no_table_has_a_unit_of_its_own(chain_tables, hashing_embedding):
    index = build_ablated(chain_tables, Ablation(include_originals=False), embed_model=hashing_embedding)
    assert not _kinds(index) & {"original", "schema"} and index.units


def test_no_ablation_is_the_build_itself(chain_tables, hashing_embedding):
    ablated = build_ablated(chain_tables, Ablation(), embed_model=hashing_embedding)
    built = PearlTableIndex.from_tables(chain_tables, embed_model=hashing_embedding)
    assert sorted(u.node_id for u in ablated.units) == sorted(u.node_id for u in built.units)


def test_contradictory_ablations_are_refused():
    with pytest.raises(ValueError, match="explicit_only and implicit_only"):
        Ablation(explicit_only=True, implicit_only=True)


def test_an_ablation_is_no_build_option():
    with pytest.raises(TypeError, match="random_view"):
        PearlConfig(random_view=True)  # type: ignore[call-arg]


def test_ablation_flags_belong_to_pearl_eval_only():
    args = full_parser().parse_args(["eval", "bench/", "--random-view", "--seed", "3", "--no-originals"])
    assert (args.random_view, args.seed, args.include_originals) == (True, 3, False)
    with pytest.raises(SystemExit):
        full_parser().parse_args(["index", "tables/", "--random-view"])
