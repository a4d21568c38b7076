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

# A record pushed goes up as a record artifact: neither the store after the push nor the artifact's
# document holds the registry's address (scripts/test's registry, when there is one).
if [[ -n ${AREC_TEST_REGISTRY:-} ]]; then
  port=${AREC_TEST_REGISTRY##*:}
  printf '{"self": "n1", "nodes": {"n1": {"ports": {"registry": %s}}}, "services": {"registry": "n1"}}\n' "$port" >"$T/local.json"
  module=a$(basename "$T" | tr 'A-Z' 'a-z' | tr -dc 'a-z0-9')
  "$AREC" record --module "$module" --name app --file "$T/in/app" --target app --config Release >/dev/null
  AREC_NODES=$T/local.json "$AREC" push "$module/app" --json >"$T/push.json" || fail "push to $AREC_TEST_REGISTRY"
  expect_eq 1 "$(jq .records.pushed "$T/push.json")" "record artifacts pushed"
  hits=$(grep -rlaE "127\.0\.0\.1|localhost|:$port" "$T/store" || true)
  expect_eq "" "$hits" "files holding the registry's address after a push"
  digest=$("$AREC" records "$module/app" --json | jq -r '.[0].digest')
  artifact=$(curl -fsS -H "Accept: application/vnd.oci.image.index.v1+json" "http://$AREC_TEST_REGISTRY/v2/$module/app/manifests/sha256-${digest#sha256:}" |
    jq -r '.manifests[] | select(.artifactType == "application/vnd.dev.arec.record.v1+json") | .digest')
  layer=$(curl -fsS -H "Accept: application/vnd.oci.image.manifest.v1+json" "http://$AREC_TEST_REGISTRY/v2/$module/app/manifests/$artifact" | jq -r '.layers[0].digest')
  document=$(curl -fsS "http://$AREC_TEST_REGISTRY/v2/$module/app/blobs/$layer")
  expect_eq "config digest mediaType module name platform recorded size target" "$(jq -r 'keys | join(" ")' <<<"$document")" "record document fields"
  expect_not_contains "$document" "$port" "the record document"
fi
echo PASS
