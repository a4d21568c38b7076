#!/usr/bin/env bash
# Every node-settings error names the file and the JSON path of what is wrong, and exits 2.
AREC=$1
source "$(dirname "$0")/../lib.sh"
export AREC_STORE=$T/store SOURCE_DATE_EPOCH=0
unset AREC_NODES AREC_SELF

# refused JSON EXPECTED-MESSAGE-PART...
refused() {
  local json=$1
  shift
  printf '%s' "$json" >"$T/nodes.json"
  expect_exit 2 "$AREC" --nodes "$T/nodes.json" resolve registry
  expect_eq "" "$OUT" "stdout of a refused settings file"
  expect_contains "$ERR" "node settings $T/nodes.json: "
  local part
  for part in "$@"; do expect_contains "$ERR" "$part"; done
}

refused '{"nodes": {"n1": {}}, "registries": {}}' '.registries: unknown key'
refused '{"nodes": {"n1": {"address": "10.0.0.1", "port": 5000}}}' '.nodes.n1.port: unknown key'
refused '{"nodes": {"n1": {"ports": {"registry": 5000}, "insecure_registry": "no"}}}' \
  '.nodes.n1.insecure_registry: must be true or false, got string'
refused '{"nodes": {"n1": {"ports": [5000]}}}' '.nodes.n1.ports: must be an object, got array'
refused '{"self": ["n1"], "nodes": {"n1": {}}}' '.self: must be a string, got array'
refused '{"nodes": {"n2": {"ports": {"registry": 70000}}}}' '.nodes.n2.ports.registry: 70000 is not a port (1-65535)'
refused '{"nodes": {"n2": {"ports": {"registry": 0}}}}' '.nodes.n2.ports.registry: 0 is not a port (1-65535)'
refused '{"nodes": {"n2": {"ports": {"registry": "5000"}}}}' \
  '.nodes.n2.ports.registry: "5000" is not a port (an integer 1-65535)'
refused '{"nodes": {"n1": {}}, "services": {"registry": "n2"}}' \
  '.services.registry: names node "n2", which is not in .nodes'
refused '{"self": "n3", "nodes": {"n1": {}}}' '.self: names node "n3", which is not in .nodes'
refused $'{\n  "nodes": {\n    "n1": { "ports": { "registry": 5000 }\n  }\n' 'malformed JSON at line 5'
refused '{"nodes": {"n1": {"address": "10.0.0.1:5000"}}}' '.nodes.n1.address: "10.0.0.1:5000" is not an IPv4, IPv6 address or DNS name'

# --self (and AREC_SELF) must name a node of the settings.
cat >"$T/nodes.json" <<'JSON'
{ "self": "n1", "nodes": { "n1": { "ports": { "registry": 5000 } } }, "services": { "registry": "n1" } }
JSON
expect_exit 2 "$AREC" --nodes "$T/nodes.json" --self n9 resolve registry
expect_contains "$ERR" "--self \"n9\": no such node in node settings $T/nodes.json"
expect_exit 2 env AREC_NODES="$T/nodes.json" AREC_SELF=n9 "$AREC" resolve registry
expect_contains "$ERR" "--self \"n9\": no such node"

# A file that is not there is named too.
expect_exit 2 "$AREC" --nodes "$T/missing.json" resolve registry
expect_contains "$ERR" "reading node settings"
expect_contains "$ERR" "$T/missing.json"

# The same errors stop compose before anything is written.
printf '{"nodes": {"n1": {"ports": {"store": "6852"}}}}' >"$T/bad.json"
echo 'port: arec://port/store' >"$T/t.in"
expect_exit 2 "$AREC" --nodes "$T/bad.json" compose "$T/t.in" -o "$T/out"
expect_contains "$ERR" '.nodes.n1.ports.store: "6852" is not a port'
[[ ! -e $T/out ]] || fail "compose wrote its output although the node settings are wrong"

# ... and stop every command that writes to the store before it writes anything.
"$AREC" record --module m --name app --file "$T/t.in" >/dev/null
before=$(tree_state "$AREC_STORE")
for command in "pull m/app:v1" "move --to n1 --apply" "record --module m --name b --file $T/t.in --base m/app:v1" "push"; do
  # shellcheck disable=SC2086 # the words of the command
  expect_exit 2 "$AREC" --nodes "$T/bad.json" $command
  expect_one_line_error "node settings $T/bad.json: "
  expect_eq "$before" "$(tree_state "$AREC_STORE")" "the store after $command with wrong node settings"
done
echo "node settings: ok"
