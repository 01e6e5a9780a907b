"""llama-index-pearl: PEARL multi-hop table retrieval for LlamaIndex."""

from llama_index_pearl.index import BuildReport, PearlConfig, PearlTableIndex
from llama_index_pearl.retriever import PearlRetriever
from llama_index_pearl.serialization import TableView
from llama_index_pearl.sources import load_tables
from llama_index_pearl.table import ForeignKey, Table

__all__ = [
    "BuildReport",
    "ForeignKey",
    "PearlConfig",
    "PearlRetriever",
    "PearlTableIndex",
    "Table",
    "TableView",
    "load_tables",
]
__version__ = "0.1.0"
