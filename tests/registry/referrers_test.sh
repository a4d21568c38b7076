#!/usr/bin/env bash
# push carries each record's SBOM: its manifest goes up by digest after the image, and since Debian's
# docker-registry has no referrers API, the OCI 1.1 fallback tag sha256-<hex> lists it with its
# artifactType. A second push writes nothing; what another tool listed under that tag is kept.
AREC=$1
source "$(dirname "$0")/lib.sh"
use_registry "$REG"
OCI_INDEX=application/vnd.oci.image.index.v1+json
OCI_MANIFEST=application/vnd.oci.image.manifest.v1+json
get() { curl -sf -H "Accept: $1" "http://$REG/v2/$2"; }
head_digest() { curl -sfI -H "Accept: $1" "http://$REG/v2/$2" | tr -d '\r' | sed -n 's/^[Dd]ocker-[Cc]ontent-[Dd]igest: //p'; }
sbom_of() { jq -r --arg d "$1" '.manifests[] | select(.annotations["dev.arec.subject"] == $d) | .digest' "$AREC_STORE/index.json"; }

app=$(record app 1000)
sbom=$(sbom_of "$app")
[[ -n $sbom ]] || fail "the store holds no SBOM for $M/app"
expect_exit 0 "$AREC" push --json
expect_eq "1 2 1" "$(jq -r '.referrers | "\(.pushed) \(.blobs) \(.listed)"' <<<"$OUT")" "referrers pushed, blobs, listed"
expect_eq 2 "$(jq -r .uploaded <<<"$OUT")" "image blobs uploaded (config and layer; the SBOM's counted apart)"

note "GET the fallback tag: an index whose entries are the SBOM and the record, each with its artifactType"
tag=sha256-${app#sha256:}
index=$(get "$OCI_INDEX" "$M/app/manifests/$tag") || fail "no fallback tag $tag in $M/app"
expect_eq "$OCI_INDEX" "$(jq -r .mediaType <<<"$index")" "fallback tag's mediaType"
expect_eq "2 $sbom application/spdx+json $OCI_MANIFEST" \
  "$(jq -r '"\(.manifests | length) \(.manifests[0].digest) \(.manifests[0].artifactType) \(.manifests[0].mediaType)"' <<<"$index")" \
  "fallback tag entry of the SBOM"
expect_eq "application/vnd.dev.arec.record.v1+json $OCI_MANIFEST" "$(jq -r '.manifests[1] | "\(.artifactType) \(.mediaType)"' <<<"$index")" \
  "fallback tag entry of the record"
manifest=$(get "$OCI_MANIFEST" "$M/app/manifests/$sbom") || fail "the registry has no SBOM manifest $sbom"
expect_eq "$app application/spdx+json" "$(jq -r '"\(.subject.digest) \(.artifactType)"' <<<"$manifest")" "SBOM manifest's subject"
layer=$(jq -r '.layers[0].digest' <<<"$manifest")
"$AREC" sbom "$M/app" >"$T/local.json"
curl -sf "http://$REG/v2/$M/app/blobs/$layer" >"$T/remote.json" || fail "no SBOM blob $layer"
cmp -s "$T/local.json" "$T/remote.json" || fail "the registry's SBOM differs from arec sbom's"
expect_eq "libssl3-free" "$(jq -r 'if any(.packages[]; .name == "libssl3") then "has libssl3" else "libssl3-free" end' "$T/remote.json")" "packages of a build-only record"

note "a second push writes nothing"
before=$(head_digest "$OCI_INDEX" "$M/app/manifests/$tag")
expect_exit 0 "$AREC" push --json
expect_eq "0 0 0 0" "$(jq -r '"\(.uploaded) \(.referrers.pushed) \(.referrers.blobs) \(.referrers.listed)"' <<<"$OUT")" \
  "uploaded, referrers pushed, blobs, listed"
expect_eq "$before" "$(head_digest "$OCI_INDEX" "$M/app/manifests/$tag")" "fallback tag after a second push"

note "pull brings the SBOM along, listed as the image's referrer"
expect_exit 0 env AREC_STORE="$T/pulled" "$AREC" pull "$REG/$M/app@$app" --json
expect_eq 1 "$(jq -r .referrers <<<"$OUT")" "referrers pulled"
expect_eq "$sbom application/spdx+json" \
  "$(jq -r --arg d "$app" '.manifests[] | select(.annotations["dev.arec.subject"] == $d) | "\(.digest) \(.artifactType)"' "$T/pulled/index.json")" \
  "the pulled store's referrer"
cmp -s "$T/local.json" "$T/pulled/blobs/sha256/${layer#sha256:}" || fail "the pulled SBOM differs"
expect_exit 0 env AREC_STORE="$T/pulled" "$AREC" pull "$REG/$M/app@$app" --json
expect_eq "0 0" "$(jq -r '"\(.downloaded) \(.referrers)"' <<<"$OUT")" "pulling again: downloaded, referrers"

note "verify: the SBOM must be listed for the image"
expect_exit 0 "$AREC" verify "$M/app" --json
expect_eq present "$(jq -r '.[0].state' <<<"$OUT")" "state"
printf '{"schemaVersion":2,"mediaType":"%s","manifests":[]}' "$OCI_INDEX" >"$T/empty-index.json"
curl -sf -X PUT -H "Content-Type: $OCI_INDEX" --data-binary "@$T/empty-index.json" \
  "http://$REG/v2/$M/app/manifests/$tag" >/dev/null || fail "emptying $tag"
expect_exit 1 "$AREC" verify "$M/app" --json
expect_eq "missing $sbom" "$(jq -r '.[0] | "\(.state) \(.missing_referrers[0])"' <<<"$OUT")" "state once the tag lost it"
expect_exit 0 "$AREC" push "$M/app" --json
expect_eq "0 1" "$(jq -r '.referrers | "\(.pushed) \(.listed)"' <<<"$OUT")" "a push lists it again"
expect_exit 0 "$AREC" verify "$M/app"

note "an entry another tool put under the fallback tag is kept beside the SBOM"
mkdir -p "$T/in/other" && echo "$M/other" >"$T/in/other/id"
other=$("$AREC" record --sbom none --module "$M" --name other --dir "$T/in/other=/srv/other" | cut -d@ -f2)
expect_exit 0 "$AREC" push "$M/other" --json
expect_eq 0 "$(jq -r .referrers.pushed <<<"$OUT")" "referrers of a record made with --sbom none"
image_manifest=$(get "$OCI_MANIFEST" "$M/other/manifests/$other")
# A signature-like artifact of the image, made from blobs the repository holds.
jq -c --arg subject "$other" --argjson size "${#image_manifest}" \
  '{schemaVersion: 2, mediaType: .mediaType, artifactType: "application/vnd.example.signature", config: .config,
    layers: .layers, subject: {mediaType: .mediaType, digest: $subject, size: $size},
    annotations: {"org.example.signer": "ci"}}' <<<"$image_manifest" | tr -d '\n' >"$T/foreign.json"
foreign="sha256:$(sha256sum <"$T/foreign.json" | cut -d' ' -f1)"
curl -sf -X PUT -H "Content-Type: $OCI_MANIFEST" --data-binary "@$T/foreign.json" \
  "http://$REG/v2/$M/other/manifests/$foreign" >/dev/null || fail "putting the foreign artifact"
jq -c -n --arg d "$foreign" --argjson size "$(stat -c %s "$T/foreign.json")" \
  '{schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json",
    manifests: [{mediaType: "application/vnd.oci.image.manifest.v1+json", digest: $d, size: $size,
                 artifactType: "application/vnd.example.signature", annotations: {"org.example.signer": "ci"}}]}' |
  tr -d '\n' >"$T/foreign-index.json"
other_tag=sha256-${other#sha256:}
curl -sf -X PUT -H "Content-Type: $OCI_INDEX" --data-binary "@$T/foreign-index.json" \
  "http://$REG/v2/$M/other/manifests/$other_tag" >/dev/null || fail "putting the foreign fallback tag"
# Recording the same content with an SBOM adds it to the record made without one.
expect_eq "$other" "$("$AREC" record --module "$M" --name other --dir "$T/in/other=/srv/other" | cut -d@ -f2)" "same digest"
expect_exit 0 "$AREC" push "$M/other" --json
expect_eq "1 1" "$(jq -r '.referrers | "\(.pushed) \(.listed)"' <<<"$OUT")" "referrers pushed, listed"
index=$(get "$OCI_INDEX" "$M/other/manifests/$other_tag")
expect_eq "$foreign application/vnd.example.signature ci|$(sbom_of "$other") application/spdx+json null|application/vnd.dev.arec.record.v1+json" \
  "$(jq -r '[.manifests[] | if .artifactType == "application/vnd.dev.arec.record.v1+json" then .artifactType
     else "\(.digest) \(.artifactType) \(.annotations["org.example.signer"])" end] | join("|")' <<<"$index")" \
  "fallback tag entries: the foreign one kept, the SBOM and the record added"

note "a fallback tag holding something else is not overwritten: exit 3"
third=$(record third 500)
"$AREC" push "$M/third" >/dev/null
# Another record of it, whose fallback tag someone has filled with an image manifest.
echo again >>"$T/in/third/id"
"$AREC" record --module "$M" --name third --dir "$T/in/third=/srv/third" >/dev/null
newthird=$("$AREC" records "$M/third" --json | jq -r '.[0].digest')
curl -sf -X PUT -H "Content-Type: $OCI_MANIFEST" --data-binary "$(get "$OCI_MANIFEST" "$M/third/manifests/$third")" \
  "http://$REG/v2/$M/third/manifests/sha256-${newthird#sha256:}" >/dev/null || fail "putting an image under the new tag"
expect_exit 3 "$AREC" push "$M/third"
expect_one_line_error "holds something other than an OCI image index; not overwriting it"
expect_eq "$third" "$(head_digest "$OCI_MANIFEST" "$M/third/manifests/sha256-${newthird#sha256:}")" "the tag after the refusal"
note "a signed record's push counts its SBOM, its signature and its provenance apart"
"$AREC" key generate --out "$T/team" >/dev/null || fail "arec key generate"
mkdir -p "$T/in/signed" && echo "$M/signed" >"$T/in/signed/id"
"$AREC" record --module "$M" --name signed --dir "$T/in/signed=/srv/signed" --sign-key "$T/team.key" >/dev/null ||
  fail "recording a signed record"
expect_exit 0 "$AREC" push "$M/signed" --json
expect_eq "3 1 1 1 0 3" \
  "$(jq -r '.referrers | "\(.pushed) \(.sboms) \(.signatures) \(.provenance) \(.other) \(.listed)"' <<<"$OUT")" \
  "referrers pushed, SBOMs, signatures, provenance, other, listed"
mkdir -p "$T/in/signed2" && echo "$M/signed2" >"$T/in/signed2/id"
"$AREC" record --module "$M" --name signed2 --dir "$T/in/signed2=/srv/signed2" --sign-key "$T/team.key" >/dev/null
expect_exit 0 "$AREC" push "$M/signed2"
expect_contains "$ERR" "referrers: 3 pushed: 1 SBOM, 1 signature, 1 provenance ("
echo PASS
