# Entry points over scripts/ (README, "Development"). Every recipe reads nothing from stdin.
#   make                 build build/httpfs2.duckdb_extension (and the unit tests), for DuckDB 1.5.5
#   make DUCKDB_VERSION=2.0.1   the extension for that DuckDB (1.5.6, 2.0.1) into build/v<version>/
#   make test            format check, unit tests (also under TSan and ASan), integration tests
#   make demo            the short benchmark, native vs httpfs2
#   make repository      build/repository/: a DuckDB extension repository of every version built (INSTALL httpfs2 FROM
#                        '<its path or URL>'); builds DUCKDB_VERSION's first
#   make wheel           dist/duckdb_extension_httpfs2-*.whl: a Python wheel per version built (pip install it)
#   make bench           the bench runner with BENCH_ARGS, e.g. make bench BENCH_ARGS='run full' (or '--mode full')
#   make format          apply clang-format and ruff
#   make format-check    report unformatted files and lint findings, change nothing
#   make clean           remove build/ and dist/ (never the machine-wide DuckDB build in ~/.cache/httpfs2)
# TEST_ARGS go to pytest (make test TEST_ARGS='-k reads'), DEMO_ARGS to the demo's bench runner.

SHELL := /bin/bash
.DEFAULT_GOAL := build
# One target at a time: the scripts share build/ and .venv/.
.NOTPARALLEL:

BENCH_ARGS ?=
DUCKDB_VERSION ?= 1.5.5
DEMO_ARGS ?=
TEST_ARGS ?=

.PHONY: build test demo bench repository wheel format format-check clean

build:
	DUCKDB_VERSION=$(DUCKDB_VERSION) bash scripts/build.sh </dev/null

test:
	bash scripts/test.sh $(TEST_ARGS) </dev/null

demo:
	bash scripts/demo.sh $(DEMO_ARGS) </dev/null

bench:
	bash scripts/setup_env.sh </dev/null
	bash scripts/build.sh </dev/null
	.venv/bin/python -m bench $(BENCH_ARGS) </dev/null

repository:
	DUCKDB_VERSION=$(DUCKDB_VERSION) bash scripts/build.sh </dev/null
	bash scripts/repository.sh </dev/null

wheel:
	DUCKDB_VERSION=$(DUCKDB_VERSION) bash scripts/build.sh </dev/null
	bash scripts/wheel.sh </dev/null

format:
	bash scripts/format.sh </dev/null

format-check:
	bash scripts/format.sh --check </dev/null

clean:
	rm -rf -- build dist
