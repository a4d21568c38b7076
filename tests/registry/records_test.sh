#!/usr/bin/env bash
# Records travel through the registry: store A records two module/names (one for two platforms) and
# pushes; store B, which built nothing, pulls them and composes, lists and verifies as A does. A second
# pull writes nothing; --records-only brings no layer; a record artifact that disagrees with its image
# is refused, naming it, with nothing written. Rule 1: no artifact pushed holds the registry's address.
AREC=$1
source "$(dirname "$0")/lib.sh"
for tool in jq curl; do command -v $tool >/dev/null || skip "no $tool (scripts/deps installs it)"; done
start_registry R own  # its own registry: pull --all reads the whole catalog
use_registry "$R"
A=$T/a
B=$T/b
C=$T/c
record_type=application/vnd.dev.arec.record.v1+json

# record_in STORE NAME [record options]: records $M/NAME from a small tree into STORE; prints its digest.
record_in() {
  local store=$1 name=$2
  shift 2
  mkdir -p "$T/in/$name"
  echo "$M/$name $*" >"$T/in/$name/data"
  AREC_STORE=$store "$AREC" record --module "$M" --name "$name" --target "$name" --config Release \
    --dir "$T/in/$name=/srv/$name" "$@" | cut -d@ -f2
}
compose_in() { printf 'hello: arec://image/%s/hello\nmulti: arec://image/%s/multi\n' "$M" "$M" | AREC_STORE=$1 "$AREC" compose -; }
# The record artifacts the registry lists for REPOSITORY@DIGEST (its fallback tag), as "digest".
record_artifacts() {
  curl -sf -H "Accept: application/vnd.oci.image.index.v1+json" "http://$R/v2/$1/manifests/sha256-${2#sha256:}" |
    jq -r --arg t "$record_type" '.manifests[] | select(.artifactType == $t) | .digest'
}
blob_at() { curl -sf "http://$R/v2/$1/blobs/$2"; }
manifest_at() { curl -sf -H "Accept: application/vnd.oci.image.manifest.v1+json" "http://$R/v2/$1/manifests/$2"; }

note "A records $M/hello and $M/multi for linux/amd64 and linux/arm64, and pushes"
hello=$(record_in "$A" hello)
amd64=$(record_in "$A" multi --platform linux/amd64)
arm64=$(record_in "$A" multi --platform linux/arm64)
export AREC_STORE=$A
expect_exit 0 "$AREC" push --json
# hello, each platform of multi: one record artifact each (the index has none: it is made of them).
expect_eq "3 3" "$(jq -r '"\(.records.pushed) \(.records.listed)"' <<<"$OUT")" "record artifacts pushed and listed"
expect_exit 0 "$AREC" push --json
expect_eq "0 0 0" "$(jq -r '"\(.records.pushed) \(.records.listed) \(.records.blobs)"' <<<"$OUT")" "a second push: no write"
artifact=$(record_artifacts "$M/hello" "$hello")
[[ $artifact == sha256:* ]] || fail "no record artifact listed for $M/hello@$hello"
document=$(blob_at "$M/hello" "$(manifest_at "$M/hello" "$artifact" | jq -r .layers[0].digest)")
expect_eq "$hello $M hello Release hello linux/amd64" "$(jq -r '"\(.digest) \(.module) \(.name) \(.config) \(.target) \(.platform)"' <<<"$document")" \
  "the record document"
expect_eq "config digest mediaType module name platform recorded revision size target" "$(jq -r 'keys | join(" ")' <<<"$document")" \
  "the record document's fields: none could hold an address"
expect_eq "" "$(grep -rlaE "$R|127\.0\.0\.1|${R#*:}" "$A/blobs" "$A/index.json" || true)" "A's blobs holding the registry's address (rule 1)"
expect_exit 0 "$AREC" verify

note "B, an empty store, pulls every module/name that has records, and composes as A"
export AREC_STORE=$B
expect_exit 0 "$AREC" pull --all --json
expect_eq "2" "$(jq 'length' <<<"$OUT")" "module/names pulled"
expect_eq "$hello $amd64 $arm64" "$(jq -r '[.[].records[].digest] | join(" ")' <<<"$OUT")" "records added, oldest first"
expect_eq "$(compose_in "$A")" "$(compose_in "$B")" "compose on B, byte for byte A's"
expect_contains "$(compose_in "$B")" "$R/$M/multi@sha256:" "compose names the index"
expect_eq "$(AREC_STORE=$A "$AREC" records --json)" "$("$AREC" records --json)" "records --json"
expect_eq "$(AREC_STORE=$A "$AREC" records --history --json)" "$("$AREC" records --history --json)" "records --history --json"
expect_exit 0 "$AREC" verify
expect_exit 0 "$AREC" inspect "$M/hello" --json
expect_eq "application/spdx+json" "$(jq -r '.referrers[].artifactType' <<<"$OUT")" "the SBOM came along"
expect_eq "$(AREC_STORE=$A "$AREC" sbom "$M/hello")" "$("$AREC" sbom "$M/hello")" "sbom"
# A declaration composed on A: needs-rebuild says the same on B, and $M/hello needs no rebuild there.
compose_in "$A" >"$T/deploy.yaml"
expect_eq "$(AREC_STORE=$A "$AREC" needs-rebuild "$T/deploy.yaml" --json)" "$("$AREC" needs-rebuild "$T/deploy.yaml" --json)" "needs-rebuild"
expect_eq "[]" "$("$AREC" needs-rebuild "$T/deploy.yaml" --json | jq -c --arg r "$M/hello@" 'map(select(.kind == "no-build" and (.reference | contains($r))))')" \
  "needs-rebuild of $M/hello"
# $M/multi is composed as its image index over two platforms: a recorded build, not a digest no record has.
expect_contains "$(<"$T/deploy.yaml")" "$M/multi@sha256:" "the composed declaration"
expect_eq "[]" "$("$AREC" needs-rebuild "$T/deploy.yaml" --json | jq -c --arg r "$M/multi@" 'map(select(.kind == "no-build" and (.reference | contains($r))))')" \
  "needs-rebuild of $M/multi's image index"
expect_eq "" "$(grep -rlaE "$R|127\.0\.0\.1" "$B" || true)" "B's files holding the registry's address (rule 1)"

note "pulling again writes nothing"
before=$(tree_state "$B")
expect_exit 0 "$AREC" pull "$M/multi" --json
expect_eq "0 2" "$(jq -r '"\(.records | length) \(.records_present)"' <<<"$OUT")" "records added, present"
expect_exit 0 "$AREC" pull --all
expect_eq "$before" "$(tree_state "$B")" "B after pulling again"

note "--records-only: the records and manifests, no layer"
export AREC_STORE=$C
expect_exit 0 "$AREC" pull --records-only "$M/multi"
expect_exit 0 "$AREC" pull --records-only "$M/hello"
expect_eq "$(compose_in "$A")" "$(compose_in "$C")" "compose after --records-only"
for image in "$hello" "$amd64" "$arm64"; do
  for layer in $(jq -r '.layers[].digest' "$A/blobs/sha256/${image#sha256:}"); do
    [[ ! -e $C/blobs/sha256/${layer#sha256:} ]] || fail "--records-only wrote the layer $layer"
  done
done

note "a record artifact that names another image is refused, naming it, and nothing is written"
evil=$(record_in "$A" evil)
AREC_STORE=$A "$AREC" push "$M/evil" >/dev/null
genuine=$(record_artifacts "$M/evil" "$evil")
# The genuine document, claiming hello's image instead, under a new artifact listed for evil's image.
forged=$(blob_at "$M/evil" "$(manifest_at "$M/evil" "$genuine" | jq -r .layers[0].digest)" |
  jq -c --arg d "$hello" --argjson s "$(stat -c %s "$A/blobs/sha256/${hello#sha256:}")" '.digest = $d | .size = $s')
forged_digest=sha256:$(printf %s "$forged" | sha256sum | cut -d' ' -f1)
location=$(curl -sf -o /dev/null -D - -X POST "http://$R/v2/$M/evil/blobs/uploads/" | tr -d '\r' | sed -n 's/^Location: //Ip')
[[ $location == http* ]] || location=http://$R$location
curl -sf -X PUT -H "Content-Type: application/octet-stream" --data-binary "$forged" "$location&digest=$forged_digest" >/dev/null ||
  curl -sf -X PUT -H "Content-Type: application/octet-stream" --data-binary "$forged" "$location?digest=$forged_digest" >/dev/null ||
  fail "uploading the forged document"
bad=$(manifest_at "$M/evil" "$genuine" | jq -c --arg d "$forged_digest" --argjson s "${#forged}" '.layers[0].digest = $d | .layers[0].size = $s')
bad_digest=sha256:$(printf %s "$bad" | sha256sum | cut -d' ' -f1)
curl -sf -X PUT -H "Content-Type: application/vnd.oci.image.manifest.v1+json" --data-binary "$bad" \
  "http://$R/v2/$M/evil/manifests/$bad_digest" >/dev/null || fail "putting the forged artifact"
tag=sha256-${evil#sha256:}
listed=$(curl -sf -H "Accept: application/vnd.oci.image.index.v1+json" "http://$R/v2/$M/evil/manifests/$tag" |
  jq -c --arg d "$bad_digest" --argjson s "${#bad}" --arg t "$record_type" \
    '.manifests += [{mediaType: "application/vnd.oci.image.manifest.v1+json", digest: $d, size: $s, artifactType: $t}]')
curl -sf -X PUT -H "Content-Type: application/vnd.oci.image.index.v1+json" --data-binary "$listed" \
  "http://$R/v2/$M/evil/manifests/$tag" >/dev/null || fail "listing the forged artifact"
export AREC_STORE=$B
before=$(tree_state "$B")
expect_exit 3 "$AREC" pull "$M/evil"
expect_contains "$ERR" "$bad_digest" "the refusal names the artifact"
expect_contains "$ERR" "not the image it refers to" "the refusal says why"
expect_eq "$before" "$(tree_state "$B")" "B after the refused pull"
expect_exit 3 "$AREC" pull --all
expect_eq "$before" "$(tree_state "$B")" "B after the refused pull --all"

note "records whose image is gone from the registry are passed over with a warning"
curl -sf -X DELETE "http://$R/v2/$M/evil/manifests/$evil" >/dev/null || fail "deleting $M/evil@$evil"
expect_exit 0 "$AREC" pull --all
expect_contains "$ERR" "$M/evil@$evil" "the warning names the image"
expect_contains "$ERR" "ignored" "the warning"
expect_eq "$before" "$(tree_state "$B")" "B after pull --all passed them over"
echo PASS
