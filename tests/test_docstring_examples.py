"""The examples in the public functions' docstrings run as written (doctest, as numpy and networkx check theirs)."""

from __future__ import annotations

import doctest
import importlib

import pytest

# the modules whose public functions carry examples; each must hold at least one
MODULES = [
    "llama_index_pearl.joins.graph",
    "llama_index_pearl.joins.selection",
    "llama_index_pearl.retrieval.pooling",
    "llama_index_pearl.tables.inputs",
    "llama_index_pearl.text.words",
]


@pytest.mark.parametrize("name", MODULES)
def test_the_docstring_examples_of_a_module_run_as_written(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS, report=True)
    assert result.attempted > 0 and result.failed == 0
