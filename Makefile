# Set-up, build, serve and test for the course site. Every target sets up what it needs first:
#   .venv/          Python 3.11 virtual environment, synced from uv.lock (uv itself is pinned in it)
#   node_modules/   npm packages pinned in package-lock.json: mermaid (draws the diagrams at build
#                   time), axe-core and lighthouse (tests and benchmarks)
#   chromium        Debian's browser, installed with apt-get when missing: mermaid draws the diagrams
#                   in it when the site is built (hooks/mermaid_svg.py), and the tests drive it
#   java            Debian's default-jre-headless, which runs the HTML validator (vnu.jar, npm)
#   poppler-utils   pdftotext and pdftoppm, which read back the section printed to PDF

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
UV_VERSION := 0.13.8
export NO_MKDOCS_2_WARNING := 1
# nbconvert (loaded by mkdocs-jupyter) otherwise builds every exporter it knows, PDF and Qt
# included, just to list their names in its help: 0.3-0.5 s of every build. A documented switch.
export NBCONVERT_DISABLE_CONFIG_EXPORTERS := 1
export UV_LINK_MODE := copy
# Timed comparisons take turns between numpy and JAX; OpenBLAS threads that spin ~0.1 s after
# each numpy call would slow whichever comes next (see benchmarks/throughput.py). Sleep at once.
export OPENBLAS_THREAD_TIMEOUT := 4
CHROMIUM := /usr/bin/chromium
JAVA := /usr/bin/java
PDFTOTEXT := /usr/bin/pdftotext
# The version is written once, in the section page's front matter; publishing reads it there.
SECTION_PAGE := docs/p5-9-1-gpus-and-parallel-processing.md
VERSION := $(shell sed -n 's/^version: *//p' $(SECTION_PAGE) | head -n 1)

# FRESH=1 (make build FRESH=1): execute every block and notebook, reusing nothing from the
# execution cache in .cache/execution/ (the results still refresh it). make publish always does.
FRESH ?=

.PHONY: setup serve build test lint bench publish print-version clean

## setup: create or update .venv and node_modules when missing or stale (their lock files newer)
setup: $(VENV)/.synced node_modules/.installed

# --compile-bytecode: where PYTHONDONTWRITEBYTECODE is set (CI containers, this sandbox), every
# build would otherwise compile its ~1,400 imported modules from source: 2.5 s of a 9 s build.
# The editable install's metadata comes from hatch_build.py, which reads the version from the
# section page. A page edit does not re-sync (the tests' copies would re-point the editable
# install at themselves); after changing the version, run `uv sync` (or touch pyproject.toml).
$(VENV)/.synced: pyproject.toml uv.lock hatch_build.py
	@test -x $(BIN)/uv || { $(PYTHON) -m venv $(VENV) && $(BIN)/python -m pip install --quiet uv==$(UV_VERSION); }
	$(BIN)/uv sync --locked --compile-bytecode --python $(BIN)/python
	@touch $@

# --ignore-scripts: vnu-jar's postinstall would fetch a JRE from GitHub where no java is found;
# make test installs Debian's instead. No other package needs a script.
node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --ignore-scripts
	@touch $@

# Builds draw diagrams in Debian's chromium and the browser tests drive it (never a browser
# downloaded by playwright).
$(CHROMIUM):
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium

# The HTML validity test runs the W3C Nu validator (node_modules/vnu-jar) with Java.
$(JAVA):
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq default-jre-headless

# The print test reads the PDF that chromium prints with poppler's pdftotext and pdftoppm.
$(PDFTOTEXT):
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq poppler-utils

## serve: build and serve the site at http://127.0.0.1:8000 (rebuilds on edits to docs/ and examples/,
## reusing every output whose ingredients did not change: see build_support/cache.py). A block
## that fails shows its error in its page instead of stopping the server (build_support/guard.py).
DEV_ADDR ?= 127.0.0.1:8000
serve: setup $(CHROMIUM)
	$(BIN)/mkdocs serve --strict --dev-addr $(DEV_ADDR) --watch examples --watch hooks

# A build writes into $(STAGING) and replaces site/ only once it succeeded: mkdocs empties its
# site_dir first and writes every page even when --strict then fails, so a failed build leaves
# the previous site/ as it was, and no half-written one. mkdocs.yml's site_dir reads
# COURSE_SITE_DIR (mike, which make publish runs, has no option for it).
STAGING := site.building
DROP_STAGING := { rm -rf $(STAGING); exit 1; }
SWAP_IN_STAGING := rm -rf site.previous && { ! test -e site || mv site site.previous; } \
	&& mv $(STAGING) site && rm -rf site.previous

## build: the strict build into site/ (fails on any broken example); FRESH=1 reuses nothing
build: setup $(CHROMIUM)
	rm -rf $(STAGING)
	COURSE_SITE_DIR=$(STAGING) FRESH=$(FRESH) $(BIN)/mkdocs build --strict || $(DROP_STAGING)
	@$(SWAP_IN_STAGING)

## test: lint, then the whole test suite (unit, property, golden, build, fault injection)
test: setup $(CHROMIUM) $(JAVA) $(PDFTOTEXT) lint
	$(BIN)/pytest

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

## bench: build, then run every benchmark script in benchmarks/ (each prints its own figures)
bench: build $(CHROMIUM)
	@for script in benchmarks/*.py; do echo "== $$script"; $(BIN)/python $$script || exit 1; done

## publish: deploy $(VERSION) with alias latest to the local gh-pages branch (never pushes),
## executed fresh, then print which outputs changed since the previous version on gh-pages
# mike runs `mkdocs` from PATH, so the virtual environment goes first on it.
MIKE := PATH="$(abspath $(BIN)):$$PATH" $(BIN)/mike
publish: setup $(CHROMIUM)
	@test -n "$(VERSION)" || { echo "no 'version:' in $(SECTION_PAGE)'s front matter" >&2; exit 1; }
	rm -rf $(STAGING)
	COURSE_SITE_DIR=$(STAGING) FRESH=1 PUBLISH_VERSION=$(VERSION) \
		$(MIKE) deploy --update-aliases $(VERSION) latest || $(DROP_STAGING)
	@$(SWAP_IN_STAGING)
	$(MIKE) set-default latest
	@$(BIN)/python -m build_support.record $(VERSION)

print-version:
	@echo $(VERSION)

## clean: remove the built site and every cache (.cache/: the execution cache and others)
clean:
	rm -rf site $(STAGING) site.previous .cache .pytest_cache .ruff_cache .hypothesis
