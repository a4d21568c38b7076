# Shared by the benchmarks: a work directory, the arec binary, timing with hyperfine, and a table of
# results (arec vs peer, ratio, target) that bench/run collects.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
AREC=${AREC:-$root/build/cli/arec}
[[ -x $AREC ]] || { echo "build arec first (scripts/build)" >&2; exit 2; }
command -v hyperfine >/dev/null || { echo "hyperfine is missing: scripts/deps --bench installs it" >&2; exit 2; }
B=$(mktemp -d "${BENCH_TMP:-/var/tmp}/arec-bench.XXXXXX")
_bench_cleanups=()
bench_on_exit() { _bench_cleanups+=("$*"); }
trap 'for c in "${_bench_cleanups[@]}"; do eval "$c" || true; done; rm -rf "$B"' EXIT

# mean_seconds NAME [hyperfine options...] -- COMMAND: the mean wall time of COMMAND, in seconds.
mean_seconds() {
  local name=$1
  shift
  hyperfine --style none --export-json "$B/$name.json" "$@" >/dev/null 2>&1 ||
    { echo "benchmark $name failed: $*" >&2; hyperfine --style basic "$@" >&2 || true; exit 1; }
  jq -r '.results[0].mean' "$B/$name.json"
}

# cpu_seconds NAME: the mean CPU time (user + system) of a mean_seconds run; on a shared machine it
# varies less than the wall clock.
cpu_seconds() { jq -r '.results[0].user + .results[0].system' "$B/$1.json"; }

# peak_kib COMMAND...: the peak resident memory of COMMAND, in KiB.
peak_kib() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1; }

# row WHAT AREC PEER RATIO TARGET OK: one line of the results table (tab-separated).
row() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@"; }

# ratio A B: A/B with three decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
# holds VALUE OP LIMIT: "yes" or "NO".
holds() { awk -v v="$1" -v l="$3" -v op="$2" 'BEGIN { ok = (op == "<=") ? v <= l : (op == ">=") ? v >= l : v < l; print ok ? "yes" : "NO" }'; }
ms() { awk -v s="$1" 'BEGIN { printf "%.1f ms", s * 1000 }'; }
secs() { awk -v s="$1" 'BEGIN { printf "%.2f s", s }'; }
