#!/usr/bin/env bash
# The house format (.clang-format) over every C file in the repository.
#   scripts/format.sh           format in place
#   scripts/format.sh --check   report the files that differ; exit 1 if any
#   scripts/format.sh --check --or-skip
#                               as --check, but only a message and exit 0 where
#                               clang-format 14 is missing (make test runs this)
# The format is clang-format 14's (Debian 12): another major version formats some
# constructs differently, so it is not used for the check.
set -euo pipefail
cd "$(dirname "$0")/.."

check=0 or_skip=0
for arg in "$@"; do
    case "$arg" in
    --check) check=1 ;;
    --or-skip) or_skip=1 ;;
    *) echo "format.sh: unknown option '$arg'; give --check or --or-skip" >&2; exit 2 ;;
    esac
done

skip() {
    if [ "$or_skip" = 1 ]; then
        echo "format check skipped: $1"
        exit 0
    fi
    echo "format.sh: $1" >&2
    exit 1
}

tool=""
for t in clang-format-14 clang-format; do
    if command -v "$t" >/dev/null 2>&1 && "$t" --version | grep -q 'version 14\.'; then
        tool=$t
        break
    fi
done
[ -n "$tool" ] || skip "clang-format 14 not found; apt-get install clang-format (Debian 12)"

# Tracked and new (not ignored) C files: never build folders.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.c' '*.h')
else
    mapfile -t files < <(find alloc base io genomics framework kernels tests examples \
        -name '*.[ch]' -not -path '*/build*' 2>/dev/null)
fi
files=($(for f in "${files[@]}"; do [ -f "$f" ] && echo "$f"; done))

if [ "$check" = 0 ]; then
    "$tool" -i "${files[@]}"
    exit 0
fi
bad=()
for f in "${files[@]}"; do
    "$tool" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ "${#bad[@]}" -gt 0 ]; then
    echo "format check: ${#bad[@]} of ${#files[@]} C files differ from .clang-format:" >&2
    printf '  %s\n' "${bad[@]}" >&2
    echo "run make format (or $tool -i FILE) and commit the result" >&2
    exit 1
fi
echo "format check: ${#files[@]} C files follow .clang-format"
