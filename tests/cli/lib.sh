# Shared by the command-line tests. A test script is run as `bash TEST.sh ARECBIN` and sources this:
# it gets $arec, a fresh $work directory (removed on exit) with its own store, and the helpers below.
set -euo pipefail

arec=${1:?usage: bash TEST.sh PATH/TO/arec}
[[ -x $arec ]] || { echo "FAIL: $arec is not an executable" >&2; exit 1; }
arec=$(realpath "$arec")  # tests change directory
examples=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../examples" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/arec-cli-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
export AREC_STORE=$work/store SOURCE_DATE_EPOCH=0
unset AREC_NODES AREC_SELF

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# expect_eq ACTUAL EXPECTED [WHAT]
expect_eq() {
  [[ $1 == "$2" ]] || fail "${3:-value}: expected <<$2>>, got <<$1>>"
}

# expect_contains TEXT PART [WHAT]
expect_contains() {
  [[ $1 == *"$2"* ]] || fail "${3:-text} does not contain <<$2>>: <<$1>>"
}

# expect_exit CODE COMMAND... — runs COMMAND, which must exit with CODE; its output is kept in
# $out and $err for the checks that follow.
expect_exit() {
  local code=$1 got=0
  shift
  "$@" >"$work/.out" 2>"$work/.err" || got=$?
  out=$(<"$work/.out")
  err=$(<"$work/.err")
  [[ $got == "$code" ]] || fail "$* exited $got, expected $code; stdout: <<$out>> stderr: <<$err>>"
}

# record MODULE NAME CONTENT — records a one-file artifact with the real `arec record`; prints the digest.
record() {
  mkdir -p "$work/src/$1/$2"
  printf '%s' "$3" >"$work/src/$1/$2/$2"
  local identity
  identity=$("$arec" record --module "$1" --name "$2" --file "$work/src/$1/$2/$2")
  echo "${identity#*@}"
}

# checksum_tree DIR — one line per file: its digest and path, sorted; for "nothing changed" checks.
checksum_tree() {
  (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
}
