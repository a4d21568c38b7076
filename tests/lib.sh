# Shared helpers for the command-line tests. Source it; $AREC is the arec binary under test.
# Each test runs in its own temporary directory ($T), removed on exit.
set -euo pipefail

T=$(mktemp -d "${TMPDIR:-/tmp}/arec-t.XXXXXX")
_cleanups=()
on_exit() { _cleanups+=("$*"); }
_run_cleanups() {
  local rc=$?
  for c in "${_cleanups[@]}"; do eval "$c" || true; done
  rm -rf "$T"
  exit $rc
}
trap _run_cleanups EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
note() { echo "-- $*" >&2; }

expect_eq() { # expected actual [what]
  [[ $1 == "$2" ]] || fail "${3:-value}: expected [$1], got [$2]"
}
expect_ne() {
  [[ $1 != "$2" ]] || fail "${3:-value}: expected something other than [$1]"
}
expect_contains() { # haystack needle [what]
  [[ $1 == *"$2"* ]] || fail "${3:-output}: expected to contain [$2], got [$1]"
}
expect_not_contains() {
  [[ $1 != *"$2"* ]] || fail "${3:-output}: must not contain [$2], got [$1]"
}

# expect_exit CODE cmd...: runs cmd, checks its exit code; its stdout is in $OUT, stderr in $ERR.
expect_exit() {
  local want=$1
  shift
  local rc=0
  "$@" >"$T/.out" 2>"$T/.err" || rc=$?
  OUT=$(cat "$T/.out")
  ERR=$(cat "$T/.err")
  [[ $rc == "$want" ]] || fail "$* exited $rc, expected $want; stderr: $ERR; stdout: $OUT"
}

# timed MAX_MS EXIT cmd...: expect_exit, and no longer than MAX_MS; $ELAPSED is how long it took.
timed() {
  local max=$1 start
  shift
  start=$(date +%s%N)
  expect_exit "$@"
  ELAPSED=$((($(date +%s%N) - start) / 1000000))
  ((ELAPSED <= max)) || fail "${*:2} took $ELAPSED ms, more than $max"
}

# One line, starting "arec: error:", naming `needle`.
expect_one_line_error() { # needle
  expect_eq 1 "$(printf '%s\n' "$ERR" | grep -c .)" "number of error lines in [$ERR]"
  expect_contains "$ERR" "arec: error: " "error"
  expect_contains "$ERR" "$1" "error"
}

# A fingerprint of every file in a directory (names, modes and contents), to prove it did not change.
tree_state() { (cd "$1" && find . -printf '%p %m %s\n' | sort && find . -type f -exec sha256sum {} + | sort); }

# start_containerd: a containerd of the test's own (scripts/containerd: its own root, state and socket
# under $T), stopped on exit; sets SOCK and defines ctr() against it. Skips without containerd, ctr, runc
# or root.
start_containerd() {
  command -v containerd >/dev/null && command -v ctr >/dev/null && command -v runc >/dev/null ||
    skip "containerd, ctr and runc are not installed (scripts/deps)"
  [[ $(id -u) -eq 0 ]] || skip "containerd and runc need root"
  local scripts
  scripts=$(cd "$(dirname "${BASH_SOURCE[0]}")/../scripts" && pwd)
  on_exit "'$scripts/containerd' stop '$T/containerd'"
  SOCK=$("$scripts/containerd" start "$T/containerd") || fail "containerd did not start"
  _CTR=$(command -v ctr)
}
ctr() { timeout 120 "$_CTR" --address "$SOCK" "$@"; }

# A JSON field with jq.
json_get() { jq -r "$1"; }

# Records a one-file artifact MODULE/NAME holding CONTENT with the real `arec record`; prints its digest.
record_artifact() { # module name content
  mkdir -p "$T/src/$1/$2"
  printf '%s' "$3" >"$T/src/$1/$2/$2"
  local identity
  identity=$("$AREC" record --module "$1" --name "$2" --file "$T/src/$1/$2/$2")
  echo "${identity#*@}"
}
