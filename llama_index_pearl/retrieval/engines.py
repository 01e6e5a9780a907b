"""Query and chat engines over a PEARL retriever, following LlamaIndex's ``as_query_engine``/``as_chat_engine``.

The engines are LlamaIndex's own (``RetrieverQueryEngine``, the chat engines), built through their public
constructors over :class:`~llama_index_pearl.retrieval.retriever.PearlRetriever`. As in
``BaseIndex.as_query_engine``, keyword arguments go to the retriever and to the engine; unlike it, an
argument that neither takes is a ``TypeError`` naming it, never silently dropped (a misspelt
``similarity_top_kk`` would otherwise run with the default). An engine without any LLM is refused with a
message saying how to give one.

``PearlSQLQueryEngine`` is LlamaIndex's ``SQLTableRetrieverQueryEngine`` built from the same public parts
(``NLSQLRetriever`` and ``BaseSQLTableQueryEngine``) with one more argument, the encoder its
``NLSQLRetriever`` gets (LlamaIndex's constructor always takes ``Settings.embed_model``).

Pipeline step: retrieval (docs/architecture.md).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.callbacks import CallbackManager
from llama_index.core.chat_engine import (
    CondensePlusContextChatEngine,
    CondenseQuestionChatEngine,
    ContextChatEngine,
)
from llama_index.core.chat_engine.types import BaseChatEngine, ChatMode
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.indices.struct_store.sql_query import BaseSQLTableQueryEngine
from llama_index.core.llms import LLM
from llama_index.core.objects import ObjectRetriever, SQLTableSchema
from llama_index.core.prompts import BasePromptTemplate
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.retrievers import NLSQLRetriever

from llama_index_pearl.retrieval.retriever import PearlRetriever
from llama_index_pearl.text.models import settings_llm

__all__ = [
    "CHAT_MODES",
    "PearlSQLQueryEngine",
    "chat_engine",
    "query_engine",
    "require_llm",
    "retriever_arguments",
    "sql_query_engine",
]

# what each mode builds: LlamaIndex's choice for its indexes (``best`` is condense-plus-context in 0.14)
CHAT_MODES = {
    ChatMode.BEST: CondensePlusContextChatEngine,
    ChatMode.CONDENSE_PLUS_CONTEXT: CondensePlusContextChatEngine,
    ChatMode.CONTEXT: ContextChatEngine,
    ChatMode.CONDENSE_QUESTION: CondenseQuestionChatEngine,
}
_REFUSED = {
    ChatMode.SIMPLE: "it answers from the LLM alone and never reads the tables "
    "(use llama_index.core.chat_engine.SimpleChatEngine.from_defaults(llm=...))",
    ChatMode.REACT: "LlamaIndex removed it: give index.as_query_engine() to an agent "
    "(llama_index.core.agent.workflow.ReActAgent) as a QueryEngineTool",
    ChatMode.OPENAI: "LlamaIndex removed it: give index.as_query_engine() to an agent "
    "(llama_index.core.agent.workflow.FunctionAgent) as a QueryEngineTool",
}


def _parameters(function: Callable[..., Any], *skip: str) -> set[str]:
    """Named keyword parameters of a function (``**kwargs`` and ``skip`` left out)."""
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return {
        name
        for name, p in inspect.signature(function).parameters.items()
        if p.kind in kinds and name not in ("self", "cls", *skip)
    }


def retriever_arguments() -> set[str]:
    """The keyword arguments ``PearlRetriever`` takes (what ``as_retriever`` accepts)."""
    return _parameters(PearlRetriever.__init__, "index")


def _split(
    kwargs: Mapping[str, Any], engines: Mapping[str, set[str]], what: str
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Keyword arguments for the retriever and for each engine; one that none of them takes raises.

    An argument both take (``callback_manager``, ``verbose``) goes to both, as in LlamaIndex.

    Raises:
        TypeError: An argument that neither the retriever nor an engine takes (the message names it).
    """
    retriever = retriever_arguments()
    unknown = [name for name in kwargs if name not in retriever and not any(name in e for e in engines.values())]
    if unknown:
        engine_names = sorted(set().union(*engines.values()))
        raise TypeError(
            f"{what}() got unexpected keyword argument(s) {', '.join(map(repr, unknown))}; the retriever takes "
            f"{', '.join(sorted(retriever))}, the engine {', '.join(engine_names)}"
        )
    mine = {k: v for k, v in kwargs.items() if k in retriever}
    theirs = {name: {k: v for k, v in kwargs.items() if k in params} for name, params in engines.items()}
    return mine, theirs


def require_llm(llm: LLM | None, what: str) -> LLM:
    """``llm``, else ``Settings.llm`` as LlamaIndex resolves it for its own engines.

    Args:
        llm: The LLM given to the engine or to the index.
        what: The method asking, for the message (``"as_query_engine"``).

    Raises:
        ValueError: No LLM anywhere (``Settings.llm`` unset and LlamaIndex's OpenAI default unavailable);
            the message says where to give one.
    """
    resolved = llm if llm is not None else settings_llm()
    if resolved is None:
        raise ValueError(
            f"{what}() needs an LLM to answer: pass llm=..., set Settings.llm, or give llm= to "
            "PearlTableIndex.from_tables()/load(); for tables without an LLM use as_retriever()"
        )
    return resolved


def query_engine(
    make_retriever: Callable[..., BaseRetriever], llm: LLM | None, what: str = "as_query_engine", **kwargs: Any
) -> RetrieverQueryEngine:
    """A ``RetrieverQueryEngine`` (see ``PearlTableIndex.as_query_engine``).

    Args:
        make_retriever: ``as_retriever``, given the retriever's arguments.
        llm: The engine's LLM (else ``Settings.llm``).
        what: The method asking, for messages.
        **kwargs: Arguments of the retriever and of ``RetrieverQueryEngine.from_args``.
    """
    engine_args = _parameters(RetrieverQueryEngine.from_args, "retriever", "llm")
    mine, theirs = _split(kwargs, {"engine": engine_args}, what)
    resolved = require_llm(llm, what)
    return RetrieverQueryEngine.from_args(make_retriever(**mine), llm=resolved, **theirs["engine"])


def chat_engine(
    make_retriever: Callable[..., BaseRetriever], llm: LLM | None, chat_mode: ChatMode | str, **kwargs: Any
) -> BaseChatEngine:
    """A chat engine of the given mode (see ``PearlTableIndex.as_chat_engine``).

    Raises:
        ValueError: A ``chat_mode`` that does not read the retrieved tables, or no LLM.
        TypeError: A keyword argument that neither the retriever nor the engine takes.
    """
    mode = _chat_mode(chat_mode)
    engine_class = CHAT_MODES[mode]
    chat_args = _parameters(engine_class.from_defaults, "retriever", "query_engine", "llm")
    if mode is ChatMode.CONDENSE_QUESTION:
        query_args = _parameters(RetrieverQueryEngine.from_args, "retriever", "llm")
        mine, theirs = _split(kwargs, {"chat": chat_args, "query": query_args}, "as_chat_engine")
        resolved = require_llm(llm, "as_chat_engine")
        engine = RetrieverQueryEngine.from_args(make_retriever(**mine), llm=resolved, **theirs["query"])
        return CondenseQuestionChatEngine.from_defaults(engine, llm=resolved, **theirs["chat"])
    mine, theirs = _split(kwargs, {"chat": chat_args}, "as_chat_engine")
    resolved = require_llm(llm, "as_chat_engine")
    return engine_class.from_defaults(make_retriever(**mine), llm=resolved, **theirs["chat"])


def _chat_mode(chat_mode: ChatMode | str) -> ChatMode:
    try:
        mode = ChatMode(chat_mode)
    except ValueError:
        mode = None
    if mode in _REFUSED:
        raise ValueError(f"chat_mode {chat_mode!r} is not supported by a PEARL index: {_REFUSED[mode]}")
    if mode not in CHAT_MODES:
        supported = ", ".join(repr(m.value) for m in CHAT_MODES)
        raise ValueError(f"chat_mode {chat_mode!r} is not supported by a PEARL index; use one of {supported}")
    return mode


class PearlSQLQueryEngine(BaseSQLTableQueryEngine):
    """``SQLTableRetrieverQueryEngine`` with the encoder of its ``NLSQLRetriever`` given, not taken from Settings.

    LlamaIndex's ``SQLTableRetrieverQueryEngine`` builds its ``NLSQLRetriever`` with
    ``Settings.embed_model``, which, when unset, resolves to OpenAI and fails without
    ``llama-index-embeddings-openai`` or a key (the default SQL parser never embeds anything). This
    engine is built like it, from the same public constructors, arguments included, with ``embed_model``
    passed on instead.

    Args:
        sql_database: The database the SQL runs on.
        table_retriever: An ``ObjectRetriever[SQLTableSchema]``.
        llm: Writes the SQL and the answer.
        embed_model: Given to the ``NLSQLRetriever``.
        rows_retrievers: Per-table retrievers of example rows (LlamaIndex's).
        cols_retrievers: Per-column retrievers of values (LlamaIndex's).
        text_to_sql_prompt: The text-to-SQL prompt.
        context_query_kwargs: Per-table context for the prompt.
        context_str_prefix: Text before the tables' context.
        sql_only: Return the SQL without running it.
        callback_manager: LlamaIndex callbacks.
        **kwargs: ``BaseSQLTableQueryEngine``'s arguments (``synthesize_response``, ``verbose``...).
    """

    def __init__(
        self,
        sql_database: Any,
        table_retriever: ObjectRetriever[SQLTableSchema],
        llm: LLM,
        embed_model: BaseEmbedding,
        rows_retrievers: dict[str, BaseRetriever] | None = None,
        cols_retrievers: dict[str, dict[str, BaseRetriever]] | None = None,
        text_to_sql_prompt: BasePromptTemplate | None = None,
        context_query_kwargs: dict | None = None,
        context_str_prefix: str | None = None,
        sql_only: bool = False,
        callback_manager: CallbackManager | None = None,
        **kwargs: Any,
    ) -> None:
        self._sql_retriever = NLSQLRetriever(
            sql_database,
            text_to_sql_prompt=text_to_sql_prompt,
            context_query_kwargs=context_query_kwargs,
            table_retriever=table_retriever,
            rows_retrievers=rows_retrievers,
            cols_retrievers=cols_retrievers,
            context_str_prefix=context_str_prefix,
            llm=llm,
            embed_model=embed_model,
            sql_only=sql_only,
            callback_manager=callback_manager,
            verbose=kwargs.get("verbose", False),
        )
        super().__init__(llm=llm, callback_manager=callback_manager, **kwargs)

    @property
    def sql_retriever(self) -> NLSQLRetriever:
        """The ``NLSQLRetriever`` that writes and runs the SQL."""
        return self._sql_retriever


def sql_query_engine(
    make_table_retriever: Callable[..., ObjectRetriever[SQLTableSchema]],
    sql_database: Any,
    llm: LLM | None,
    embed_model: BaseEmbedding,
    **kwargs: Any,
) -> PearlSQLQueryEngine:
    """A :class:`PearlSQLQueryEngine` over PEARL's table retriever (see ``PearlTableIndex.as_sql_query_engine``).

    Args:
        make_table_retriever: ``as_sql_table_retriever`` of the database, given ``context_strs`` and the
            retriever's arguments.
        sql_database: The ``SQLDatabase`` the SQL runs on.
        llm: Writes the SQL and the answer (else ``Settings.llm``).
        embed_model: The index's encoder, for the engine's ``NLSQLRetriever``.
        **kwargs: Arguments of the retriever, of the table retriever and of the engine.

    Raises:
        TypeError: An argument that neither the retriever nor the engine takes (named).
        ValueError: There is no LLM, or the database lacks a table of the index.
    """
    engine_args = _parameters(
        PearlSQLQueryEngine.__init__, "sql_database", "table_retriever", "llm", "embed_model"
    ) | _parameters(BaseSQLTableQueryEngine.__init__, "llm")
    mine, theirs = _split(kwargs, {"engine": engine_args, "table retriever": {"context_strs"}}, "as_sql_query_engine")
    table_retriever = make_table_retriever(**theirs["table retriever"], **mine)
    resolved = require_llm(llm, "as_sql_query_engine")
    return PearlSQLQueryEngine(sql_database, table_retriever, resolved, embed_model, **theirs["engine"])
