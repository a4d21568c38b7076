#!/usr/bin/env bash
# move --apply to another port with --history: every recorded digest reaches the new registry; a blob
# the store lacks is read from the old registry and copied byte for byte, and every record's SBOM
# goes with it; the old registry keeps all; the latest record of each module/name is tagged latest there.
AREC=$1
source "$(dirname "$0")/lib.sh"
start_registry OLD old
start_registry NEW new
# n2 was given another port for the registry: --port names the one it listens on now.
mesh_settings "${OLD##*:}" 1
old_cp=$(program controlplane | cut -d@ -f2)
new_cp=$(program controlplane | cut -d@ -f2)
builder=$(program builder 200000 | cut -d@ -f2)
expect_exit 0 "$AREC" push
expect_exit 0 "$AREC" push "mesh/controlplane@$old_cp" --no-latest --tag 1.0

note "the store loses the builder's layer, which only the old registry still has"
layer=$(jq -r '.layers[0].digest' "$AREC_STORE/blobs/sha256/${builder#sha256:}")
mv "$AREC_STORE/blobs/sha256/${layer#sha256:}" "$T/layer"
old_catalog=$(curl -fsS "http://$OLD/v2/_catalog")
old_state=$(tree_state "$T/registries/old/data")

note "the plan: the latest records, or with --history every recorded digest"
expect_exit 0 "$AREC" move --to n2 --port "${NEW##*:}"
expect_contains "$OUT" "to node n2 ($NEW)"
expect_contains "$OUT" "records to copy (2)"
expect_exit 0 "$AREC" move --to n2 --port "${NEW##*:}" --history
expect_contains "$OUT" "records to copy (3)"

note "--apply copies with the settings of a push: AREC_CHUNK_SIZE sends each blob larger than 64k in chunks"
AREC_CHUNK_SIZE=64k expect_exit 0 "$AREC" -v move --to n2 --port "${NEW##*:}" --history --apply
expect_contains "$OUT" "1 other tag copied; 3 manifests verified"
expect_contains "$ERR" "PATCH http://$NEW/v2/"
expect_contains "$ERR" "mesh/builder@$builder: the store lacks some of its blobs; fetching it from $OLD"
expect_eq "n2 ${NEW##*:}" "$(jq -r '"\(.services.registry) \(.nodes.n2.ports.registry)"' "$T/nodes.json")" "moved settings"
curl -fsS "http://$NEW/v2/mesh/builder/blobs/$layer" | cmp - "$T/layer" || fail "the layer differs at the new registry"
cmp "$AREC_STORE/blobs/sha256/${layer#sha256:}" "$T/layer" || fail "the layer read back into the store differs"
expect_exit 0 "$AREC" verify  # at the new registry, now in the settings
expect_exit 0 "$AREC" verify "mesh/controlplane@$old_cp"
note "the latest record of each module/name keeps its latest tag at the new registry, every other tag goes along; the history goes by digest"
expect_eq '{"name":"mesh/controlplane","tags":["1.0","latest"]}' "$(curl -fsS "http://$NEW/v2/mesh/controlplane/tags/list" | jq -c '.tags |= (map(select(startswith("sha256-") | not)) | sort)')" "tags (besides the SBOMs' fallback tags)"
expect_eq "$new_cp" "$(skopeo inspect --tls-verify=false --no-tags "docker://$NEW/mesh/controlplane:latest" | jq -r .Digest)" "latest"
expect_eq "$builder" "$(skopeo inspect --tls-verify=false --no-tags "docker://$NEW/mesh/builder:latest" | jq -r .Digest)" "latest"
expect_eq "$old_cp" "$(skopeo inspect --tls-verify=false --no-tags "docker://$NEW/mesh/controlplane:1.0" | jq -r .Digest)" "1.0"

note "every record's SBOM and record artifact moved with it: listed under its fallback tag at the new registry"
for pair in "controlplane $old_cp" "controlplane $new_cp" "builder $builder"; do
  set -- $pair
  # Referrers of older records are in the store's history, not in index.json (the view of the latest).
  sbom=$(python3 -c 'import sqlite3, sys; print(*sqlite3.connect(sys.argv[1]).execute(
    "SELECT digest FROM others WHERE subject = ?", (sys.argv[2],)).fetchone() or [""])' "$AREC_STORE/arec/history.db" "$2")
  [[ -n $sbom ]] || fail "the store holds no SBOM of mesh/$1@$2"
  listed=$(curl -fsS -H "Accept: application/vnd.oci.image.index.v1+json" "http://$NEW/v2/mesh/$1/manifests/sha256-${2#sha256:}" |
    jq -r '.manifests[] | "\(.digest) \(.artifactType)"') || fail "no fallback tag of mesh/$1@$2 at $NEW"
  expect_eq "$sbom application/spdx+json" "$(grep -v arec.record <<<"$listed")" "mesh/$1@$2's SBOM at the new registry"
  # And the record itself, whose document names its image.
  record=$(awk '$2 == "application/vnd.dev.arec.record.v1+json" { print $1 }' <<<"$listed")
  [[ $record == sha256:* ]] || fail "no record artifact of mesh/$1@$2 at $NEW: $listed"
  document=$(curl -fsS -H "Accept: application/vnd.oci.image.manifest.v1+json" "http://$NEW/v2/mesh/$1/manifests/$record" | jq -r '.layers[0].digest')
  expect_eq "mesh/$1 $2" "$(curl -fsS "http://$NEW/v2/mesh/$1/blobs/$document" | jq -r '"\(.module)/\(.name) \(.digest)"')" \
    "mesh/$1@$2's record document at the new registry"
done

note "nothing is deleted from the old registry"
expect_eq "$old_catalog" "$(curl -fsS "http://$OLD/v2/_catalog")" "old catalog"
expect_eq "$old_state" "$(tree_state "$T/registries/old/data")" "old registry's storage"
echo PASS
