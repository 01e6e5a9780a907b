"""The retriever inside LlamaIndex engines and tools (MockLLM: no model, no network)."""

from __future__ import annotations

import pytest
from llama_index.core.callbacks import CallbackManager
from llama_index.core.chat_engine import CondensePlusContextChatEngine, CondenseQuestionChatEngine, ContextChatEngine
from llama_index.core.llms import MockLLM
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import QueryBundle
from llama_index.core.tools import QueryEngineTool, RetrieverTool

from llama_index_pearl import PearlTableIndex


@pytest.fixture
def index(music_tables, hashing_embedding) -> PearlTableIndex:
    return PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)


def _tables(nodes) -> list[str]:
    return [n.node.metadata["table_id"] for n in nodes]


def test_retriever_query_engine_cites_the_retrieved_tables(index):
    engine = RetrieverQueryEngine.from_args(index.as_retriever(similarity_top_k=2), llm=MockLLM())
    response = engine.query("What is the capacity of Wembley stadium?")
    assert _tables(response.source_nodes)[0] == "stadium"
    assert len(response.source_nodes) == 2


async def test_retriever_query_engine_works_async(index):
    engine = RetrieverQueryEngine.from_args(index.as_retriever(similarity_top_k=2), llm=MockLLM())
    response = await engine.aquery("What is the capacity of Wembley stadium?")
    assert _tables(response.source_nodes)[0] == "stadium"


def test_query_engine_prompt_shows_the_table_and_join_hints_when_asked(index):
    llm = MockLLM()
    engine = index.as_query_engine(llm=llm, similarity_top_k=3, include_join_hints_in_text=True)
    response = engine.query("Which singer performed at Wembley stadium?")
    context = "\n".join(n.node.get_content(metadata_mode="llm") for n in response.source_nodes)
    assert "Table: stadium" in context
    assert "JOIN concert.stadium_id = stadium.stadium_id (explicit)" in context


def test_as_query_engine_uses_the_given_llm(index):
    engine = index.as_query_engine(llm=MockLLM(), similarity_top_k=1)
    response = engine.query("Wembley capacity")
    assert _tables(response.source_nodes) == ["stadium"]
    assert str(response)  # MockLLM echoes its prompt: non-empty


def test_condense_plus_context_chat_engine_grounds_each_turn(index):
    chat = CondensePlusContextChatEngine.from_defaults(index.as_retriever(similarity_top_k=2), llm=MockLLM())
    first = chat.chat("Which stadium holds 90 people?")
    assert "stadium" in _tables(first.source_nodes)
    second = chat.chat("And which singer played a concert there?")
    assert second.source_nodes
    assert len(chat.chat_history) == 4


def test_as_chat_engine_answers_with_mock_llm(index):
    chat = index.as_chat_engine(llm=MockLLM(), similarity_top_k=2)
    response = chat.chat("Wembley capacity")
    assert _tables(response.source_nodes)[0] == "stadium"


def test_retriever_tool_returns_table_text_for_agents(index):
    tool = RetrieverTool.from_defaults(
        index.as_retriever(similarity_top_k=1, include_join_hints_in_text=True),
        name="find_tables",
        description="Find the tables that answer a question",
    )
    output = tool.call("Wembley capacity")
    assert tool.metadata.name == "find_tables"
    assert "Table: stadium" in output.content
    assert _tables(output.raw_output) == ["stadium"]


def test_query_engine_tool_wraps_the_query_engine(index):
    tool = QueryEngineTool.from_defaults(
        index.as_query_engine(llm=MockLLM(), similarity_top_k=2),
        name="table_qa",
        description="Answer questions over the music tables",
    )
    output = tool.call("Wembley capacity")
    assert output.tool_name == "table_qa"
    assert _tables(output.raw_output.source_nodes)[0] == "stadium"


@pytest.mark.parametrize(
    ("mode", "engine_class"),
    [
        (None, CondensePlusContextChatEngine),  # LlamaIndex's default mode, best
        ("best", CondensePlusContextChatEngine),
        ("condense_plus_context", CondensePlusContextChatEngine),
        ("context", ContextChatEngine),
        ("condense_question", CondenseQuestionChatEngine),
    ],
)
def test_as_chat_engine_honours_the_chat_modes_that_read_the_tables(index, mode, engine_class):
    kwargs = {} if mode is None else {"chat_mode": mode}
    chat = index.as_chat_engine(llm=MockLLM(), similarity_top_k=2, **kwargs)
    assert type(chat) is engine_class
    assert "stadium" in _tables(chat.chat("Wembley capacity").source_nodes)


def test_as_chat_engine_takes_the_chat_mode_first_as_llamaindex_does(index):
    assert type(index.as_chat_engine("context", MockLLM())) is ContextChatEngine


@pytest.mark.parametrize("mode", ["simple", "react", "openai", "no_such_mode"])
def test_as_chat_engine_refuses_modes_that_would_not_use_the_tables(index, mode):
    with pytest.raises(ValueError, match=rf"chat_mode '{mode}' is not supported by a PEARL index"):
        index.as_chat_engine(mode, llm=MockLLM())


def test_as_query_engine_hands_retriever_arguments_to_the_retriever(index):
    engine = index.as_query_engine(llm=MockLLM(), similarity_top_k=2, lexical_weight=0)
    assert engine.retriever.lexical_weight == 0
    nodes = engine.retrieve(QueryBundle("Wembley capacity"))
    assert [n.score for n in nodes] == [n.node.metadata["cosine"] for n in nodes]  # no lexical evidence added


@pytest.mark.parametrize("method", ["as_query_engine", "as_chat_engine"])
def test_an_argument_no_part_of_the_engine_takes_is_an_error_naming_it(index, method):
    with pytest.raises(TypeError, match="'similarity_top_kk'"):
        getattr(index, method)(llm=MockLLM(), similarity_top_kk=3)


class _FirstOnly(BaseNodePostprocessor):
    def _postprocess_nodes(self, nodes, query_bundle=None):
        return nodes[:1]


def test_as_query_engine_hands_engine_arguments_to_the_engine(index):
    engine = index.as_query_engine(llm=MockLLM(), node_postprocessors=[_FirstOnly()], similarity_top_k=3)
    assert _tables(engine.query("Wembley capacity").source_nodes) == ["stadium"]


def test_as_chat_engine_hands_chat_arguments_to_the_chat_engine(index):
    chat = index.as_chat_engine(llm=MockLLM(), system_prompt="Answer from the tables only.", similarity_top_k=1)
    answer = chat.chat("Wembley capacity")  # MockLLM answers with the messages it was sent
    assert "Answer from the tables only." in str(answer)
    assert _tables(answer.source_nodes) == ["stadium"]


def test_the_callback_manager_reaches_the_retriever(index):
    manager = CallbackManager()
    engine = index.as_query_engine(llm=MockLLM(), callback_manager=manager)
    assert engine.retriever.callback_manager is manager
    assert engine.callback_manager is manager


def test_as_retriever_defaults_to_llamaindexs_callback_manager(index):
    from llama_index.core import Settings

    assert index.as_retriever().callback_manager is Settings.callback_manager


@pytest.mark.parametrize("method", ["as_query_engine", "as_chat_engine"])
def test_engines_without_any_llm_say_how_to_give_one(index, method):
    with pytest.raises(ValueError, match=rf"{method}\(\) needs an LLM.*Settings\.llm"):
        getattr(index, method)()


def test_engines_use_an_explicitly_set_settings_llm(index, monkeypatch):
    from llama_index.core import Settings

    monkeypatch.setattr(Settings, "_llm", MockLLM())
    response = index.as_query_engine(similarity_top_k=1).query("Wembley capacity")
    assert _tables(response.source_nodes) == ["stadium"]
