"""Optional dependencies: imported on first use, with an error that names the extra to install.

The core install holds only what building and querying an index needs; Parquet
files, Qdrant, OpenAI-compatible LLMs and the benchmark tools are extras
(``pip install 'llama-index-pearl[parquet]'``).

Pipeline step: foundations (docs/architecture.md).
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["require"]

PACKAGE = "llama-index-pearl"


def require(module: str, extra: str, purpose: str) -> ModuleType:
    """Import an optional module, or say which extra provides it.

    Args:
        module: Dotted module name, e.g. ``"bm25s"``.
        extra: The extra of this package that installs it, e.g. ``"bench"``.
        purpose: What needs it, for the message (``"the BM25 baseline"``).

    Raises:
        ImportError: The module is not installed; the message holds the pip command.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"{purpose} needs the optional package {module.split('.')[0]!r}: pip install '{PACKAGE}[{extra}]'"
        ) from exc
