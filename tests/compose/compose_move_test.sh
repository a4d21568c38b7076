#!/usr/bin/env bash
# The incident's scenario on the mesh example: the registry moves to another node and port, the store
# and the bus move ports. Recomposing changes exactly the addresses and ports; the records do not change.
AREC=$1
source "$(dirname "$0")/../lib.sh"
export AREC_STORE=$T/store SOURCE_DATE_EPOCH=0
unset AREC_NODES AREC_SELF

mesh=$(cd "$(dirname "$0")/../../examples/mesh" && pwd)
template=$mesh/deploy.yaml.in
cp_digest=$(record_artifact mesh controlplane "control plane v1")
builder_digest=$(record_artifact mesh builder "builder v1")
store_before=$(tree_state "$AREC_STORE")

# As the nodes were given at genesis: registry on n1:5000, store and bus on their first ports.
cat >"$T/genesis.json" <<'JSON'
{
  "self": "n1",
  "nodes": {
    "n1": { "address": "10.20.0.11", "ports": { "registry": 5000, "store": 5432, "bus": 5672 } },
    "n2": { "address": "10.20.0.12", "ports": { "broker-mgmt": 15672 } }
  },
  "services": { "registry": "n1", "store": "n1", "bus": "n1", "broker-mgmt": "n2", "dashboard": "n2" }
}
JSON
# After the move: the registry on n2:5001, the store on 6852, the bus on 5679.
jq '.nodes.n1.ports = {"store": 6852, "bus": 5679} | .nodes.n2.ports.registry = 5001 | .services.registry = "n2"' \
  "$T/genesis.json" >"$T/moved.json"

expect_exit 0 "$AREC" --nodes "$T/genesis.json" compose "$template" -o "$T/before.yaml"
expect_eq "" "$ERR" "warnings composing the example"
expect_exit 0 "$AREC" --nodes "$T/moved.json" compose "$template" -o "$T/after.yaml"

# The records are byte-identical: composing reads the store and never writes it.
expect_eq "$store_before" "$(tree_state "$AREC_STORE")" "the store after composing"

# Exactly the addresses and ports changed, nothing else.
expected=$(sed -e 's|10\.20\.0\.11:5000/mesh/|10.20.0.12:5001/mesh/|' -e 's|:5432|:6852|g' -e 's|port: 5432$|port: 6852|' \
  -e 's|:5672/|:5679/|' "$T/before.yaml")
expect_eq "$expected" "$(<"$T/after.yaml")" "the moved declaration"
changed=$(diff "$T/before.yaml" "$T/after.yaml" | grep -c '^>' || true)
expect_eq 6 "$changed" "lines changed by the move (2 images, 3 store contexts, the bus)"

after=$(<"$T/after.yaml")
expect_contains "$after" "image: 10.20.0.12:5001/mesh/controlplane@$cp_digest"
expect_contains "$after" "image: 10.20.0.12:5001/mesh/builder@$builder_digest"
expect_contains "$after" "bus: amqp://mesh@10.20.0.11:5679/vhost"
expect_contains "$after" "management_port: 15672"

# All three store contexts receive the same port.
url_port=$(sed -n 's|.*url: postgres://controlplane@10\.20\.0\.11:\([0-9]*\)/controlplane.*|\1|p' "$T/after.yaml")
port=$(sed -n 's|^    port: \(.*\)$|\1|p' "$T/after.yaml")
health_port=$(sed -n 's|.*healthcheck: tcp://10\.20\.0\.11:\([0-9]*\)$|\1|p' "$T/after.yaml")
expect_eq "6852 6852 6852" "$url_port $port $health_port" "the store's port in its three contexts"

# The service never given a port composes empty, and the reader keeps the value sealed at genesis.
dashboard=$(sed -n 's|^  dashboard_port: \(.*\)$|\1|p' "$T/after.yaml")
grep -q '^  dashboard_port: $' "$T/after.yaml" || fail "dashboard_port is not empty: <<$dashboard>>"
expect_exit 0 "$AREC" read-port "$dashboard" --sealed 8443
expect_eq "8443" "$OUT" "the dashboard port the reader keeps"
expect_eq "" "$ERR" "stderr reading an empty port"
# Read by a consumer before the new arec filled it: nothing said, loudly.
expect_exit 0 "$AREC" read-port "arec://port/dashboard" --sealed 8443
expect_eq "8443" "$OUT"
expect_contains "$ERR" "arec://port/dashboard"

# Same inputs, same output, whether to a file or to stdout.
expect_exit 0 "$AREC" --nodes "$T/moved.json" compose "$template" -o "$T/again.yaml"
cmp "$T/after.yaml" "$T/again.yaml" || fail "composing twice gave different output"
expect_exit 0 "$AREC" --nodes "$T/moved.json" compose "$template"
expect_eq "$(<"$T/after.yaml")" "$OUT" "compose to stdout"

# The example's own node settings compose the example too.
expect_exit 0 "$AREC" --nodes "$mesh/nodes.json" compose "$template" --strict
expect_contains "$OUT" "image: 10.20.0.11:5000/mesh/controlplane@$cp_digest"
echo "compose, the registry moves: ok"
