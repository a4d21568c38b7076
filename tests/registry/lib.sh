# Helpers for the registry tests, on top of tests/lib.sh: the shared test registry, extra registries,
# node settings naming a registry, and isolated credentials.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

[[ -n ${AREC_TEST_REGISTRY:-} ]] || skip "AREC_TEST_REGISTRY is not set: run the tests through scripts/test"
REG=$AREC_TEST_REGISTRY
export AREC_STORE=$T/store
export AREC_RETRY_BUDGET=${AREC_RETRY_BUDGET:-10}
# Credentials come only from what a test writes.
export DOCKER_CONFIG=$T/docker XDG_RUNTIME_DIR=$T/runtime
unset REGISTRY_AUTH_FILE AREC_CA_FILE AREC_CHUNK_SIZE
mkdir -p "$DOCKER_CONFIG" "$XDG_RUNTIME_DIR"
# A module of its own: the test registry is shared by tests running in parallel.
M=t$(basename "$T" | tr 'A-Z' 'a-z' | tr -dc 'a-z0-9')

# start_registry VAR NAME [scripts/registry options]: a fresh registry on a free loopback port, stopped
# when the test ends; its address goes to $VAR.
start_registry() {
  local var=$1 dir=$T/registries/$2
  shift 2
  on_exit "'$ROOT/scripts/registry' stop '$dir'"
  local address
  address=$("$ROOT/scripts/registry" start "$dir" "$@") || fail "registry $dir did not start"
  printf -v "$var" %s "$address"
}

# use_registry HOST:PORT [ADDRESS [INSECURE]]: node settings whose registry is on node n1 at that
# port (and ADDRESS, else none: loopback by rule 4); exported as AREC_NODES.
use_registry() {
  local port=${1##*:} address=${2:-} insecure=${3:-false}
  local node="\"ports\": {\"registry\": $port}, \"insecure_registry\": $insecure"
  [[ -n $address ]] && node="\"address\": \"$address\", $node"
  printf '{"self": "n1", "nodes": {"n1": {%s}}, "services": {"registry": "n1"}}\n' "$node" >"$T/nodes.json"
  export AREC_NODES=$T/nodes.json
}

# record NAME [BYTES]: records $M/NAME from a tree with content unique to this test; prints the digest.
record() {
  local name=$1 bytes=${2:-1000}
  mkdir -p "$T/in/$name"
  echo "$M/$name" >"$T/in/$name/id"
  head -c "$bytes" /dev/urandom >"$T/in/$name/data"
  "$AREC" record --module "$M" --name "$name" --dir "$T/in/$name=/srv/$name" | cut -d@ -f2
}

# Every blob of OCI layout $1 is in layout $2, byte for byte.
same_blobs() {
  local n=0 b
  for b in "$1"/blobs/sha256/*; do
    cmp -s "$b" "$2/blobs/sha256/$(basename "$b")" || fail "blob $(basename "$b") of $1 differs in $2"
    n=$((n + 1))
  done
  echo "$n"
}

# start_fault_proxy VAR REGISTRY: tests/registry/faultproxy.py in front of REGISTRY (HOST:PORT) on a
# free loopback port, stopped when the test ends; its address goes to $VAR. `faults RULES` sets what it
# breaks, `faults_injected` counts what it broke.
start_fault_proxy() {
  local var=$1 port_file=$T/proxy.port
  python3 "$ROOT/tests/registry/faultproxy.py" "${2##*:}" "$port_file" &
  local pid=$!
  on_exit "kill $pid"
  for _ in $(seq 100); do
    [[ -s $port_file ]] && break
    kill -0 "$pid" 2>/dev/null || fail "the fault proxy did not start"
    sleep 0.1
  done
  [[ -s $port_file ]] || fail "the fault proxy did not start within 10 s"
  FAULT_PROXY=127.0.0.1:$(cat "$port_file")
  printf -v "$var" %s "$FAULT_PROXY"
}
faults() { # JSON list of rules (see faultproxy.py)
  curl -sf --max-time 5 -X PUT --data-binary "$1" "http://$FAULT_PROXY/__faults" >/dev/null || fail "setting faults $1"
}
faults_injected() { curl -sf --max-time 5 "http://$FAULT_PROXY/__faults" | jq .injected; }
# The proxy's report of the current case (since the last `faults`): rules with how often each fired,
# the faults injected, the requests answered.
fault_case() { curl -sf --max-time 5 "http://$FAULT_PROXY/__faults" | jq -c .case || fail "reading the fault proxy's report"; }
# expect_faults_fired: every rule of the current case fired, as often as its "times" asks; a rule of 100
# times or more stands for "always" and must have fired at least once. Prints how many faults fired.
expect_faults_fired() {
  local case unfired
  case=$(fault_case)
  unfired=$(jq -c '[.rules[] | (.rule.times // 1) as $n | select(.fired < 1 or ($n < 100 and .fired != $n))]' <<<"$case")
  [[ $unfired == "[]" ]] || fail "faults that did not fire as planned: $unfired; requests: $(jq -c '[.requests[].request]' <<<"$case")"
  jq '.log | length' <<<"$case"
}
# expect_sessions_asked: after an upload request (PUT or PATCH to .../blobs/uploads/ID) failed (reset, or
# answered 408 or 5xx), the next request on that session to be answered asks the registry what it holds
# (GET), unless it is the same request sent again by libcurl (which does so, once, when the connection it
# reused died before any answer), so that the
# upload goes on from there, or in a new session when the registry has it no more. Prints how many failed.
expect_sessions_asked() {
  local case failed unasked
  case=$(fault_case)
  failed='[.requests | to_entries[] | select((.value.status == 0 or .value.status == 408 or .value.status >= 500)
      and (.value.request | test("^(PUT|PATCH) .*/blobs/uploads/")))]'
  unasked=$(jq -c "($failed) as \$failed | [.requests | to_entries[]] as \$all
    | [\$failed[] | . as \$f | (\$f.value.request | split(\" \")[1] | split(\"?\")[0]) as \$s
       | ([\$all[] | select(.key > \$f.key and .value.status != 0 and (.value.request | split(\" \")[1] | split(\"?\")[0]) == \$s)] | first) as \$next
       | select(\$next == null or ((\$next.value.request | startswith(\"GET \")) or \$next.value.request == \$f.value.request | not))
       | {failed: \$f.value.request, next: \$next.value.request}]" <<<"$case")
  (($(jq "$failed | length" <<<"$case") > 0)) || fail "no upload request failed; requests: $(jq -c '[.requests[].request]' <<<"$case")"
  [[ $unasked == "[]" ]] || fail "upload sessions used again without asking the registry what they hold: $unasked"
  jq "$failed | length" <<<"$case"
}
