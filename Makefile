# The two commands of the README: `make demo` (the main job) and `make test` (every check CI runs).
# Each creates .venv with Python 3.11 on first use and reinstalls when pyproject.toml changes.

PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck unit bench conformance clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=24"
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/simplex-call demo

test: lint typecheck unit

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/python -bb -m pytest -q

# Every benchmark; bench/replicas.py on a throwaway PostgreSQL server (scripts/with-postgres).
bench: $(STAMP)
	bash scripts/with-postgres bash -c \
	  'for f in bench/*.py; do echo "== $$f"; $(BIN)/python "$$f" || exit 1; done'

clean:
	rm -rf $(VENV) build dist .mypy_cache .ruff_cache .hypothesis
