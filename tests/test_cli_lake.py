"""``pearl query`` on a lake of databases: sources named as a person names them, tables shown by short names."""

from __future__ import annotations

import json

import pytest

from llama_index_pearl.cli import main
from llama_index_pearl.cli.sources import resolve_sources, short_table_names, source_labels

# a lake laid out as exports are: LAKE/<db>/tables/<db>__<table>.csv
LAKE = {
    "crm/tables/crm__users.csv": "user_id,name,city\n1,Ann Lee,Oslo\n2,Joe Sharp,Lima\n",
    "crm/tables/crm__visits.csv": "visit_id,user_id,day\n10,1,2024-01-02\n11,2,2024-01-03\n",
    "shop/tables/shop__orders.csv": "order_id,item,price\n100,lamp,25\n101,desk,140\n",
}


@pytest.fixture(scope="module")
def lake_index(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lake")
    for path, csv in LAKE.items():
        (folder / "lake" / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / "lake" / path).write_text(csv)
    assert main(["index", str(folder / "lake"), "--out", str(folder / "idx"), "-q"]) == 0
    return folder / "idx"


def test_source_finds_the_source_its_first_part_names(lake_index, capsys):
    assert main(["query", str(lake_index), "Which users live in Oslo?", "--source", "crm", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["source"] for r in rows} == {"crm/tables"}


def test_source_finds_the_source_its_name_starts(lake_index, capsys):
    assert main(["query", str(lake_index), "What did the desk cost?", "--source", "sh", "--json"]) == 0
    assert {r["table_id"] for r in json.loads(capsys.readouterr().out)} == {"shop/tables/shop__orders"}


def test_a_source_name_several_sources_share_is_an_error_naming_them(lake_index, capsys):
    assert main(["query", str(lake_index), "Which users live in Oslo?", "--source", "tables"]) == 2
    err = capsys.readouterr().err
    assert "--source 'tables' names several sources, 'crm/tables', 'shop/tables': give one of them" in err


def test_query_shows_short_table_names_and_json_the_full_ids(lake_index, capsys):
    assert main(["query", str(lake_index), "Which users visited on 2024-01-02?", "-k", "2", "--source", "crm"]) == 0
    out = capsys.readouterr().out
    assert "crm/users" in out and "crm/visits" in out and "crm/tables/" not in out
    assert "crm/visits.user_id = crm/users.user_id" in out  # the joins too
    assert main(["query", str(lake_index), "Which users visited on 2024-01-02?", "-k", "2", "--json"]) == 0
    assert {r["table_id"] for r in json.loads(capsys.readouterr().out)} == {
        "crm/tables/crm__users",
        "crm/tables/crm__visits",
    }


def test_quiet_query_prints_the_tables_alone(lake_index, capsys):
    assert main(["query", str(lake_index), "Which users live in Oslo?", "-k", "2", "--source", "crm", "-q"]) == 0
    assert sorted(capsys.readouterr().out.split()) == ["crm/users", "crm/visits"]


def test_a_source_named_in_another_case_is_found_when_no_other_fits(lake_index, capsys):
    assert main(["query", str(lake_index), "Which users live in Oslo?", "--source", "CRM", "--json"]) == 0
    assert {r["source"] for r in json.loads(capsys.readouterr().out)} == {"crm/tables"}


def test_a_name_as_written_comes_before_a_name_in_another_case():
    assert resolve_sources(["Chinook"], ["chinook/tables", "Chinook"]) == ["Chinook"]
    assert resolve_sources(["chinook"], ["chinook/tables", "Chinook"]) == ["chinook/tables"]
    with pytest.raises(ValueError, match="names several sources, 'Chinook/x', 'chinook/tables'"):
        resolve_sources(["CHINOOK"], ["chinook/tables", "Chinook/x"])


def test_a_table_shows_under_its_databases_name_when_only_its_source_has_a_sub_folder():
    sources = {"chinook/tables/chinook__InvoiceLine": "chinook/tables", "northwind/Orders": "northwind"}
    assert short_table_names(sources, sources) == {
        "chinook/tables/chinook__InvoiceLine": "chinook/InvoiceLine",
        "northwind/Orders": "northwind/Orders",
    }


def test_a_table_shows_under_the_last_part_of_its_source_when_the_first_parts_are_shared():
    sources = {"data/chinook/Invoice": "data/chinook", "data/northwind/Orders": "data/northwind"}
    assert short_table_names(sources, sources) == {
        "data/chinook/Invoice": "chinook/Invoice",
        "data/northwind/Orders": "northwind/Orders",
    }


def test_a_short_name_two_tables_would_share_stays_whole():
    sources = {"a/x/users": "a/x", "a/y/users": "a/y", "b/orders": "b"}
    assert short_table_names(sources, sources) == {
        "a/x/users": "x/users",
        "a/y/users": "y/users",
        "b/orders": "b/orders",
    }
    sources = {"a/db/a__users": "a/db", "a/db/users": "a/db"}
    assert short_table_names(sources, sources) == {"a/db/a__users": "a/db/a__users", "a/db/users": "a/db/users"}


def test_the_unknown_source_error_is_one_line_whatever_the_source_names_hold():
    with pytest.raises(ValueError) as raised:
        resolve_sources(["nope"], ["crm\nx", "shop"])
    assert "\n" not in str(raised.value) and "'crm\\nx'" in str(raised.value)


def test_the_unknown_source_error_says_how_many_sources_it_does_not_list():
    with pytest.raises(ValueError, match=r"'db00', .*'db19' and 5 more$"):
        resolve_sources(["nope"], [f"db{n:02d}" for n in range(25)])


@pytest.fixture(scope="module")
def many_sources_index(tmp_path_factory):
    """22 sources, one of them named with a newline (a folder someone else named)."""
    folder = tmp_path_factory.mktemp("many")
    for name in ["an odd\nname", *(f"db{n:02d}" for n in range(21))]:
        (folder / "lake" / name).mkdir(parents=True)
        (folder / "lake" / name / "items.csv").write_text("item_id,label\n1,lamp\n2,desk\n")
    assert main(["index", str(folder / "lake"), "--out", str(folder / "idx"), "-q"]) == 0
    return folder / "idx"


def test_pearl_query_names_the_sources_on_one_line_and_how_many_it_leaves_out(many_sources_index, capsys):
    assert main(["query", str(many_sources_index), "Which lamps?", "--source", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.rstrip().endswith("and 2 more")


def test_the_text_and_the_json_list_the_tables_of_a_lake_in_one_order(lake_index, capsys):
    question = "Which users visited on 2024-01-02, and what did the desk cost?"
    assert main(["query", str(lake_index), question, "-k", "3", "-q"]) == 0
    shown = capsys.readouterr().out.split()
    assert main(["query", str(lake_index), question, "-k", "3", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    short = short_table_names([r["table_id"] for r in rows], {r["table_id"]: r["source"] for r in rows})
    assert [short[r["table_id"]] for r in rows] == shown
    in_set = [r["in_set"] for r in rows]
    assert in_set == sorted(in_set, reverse=True)  # the set first, then the rest


def test_the_database_a_question_is_routed_to_is_named_as_a_person_names_it(lake_index, capsys):
    assert main(["query", str(lake_index), "Which users visited on 2024-01-02?", "-k", "2"]) == 0
    out = capsys.readouterr().out
    assert "Database: crm (how surely:" in out and "crm/tables" not in out
    assert main(["query", str(lake_index), "Which users visited on 2024-01-02?", "-k", "2", "--json"]) == 0
    assert {r["routed_source"] for r in json.loads(capsys.readouterr().out)} == {"crm/tables"}  # JSON: the full name


def test_source_labels_keep_what_tells_the_sources_apart():
    assert source_labels(["crm/tables", "shop/tables"], ["crm/tables", "shop/tables"]) == {
        "crm/tables": "crm",
        "shop/tables": "shop",
    }
    assert source_labels(["a/db"], ["a/db", "a/dw"]) == {"a/db": "db"}
