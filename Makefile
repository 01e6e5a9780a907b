# Two entry points for newcomers: `make demo` and `make test`. Both set up .venv first.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup demo test lint clean

$(BIN)/pearl: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# constraints.txt pins the CPU build of torch; unpinned torch pulls GBs of CUDA wheels
	$(BIN)/pip install -q -c constraints.txt -e ".[test]"
	touch $(BIN)/pearl

setup: $(BIN)/pearl

demo: setup
	$(BIN)/pearl demo

CODE := llama_index_pearl tests examples benchmarks

lint: setup
	$(BIN)/ruff check $(CODE)
	$(BIN)/ruff format --check $(CODE)

test: lint
	$(BIN)/pytest

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
