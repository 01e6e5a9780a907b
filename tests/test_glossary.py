"""The glossary an LLM writes once per table at build time: the business words a question uses and no name spells."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from fake_openai import FakeOpenAIServer, Reply, glossary_for, http_error, is_glossary_prompt, prompt_text
from llama_index.llms.openai_like import OpenAILike

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.generation import GenerationCache, HeuristicQueryGenerator, LLMQueryGenerator
from llama_index_pearl.generation.glossary import Glossary, parse_glossary, with_glossary
from llama_index_pearl.generation.parsing import ParseRejection
from llama_index_pearl.tables.table import Table


def _llm(server: FakeOpenAIServer) -> OpenAILike:
    return OpenAILike(
        model="fake", api_base=server.base_url, api_key="x", is_chat_model=True, max_retries=0, timeout=30
    )


def _ledgers() -> dict[str, pd.DataFrame]:
    """Two tables whose names and columns are codes: only a glossary says what they hold."""
    return {
        "ledger_a": pd.DataFrame({"acct": [1, 2], "amt_3": [9.5, 3.0], "qty_2": [2, 1], "dt": ["2024-01", "2024-02"]}),
        "ledger_b": pd.DataFrame({"acct": [1, 2], "hrs": [38, 40], "rt_cd": ["A", "B"], "dt": ["2024-01", "2024-02"]}),
    }


def _by_table(body: dict) -> Reply:
    """Sales words for ledger_a, staff words for ledger_b, a question for anything else."""
    if not is_glossary_prompt(body):
        return Reply(json.dumps({"question": "q", "relevant_columns_t1": ["acct"], "relevant_columns_t2": ["acct"]}))
    if "Table: ledger_a" in prompt_text(body):
        return Reply(glossary_for(body, ("sales", "revenue", "turnover")))
    return Reply(glossary_for(body, ("payroll", "staff hours", "timesheets")))


def test_column_names_are_matched_ignoring_case_and_unknown_names_dropped():
    glossary = parse_glossary('{"row": "one sale", "columns": {"QTY": "units sold", "bogus": "x"}}', ["qty", "price"])
    assert glossary.columns == {"qty": "units sold"}


def test_an_answer_cut_at_the_token_limit_keeps_its_complete_pairs():
    cut = '{"row": "one sale", "terms": ["sales", "revenue"], "columns": {"qty": "units sold", "price": "unit pr'
    glossary = parse_glossary(cut, ["qty", "price"])
    assert (glossary.row, glossary.terms, dict(glossary.columns)) == (
        "one sale",
        ("sales", "revenue"),
        {"qty": "units sold"},
    )


def test_an_answer_that_says_nothing_of_the_table_is_rejected():
    with pytest.raises(ParseRejection):
        parse_glossary('{"columns": {"bogus": "x"}}', ["qty"])


def test_the_glossary_fills_only_the_descriptions_the_user_did_not_give():
    table = Table("sales", pd.DataFrame({"qty": [1], "price": [2.0]}), column_descriptions={"price": "list price"})
    glossary = Glossary("one sale", ("revenue",), {"qty": "units sold", "price": "what was charged"})
    filled = with_glossary(table, glossary)
    assert filled.description == "one sale (revenue)"
    assert filled.column_descriptions == {"qty": "units sold", "price": "list price"}
    assert table.column_descriptions == {"price": "list price"}  # the user's table is not changed


def _margin(index: PearlTableIndex, question: str, table: str) -> float:
    """``table``'s score minus the other table's."""
    scores = {n.metadata["table_id"]: n.score for n in index.as_retriever(similarity_top_k=2).retrieve(question)}
    return scores[table] - sum(v for k, v in scores.items() if k != table)


def test_a_question_in_business_words_finds_the_table_its_glossary_names(minilm, tmp_path):
    options = {"embed_model": minilm, "generator": HeuristicQueryGenerator(), "cache_dir": tmp_path}
    with FakeOpenAIServer(default=_by_table) as server:
        plain = PearlTableIndex.from_tables(_ledgers(), llm=_llm(server), **options)
        index = PearlTableIndex.from_tables(_ledgers(), llm=_llm(server), glossary=True, **options)
    assert "revenue" in index.tables["ledger_a"].description
    for question, table in [
        ("What was the turnover per month?", "ledger_a"),
        ("How many hours did staff put on their timesheets?", "ledger_b"),
    ]:
        assert index.as_retriever(similarity_top_k=1).retrieve(question)[0].metadata["table_id"] == table
        assert _margin(index, question, table) > max(0.0, _margin(plain, question, table))


def _glossary_options(embed_model, cache_dir) -> dict:
    """``from_tables``'s options for the LLM to write the glossary only, into ``cache_dir``."""
    return {
        "embed_model": embed_model,
        "generator": HeuristicQueryGenerator(),
        "cache_dir": cache_dir,
        "glossary": True,
    }


def test_a_rebuild_reads_every_glossary_from_the_cache(hashing_embedding, tmp_path):
    options = _glossary_options(hashing_embedding, tmp_path)
    with FakeOpenAIServer(default=_by_table) as server:
        PearlTableIndex.from_tables(_ledgers(), llm=_llm(server), **options)
        first = server.request_count
        again = PearlTableIndex.from_tables(_ledgers(), llm=_llm(server), **options)
        assert server.request_count == first == 2
    assert again.report.glossary["cached"] == 2 and again.report.glossary["written"] == 0
    assert "revenue" in again.tables["ledger_a"].description


def _glossary_only(server: FakeOpenAIServer, embed_model, cache_dir, **overrides) -> PearlTableIndex:
    """The ledgers indexed with the server's LLM writing the glossary and the heuristic the questions."""
    return PearlTableIndex.from_tables(
        _ledgers(), llm=_llm(server), **{**_glossary_options(embed_model, cache_dir), **overrides}
    )


def test_by_default_no_table_is_sent_for_a_glossary(hashing_embedding, tmp_path):
    with FakeOpenAIServer(default=_by_table) as server:
        index = PearlTableIndex.from_tables(
            _ledgers(), embed_model=hashing_embedding, llm=_llm(server), generator=HeuristicQueryGenerator()
        )
        assert server.request_count == 0
    assert index.tables["ledger_a"].description is None and not index.report.glossary


def test_a_table_the_llm_fails_on_keeps_its_own_text_and_the_build_goes_on(hashing_embedding, tmp_path):
    with FakeOpenAIServer(default=http_error(500)) as server:
        index = _glossary_only(server, hashing_embedding, tmp_path)
    assert {table for table, _ in index.report.glossary["skipped"]} == {"ledger_a", "ledger_b"}
    assert index.tables["ledger_a"].description is None and len(index.tables) == 2


def test_glossary_and_question_answers_share_one_cache_file(tmp_path):
    cache = GenerationCache(tmp_path)
    cache.put_glossary("glossary:k", {"row": "one sale", "terms": ["revenue"], "columns": {}})
    reopened = GenerationCache(tmp_path)
    assert reopened.get_glossary("glossary:k") == {"row": "one sale", "terms": ["revenue"], "columns": {}}
    assert reopened.get("glossary:k") is None  # a glossary is no generation result


def test_the_cost_estimate_counts_the_glossary_tables_without_calling_the_llm(hashing_embedding, tmp_path):
    options = _glossary_options(hashing_embedding, tmp_path)
    with FakeOpenAIServer(default=_by_table) as server:
        before = PearlTableIndex.estimate_cost(_ledgers(), llm=_llm(server), **options)
        assert server.request_count == 0
        PearlTableIndex.from_tables(_ledgers(), llm=_llm(server), **options)
        after = PearlTableIndex.estimate_cost(_ledgers(), llm=_llm(server), **options)
    assert (before["glossary_tables"], before["glossary_cached"]) == (2, 0) and before["glossary_prompt_tokens"] > 0
    assert (after["glossary_tables"], after["glossary_cached"]) == (0, 2)


def test_an_answer_is_plain_text_its_control_characters_dropped():
    glossary = parse_glossary('{"row": "one \\u001b[31msale\\u001b[0m\\nline", "columns": {}}', ["qty"])
    assert glossary.row == "one [31msale[0m line"


@pytest.mark.parametrize("given", ["llm", "generator"])
def test_an_inserted_table_gets_its_glossary_from_the_index_llm(given, hashing_embedding, tmp_path):
    tables = _ledgers()
    with FakeOpenAIServer(default=_by_table) as server:
        llm = {"llm": _llm(server), "generator": HeuristicQueryGenerator()}
        if given == "generator":  # the LLM only as the question generator's
            llm = {"generator": LLMQueryGenerator(_llm(server), backoff=0)}
        index = PearlTableIndex.from_tables(
            {"ledger_b": tables["ledger_b"]}, embed_model=hashing_embedding, cache_dir=tmp_path, glossary=True, **llm
        )
        report = index.insert_tables({"ledger_a": tables["ledger_a"]})
    assert report.glossary_written == 1 and "revenue" in index.tables["ledger_a"].description
