"""The examples in the public functions' docstrings run as written (doctest, as numpy and networkx check theirs)."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

import llama_index_pearl

PACKAGE = Path(llama_index_pearl.__file__).parent


def _modules_with_examples() -> list[str]:
    """Every module of the package whose source holds a doctest prompt (found here, never listed by hand)."""
    return sorted(
        ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        for path in PACKAGE.rglob("*.py")
        if ">>> " in path.read_text(encoding="utf-8")
    )


MODULES = _modules_with_examples()


def test_the_search_finds_the_modules_with_examples():
    assert "llama_index_pearl.retrieval.answer.table_sets" in MODULES
    assert "llama_index_pearl.index" not in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_the_docstring_examples_of_a_module_run_as_written(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS, report=True)
    assert result.attempted > 0 and result.failed == 0
