#!/usr/bin/env bash
# The incident, end to end: genesis declarations pin images to a single-segment repository at a
# literal address; needs-rebuild lists them; after rebuilding through arec and writing requests
# instead, it finds nothing; move --apply copies, verifies and rewrites the node settings; recomposing
# names the new registry, which holds every image; the records do not change.
AREC=$1
source "$(dirname "$0")/lib.sh"
start_registry OLD old
start_registry NEW new
mesh_settings "${OLD##*:}" "${NEW##*:}"

note "genesis: literal addresses, single-segment repositories"
mkdir -p "$T/genesis"
cat >"$T/genesis/controlplane.yaml" <<YAML
kind: ControlPlane
spec:
  image: $OLD/controlplane:genesis
  store: postgres://cp@127.0.0.1:6852/cp
YAML
cat >"$T/genesis/builder.json" <<JSON
{"kind": "Builder",
 "spec": {"containers": [{"name": "builder", "image": "$OLD/builder:genesis"}]}}
JSON
expect_exit 1 "$AREC" needs-rebuild "$T/genesis" --json
expect_eq "$OLD/builder:genesis genesis-pinned $T/genesis/builder.json:2
$OLD/controlplane:genesis genesis-pinned $T/genesis/controlplane.yaml:3
127.0.0.1:6852 other-service $T/genesis/controlplane.yaml:4" \
  "$(jq -r '.[] | "\(.reference) \(.kind) \(.source)"' <<<"$OUT")" "findings"
expect_eq "none: store does not move with the registry (arec://endpoint/store would follow it if it did)" "$(jq -r '.[2].action' <<<"$OUT")"
expect_exit 1 "$AREC" needs-rebuild "$T/genesis"
expect_contains "$OUT" "genesis-pinned"
expect_contains "$OUT" "$T/genesis/controlplane.yaml:3"

note "rebuilt through arec, pushed, and the literals replaced by requests"
program controlplane >/dev/null
program builder >/dev/null
expect_exit 0 "$AREC" push
mkdir -p "$T/deploy" "$T/out"  # composed outputs live apart from the declarations
cat >"$T/deploy/mesh.yaml.in" <<'YAML'
controlplane:
  image: arec://image/mesh/controlplane
  store: postgres://cp@arec://endpoint/store/cp
builder:
  image: arec://image/mesh/builder
YAML
expect_exit 0 "$AREC" needs-rebuild "$T/deploy"
expect_exit 0 "$AREC" compose "$T/deploy/mesh.yaml.in" -o "$T/out/mesh.yaml"
expect_contains "$(cat "$T/out/mesh.yaml")" "image: 127.0.0.1:${OLD##*:}/mesh/controlplane@sha256:"
records_before=$(sha256sum "$AREC_STORE/index.json")

note "the plan, then the move"
expect_exit 0 "$AREC" move "$T/deploy" --to n2
expect_contains "$OUT" "from node n1 (127.0.0.1:${OLD##*:}) to node n2 ($NEW)"
expect_contains "$OUT" "records to copy (2)"
expect_contains "$OUT" "run again with --apply"
expect_eq "\"n1\"" "$(jq .services.registry "$T/nodes.json")" "settings after planning only"
# The change the plan shows is exactly what the move writes: n2 holds the registry, nothing else changes.
planned=$(awk '$0 == "node settings change:" {on = 1; next} on && /^$/ {exit} on' <<<"$OUT")
expect_contains "$planned" '- "services": {"registry": "n1", "store": "n1", "bus": "n1"}}
+ "services": {"registry": "n2", "store": "n1", "bus": "n1"}}' "node settings change in the plan"
cp "$T/nodes.json" "$T/nodes.before"
expect_exit 0 "$AREC" move "$T/deploy" --to n2 --apply
expect_eq "$(diff -u "$T/nodes.before" "$T/nodes.json" | tail -n +3)" "$(tail -n +3 <<<"$planned")" \
  "settings written against the plan's diff"
expect_contains "$OUT" "2 manifests verified"
expect_contains "$OUT" "compose $T/deploy/mesh.yaml.in -o OUTPUT"
expect_eq "\"n2\" ${NEW##*:}" "$(jq -r '"\(.services.registry | tojson) \(.nodes.n2.ports.registry)"' "$T/nodes.json")" "moved settings"
cmp "$T/nodes.before" "$T/nodes.json.bak" || fail "the old settings are not kept as .bak"
expect_eq "$records_before" "$(sha256sum "$AREC_STORE/index.json")" "records after the move"

note "recomposed: every image at the new registry, where skopeo finds it"
expect_exit 0 "$AREC" compose "$T/deploy/mesh.yaml.in" -o "$T/out/mesh.yaml"
for name in controlplane builder; do
  ref=$(grep -A1 "^$name:" "$T/out/mesh.yaml" | sed -n 's/ *image: //p')
  [[ $ref == "$NEW/mesh/$name@sha256:"* ]] || fail "$name composed to $ref"
  digest=$(skopeo inspect --tls-verify=false --no-tags "docker://$ref" | jq -r .Digest)
  expect_eq "${ref#*@}" "$digest" "skopeo at the new registry, $name"
done
expect_exit 0 "$AREC" verify
echo PASS
