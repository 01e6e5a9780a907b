"""End to end: join discovery, generation over real HTTP, units, retrieval, resume from cache."""

from __future__ import annotations

import pandas as pd
import pytest
from fake_openai import FakeOpenAIServer, http_error, is_glossary_prompt, text, valid_answer
from llama_index.llms.openai_like import OpenAILike

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.generation import LLMQueryGenerator

TABLE_OWN = {"original", "schema"}  # the units every table gets, generated nothing


@pytest.fixture
def chain_tables():
    """singer -> performance -> stadium, with FK names and overlapping values."""
    return {
        "singer": pd.DataFrame(
            {"singer_id": [1, 2, 3, 4], "singer_name": ["Joe Sharp", "Ann Lee", "Rosa Park", "Tim Cole"]}
        ),
        "performance": pd.DataFrame(
            {"performance_id": [10, 11, 12, 13], "singer_id": [1, 2, 3, 4], "stadium_id": [7, 8, 7, 9]}
        ),
        "stadium": pd.DataFrame(
            {"stadium_id": [7, 8, 9], "stadium_name": ["Wembley", "Maracana", "Azteca"], "capacity": [90, 78, 87]}
        ),
    }


def _llm(server):
    return OpenAILike(
        model="fake", api_base=server.base_url, api_key="x", is_chat_model=True, max_retries=0, timeout=30
    )


def test_heuristic_build_adds_path_units_without_any_llm(chain_tables, hashing_embedding):
    index = PearlTableIndex.from_tables(chain_tables, embed_model=hashing_embedding)
    kinds = index.report.units_by_kind
    assert kinds["original"] == 3
    assert kinds.get("explicit", 0) + kinds.get("implicit", 0) > 0
    assert index.join_paths and index.join_graph.number_of_edges() > 0
    assert index.generator_name.startswith("heuristic")


def test_llm_build_over_http_indexes_generated_questions(chain_tables, hashing_embedding, tmp_path):
    with FakeOpenAIServer(default=valid_answer("Which stadium hosted Ann Lee zebra?")) as server:
        index = PearlTableIndex.from_tables(
            chain_tables, embed_model=hashing_embedding, llm=_llm(server), cache_dir=tmp_path
        )
    questions = {u.metadata["question"] for u in index.units if u.metadata["kind"] not in TABLE_OWN}
    assert "Which stadium hosted Ann Lee zebra?" in questions
    assert index.report.generation["prompt_tokens"] > 0
    top = index.as_retriever(similarity_top_k=1).retrieve("Which stadium hosted Ann Lee zebra?")[0]
    assert top.node.metadata["matched_question"] == "Which stadium hosted Ann Lee zebra?"


def test_garbage_answers_skip_paths_but_keep_the_index(chain_tables, hashing_embedding, tmp_path, caplog):
    with FakeOpenAIServer(default=text("I cannot help with that.")) as server:
        generator = LLMQueryGenerator(_llm(server), fallback=None, max_failed_share=None)
        index = PearlTableIndex.from_tables(
            chain_tables, embed_model=hashing_embedding, generator=generator, cache_dir=tmp_path
        )
    assert index.report.units_by_kind == {"original": 3, "schema": 3}  # every table's own units, nothing generated
    assert index.report.generation["skipped"]
    assert "skip" in caplog.text.lower()


def test_paths_the_llm_skips_get_heuristic_questions_instead(chain_tables, hashing_embedding, tmp_path):
    with FakeOpenAIServer(default=text("I cannot help with that.")) as server:
        index = PearlTableIndex.from_tables(
            chain_tables,
            embed_model=hashing_embedding,
            generator=LLMQueryGenerator(_llm(server), max_failed_share=None),
            cache_dir=tmp_path,
        )
    assert index.report.generation["skipped"]
    assert index.report.generation["fallback_paths"] >= len(index.report.generation["skipped"])
    assert set(index.report.units_by_kind) - TABLE_OWN


def test_rebuild_after_a_failed_build_calls_the_llm_only_for_missing_paths(chain_tables, hashing_embedding, tmp_path):
    with FakeOpenAIServer(behaviours=[valid_answer()], default=http_error(500)) as server:
        first = PearlTableIndex.from_tables(
            chain_tables,
            embed_model=hashing_embedding,
            generator=LLMQueryGenerator(_llm(server), backoff=0),
            cache_dir=tmp_path,
            concurrency=1,
            budget=3,
            glossary=False,  # the scripted answers are for questions
        )
    n_paths = first.report.n_paths
    assert n_paths >= 2 and len(first.report.generation["skipped"]) == n_paths - 1
    with FakeOpenAIServer() as server:
        second = PearlTableIndex.from_tables(
            chain_tables,
            embed_model=hashing_embedding,
            llm=_llm(server),
            cache_dir=tmp_path,
            concurrency=1,
            budget=3,
            glossary=False,
        )
        assert len(server.requests) == n_paths - 1
    assert second.report.generation["cached"] == 1


def test_estimate_cost_counts_prompt_tokens_without_calling_the_llm(chain_tables, hashing_embedding):
    with FakeOpenAIServer() as server:
        estimate = PearlTableIndex.estimate_cost(chain_tables, embed_model=hashing_embedding, llm=_llm(server))
        assert server.requests == []
    assert estimate["tables"] == 3
    assert estimate["paths"] >= 1 and estimate["prompt_tokens"] > 0
    assert estimate["per_path_avg"] == estimate["prompt_tokens"] / estimate["requests"]


def test_estimate_cost_counts_requests_the_cache_already_answers(chain_tables, hashing_embedding, tmp_path):
    with FakeOpenAIServer() as server:
        built = PearlTableIndex.from_tables(
            chain_tables, embed_model=hashing_embedding, llm=_llm(server), cache_dir=tmp_path, budget=1
        )
        estimate = PearlTableIndex.estimate_cost(
            chain_tables, embed_model=hashing_embedding, llm=_llm(server), cache_dir=tmp_path, budget=3
        )
    assert estimate["cached_requests"] == built.report.n_paths - built.report.generation["fallback_paths"]
    assert estimate["requests"] > estimate["cached_requests"]


def test_heuristic_build_indexes_every_candidate_path_by_default(chain_tables, hashing_embedding):
    everything = PearlTableIndex.from_tables(chain_tables, embed_model=hashing_embedding)
    capped = PearlTableIndex.from_tables(chain_tables, embed_model=hashing_embedding, budget=1)
    assert everything.report.n_paths > capped.report.n_paths


def test_llm_build_defaults_to_half_the_tables_per_pool_and_says_so_before_spending(chain_tables, hashing_embedding):
    with FakeOpenAIServer() as server:
        estimate = PearlTableIndex.estimate_cost(chain_tables, embed_model=hashing_embedding, llm=_llm(server))
        free = PearlTableIndex.estimate_cost(chain_tables, embed_model=hashing_embedding)
        assert server.requests == []
    assert estimate["paths"] <= 2  # floor(3 / 2) = 1 per pool, explicit and implicit
    assert free["paths"] > estimate["paths"]


def test_paths_beyond_the_llm_budget_get_free_heuristic_questions(chain_tables, hashing_embedding, tmp_path):
    with FakeOpenAIServer(default=valid_answer("Which stadium hosted Ann Lee zebra?")) as server:
        index = PearlTableIndex.from_tables(
            chain_tables, embed_model=hashing_embedding, llm=_llm(server), cache_dir=tmp_path, budget=1
        )
        calls = len([r for r in server.requests if not is_glossary_prompt(r)])
    questions = [u.metadata["question"] for u in index.units if u.metadata["kind"] not in TABLE_OWN]
    assert calls == index.report.generation["generated"] <= 2  # one paid path per pool
    assert index.report.generation["fallback_paths"] >= 1
    assert any(q != "Which stadium hosted Ann Lee zebra?" for q in questions)


def test_without_a_fallback_paths_beyond_the_budget_get_no_units(chain_tables, hashing_embedding, tmp_path):
    with FakeOpenAIServer(default=valid_answer("Which stadium hosted Ann Lee zebra?")) as server:
        generator = LLMQueryGenerator(_llm(server), fallback=None)
        index = PearlTableIndex.from_tables(
            chain_tables, embed_model=hashing_embedding, generator=generator, cache_dir=tmp_path, budget=1
        )
    questions = {u.metadata["question"] for u in index.units if u.metadata["kind"] not in TABLE_OWN}
    assert questions == {"Which stadium hosted Ann Lee zebra?"}
    assert index.report.generation["fallback_paths"] == 0


def test_llm_views_are_widened_by_the_free_generators_columns(chain_tables, hashing_embedding, tmp_path):
    with FakeOpenAIServer(default=valid_answer("Which stadium hosted Ann Lee zebra?")) as server:
        wide = PearlTableIndex.from_tables(
            chain_tables, embed_model=hashing_embedding, llm=_llm(server), cache_dir=tmp_path / "a", budget=5
        )
        generator = LLMQueryGenerator(_llm(server), fallback=None)
        narrow = PearlTableIndex.from_tables(
            chain_tables, embed_model=hashing_embedding, generator=generator, cache_dir=tmp_path / "b", budget=5
        )

    def widths(index):
        units = [u for u in index.units if u.metadata["question"] == "Which stadium hosted Ann Lee zebra?"]
        return sorted(len(cols) for u in units for cols in u.metadata["columns"].values())

    assert widths(narrow) and set(widths(narrow)) == {1}  # the fake LLM names one column per table
    assert max(widths(wide)) > 1
