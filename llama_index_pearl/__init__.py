"""llama-index-pearl: PEARL multi-hop table retrieval for LlamaIndex."""

from llama_index_pearl.config import PearlConfig
from llama_index_pearl.corpus.build import BuildReport
from llama_index_pearl.generation import (
    HeuristicQueryGenerator,
    LLMQueryGenerator,
    QueryGenerator,
    register_generator,
)
from llama_index_pearl.index import PearlTableIndex
from llama_index_pearl.retrieval.retriever import PearlRetriever
from llama_index_pearl.storage.incremental import UpdateReport
from llama_index_pearl.tables.sources import load_tables
from llama_index_pearl.tables.table import ForeignKey, Table
from llama_index_pearl.text.serialization import TableView

__all__ = [
    "BuildReport",
    "ForeignKey",
    "HeuristicQueryGenerator",
    "LLMQueryGenerator",
    "PearlConfig",
    "PearlRetriever",
    "PearlTableIndex",
    "QueryGenerator",
    "Table",
    "TableView",
    "UpdateReport",
    "load_tables",
    "register_generator",
]
__version__ = "0.1.0"
