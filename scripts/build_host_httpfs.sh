#!/usr/bin/env bash
# Builds DuckDB's official httpfs extension from source for a test host of DuckDB 1.5.6 or 2.0.1, for which no
# registry serves httpfs binaries, as DuckDB builds its Linux extensions: out of tree through
# -DDUCKDB_EXTENSION_CONFIGS, EXTENSION_STATIC_BUILD, `ninja httpfs_loadable_extension`, the metadata footer of the
# host's version (unsigned: load with allow_unsigned_extensions). Prints the binary's path on stdout.
# Usage: DUCKDB_VERSION=1.5.6|2.0.1 [HTTPFS_VARIANT=pr389] [HTTPFS2_JOBS=N] scripts/build_host_httpfs.sh
# Output: ~/.cache/httpfs2/httpfs-<duckdb version>-<commit>[-pr389]/httpfs.duckdb_extension
#   1.5.6: duckdb-httpfs v1.5-variegata at 3fb3fc987ca8 (duckdb-httpfs-3fb3fc9.tar.gz,
#          sha256 009790a9debab1f3c5da8ab49ff5f406d65b23eae698f71e5e54a6b92609a996)
#   2.0.1: duckdb-httpfs main at 2a6481d0bfc2 (duckdb-httpfs-2a6481d.tar.gz,
#          sha256 bd7d27d23f539910c90cfd7184b9d22681418b518dc15653a7bd28f94d6d72e3)
#          + httpfs-2a6481d-to-duckdb-2.0.1.patch (162a3e5569b6c42e7032b05ce757e3ca714ac9fbe98cceaddf70d8991278230b);
#          HTTPFS_VARIANT=pr389 adds httpfs-2a6481d-pr389-write-port.patch
#          (52aa1c4a663bec03c72d00064ec69566973f172b5d5068a60b8eed89605b0a49), a port of duckdb-httpfs PR 389's uploads.
# The archives come from ../shared/vendor/ when present, else from a git clone at the same commit; the patches are
# kept in scripts/patches/ (copies of the vendor ones). DuckDB's sources are the sdist of build_duckdb.sh (same cache).
# The variants of one DuckDB version share one build tree (httpfs-build-<version>-<flags key>/): a second variant
# recompiles httpfs alone. Building needs the Debian packages libssl-dev and libcurl4-openssl-dev (a cached binary
# does not).
set -euo pipefail
log() { echo "[build_host_httpfs] $*" >&2; }
# shellcheck source=scripts/cache_lib.sh
source "$(dirname "$0")/cache_lib.sh"
# shellcheck source=scripts/extension_lib.sh
source "$(dirname "$0")/extension_lib.sh"
VENDOR_DIR="$REPO_ROOT/../shared/vendor"
PATCH_DIR="$REPO_ROOT/scripts/patches"
HTTPFS_VARIANT="${HTTPFS_VARIANT:-}"

if [[ -n "$HTTPFS_VARIANT" && "$HTTPFS_VARIANT/$DUCKDB_VERSION" != pr389/2.0.1 ]]; then
	log "unknown HTTPFS_VARIANT=$HTTPFS_VARIANT for DuckDB $DUCKDB_VERSION (empty, or pr389 for 2.0.1)"
	exit 1
fi

patches=()
case "$DUCKDB_VERSION" in
1.5.6)
	HTTPFS_COMMIT=3fb3fc987ca8
	HTTPFS_ARCHIVE_SHA256=009790a9debab1f3c5da8ab49ff5f406d65b23eae698f71e5e54a6b92609a996
	;;
2.0.1)
	HTTPFS_COMMIT=2a6481d0bfc2
	HTTPFS_ARCHIVE_SHA256=bd7d27d23f539910c90cfd7184b9d22681418b518dc15653a7bd28f94d6d72e3
	patches+=("httpfs-2a6481d-to-duckdb-2.0.1.patch 162a3e5569b6c42e7032b05ce757e3ca714ac9fbe98cceaddf70d8991278230b")
	if [[ "$HTTPFS_VARIANT" == pr389 ]]; then
		patches+=("httpfs-2a6481d-pr389-write-port.patch 52aa1c4a663bec03c72d00064ec69566973f172b5d5068a60b8eed89605b0a49")
	fi
	;;
*)
	log "no httpfs source pinned for DuckDB $DUCKDB_VERSION (1.5.6, 2.0.1; 1.5.5's is the duckdb-extension-httpfs wheel)"
	exit 1
	;;
esac
SHORT_COMMIT="${HTTPFS_COMMIT:0:7}"
EXTENSION_VERSION="$SHORT_COMMIT${HTTPFS_VARIANT:+-$HTTPFS_VARIANT}"
OUT_DIR="$CACHE_ROOT/httpfs-$DUCKDB_VERSION-$EXTENSION_VERSION"
OUT="$OUT_DIR/httpfs.duckdb_extension"

CMAKE_FLAGS=(
	"${DUCKDB_STATIC_FLAGS[@]}"
	"-DOVERRIDE_GIT_DESCRIBE=v$DUCKDB_VERSION"
)
FLAGS_KEY=$(printf '%s\n' "${CMAKE_FLAGS[@]}" | sha256sum | cut -c1-12)
BUILD_DIR="$CACHE_ROOT/httpfs-build-$DUCKDB_VERSION-$FLAGS_KEY"

# The httpfs sources, patched, into $HTTPFS_SRC: one path for all variants, so that a variant's build recompiles only
# what differs.
HTTPFS_SRC="$BUILD_DIR/httpfs-src"
unpack_httpfs() {
	local archive="$VENDOR_DIR/duckdb-httpfs-$SHORT_COMMIT.tar.gz" src="$HTTPFS_SRC" entry name sha
	rm -rf "$src" && mkdir -p "$src"
	if [[ -f "$archive" ]]; then
		verify_sha256 "$HTTPFS_ARCHIVE_SHA256" "$archive"
		# Fresh mtimes (-m): the previous variant's objects must look older than any source they may differ in.
		tar -xzf "$archive" -C "$src" --strip-components=1 -m
	else
		log "$archive not found: cloning duckdb-httpfs at $HTTPFS_COMMIT"
		git clone --quiet https://github.com/duckdb/duckdb-httpfs "$src" >&2
		git -C "$src" checkout --quiet "$HTTPFS_COMMIT" >&2
	fi
	for entry in "${patches[@]}"; do
		read -r name sha <<<"$entry"
		verify_sha256 "$sha" "$PATCH_DIR/$name"
		patch -d "$src" -p1 --batch --forward --quiet <"$PATCH_DIR/$name" >&2
	done
}

# The 1.5.x sdists leave out scripts/append_metadata.cmake (and null.txt), which DuckDB's loadable-extension build
# runs after the link to append the footer. For those, DUCKDB_MODULE_BASE_DIR points at a view of the tree (symlinks)
# whose scripts/ has a stand-in that appends the same footer with scripts/append_metadata.py.
footer_view() {
	local view="$BUILD_DIR/duckdb-footer-view" entry
	rm -rf "$view" && mkdir -p "$view/scripts"
	for entry in "$DUCKDB_TREE"/*; do
		[[ "$(basename "$entry")" == scripts ]] || ln -s "$entry" "$view/"
	done
	for entry in "$DUCKDB_TREE"/scripts/*; do
		ln -s "$entry" "$view/scripts/"
	done
	: >"$view/scripts/null.txt"
	cat >"$view/scripts/append_metadata.cmake" <<-CMAKE
		# Written by scripts/build_host_httpfs.sh: stands in for DuckDB's script, absent from this sdist.
		file(READ "\${PLATFORM_FILE}" PLATFORM)
		string(STRIP "\${PLATFORM}" PLATFORM)
		string(REPLACE "\\"" "" EXTENSION_VERSION "\${EXTENSION_VERSION}")
		execute_process(COMMAND python3 "$REPO_ROOT/scripts/append_metadata.py" "\${EXTENSION}"
			--duckdb-version "\${VERSION_FIELD}" --platform "\${PLATFORM}" --extension-version "\${EXTENSION_VERSION}"
			--abi "\${ABI_TYPE}" COMMAND_ERROR_IS_FATAL ANY)
	CMAKE
	echo "$view"
}

cache_lock "httpfs-$DUCKDB_VERSION"
if [[ ! -f "$OUT_DIR/.complete" ]]; then
	# Needed to build, not to use the cached binary.
	missing=()
	for package in libssl-dev libcurl4-openssl-dev; do
		dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
	done
	if ((${#missing[@]})); then
		if [[ $EUID -ne 0 ]] || ! command -v apt-get >/dev/null; then
			log "missing Debian packages: ${missing[*]} (install them: apt-get install ${missing[*]})"
			exit 1
		fi
		# A fresh machine (CI's): Debian's packages are a registry it reaches.
		log "installing Debian packages: ${missing[*]}"
		install_missing() {
			DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" </dev/null >&2
		}
		install_missing || { apt-get update </dev/null >&2 && install_missing; } || {
			log "could not install Debian packages: ${missing[*]} (install them: apt-get install ${missing[*]})"
			exit 1
		}
	fi
	start=$(date +%s)
	fetch_duckdb_sdist
	mkdir -p "$OUT_DIR" "$BUILD_DIR"
	unpack_httpfs
	config="$BUILD_DIR/extension_config.cmake"
	{
		echo "duckdb_extension_load(httpfs SOURCE_DIR $HTTPFS_SRC INCLUDE_DIR $HTTPFS_SRC/src/include" \
			"EXTENSION_VERSION $EXTENSION_VERSION)"
		if [[ ! -f "$DUCKDB_TREE/scripts/append_metadata.cmake" ]]; then
			echo "set(DUCKDB_MODULE_BASE_DIR \"$(footer_view)\")"
		fi
	} >"$config"
	log "building httpfs $EXTENSION_VERSION for DuckDB $DUCKDB_VERSION in $BUILD_DIR (cold: ~30 min on 2 cores)"
	run_logged "$OUT_DIR/cmake.log" cmake -S "$DUCKDB_TREE" -B "$BUILD_DIR" "${CMAKE_FLAGS[@]}" \
		-DDUCKDB_EXTENSION_CONFIGS="$config"
	run_logged "$OUT_DIR/ninja.log" ninja -C "$BUILD_DIR" -j"$JOBS" httpfs_loadable_extension
	built="$BUILD_DIR/extension/httpfs/httpfs.duckdb_extension"
	footer="$(footer_fields "$built")"
	if [[ "$footer" != "CPP/$EXTENSION_VERSION/v$DUCKDB_VERSION/$(cat "$BUILD_DIR/duckdb_platform_out")/4" ]]; then
		log "unexpected metadata footer in $built: $footer"
		exit 1
	fi
	cp -f "$built" "$OUT.tmp" && mv -f "$OUT.tmp" "$OUT"
	touch "$OUT_DIR/.complete"
	log "httpfs $EXTENSION_VERSION for DuckDB $DUCKDB_VERSION built in $(($(date +%s) - start)) s (footer $footer)"
fi
echo "$OUT"
