# The two commands a fresh machine needs: `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
DEMO_DIR ?= demo-graph
# Test processes (pytest-xdist); whole files go to one process (--dist loadfile).
TEST_JOBS ?= 2

.PHONY: demo test lint bench clean

$(BIN)/graphlake: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,server,ray]'
	touch $(BIN)/graphlake

demo: $(BIN)/graphlake
	$(BIN)/graphlake demo $(DEMO_DIR) --fresh

lint: $(BIN)/graphlake
	$(BIN)/ruff check src tests bench

test: $(BIN)/graphlake lint
	$(BIN)/pytest -q -n $(TEST_JOBS) --dist loadfile

bench: $(BIN)/graphlake
	$(BIN)/python bench/write.py

clean:
	rm -rf $(VENV) $(DEMO_DIR) .pytest_cache
