"""Query and chat engines over a PEARL retriever, following LlamaIndex's ``as_query_engine``/``as_chat_engine``.

The engines are LlamaIndex's own (``RetrieverQueryEngine``, the context chat
engines) over :class:`~llama_index_pearl.retrieval.retriever.PearlRetriever`, and
``SQLTableRetrieverQueryEngine`` over its ``SQLTableSchema`` adapter
(:mod:`~llama_index_pearl.retrieval.sql_tables`). Two things differ from a
``VectorStoreIndex``: an engine without any LLM is refused with a message saying how
to give one (instead of LlamaIndex falling back to OpenAI and failing on a missing
key), and only the chat modes that ground answers on retrieved tables are accepted.

Pipeline step: retrieval (docs/architecture.md).
"""

from __future__ import annotations

from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.chat_engine.types import BaseChatEngine, ChatMode
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.indices.struct_store.sql_query import BaseSQLTableQueryEngine
from llama_index.core.llms import LLM
from llama_index.core.objects import ObjectRetriever, SQLTableSchema
from llama_index.core.query_engine import RetrieverQueryEngine, SQLTableRetrieverQueryEngine
from llama_index.core.retrievers import NLSQLRetriever

from llama_index_pearl.text.models import resolve_llm

__all__ = ["CHAT_MODES", "PearlSQLQueryEngine", "chat_engine", "query_engine", "require_llm", "sql_query_engine"]

# NLSQLRetriever's arguments that SQLTableRetrieverQueryEngine passes on to it
_NLSQL_ARGUMENTS = (
    "text_to_sql_prompt",
    "context_query_kwargs",
    "rows_retrievers",
    "cols_retrievers",
    "context_str_prefix",
    "sql_only",
    "callback_manager",
)

CHAT_MODES = (ChatMode.CONDENSE_PLUS_CONTEXT, ChatMode.CONTEXT, ChatMode.CONDENSE_QUESTION)


def require_llm(llm: LLM | None, what: str) -> LLM:
    """``llm``, else an explicitly set ``Settings.llm``; never LlamaIndex's OpenAI default.

    Args:
        llm: The LLM given to the engine or to the index.
        what: The method asking, for the message (``"as_query_engine"``).

    Raises:
        ValueError: No LLM anywhere; the message says where to give one.
    """
    resolved = resolve_llm(llm)
    if resolved is None:
        raise ValueError(
            f"{what}() needs an LLM to answer: pass llm=..., set Settings.llm, or give llm= to "
            "PearlTableIndex.from_tables()/load(); for tables without an LLM use as_retriever()"
        )
    return resolved


def query_engine(retriever: BaseRetriever, llm: LLM | None, **kwargs: Any) -> RetrieverQueryEngine:
    """A ``RetrieverQueryEngine`` over the retriever (see ``PearlTableIndex.as_query_engine``)."""
    return RetrieverQueryEngine.from_args(retriever, llm=require_llm(llm, "as_query_engine"), **kwargs)


def chat_engine(
    retriever: BaseRetriever, llm: LLM | None, chat_mode: ChatMode | str = ChatMode.CONDENSE_PLUS_CONTEXT, **kwargs: Any
) -> BaseChatEngine:
    """A chat engine of the given mode over the retriever (see ``PearlTableIndex.as_chat_engine``).

    Raises:
        ValueError: ``chat_mode`` is not one of :data:`CHAT_MODES`, or there is no LLM.
    """
    try:
        mode = ChatMode(chat_mode)
    except ValueError:
        mode = None
    if mode not in CHAT_MODES:
        supported = ", ".join(repr(m.value) for m in CHAT_MODES)
        raise ValueError(f"chat_mode {chat_mode!r} is not supported by a PEARL index; use one of {supported}")
    resolved = require_llm(llm, "as_chat_engine")
    if mode is ChatMode.CONTEXT:
        from llama_index.core.chat_engine import ContextChatEngine

        return ContextChatEngine.from_defaults(retriever, llm=resolved, **kwargs)
    if mode is ChatMode.CONDENSE_QUESTION:
        from llama_index.core.chat_engine import CondenseQuestionChatEngine

        engine = RetrieverQueryEngine.from_args(retriever, llm=resolved)
        return CondenseQuestionChatEngine.from_defaults(engine, llm=resolved, **kwargs)
    from llama_index.core.chat_engine import CondensePlusContextChatEngine

    return CondensePlusContextChatEngine.from_defaults(retriever, llm=resolved, **kwargs)


class PearlSQLQueryEngine(SQLTableRetrieverQueryEngine):
    """``SQLTableRetrieverQueryEngine`` whose ``NLSQLRetriever`` is given the index's encoder.

    LlamaIndex's constructor builds the ``NLSQLRetriever`` with ``Settings.embed_model``,
    which, when unset, resolves to OpenAI and fails without ``llama-index-embeddings-openai``
    or a key (the default SQL parser never embeds anything). This engine passes the
    encoder instead; everything else, arguments included, is LlamaIndex's.

    Args:
        sql_database: The database the SQL runs on.
        table_retriever: An ``ObjectRetriever[SQLTableSchema]``.
        llm: Writes the SQL and the answer.
        embed_model: Given to the ``NLSQLRetriever``.
        **kwargs: ``SQLTableRetrieverQueryEngine``'s arguments.
    """

    def __init__(
        self,
        sql_database: Any,
        table_retriever: ObjectRetriever[SQLTableSchema],
        llm: LLM,
        embed_model: BaseEmbedding,
        **kwargs: Any,
    ) -> None:
        passed = {name: kwargs[name] for name in _NLSQL_ARGUMENTS if name in kwargs}
        self._sql_retriever = NLSQLRetriever(
            sql_database,
            table_retriever=table_retriever,
            llm=llm,
            embed_model=embed_model,
            verbose=kwargs.get("verbose", False),
            **passed,
        )
        rest = {k: v for k, v in kwargs.items() if k not in _NLSQL_ARGUMENTS or k == "callback_manager"}
        BaseSQLTableQueryEngine.__init__(self, llm=llm, **rest)


def sql_query_engine(
    table_retriever: ObjectRetriever[SQLTableSchema],
    sql_database: Any,
    llm: LLM | None,
    embed_model: BaseEmbedding,
    **kwargs: Any,
) -> SQLTableRetrieverQueryEngine:
    """A ``SQLTableRetrieverQueryEngine`` over the table retriever (see ``PearlTableIndex.as_sql_query_engine``).

    Raises:
        ValueError: There is no LLM.
    """
    resolved = require_llm(llm, "as_sql_query_engine")
    return PearlSQLQueryEngine(sql_database, table_retriever, resolved, embed_model, **kwargs)
