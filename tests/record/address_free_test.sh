#!/usr/bin/env bash
# Rule 1: no file of the store holds a host, a port or a registry name, whatever the node settings say.
AREC=$1
source "$(dirname "$0")/../lib.sh"
export AREC_STORE=$T/store
cat >"$T/nodes.json" <<'JSON'
{"self": "n1",
 "nodes": {"n1": {"address": "10.20.0.11", "ports": {"registry": 5000, "store": 6852}},
           "n2": {"address": "registry.mesh.internal", "ports": {"registry": 5001}}},
 "services": {"registry": "n2", "store": "n1"}}
JSON
export AREC_NODES=$T/nodes.json
cd "$T"  # not a git work tree: records carry no revision here
mkdir -p "$T/in"
echo "an artifact" >"$T/in/app"
"$AREC" record --module mesh --name app --file "$T/in/app" --target app --config Release >/dev/null
echo "changed" >>"$T/in/app"
"$AREC" record --module mesh --name app --file "$T/in/app" --target app --config Release >/dev/null

hits=$(grep -rlaE '10\.20\.0\.11|registry\.mesh|localhost|127\.0\.0\.1|:5000|:5001|:6852|docker\.io' "$T/store" || true)
expect_eq "" "$hits" "files holding an address"
# The records' JSON has no field that could hold one either.
keys=$("$AREC" records --history --json | jq -r '[.[] | keys[]] | unique | join(" ")')
expect_eq "config digest manifest_size mediaType module name platform recorded size target" "$keys" "record fields"
echo PASS
