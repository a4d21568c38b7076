#!/usr/bin/env bash
# verify: every latest record is at the registry with its exact digest; exit 1 listing what is not.
AREC=$1
source "$(dirname "$0")/lib.sh"
use_registry "$REG"
a=$(record a 1000)
b=$(record b 1000)
expect_exit 0 "$AREC" push
expect_exit 0 "$AREC" verify
expect_eq "present    $M/a@$a
present    $M/b@$b" "$OUT" "verify output"

note "a manifest deleted from the registry is found missing"
curl -sf -X DELETE "http://$REG/v2/$M/b/manifests/$b" || fail "deleting the manifest"
expect_exit 1 "$AREC" verify
expect_contains "$OUT" "missing    $M/b@$b"
expect_contains "$OUT" "present    $M/a@$a"
expect_contains "$ERR" "1 of 2 records missing or different at $REG"
expect_exit 1 "$AREC" verify --json
expect_eq "$M/a present,$M/b missing" "$(jq -r 'map("\(.repository) \(.state)") | join(",")' <<<"$OUT")" "verify --json"
expect_exit 0 "$AREC" verify "$M/a"

note "a new record not pushed yet is missing too; pushing repairs both"
echo new >>"$T/in/a/id"
"$AREC" record --module "$M" --name a --dir "$T/in/a=/srv/a" >/dev/null
expect_exit 1 "$AREC" verify
expect_exit 0 "$AREC" push
expect_exit 0 "$AREC" verify

note "a record whose own artifact the registry does not list is missing; pushing lists it again"
a=$("$AREC" records "$M/a" --json | jq -r '.[0].digest')
tag=sha256-${a#sha256:}
listed=$(curl -sf -H "Accept: application/vnd.oci.image.index.v1+json" "http://$REG/v2/$M/a/manifests/$tag") || fail "no fallback tag of $M/a@$a"
record=$(jq -r '.manifests[] | select(.artifactType == "application/vnd.dev.arec.record.v1+json") | .digest' <<<"$listed")
[[ $record == sha256:* ]] || fail "no record artifact listed for $M/a@$a: $listed"
jq -c '.manifests |= map(select(.artifactType != "application/vnd.dev.arec.record.v1+json"))' <<<"$listed" |
  curl -sf -X PUT -H "Content-Type: application/vnd.oci.image.index.v1+json" --data-binary @- "http://$REG/v2/$M/a/manifests/$tag" >/dev/null ||
  fail "rewriting $tag"
expect_exit 1 "$AREC" verify "$M/a"
expect_eq "missing    $M/a@$a  (its record $record is not listed)" "$OUT" "verify of a record whose artifact is not listed"
expect_exit 1 "$AREC" verify "$M/a" --json
expect_eq "missing $record" "$(jq -r '.[0] | "\(.state) \(.missing_record)"' <<<"$OUT")" "verify --json"
expect_exit 0 "$AREC" push "$M/a" --json
expect_eq "0 1" "$(jq -r '"\(.records.pushed) \(.records.listed)"' <<<"$OUT")" "the artifact there already, listed again"
expect_exit 0 "$AREC" verify "$M/a"
echo PASS
