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

from llama_index.core import Settings
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
from llama_index_pearl.retrieval.sql_tables import SQL_SET_MARGIN, sql_table_retriever
from llama_index_pearl.text.models import settings_llm

__all__ = [
    "CHAT_MODES",
    "IndexEngines",
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
    table_retriever: ObjectRetriever[SQLTableSchema],
    sql_database: Any,
    llm: LLM | None,
    embed_model: BaseEmbedding,
    **kwargs: Any,
) -> PearlSQLQueryEngine:
    """A :class:`PearlSQLQueryEngine` over the table retriever (see ``PearlTableIndex.as_sql_query_engine``).

    Raises:
        ValueError: There is no LLM.
    """
    resolved = require_llm(llm, "as_sql_query_engine")
    return PearlSQLQueryEngine(sql_database, table_retriever, resolved, embed_model, **kwargs)


class IndexEngines:
    """The retriever and LlamaIndex engines of an index: ``PearlTableIndex``'s ``as_*`` methods.

    The index gives them its LLM (``_llm``: engines default to it, then to ``Settings.llm``) and its encoder.
    """

    _llm: LLM | None
    _embed_model: BaseEmbedding

    def as_retriever(
        self, similarity_top_k: int = 5, callback_manager: CallbackManager | None = None, **kwargs: Any
    ) -> PearlRetriever:
        """A table-level retriever (max-pooled unit scores).

        Args:
            similarity_top_k: Tables retrieved per question.
            callback_manager: LlamaIndex callbacks; default ``Settings.callback_manager``, as for
                LlamaIndex's own indexes.
            **kwargs: ``PearlRetriever``'s other arguments (``lexical_weight``, ``fetch_k``,
                ``include_join_hints_in_text``, ``verbose``); another name is a ``TypeError``.
        """
        manager = callback_manager or Settings.callback_manager
        return PearlRetriever(self, similarity_top_k=similarity_top_k, callback_manager=manager, **kwargs)

    def as_query_engine(self, llm: LLM | None = None, **kwargs: Any) -> RetrieverQueryEngine:
        """A ``RetrieverQueryEngine`` over retrieved tables, built as ``BaseIndex.as_query_engine`` builds one.

        Args:
            llm: Answering LLM; default the index's LLM, else ``Settings.llm``.
            **kwargs: The retriever's arguments (:meth:`as_retriever`: ``similarity_top_k``,
                ``lexical_weight``, ``include_join_hints_in_text``...) and
                ``RetrieverQueryEngine.from_args``'s (``response_mode``, ``node_postprocessors``...);
                ``callback_manager`` and ``verbose`` go to both.

        Raises:
            TypeError: An argument that neither the retriever nor the engine takes (named).
            ValueError: No LLM; the message says where to give one.
        """
        return query_engine(self.as_retriever, llm or self._llm, **kwargs)

    def as_chat_engine(
        self, chat_mode: ChatMode | str = ChatMode.BEST, llm: LLM | None = None, **kwargs: Any
    ) -> BaseChatEngine:
        """A chat engine grounded on retrieved tables, built as ``BaseIndex.as_chat_engine`` builds one.

        Args:
            chat_mode: ``"best"`` (default) and ``"condense_plus_context"``: ``CondensePlusContextChatEngine``;
                ``"context"``: ``ContextChatEngine``; ``"condense_question"``: ``CondenseQuestionChatEngine``
                over :meth:`as_query_engine`.
            llm: Chat LLM; default the index's LLM, else ``Settings.llm``.
            **kwargs: The retriever's arguments and the chat engine's ``from_defaults`` arguments
                (``system_prompt``, ``memory``...), as in :meth:`as_query_engine`.

        Raises:
            ValueError: ``"simple"`` (it never reads the tables), ``"react"``/``"openai"`` (removed from
                LlamaIndex), an unknown mode, or no LLM.
            TypeError: An argument that neither the retriever nor the engine takes (named).
        """
        return chat_engine(self.as_retriever, llm or self._llm, chat_mode, **kwargs)

    def as_sql_table_retriever(
        self,
        sql_database: Any,
        similarity_top_k: int = 5,
        join_keys: bool = True,
        context_strs: Mapping[str, str] | None = None,
        set_margin: int | None = SQL_SET_MARGIN,
        **kwargs: Any,
    ) -> ObjectRetriever[SQLTableSchema]:
        """The ``table_retriever`` of LlamaIndex's ``SQLTableRetrieverQueryEngine`` and ``NLSQLRetriever``.

        ``retrieve``/``aretrieve`` return ``SQLTableSchema``s in PEARL's order, named as
        ``sql_database`` names the tables, each ``context_str`` holding how the table joins the
        other retrieved tables, as SQL with identifiers quoted for the database's dialect
        (:mod:`~llama_index_pearl.retrieval.sql_tables`).

        Args:
            sql_database: The LlamaIndex ``SQLDatabase`` the SQL runs on; it must hold every
                table of the index (on PostgreSQL, ``SQLDatabase(engine, schema=...)`` of their schema).
            similarity_top_k: At most this many tables per question, unless the connected set is larger.
            join_keys: Put the joins in ``context_str`` (``JOIN stadium ON concert.stadium_id = stadium.stadium_id``).
            context_strs: Table descriptions by database table name, shown before the join keys.
            set_margin: The connected set of tables and this many other candidates (``None``:
                ``similarity_top_k`` tables, the set first); see ``PearlRetriever``.
            **kwargs: Passed to :meth:`as_retriever` (``lexical_weight``, ``fetch_k``, ``set_rule``).

        Raises:
            ValueError: A table of the index (or a key of ``context_strs``) the database does not hold;
                the message names it.
        """
        retriever = self.as_retriever(similarity_top_k, set_margin=set_margin, **kwargs)
        return sql_table_retriever(self, sql_database, retriever, join_keys=join_keys, context_strs=context_strs)

    def as_sql_query_engine(
        self,
        sql_database: Any,
        llm: LLM | None = None,
        similarity_top_k: int = 5,
        join_keys: bool = True,
        **kwargs: Any,
    ) -> PearlSQLQueryEngine:
        """LlamaIndex's ``SQLTableRetrieverQueryEngine``, with :meth:`as_sql_table_retriever` choosing the tables.

        Built from LlamaIndex's public parts (:class:`~llama_index_pearl.retrieval.engines.PearlSQLQueryEngine`)
        so that its ``NLSQLRetriever`` gets the index's encoder instead of ``Settings.embed_model``.

        Args:
            sql_database: The LlamaIndex ``SQLDatabase`` the SQL runs on.
            llm: Writes the SQL (and the answer); default the index's LLM, else ``Settings.llm``.
            similarity_top_k: Tables shown to the LLM per question.
            join_keys: Show the join keys between them.
            **kwargs: The retriever's arguments (:meth:`as_retriever`: ``filters``, ``set_margin``,
                ``lexical_weight``...), :meth:`as_sql_table_retriever`'s ``context_strs``, and
                ``SQLTableRetrieverQueryEngine``'s (``synthesize_response``, ``sql_only``, ``rows_retrievers``,
                ``text_to_sql_prompt``...); ``callback_manager`` and ``verbose`` go to both.

        Raises:
            TypeError: An argument that neither the retriever nor the engine takes (named).
            ValueError: No LLM, or a table of the index the database does not hold.
        """
        engine_args = _parameters(
            PearlSQLQueryEngine.__init__, "sql_database", "table_retriever", "llm", "embed_model"
        ) | _parameters(BaseSQLTableQueryEngine.__init__, "llm")
        mine, theirs = _split(
            kwargs, {"engine": engine_args, "table retriever": {"context_strs"}}, "as_sql_query_engine"
        )
        table_retriever = self.as_sql_table_retriever(
            sql_database, similarity_top_k, join_keys, **theirs["table retriever"], **mine
        )
        return sql_query_engine(table_retriever, sql_database, llm or self._llm, self._embed_model, **theirs["engine"])
