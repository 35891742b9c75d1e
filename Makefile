# Set-up, build, serve and test for the course site. Every target sets up what it needs first:
#   .venv/          Python 3.11 virtual environment, synced from uv.lock (uv itself is pinned in it)
#   node_modules/   npm packages pinned in package-lock.json (mermaid, axe-core), served by the site
#   chromium        Debian's browser for the browser tests (installed with apt-get when missing)

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
UV_VERSION := 0.13.8
export NO_MKDOCS_2_WARNING := 1
export UV_LINK_MODE := copy

.PHONY: setup serve build test lint bench clean

## setup: create or update .venv when missing or stale (pyproject.toml or uv.lock newer)
setup: $(VENV)/.synced

$(VENV)/.synced: pyproject.toml uv.lock
	@test -x $(BIN)/uv || { $(PYTHON) -m venv $(VENV) && $(BIN)/python -m pip install --quiet uv==$(UV_VERSION); }
	$(BIN)/uv sync --locked --python $(BIN)/python
	@touch $@

## serve: build and serve the site at http://127.0.0.1:8000 (rebuilds on edits to docs/ and examples/)
serve: setup
	$(BIN)/mkdocs serve --strict --dev-addr 127.0.0.1:8000 --watch examples --watch hooks

## build: the strict build into site/ (fails on any broken example)
build: setup
	$(BIN)/mkdocs build --strict

## test: lint, then the whole test suite (unit, property, golden, build, fault injection)
test: setup lint
	$(BIN)/pytest

## bench: run every script in benchmarks/; each prints medians, ratios and targets met or missed
bench: setup
	@for script in benchmarks/*.py; do echo "== $$script"; $(BIN)/python $$script || exit 1; done

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

clean:
	rm -rf site .pytest_cache .ruff_cache .hypothesis
