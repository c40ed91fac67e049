# The two commands a fresh machine needs: `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
DEMO_DIR ?= demo-graph
# Test processes (pytest-xdist); whole files go to one process (--dist loadfile). Four on
# two cores, because many tests wait on subprocesses, moto and sleeps (README: the times).
TEST_JOBS ?= 4
# What each command installs: the demo needs the core and the server (fastapi, uvicorn),
# not the test tooling, Ray or the readers' extras; the tests need everything.
DEMO_EXTRAS ?= server
TEST_EXTRAS ?= dev,server,ray,torch,hf,polars,algo
# One stamp per extras set, named by it: `make test` after `make demo` installs the test
# extras, changing an extras list installs again, and so does a newer pyproject.toml.
DEMO_STAMP := $(VENV)/.installed-$(DEMO_EXTRAS)
TEST_STAMP := $(VENV)/.installed-$(TEST_EXTRAS)

.PHONY: demo test test-fast lint docs bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Order-only on the venv: creating it must not count as a newer prerequisite.
$(VENV)/.installed-%: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[$*]'
	touch $@

demo: $(DEMO_STAMP)
	$(BIN)/graphlake demo $(DEMO_DIR) --fresh

lint: $(TEST_STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check --quiet src tests bench docs/hooks.py
	$(BIN)/lint-imports --no-cache
	$(BIN)/mypy
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet -d site

test: $(TEST_STAMP) lint
	$(BIN)/pytest -q -n $(TEST_JOBS) --dist loadfile --durations=30

# The edit loop's lane: the storage-light packages, no `slow` and no `s3` tests, no lint
# (about 2 minutes on the 2-core machine; `make test` stays the full suite CI runs).
FAST_TESTS ?= tests/schema tests/catalog tests/core tests/query tests/search
test-fast: $(TEST_STAMP)
	$(BIN)/pytest -q -n $(TEST_JOBS) --dist loadfile -m "not slow and not s3" $(FAST_TESTS)

# The docs site (docs/, mkdocs.yml); --strict fails on a broken link. The CLI and HTTP
# reference pages are generated from the code by docs/hooks.py on every build.
docs: $(TEST_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict -d site

bench: $(TEST_STAMP)
	$(BIN)/python bench/write.py

clean:
	rm -rf $(VENV) $(DEMO_DIR) .pytest_cache site docs/reference
