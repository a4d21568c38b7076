#!/usr/bin/env bash
# `arec resolve`: node, address, port and how each was decided.
AREC=$1
source "$(dirname "$0")/../lib.sh"
export AREC_STORE=$T/store SOURCE_DATE_EPOCH=0
unset AREC_NODES AREC_SELF

cat >"$T/nodes.json" <<'JSON'
{
  "self": "first",
  "nodes": {
    "first": { "ports": { "registry": 5000, "store": 6852 } },
    "second": { "address": "fd00::2", "ports": { "bus": 5679 }, "insecure_registry": true },
    "third": { "address": "10.0.0.3" }
  },
  "services": { "registry": "first", "store": "first", "bus": "second", "dashboard": "third" }
}
JSON
export AREC_NODES=$T/nodes.json

# A holder with no address that is self: loopback.
expect_exit 0 "$AREC" resolve registry
expect_contains "$OUT" "node      first"
expect_contains "$OUT" "address   127.0.0.1  (loopback: node first has no address and is self)"
expect_contains "$OUT" "port      5000  (given to node first for registry)"
expect_contains "$OUT" "endpoint  127.0.0.1:5000"
expect_exit 0 "$AREC" resolve registry --json
expect_eq '["first","127.0.0.1","loopback",5000,"node","127.0.0.1:5000"]' \
  "$(jq -c '[.node, .address, .address_from, .port, .port_from, .endpoint]' <<<"$OUT")"

# The same holder seen from another node: an error naming both.
expect_exit 2 "$AREC" resolve store --self second
expect_contains "$ERR" "service store is held by node first, which has no address yet, and this is node second"
expect_eq "" "$OUT"

# A node's own address; IPv6 in brackets in the endpoint only.
expect_exit 0 "$AREC" resolve bus --json
expect_eq '["second","fd00::2","node",5679,"[fd00::2]:5679",true]' \
  "$(jq -c '[.node, .address, .address_from, .port, .endpoint, .insecure_registry]' <<<"$OUT")"

# A port not given: said so, and no endpoint.
expect_exit 0 "$AREC" resolve dashboard
expect_contains "$OUT" "port      -  (port not given: node third has no port for dashboard)"
expect_contains "$OUT" "endpoint  -"
expect_exit 0 "$AREC" resolve dashboard --json
expect_eq '["10.0.0.3",null,"not given",null]' "$(jq -c '[.address, .port, .port_from, .endpoint]' <<<"$OUT")"

# A service nobody holds, and a name that is no service.
expect_exit 2 "$AREC" resolve cache
expect_contains "$ERR" "service cache: no node holds it in node settings $T/nodes.json"
expect_exit 2 "$AREC" resolve Store
expect_contains "$ERR" "is not a service name"

# With no settings at all: the built-in default.
unset AREC_NODES
expect_exit 0 "$AREC" resolve registry --json
expect_eq '["local","127.0.0.1:5000","built-in default"]' "$(jq -c '[.node, .endpoint, .settings]' <<<"$OUT")"
echo "resolve: ok"
