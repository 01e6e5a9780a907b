"""llama-index-pearl: PEARL table retrieval for LlamaIndex: the tables a question needs, and how they join.

The public names are loaded on first use (PEP 562): ``import llama_index_pearl`` and
``pearl --version`` need neither LlamaIndex nor an encoder, while
``from llama_index_pearl import PearlTableIndex`` works as with eager imports.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what the lazy names are, for type checkers and editors
    from llama_index_pearl.config import PearlConfig
    from llama_index_pearl.corpus.build import BuildReport
    from llama_index_pearl.corpus.updates import UpdateReport
    from llama_index_pearl.foundations.locks import LockTimeout
    from llama_index_pearl.generation import (
        HeuristicQueryGenerator,
        LLMQueryGenerator,
        QueryGenerator,
        register_generator,
    )
    from llama_index_pearl.index import PearlTableIndex
    from llama_index_pearl.retrieval.retriever import PearlRetriever
    from llama_index_pearl.tables.bundled import example_data
    from llama_index_pearl.tables.inputs import load_tables
    from llama_index_pearl.tables.table import ForeignKey, Table
    from llama_index_pearl.text.serialization import TableView

__version__ = "0.1.0"

_PUBLIC = {
    "BuildReport": "llama_index_pearl.corpus.build",
    "ForeignKey": "llama_index_pearl.tables.table",
    "HeuristicQueryGenerator": "llama_index_pearl.generation",
    "LLMQueryGenerator": "llama_index_pearl.generation",
    "LockTimeout": "llama_index_pearl.foundations.locks",
    "PearlConfig": "llama_index_pearl.config",
    "PearlRetriever": "llama_index_pearl.retrieval.retriever",
    "PearlTableIndex": "llama_index_pearl.index",
    "QueryGenerator": "llama_index_pearl.generation",
    "Table": "llama_index_pearl.tables.table",
    "TableView": "llama_index_pearl.text.serialization",
    "UpdateReport": "llama_index_pearl.corpus.updates",
    "example_data": "llama_index_pearl.tables.bundled",
    "load_tables": "llama_index_pearl.tables.inputs",
    "register_generator": "llama_index_pearl.generation",
}
__all__ = [
    "BuildReport",
    "ForeignKey",
    "HeuristicQueryGenerator",
    "LLMQueryGenerator",
    "LockTimeout",
    "PearlConfig",
    "PearlRetriever",
    "PearlTableIndex",
    "QueryGenerator",
    "Table",
    "TableView",
    "UpdateReport",
    "example_data",
    "load_tables",
    "register_generator",
]


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'llama_index_pearl' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC])
