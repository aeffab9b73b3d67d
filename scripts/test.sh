#!/usr/bin/env bash
# Checks formatting (scripts/format.sh --check), builds everything and runs all tests: the IO core's unit tests
# (ctest), then the integration tests (pytest) against a real local S3 server and proxy that the fixtures start on
# 127.0.0.1, twice: with the release extension, then with one built under AddressSanitizer; then again in DuckDB 2.0.1
# (httpfs2 built for it), and the smoke suite in the other DuckDB versions (test/versions: DuckDB 2.0.1 and 1.5.6).
# Arguments go to the integration tests' pytest.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
bash scripts/setup_env.sh
bash scripts/format.sh --check
bash scripts/build.sh
ctest --test-dir build --output-on-failure --timeout 120
# The pool and split reads again under ThreadSanitizer and AddressSanitizer (core only: no DuckDB, seconds).
for sanitizer in thread address; do
	cmake -G Ninja -S . -B "build/sanitize-$sanitizer" -DHTTPFS2_SANITIZER="$sanitizer" >/dev/null
	ninja -C "build/sanitize-$sanitizer" >/dev/null
	log="build/sanitize-$sanitizer/ctest.log"
	ctest --test-dir "build/sanitize-$sanitizer" --output-on-failure --timeout 120 >"$log" 2>&1 || {
		cat "$log"
		exit 1
	}
	echo "[test] $sanitizer sanitizer: $(grep 'tests passed' "$log")"
done
.venv/bin/python -m pytest test/integration "$@"
# The integration tests again with the extension under AddressSanitizer (use after free, overflows in the adapter and
# the read-ahead it drives, cancellations and closes included). DuckDB and Python are not instrumented; ASan's
# runtime and the libstdc++ whose exceptions it intercepts are preloaded into them. Leaks are not checked: Python
# and DuckDB keep memory until exit by design.
HTTPFS2_SANITIZER=address bash scripts/build.sh
HTTPFS2_EXTENSION="$ROOT/build/extension-address/httpfs2.duckdb_extension" \
	LD_PRELOAD="$(c++ -print-file-name=libasan.so) $(c++ -print-file-name=libstdc++.so)" \
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
	.venv/bin/python -m pytest test/integration -q -p no:cacheprovider "$@"
echo "[test] integration tests with the extension under AddressSanitizer: passed"
# The smoke suite (test/versions) in the DuckDB versions beside 1.5.5: httpfs2 built for each, the stock Python duckdb
# of each (scripts/setup_host.sh, into .venv-duckdb-<version>/) beside the httpfs built for it
# (scripts/build_host_httpfs.sh, cached per machine as DuckDB's static libraries are).
HOST_VERSIONS=(2.0.1 1.5.6)
for version in "${HOST_VERSIONS[@]}"; do
	DUCKDB_VERSION="$version" bash scripts/build.sh
	bash scripts/setup_host.sh "$version" >/dev/null
	DUCKDB_VERSION="$version" bash scripts/build_host_httpfs.sh >/dev/null
done
# The integration tests in DuckDB 2.0.1 too, with the stock Python duckdb 2.0.1 and httpfs built for it: all but the
# suites that need extensions no registry serves for 2.0 (azure; iceberg, delta and ducklake through the table suite).
HTTPFS2_EXTENSION="$ROOT/build/v2.0.1/httpfs2.duckdb_extension" \
	HTTPFS2_HOST_HTTPFS="$(DUCKDB_VERSION=2.0.1 bash scripts/build_host_httpfs.sh)" \
	.venv-duckdb-2.0.1/bin/python -m pytest test/integration -q -p no:cacheprovider \
	--ignore test/integration/test_azure.py --ignore test/integration/test_azure_uploads.py \
	--ignore test/integration/test_cache_azure.py --ignore test/integration/test_tables.py "$@"
echo "[test] integration tests in DuckDB 2.0.1: passed"
HTTPFS2_HOST_VERSIONS="${HOST_VERSIONS[*]}" .venv/bin/python -m pytest test/versions -q -p no:cacheprovider
echo "[test] smoke suite in DuckDB ${HOST_VERSIONS[*]}: passed"
