# Two entry points, each working on a fresh machine from a clean clone:
#   make check   set everything up, then run the default model suite (ordercheck check models/)
#   make test    set everything up, then ruff, the import contract and the whole test suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup browser nodes check test lint bench docs clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,spark]'
	touch $(STAMP)

setup: $(STAMP) browser nodes

# The example node in C (examples/nodes/causal_broadcast.c, for `ordercheck run`), built
# with the system C compiler into build/nodes/; without one, its tests are skipped.
CC_NODE := build/nodes/causal_broadcast

nodes:
	@if command -v $${CC:-cc} >/dev/null 2>&1; then \
	  mkdir -p build/nodes && $${CC:-cc} -std=c99 -D_POSIX_C_SOURCE=200809L -O2 -Wall -Wextra \
	    -o $(CC_NODE) examples/nodes/causal_broadcast.c; \
	else \
	  echo "setup: no C compiler ($${CC:-cc}), so $(CC_NODE) is not built; its tests will be skipped"; \
	fi

# Headless Chromium for the report's browser test (Debian's package). Installed once,
# as root or through passwordless sudo; without apt-get the browser test skips.
browser:
	@if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then :; \
	elif ! command -v apt-get >/dev/null 2>&1; then \
	  echo "setup: apt-get is not available, so chromium is not installed; the browser test will be skipped"; \
	else \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; elif sudo -n true 2>/dev/null; then SUDO="sudo -n"; else SUDO=none; fi; \
	  if [ "$$SUDO" = none ]; then \
	    echo "setup: installing chromium needs root; the browser test will be skipped"; \
	  else \
	    echo "setup: installing chromium (Debian package) for the browser test"; \
	    ( $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null ) \
	      || echo "setup: chromium could not be installed; the browser test will be skipped"; \
	  fi; \
	fi

check: setup
	$(BIN)/ordercheck check models/

# The suite starts several hundred ordercheck processes. The project's own modules are
# byte-compiled once first: pip compiles what it installs, but not an editable
# install's sources, so where PYTHONDONTWRITEBYTECODE is set every process would compile
# them again (a fifth of the CPU time of the test files that run the command line most),
# and where it is not, a test's child running under a small file-size limit could leave
# a truncated cache file behind (CPython writes it short without an error).
# Two xdist workers, one per core of the 2-core CI machine: pytest with three took
# 10 min 33 s, with two 10 min 06 s, 10 min 26 s and 9 min 32 s (fresh clones), with
# less CPU in all (a third worker only time-shares the two cores).
# The suite's Spark JVMs (the local ones, and the master, workers, drivers and executors
# of tests/test_spark_cluster.py's standalone cluster) map Spark's classes from one
# class-data archive instead of loading them each (tests/spark_classes.py: about half
# the CPU of each JVM's start). It is
# written once per set-up, beside ruff, the import contract and the byte-compiling, which
# leave the second core free; where it cannot be written the JVMs start without it.
SPARK_CLASSES := build/spark-classes.jsa

test: setup
	@if [ ! -f $(SPARK_CLASSES) ] || [ $(STAMP) -nt $(SPARK_CLASSES) ]; then \
	  $(BIN)/python tests/spark_classes.py $(SPARK_CLASSES) & \
	fi; \
	$(BIN)/ruff check . && $(BIN)/python .ci/lint_imports.py --no-logo \
	  && $(BIN)/python -m compileall -q checker specs reports tla ordercheck tests examples; \
	status=$$?; wait; exit $$status
	$(BIN)/python -m pytest -q -n 2 --dist loadfile

# ruff, then the import contract (pyproject.toml's [tool.importlinter]; see
# docs/explanation/architecture.md)
lint: setup
	$(BIN)/ruff check .
	$(BIN)/python .ci/lint_imports.py --no-logo

bench: setup
	$(BIN)/python benchmarks/throughput.py

# The documentation (docs/, README.md as its front page) as HTML in build/docs. Every
# warning is an error: a broken link between pages, a heading anchor that does not
# exist, a Python cross-reference that resolves to nothing, a docstring autodoc cannot
# read. -E rebuilds from scratch, so what the code says now is what the pages say.
docs: $(STAMP)
	$(BIN)/sphinx-build -E -W --keep-going -n -q -b html docs build/docs

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
