#!/usr/bin/env bash
# Formats the sources with the tools pinned in requirements.txt (installed into .venv/ by setup_env.sh):
# clang-format with DuckDB's .clang-format on the C++ of src/ and test/unit/, ruff (ruff.toml) on the Python of
# bench/, rig/, test/ and scripts/. `--check` changes nothing: it lists the files that are not formatted and the
# lint findings, and exits 1 if there are any. Never reads stdin.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
log() { echo "[format] $*" >&2; }

check=false
case "${1:-}" in
--check) check=true ;;
"") ;;
*)
	echo "usage: bash scripts/format.sh [--check]" >&2
	exit 2
	;;
esac

bash scripts/setup_env.sh </dev/null
CLANG_FORMAT=.venv/bin/clang-format
RUFF=.venv/bin/ruff
PYTHON_PATHS=(bench rig test scripts packaging)
mapfile -t cpp_files < <({
	find src -name '*.cpp' -o -name '*.hpp'
	find test/unit -maxdepth 1 -name '*.cpp' -o -name '*.hpp'
} | sort)

if ! $check; then
	"$CLANG_FORMAT" --style=file -i "${cpp_files[@]}" </dev/null
	# Safe fixes first (import order, pyupgrade), then the formatter, then whatever is left is reported.
	"$RUFF" check --no-cache --fix-only --quiet "${PYTHON_PATHS[@]}" </dev/null
	"$RUFF" format --no-cache --quiet "${PYTHON_PATHS[@]}" </dev/null
	if ! "$RUFF" check --no-cache --no-fix --output-format concise --quiet "${PYTHON_PATHS[@]}" </dev/null; then
		log "formatted; the lint findings above need a fix by hand (ruff.toml has the rules)"
		exit 1
	fi
	log "formatted ${#cpp_files[@]} C++ files and ${PYTHON_PATHS[*]}"
	exit 0
fi

failed=0
unformatted_cpp=()
formatted="$(mktemp)"
trap 'rm -f "$formatted"' EXIT
for file in "${cpp_files[@]}"; do
	"$CLANG_FORMAT" --style=file "$file" </dev/null >"$formatted"
	if ! cmp -s "$formatted" "$file"; then
		unformatted_cpp+=("$file")
	fi
done
if ((${#unformatted_cpp[@]})); then
	log "C++ not formatted (clang-format $("$CLANG_FORMAT" --version | grep -o '[0-9][0-9.]*' | head -1), .clang-format):"
	printf '  %s\n' "${unformatted_cpp[@]}" >&2
	failed=1
fi

python_report="$("$RUFF" format --no-cache --check --output-format concise "${PYTHON_PATHS[@]}" </dev/null 2>&1)" || {
	log "Python not formatted (ruff format, ruff.toml):"
	# One line per file; anything else ruff says (a file it cannot parse) is shown as it is.
	sed -e '/^[0-9][0-9]* files\? /d' -e 's/^\([^:]*\):[0-9]*:[0-9]*: unformatted: .*$/\1/' \
		-e 's/^/  /' <<<"$python_report" >&2
	failed=1
}
lint_report="$("$RUFF" check --no-cache --no-fix --output-format concise --quiet "${PYTHON_PATHS[@]}" </dev/null 2>&1)" || {
	log "Python lint findings (ruff check, ruff.toml):"
	sed 's/^/  /' <<<"$lint_report" >&2
	failed=1
}

if ((failed)); then
	log "FAILED: run 'make format' (bash scripts/format.sh) to format; lint findings it cannot fix need a hand"
	exit 1
fi
log "OK: ${#cpp_files[@]} C++ files and ${PYTHON_PATHS[*]} are formatted, no lint findings"
