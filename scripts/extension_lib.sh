# Sourced by the scripts that handle built DuckDB extensions (build_host_httpfs.sh, repository.sh, wheel.sh): their
# metadata footer, and which of this checkout's builds to package.
# shellcheck shell=bash

# The footer's ABI/extension version/DuckDB version/platform/magic, '/'-separated: 32-byte fields at these offsets of
# the file's last 512 bytes (DuckDB's ParseExtensionMetaData).
footer_fields() { # file
	local offset fields=()
	for offset in 96 128 160 192 224; do
		# (tail and head, not dd: the tests run this under AddressSanitizer's preload, which dd does not survive)
		fields+=("$(tail -c $((512 - offset)) "$1" | head -c 32 | tr -d '\0')")
	done
	(IFS=/ && echo "${fields[*]}")
}

# The extension files a packaging script takes, one a line: `--all`, every version this checkout built
# (build/httpfs2.duckdb_extension for DuckDB 1.5.5, build/v<version>/httpfs2.duckdb_extension for the others), else
# the file named. Fails, saying what to run, where there is none.
extensions_to_package() { # repository-root which log-tag
	local file found=()
	if [[ "$2" == --all ]]; then
		for file in "$1/build/httpfs2.duckdb_extension" "$1"/build/v*/httpfs2.duckdb_extension; do
			[[ -f "$file" ]] && found+=("$file")
		done
	elif [[ -f "$2" ]]; then
		found=("$2")
	fi
	if ((${#found[@]} == 0)); then
		echo "[$3] no extension built ($2): run make (or make DUCKDB_VERSION=<version>) first" >&2
		return 1
	fi
	printf '%s\n' "${found[@]}"
}
