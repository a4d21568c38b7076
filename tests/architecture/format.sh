#!/usr/bin/env bash
# Every C++ file of the tree is as .clang-format leaves it: `clang-format -i` on a file someone edits
# changes only what they changed. Fails naming each file that differs and its first line that does.
set -euo pipefail
root=$1
command -v clang-format >/dev/null || { echo "SKIP: clang-format is missing (scripts/deps installs it)" >&2; exit 77; }
cd "$root"
[[ -f .clang-format ]] || { echo "FAIL: no .clang-format at the top of the tree" >&2; exit 1; }
mapfile -t files < <(find . -path ./build -prune -o -path './build-*' -prune -o -path ./.git -prune -o \
  -type f \( -name '*.cpp' -o -name '*.hpp' \) -print | sort)
((${#files[@]} > 0)) || { echo "FAIL: no C++ file found under $root" >&2; exit 1; }
if ! clang-format --dry-run --Werror "${files[@]}" 2>"${TMPDIR:-/tmp}/arec-format.$$"; then
  # The first line that differs in each file.
  grep -E '^[^ ].*: error:' "${TMPDIR:-/tmp}/arec-format.$$" | awk -F: '!seen[$1]++ { print $1 ":" $2 }' >&2
  rm -f "${TMPDIR:-/tmp}/arec-format.$$"
  echo "FAIL: the files above are not as .clang-format leaves them; run clang-format -i on them" >&2
  exit 1
fi
rm -f "${TMPDIR:-/tmp}/arec-format.$$"
echo "${#files[@]} C++ files as .clang-format leaves them"
