# `arec resolve`: node, address, port and how each was decided.
source "$(dirname "$0")/lib.sh"

cat >"$work/nodes.json" <<'JSON'
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
export AREC_NODES=$work/nodes.json

# A holder with no address that is self: loopback.
expect_exit 0 "$arec" resolve registry
expect_contains "$out" "node      first"
expect_contains "$out" "address   127.0.0.1  (loopback: node first has no address and is self)"
expect_contains "$out" "port      5000  (given to node first for registry)"
expect_contains "$out" "endpoint  127.0.0.1:5000"
expect_exit 0 "$arec" resolve registry --json
expect_eq "$(jq -c '[.node, .address, .address_from, .port, .port_from, .endpoint]' <<<"$out")" \
  '["first","127.0.0.1","loopback",5000,"node","127.0.0.1:5000"]'

# The same holder seen from another node: an error naming both.
expect_exit 2 "$arec" resolve store --self second
expect_contains "$err" "service store is held by node first, which has no address yet, and this is node second"
expect_eq "$out" ""

# A node's own address; IPv6 in brackets in the endpoint only.
expect_exit 0 "$arec" resolve bus --json
expect_eq "$(jq -c '[.node, .address, .address_from, .port, .endpoint, .insecure_registry]' <<<"$out")" \
  '["second","fd00::2","node",5679,"[fd00::2]:5679",true]'

# A port not given: said so, and no endpoint.
expect_exit 0 "$arec" resolve dashboard
expect_contains "$out" "port      -  (port not given: node third has no port for dashboard)"
expect_contains "$out" "endpoint  -"
expect_exit 0 "$arec" resolve dashboard --json
expect_eq "$(jq -c '[.address, .port, .port_from, .endpoint]' <<<"$out")" '["10.0.0.3",null,"not given",null]'

# A service nobody holds, and a name that is no service.
expect_exit 2 "$arec" resolve cache
expect_contains "$err" "service cache: no node holds it in node settings $work/nodes.json"
expect_exit 2 "$arec" resolve Store
expect_contains "$err" "is not a service name"

# With no settings at all: the built-in default.
unset AREC_NODES
expect_exit 0 "$arec" resolve registry --json
expect_eq "$(jq -c '[.node, .endpoint, .settings]' <<<"$out")" '["local","127.0.0.1:5000","built-in default"]'
echo "resolve: ok"
