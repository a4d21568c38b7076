#!/usr/bin/env bash
# push: the registry holds each record under module/name by digest, byte for byte as the store has it;
# pushing again sends no blob; a repository whose blobs another repository has gets them mounted.
AREC=$1
source "$(dirname "$0")/lib.sh"
use_registry "$REG"

app=$(record app 300000)
expect_exit 0 "$AREC" push --json
expect_eq 2 "$(jq .uploaded <<<"$OUT")" "blobs uploaded (config and layer)"
expect_eq 0 "$(jq .skipped <<<"$OUT")" "blobs skipped"
expect_eq "$REG" "$(jq -r .registry <<<"$OUT")" "registry"
expect_eq "$M/app $app false" "$(jq -r '.images[0] | "\(.repository) \(.digest) \(.present)"' <<<"$OUT")" "pushed image"
expect_not_contains "$ERR" $'\e[' "stderr (not a terminal: no progress display)"

note "skopeo finds it by digest, and copies back the very bytes of the store"
expect_eq "$app" "$(skopeo inspect --no-tags --tls-verify=false "docker://$REG/$M/app@$app" | jq -r .Digest)" "digest skopeo sees"
skopeo copy -q --src-tls-verify=false "docker://$REG/$M/app@$app" "oci:$T/back:app"
expect_eq 3 "$(same_blobs "$T/back" "$AREC_STORE")" "blobs identical to the store's (manifest, config, layer)"

note "pushing again sends nothing"
expect_exit 0 "$AREC" push --json
expect_eq "0 2 0 true" "$(jq -r '"\(.uploaded) \(.skipped) \(.bytes) \(.images[0].present)"' <<<"$OUT")" "uploaded skipped bytes present"

note "a second repository with the same blobs mounts them"
"$AREC" record --module "$M" --name twin --dir "$T/in/app=/srv/app" >/dev/null
expect_exit 0 "$AREC" push "$M/twin" --json
expect_eq "0 2 0" "$(jq -r '"\(.uploaded) \(.mounted) \(.skipped)"' <<<"$OUT")" "uploaded mounted skipped"
expect_eq "$app" "$(skopeo inspect --no-tags --tls-verify=false "docker://$REG/$M/twin@$app" | jq -r .Digest)" "twin digest"

note "two new repositories in one push: one upload, then a mount"
other=$(record other 1000)
"$AREC" record --module "$M" --name other2 --dir "$T/in/other=/srv/other" >/dev/null
expect_exit 0 "$AREC" push "$M/other" "$M/other2" --jobs 2 --json
expect_eq "2 2" "$(jq -r '"\(.uploaded) \(.mounted)"' <<<"$OUT")" "uploaded mounted"

note "--tag also puts the manifest under a tag; a record from the history by digest"
echo changed >>"$T/in/app/id"
"$AREC" record --module "$M" --name app --dir "$T/in/app=/srv/app" >/dev/null
expect_exit 0 "$AREC" push "$M/app@$app" --tag v1 --tag stable
expect_eq "$REG/$M/app@$app" "$OUT" "output"
expect_eq "$app" "$(skopeo inspect --tls-verify=false "docker://$REG/$M/app:stable" | jq -r .Digest)" "digest of tag stable"
expect_exit 2 "$AREC" push "$M/app" --tag 'bad tag'
expect_contains "$ERR" "not a tag"
expect_exit 2 "$AREC" push "$M/nothing"
expect_contains "$ERR" "no such record"

note "on a terminal, a progress display on stderr; nothing of it in the output"
# stderr is the terminal script(1) gives; stdout goes to a file, so the two are told apart.
echo more >>"$T/in/app/data"
"$AREC" record --module "$M" --name app --dir "$T/in/app=/srv/app" >/dev/null
script -qec "'$AREC' push $M/app --tag tty >'$T/tty.out'" "$T/tty.log" >/dev/null </dev/null || fail "push on a terminal"
expect_contains "$(cat "$T/tty.log")" "blobs" "what the terminal showed (stderr)"
expect_contains "$(cat "$T/tty.log")" $'\e[' "what the terminal showed (stderr)"
expect_eq "$REG/$M/app@$("$AREC" records "$M/app" --json | jq -r '.[0].digest')" "$(cat "$T/tty.out")" "output (stdout) of a push on a terminal"
echo PASS
