"""``pearl eval`` on a benchmark folder someone else wrote: each fault is one line naming the file and the line."""

from __future__ import annotations

import json
import logging

import pytest

from llama_index_pearl.cli import main
from llama_index_pearl.evaluation.benchmark_folder import load_benchmark

TABLES = {
    "shop__customer": "customer_id,name\n1,Ann Lee\n2,Joe Sharp\n",
    "shop__orders": "order_id,customer_id,total\n10,1,25\n11,2,40\n",
    "zoo__animal": "animal_id,species,keeper\n1,zebra,Tom\n2,lion,Sue\n",
}
FIRST = {"id": "q1", "question": "Who keeps the zebra?", "gold_tables": ["zoo__animal"]}
SECOND = {"id": "q2", "question": "What did Ann Lee order?", "gold_tables": ["shop__customer", "shop__orders"]}


def _folder(tmp_path, *lines: str, encoding: str = "utf-8"):
    """A benchmark folder of the three tables whose queries.jsonl holds these lines."""
    folder = tmp_path / "bench"
    (folder / "tables").mkdir(parents=True)
    for table_id, csv in TABLES.items():
        (folder / "tables" / f"{table_id}.csv").write_text(csv)
    (folder / "queries.jsonl").write_text("".join(f"{line}\n" for line in lines), encoding=encoding)
    return folder


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert err.startswith("pearl eval: error: ") and err.count("\n") == 1 and "Traceback" not in err
    return err


def test_a_line_that_is_not_json_is_named_by_its_file_and_line_blank_lines_counted(tmp_path, capsys):
    folder = _folder(tmp_path, json.dumps(FIRST), "", '{"id": "q2", "question": "What did Ann', json.dumps(SECOND))
    assert main(["eval", str(folder), "--method", "bm25"]) == 2
    err = _one_line_error(capsys)
    assert f"{folder / 'queries.jsonl'} line 3: not JSON" in err and "line 1 column" not in err


def test_a_line_that_is_json_but_no_object_is_named_by_its_line(tmp_path, capsys):
    folder = _folder(tmp_path, json.dumps(FIRST), '["zoo__animal"]')
    assert main(["eval", str(folder), "--method", "bm25"]) == 2
    assert "queries.jsonl line 2: not a JSON object" in _one_line_error(capsys)


def test_a_queries_file_that_starts_with_a_utf8_bom_is_read(tmp_path):
    folder = _folder(tmp_path, json.dumps(FIRST), json.dumps(SECOND), encoding="utf-8-sig")
    out = tmp_path / "result.json"
    assert main(["eval", str(folder), "--method", "bm25", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["metrics"]["all"]["n"] == 2


@pytest.mark.parametrize(
    ("gold", "said"),
    [
        (None, 'no "gold_tables"'),
        ("zoo__animal", '"gold_tables" must be a list of table ids, not a string: write ["zoo__animal"]'),
        ([], '"gold_tables" is empty: a question needs at least one gold table'),
        (["zoo__animal", None], '"gold_tables" must hold table ids (strings), not null'),
    ],
)
def test_a_question_without_a_list_of_gold_tables_is_an_error_naming_its_line(tmp_path, capsys, gold, said):
    second = {"id": "q2", "question": "Who keeps the lion?"} | ({} if gold is None else {"gold_tables": gold})
    folder = _folder(tmp_path, json.dumps(FIRST), json.dumps(second))
    assert main(["eval", str(folder), "--method", "bm25"]) == 2
    assert f"queries.jsonl line 2: {said}" in _one_line_error(capsys)


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("question", None, 'no "question"'),
        ("question", "  ", '"question" is blank'),
        ("id", None, 'no "id"'),
        ("hops", "two", "\"hops\" must be a whole number of tables, at least 1, not 'two'"),
    ],
)
def test_a_question_without_its_text_or_id_is_an_error_naming_its_line(tmp_path, capsys, field, value, said):
    second = {key: v for key, v in ({**SECOND, field: value}).items() if v is not None}
    folder = _folder(tmp_path, json.dumps(FIRST), json.dumps(second))
    assert main(["eval", str(folder), "--method", "bm25"]) == 2
    assert f"queries.jsonl line 2: {said}" in _one_line_error(capsys)


def test_a_gold_table_that_is_no_table_of_the_folder_is_warned_about_by_name_and_line(tmp_path, caplog):
    typo = {**SECOND, "gold_tables": ["shop__customer", "shop__order"]}
    folder = _folder(tmp_path, json.dumps(FIRST), json.dumps(typo))
    out = tmp_path / "result.json"
    with caplog.at_level(logging.WARNING):
        assert main(["eval", str(folder), "--method", "bm25", "--ks", "1,2", "--json", str(out)]) == 0
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1 and "\n" not in warned[0]
    assert (
        f"{folder / 'queries.jsonl'}: a gold table that is no table of the folder: 'shop__order' (line 2)"
        in (warned[0])
    )
    assert json.loads(out.read_text())["metrics"]["2 tables"]["C@2"] == 0.0  # it counts as missed


def test_strict_makes_a_gold_table_that_is_no_table_of_the_folder_an_error(tmp_path, capsys):
    typo = {**SECOND, "gold_tables": ["shop__customer", "shop__order"]}
    folder = _folder(tmp_path, json.dumps(FIRST), json.dumps(typo))
    assert main(["eval", str(folder), "--method", "bm25", "--strict"]) == 2
    assert "a gold table that is no table of the folder: 'shop__order' (line 2)" in _one_line_error(capsys)


@pytest.mark.parametrize("lines", [(), ("", "   ", "\t")], ids=["empty", "blank"])
def test_a_queries_file_with_no_question_is_an_error(tmp_path, capsys, lines):
    folder = _folder(tmp_path, *lines)
    assert main(["eval", str(folder), "--method", "bm25"]) == 2
    assert f"{folder / 'queries.jsonl'} holds no questions" in _one_line_error(capsys)


def test_a_db_written_as_a_json_number_is_the_database_of_that_name(tmp_path):
    folder = _folder(
        tmp_path, json.dumps({**FIRST, "db": 7}), json.dumps({**SECOND, "db": 8}), json.dumps({**SECOND, "db": "8"})
    )
    meta = [{"id": table_id, "db": 7 if table_id.startswith("zoo") else 8} for table_id in TABLES]
    (folder / "tables_meta.jsonl").write_text("".join(json.dumps(m) + "\n" for m in meta))
    out = tmp_path / "result.json"
    assert main(["eval", str(folder), "--per-database", "--ks", "1,2", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["metrics"]["all"]["Source@1"] == 100.0


def test_many_gold_tables_that_are_no_tables_of_the_folder_are_named_five_and_counted(tmp_path):
    wrong = {**SECOND, "gold_tables": [f"shop__t{i}" for i in range(7)]}
    folder = _folder(tmp_path, json.dumps(FIRST), json.dumps(wrong), json.dumps(wrong))
    with pytest.raises(
        ValueError,
        match=r"gold tables that are no table of the folder: 'shop__t0' \(lines 2, 3\), .*"
        r"'shop__t4' \(lines 2, 3\) and 2 more; a table's id is its file's name in tables/",
    ):
        load_benchmark(folder, strict=True)


def test_a_line_of_tables_meta_that_is_not_json_is_named_by_its_file_and_line(tmp_path, capsys):
    folder = _folder(tmp_path, json.dumps(FIRST))
    (folder / "tables_meta.jsonl").write_text('{"id": "zoo__animal", "db": "zoo"}\n{"id": "shop__orders", db: 8}\n')
    assert main(["eval", str(folder), "--method", "bm25"]) == 2
    assert f"{folder / 'tables_meta.jsonl'} line 2: not JSON" in _one_line_error(capsys)


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("id", None, '"id" must be a string or a whole number, not null'),
        ("question", 7, '"question" must be a string, not a number (7)'),
        ("db", ["shop"], '"db" must be a database\'s name, not a list'),
        ("sql", True, '"sql" must be a string, not true'),
    ],
)
def test_a_field_of_the_wrong_json_type_is_an_error_naming_its_line(tmp_path, capsys, field, value, said):
    folder = _folder(tmp_path, json.dumps(FIRST), json.dumps({**SECOND, field: value}))
    assert main(["eval", str(folder), "--method", "bm25"]) == 2
    assert f"queries.jsonl line 2: {said}" in _one_line_error(capsys)
