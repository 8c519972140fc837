# assay: two commands matter.  `make demo` runs the main job; `make test` runs the tests.
# Each sets itself up in .venv on a fresh machine.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP_CORE := $(VENV)/.core-installed
STAMP_DEV := $(VENV)/.dev-installed

.PHONY: demo test lint typecheck venv dev bench docs clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP_CORE): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
	touch $@

# torch is pinned to the CPU build that lies on this machine's disk; any other spec downloads GBs.
$(STAMP_DEV): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[test,docs,workbench,postgres,browser,dense,audit,pandas,ray,fast,yaml,ocr,onnx,ann,sql]'
	# irrCAC (a test-time oracle) pins coverage<7, which breaks numba (used by bm25s/ranx): no deps.
	$(BIN)/pip install -q --no-deps 'irrCAC>=0.4'
	touch $(STAMP_CORE) $@

venv: $(STAMP_CORE)
dev: $(STAMP_DEV)

# the production loop, the gold SQL step (skipped with a note without the sql extra), then the
# main demo, which ends by printing the explorer site's path
demo: $(STAMP_CORE)
	$(BIN)/assay demo --logs
	$(BIN)/assay demo --sql
	$(BIN)/assay demo

lint: $(STAMP_DEV)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP_DEV)
	$(BIN)/mypy

# two workers, each test file whole in one (its module fixtures built once); TEST_WORKERS=0 runs
# the suite in one process
TEST_WORKERS ?= 2
test: $(STAMP_DEV) lint typecheck
	$(BIN)/python -m pytest -q $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile)

# the documentation site from docs/ into site/ (open site/index.html); tests/test_docs.py builds it
# too, runs its examples and checks its generated parts (regenerate: cog -r -I docs/tools FILES)
docs: $(STAMP_DEV)
	$(BIN)/mkdocs build --strict -d site

bench: $(STAMP_DEV)
	for f in bench/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache site
