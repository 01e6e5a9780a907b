"""Store: the default vector store (FAISS, exact, an HNSW graph past a unit count), its files, and what PEARL reads
of any LlamaIndex vector store; units embedded once, with unit-length vectors, and stored.

Pipeline step: store (docs/architecture.md).
"""
