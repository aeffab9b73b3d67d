# Sourced by build_duckdb.sh and build_host_httpfs.sh: the machine-wide build cache (~/.cache/httpfs2, or
# HTTPFS2_CACHE_DIR), its locks, logged build steps, and DuckDB's C++ sources as the sha256-pinned PyPI sdist of
# duckdb==$DUCKDB_VERSION (default 1.5.5; HTTPFS2_JOBS sets ninja's -j, default nproc). Pinned sdists:
#   1.5.5 72f33ee57ca7595b23957671a2cc7f7fe2be0ecc2d68f63abedcfcaa3a5c1238
#   1.5.6 166a91dbfacfc0c9f08cc76c0243cb6d3d4296bfab5bad72a3cfb63140a5b7c8
#   2.0.1 5b3f493140e35b75298ee0fc606d98e3065e8601e64fe81b09326de7a6fd68e0
# shellcheck shell=bash disable=SC2034 # (variables for the scripts that source this file)

DUCKDB_VERSION="${DUCKDB_VERSION:-1.5.5}"
# DuckDB 2.x's CMakeLists takes $DUCKDB_VERSION from the environment as its own version string (it wants "v2.0.1"):
# keep ours out of the environment of cmake and ninja.
export -n DUCKDB_VERSION
CACHE_ROOT="${HTTPFS2_CACHE_DIR:-$HOME/.cache/httpfs2}"
JOBS="${HTTPFS2_JOBS:-$(nproc)}"
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

case "$DUCKDB_VERSION" in
1.5.5) DUCKDB_SDIST_SHA256=72f33ee57ca7595b23957671a2cc7f7fe2be0ecc2d68f63abedcfcaa3a5c1238 ;;
1.5.6) DUCKDB_SDIST_SHA256=166a91dbfacfc0c9f08cc76c0243cb6d3d4296bfab5bad72a3cfb63140a5b7c8 ;;
2.0.1) DUCKDB_SDIST_SHA256=5b3f493140e35b75298ee0fc606d98e3065e8601e64fe81b09326de7a6fd68e0 ;;
*)
	echo "DUCKDB_VERSION=$DUCKDB_VERSION has no pinned sdist (1.5.5, 1.5.6, 2.0.1): add its sha256 to scripts/cache_lib.sh" >&2
	exit 1
	;;
esac
DUCKDB_SRC_DIR="$CACHE_ROOT/duckdb-$DUCKDB_VERSION-src"
# How both DuckDB builds start their cmake flags: a static DuckDB with nothing built in, as official extensions link it.
DUCKDB_STATIC_FLAGS=(
	-G Ninja
	-DCMAKE_BUILD_TYPE=Release
	-DEXTENSION_STATIC_BUILD=1
	-DBUILD_SHELL=0
	-DBUILD_UNITTESTS=0
	-DDISABLE_BUILTIN_EXTENSIONS=1
	-DENABLE_SANITIZER=0
	-DENABLE_UBSAN=0
)
DUCKDB_TREE="$DUCKDB_SRC_DIR/external/duckdb"
mkdir -p "$CACHE_ROOT"

# Holds $CACHE_ROOT/.lock-NAME until the script exits: one build of a kind at a time per machine, a second caller
# waits, then finds the cache warm.
cache_lock() {
	local fd
	exec {fd}>"$CACHE_ROOT/.lock-$1"
	flock "$fd"
}

# Checks FILE against a sha256, or fails saying which file did not match.
verify_sha256() { # sha256 file
	echo "$1  $2" | sha256sum -c --quiet - >&2 || {
		log "sha256 mismatch for $2 (want $1)"
		exit 1
	}
}

# Runs a build step with its output in LOG; on failure shows the log's tail and fails.
run_logged() { # log command...
	local out=$1
	shift
	"$@" >"$out" 2>&1 || {
		tail -50 "$out" >&2
		log "failed: $* (log: $out)"
		exit 1
	}
}

# Unpacks the pinned sdist into $DUCKDB_SRC_DIR once (DuckDB's tree is $DUCKDB_TREE). Its own lock, taken last, so that
# both scripts may call it while they hold theirs.
fetch_duckdb_sdist() {
	[[ -f "$DUCKDB_SRC_DIR/.complete" ]] && return
	(
		flock 8
		[[ -f "$DUCKDB_SRC_DIR/.complete" ]] && exit 0
		log "fetching duckdb==$DUCKDB_VERSION sdist"
		tmp=$(mktemp -d)
		python3 -m pip download --quiet --no-deps --no-binary duckdb "duckdb==$DUCKDB_VERSION" -d "$tmp" >&2
		sdist=$(ls "$tmp"/duckdb-*.tar.gz)
		verify_sha256 "$DUCKDB_SDIST_SHA256" "$sdist"
		rm -rf "$DUCKDB_SRC_DIR" && mkdir -p "$DUCKDB_SRC_DIR"
		tar -xzf "$sdist" -C "$DUCKDB_SRC_DIR" --strip-components=1
		rm -rf "$tmp"
		touch "$DUCKDB_SRC_DIR/.complete"
	) 8>"$CACHE_ROOT/.lock-duckdb-$DUCKDB_VERSION-src"
}
