# Helpers for the tests against tests/security/hostile_registry.py, on top of tests/lib.sh.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed (scripts/deps installs it)"
HOSTILE_PY=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/hostile_registry.py
export AREC_STORE=$T/store AREC_RETRY_BUDGET=0 DOCKER_CONFIG=$T/docker XDG_RUNTIME_DIR=$T/runtime
unset REGISTRY_AUTH_FILE AREC_CA_FILE AREC_CHUNK_SIZE AREC_STALL_TIMEOUT AREC_MIN_RATE
mkdir -p "$DOCKER_CONFIG" "$XDG_RUNTIME_DIR"

# start_hostile MODE: the hostile registry in MODE on two free loopback ports, stopped when the test ends.
# Sets HOSTILE (127.0.0.1:PORT), NEIGHBOUR_PORT, HOSTILE_LOG (one JSON line per request), and node
# settings naming it as the registry (AREC_NODES).
start_hostile() {
  local mode=$1 dir=$T/hostile-$1
  mkdir -p "$dir"
  : >"$dir/log"
  python3 "$HOSTILE_PY" "$mode" "$dir/ports" "$dir/log" --lifetime 120 &
  local pid=$!
  on_exit "kill $pid"
  for _ in $(seq 100); do
    [[ -s $dir/ports ]] && break
    kill -0 "$pid" 2>/dev/null || fail "the hostile registry ($mode) did not start"
    sleep 0.1
  done
  [[ -s $dir/ports ]] || fail "the hostile registry ($mode) did not start within 10 s"
  read -r port NEIGHBOUR_PORT <"$dir/ports"
  HOSTILE=127.0.0.1:$port
  HOSTILE_LOG=$dir/log
  printf '{"self": "n1", "nodes": {"n1": {"ports": {"registry": %s}}}, "services": {"registry": "n1"}}\n' "$port" >"$dir/nodes.json"
  export AREC_NODES=$dir/nodes.json
}

# The highest resident set size of a command, in KiB, from GNU time when it is there.
max_rss_kib() { awk '/Maximum resident set size/ {print $NF}' "$1"; }
