#!/usr/bin/env bash
# Runs what the clang build holds (scripts/test makes it at <main build>-fuzz):
#   run.sh fuzz BUILD TARGET   one fuzzer over its seed corpus, for a bounded time and number of runs
#   run.sh unit BUILD          the unit tests built with AddressSanitizer and UndefinedBehaviorSanitizer
# Without that build it skips (77). A crash, leak, hang or broken invariant fails; libFuzzer's input
# for it is left in the current directory (crash-*, leak-*, timeout-*) to add to tests/fuzz/corpus/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mode=$1 build=$2

case $mode in
  fuzz) binary=$build/tests/fuzz/${3}_fuzz ;;
  unit) binary=$build/tests/arec_unit_tests ;;
  *) echo "run.sh: unknown mode $mode" >&2; exit 2 ;;
esac
if [[ ! -x $binary ]]; then
  echo "skipped: $binary is not built (scripts/test builds it when clang and libclang-rt-14-dev are installed)"
  exit 77
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
if [[ $mode == unit ]]; then exec "$binary"; fi

# New inputs go to a scratch corpus; the seed corpus in the tree is only read.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/arec-fuzz.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
# libFuzzer exits 77 on a crash by default, which ctest would take for a skip.
"$binary" -max_total_time="${AREC_FUZZ_SECONDS:-8}" -runs=5000000 -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
  -error_exitcode=1 -timeout_exitcode=1 \
  -print_final_stats=1 -artifact_prefix="$PWD/${3}-" "$scratch" "$here/corpus/$3"
