#!/usr/bin/env bash
# `arec tag M/N@digest` makes an older record the latest again as a new history entry, rewriting
# nothing; `arec rm M/N[@digest]` drops records from the store's view and history, leaving the blobs
# for `arec gc`.
AREC=$1
source "$(dirname "$0")/../lib.sh"
export AREC_STORE=$T/store
v1=$(record_artifact mesh app "version 1")
v2=$(record_artifact mesh app "version 2")
other=$(record_artifact mesh other "other")
expect_exit 0 "$AREC" records mesh/app --history --json
history_before=$OUT

note "tag: the older record is the latest again, by a new history entry after the others"
expect_exit 0 "$AREC" tag "mesh/app@$v1"
expect_eq "mesh/app@$v1" "$OUT" "printed"
expect_exit 0 "$AREC" records mesh/app --json
expect_eq "$v1" "$(json_get '.[0].digest' <<<"$OUT")" "latest after tag"
expect_exit 0 "$AREC" records mesh/app --history --json
expect_eq "$(jq -c . <<<"$history_before")" "$(jq -c '.[:2]' <<<"$OUT")" "the history before the tag, unchanged"
expect_eq "3 $v1" "$(json_get '"\(length) \(.[2].digest)"' <<<"$OUT")" "the tag's history entry"
expect_eq "$v1" "$(skopeo inspect "oci:$AREC_STORE:mesh/app" | jq -r .Digest)" "what skopeo reads as mesh/app"
expect_exit 0 "$AREC" tag "mesh/app@$v1" --json
expect_eq "false $v1" "$(json_get '"\(.changed) \(.digest)"' <<<"$OUT")" "tagging the latest again"
expect_exit 0 "$AREC" records mesh/app --history --json
expect_eq 3 "$(json_get length <<<"$OUT")" "history after a tag that changed nothing"

note "tag refuses what the store does not hold, and a record without a digest"
unknown=sha256:$(printf '0%.0s' $(seq 64))
state=$(tree_state "$AREC_STORE")
expect_exit 2 "$AREC" tag "mesh/app@$unknown"
expect_one_line_error "mesh/app@$unknown: no such record in store $AREC_STORE"
expect_exit 2 "$AREC" tag "mesh/other@$v1"
expect_one_line_error "mesh/other@$v1: no such record"
expect_exit 2 "$AREC" tag mesh/app
expect_one_line_error "\"mesh/app\": name the record to make latest by its digest"
expect_eq "$state" "$(tree_state "$AREC_STORE")" "the store after refused tags"

note "rm of one digest: its entries go, the newest left is the latest, the blobs stay"
expect_exit 0 "$AREC" rm "mesh/app@$v1" --json
expect_eq "2 $v2" "$(json_get '"\(.removed) \(.latest.digest)"' <<<"$OUT")" "rm of v1 (two entries)"
expect_exit 0 "$AREC" records mesh/app --history --json
expect_eq "$v2" "$(json_get '[.[].digest] | join(" ")' <<<"$OUT")" "history after rm"
[[ -f $AREC_STORE/blobs/sha256/${v1#sha256:} ]] || fail "rm removed the manifest blob; gc should"
expect_exit 0 "$AREC" check
expect_exit 0 "$AREC" gc --json
(($(json_get .blobs_removed <<<"$OUT") >= 3)) || fail "gc removed fewer blobs than v1's manifest, config and layer: $OUT"
[[ ! -e $AREC_STORE/blobs/sha256/${v1#sha256:} ]] || fail "gc left the removed record's manifest"
expect_exit 0 "$AREC" check

note "rm of a module/name: gone from records and from index.json"
expect_exit 0 "$AREC" rm mesh/app
expect_eq "removed 1 record of mesh/app; none left (arec gc removes blobs no record needs)" "$OUT" "rm output"
expect_exit 0 "$AREC" records --json
expect_eq "mesh/other@$other" "$(json_get '.[] | "\(.module)/\(.name)@\(.digest)"' <<<"$OUT")" "records left"
expect_eq "mesh/other" "$(jq -r '[.manifests[].annotations["org.opencontainers.image.ref.name"] // empty] | join(" ")' "$AREC_STORE/index.json")" \
  "ref names in index.json"
expect_exit 2 "$AREC" rm mesh/app
expect_one_line_error "\"mesh/app\": no such record in $AREC_STORE"
expect_exit 2 "$AREC" rm mesh
expect_one_line_error "\"mesh\": expected MODULE/NAME[@sha256:...]"
expect_exit 0 "$AREC" check
echo PASS
