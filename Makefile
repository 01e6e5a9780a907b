# Two entry points for newcomers: `make demo` and `make test`. Both set up .venv first.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Where torch comes from. PyPI's Linux torch is the CUDA build (about 2 GB, 18 NVIDIA packages): on a machine with
# no local CPU wheel, make demo TORCH_INDEX=https://download.pytorch.org/whl/cpu installs PyTorch's CPU build first.
TORCH_INDEX ?=

.PHONY: setup setup-test demo test lint docs clean

# the core install: what building and querying an index needs, no test or benchmark extras
$(BIN)/pearl: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# constraints.txt pins torch's version; TORCH_INDEX, when set, is where its CPU build comes from
	$(if $(TORCH_INDEX),$(BIN)/pip install -q -c constraints.txt --index-url $(TORCH_INDEX) torch)
	$(BIN)/pip install -q -c constraints.txt -e .
	touch $(BIN)/pearl

# the test extras on top (pytest, ruff, qdrant, parquet, bm25s, sqlglot, openai-like, and the docs extra)
$(VENV)/.test-extras: $(BIN)/pearl
	$(BIN)/pip install -q -c constraints.txt -e ".[test]"
	touch $(VENV)/.test-extras

# the docs extra alone (MkDocs, Material, mkdocstrings): enough for make docs
$(VENV)/.docs-extras: $(BIN)/pearl
	$(BIN)/pip install -q -c constraints.txt -e ".[docs]"
	touch $(VENV)/.docs-extras

setup: $(BIN)/pearl

setup-test: $(VENV)/.test-extras

demo: setup
	$(BIN)/pearl demo

CODE := llama_index_pearl tests examples benchmarks docs

lint: setup-test
	$(BIN)/ruff check $(CODE)
	$(BIN)/ruff format --check $(CODE)

test: lint
	$(BIN)/pytest

# the documentation site, offline, into site/ (open site/index.html); --strict: a broken link or reference fails
docs: $(VENV)/.docs-extras
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache site
