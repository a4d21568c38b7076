# Helpers for the move tests: two fresh registries and a mesh whose registry is on the first.
source "$(dirname "${BASH_SOURCE[0]}")/../registry/lib.sh"

# mesh_settings FROM_PORT TO_PORT: n1 holds the registry on FROM_PORT, n2 was given TO_PORT; both nodes
# are on loopback (n1 has no address: the composing node, rule 4), n1 holds the store and the bus.
mesh_settings() {
  cat >"$T/nodes.json" <<JSON
{"self": "n1",
 "nodes": {"n1": {"ports": {"registry": $1, "store": 6852, "bus": 5679}},
           "n2": {"address": "127.0.0.1", "ports": {"registry": $2}}},
 "services": {"registry": "n1", "store": "n1", "bus": "n1"}}
JSON
  export AREC_NODES=$T/nodes.json
}

# program NAME: records mesh/NAME from a small file unique to this test; prints the identity.
program() {
  mkdir -p "$T/bin"
  printf '#!/bin/sh\necho %s %s\n' "$1" "$T" >"$T/bin/$1"
  head -c "${2:-2000}" /dev/urandom >>"$T/bin/$1"
  "$AREC" record --module mesh --name "$1" --file "$T/bin/$1" --entrypoint "/usr/local/bin/$1"
}
