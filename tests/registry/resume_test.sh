#!/usr/bin/env bash
# Resumable pushes, against a real registry behind the fault proxy, which like nginx passes a request
# on only once its whole body has come: a push cut off halfway through a large blob goes on from the
# Range the registry holds, in the same upload session; a push killed (SIGKILL) halfway goes on, the
# next time, from the session it noted in the store (arec/uploads/, no address in it); where the
# registry got part of a chunk (as one reached directly does) and no longer has the session, the blob
# goes up whole; a push that gives up cancels its upload (DELETE), and the registry keeps nothing of it.
# Notes cannot steer: one planted in the store whose path names another repository's manifest makes the
# push send no request there (its manifest stays), one with CR/LF in its path does not wedge the blob's
# pushes, and gc removes such notes. A Range that makes no sense (one that overflows, garbage) is a
# session gone: the blob goes up whole, never exit 2.
AREC=$1
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed (scripts/deps installs it)"
start_registry R own
start_fault_proxy P "$R"
use_registry "$P"
export AREC_CHUNK_SIZE=1M
MiB=1048576
uploads=$T/registries/own/data/docker/registry/v2/repositories/$M

# record_big NAME: a record whose layer is 12 MiB of random bytes; sets LAYER (digest) and SIZE.
record_big() {
  DIGEST=$(record "$1" $((12 * MiB)))
  LAYER=$(jq -r '.layers[0].digest' "$AREC_STORE/blobs/sha256/${DIGEST#sha256:}")
  SIZE=$(jq -r '.layers[0].size' "$AREC_STORE/blobs/sha256/${DIGEST#sha256:}")
}
# The image is at the registry as the store holds it: read back with skopeo, past the proxy.
exact_at_registry() { # name
  mkdir -p "$T/copies"
  skopeo copy -q --src-tls-verify=false "docker://$R/$M/$1@$DIGEST" "oci:$T/copies/$1:x" || fail "skopeo cannot copy $M/$1"
  expect_eq 3 "$(same_blobs "$T/copies/$1" "$AREC_STORE")" "blobs of $M/$1 copied back"
}
# The upload sessions whose bytes the registry keeps for repository $M/$1 (of one it cancelled,
# distribution 2.8 keeps a folder with a hash state, but not the bytes), and the notes the store keeps.
sessions_at_registry() { find "$uploads/$1/_uploads" -name data 2>/dev/null | wc -l; }
notes_in_store() { find "$AREC_STORE/arec/uploads" -type f -size +0 2>/dev/null | wc -l; }
received() { fault_case | jq .received; }
# kill_while_stalled: SIGKILLs the push started in the background ($pid) once the proxy stalls its body.
kill_while_stalled() {
  for _ in $(seq 100); do
    [[ $(fault_case | jq '.rules[0].fired') == 1 ]] && break
    sleep 0.1
  done
  [[ $(fault_case | jq '.rules[0].fired') == 1 ]] || fail "the push never reached the stalled chunk"
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true
}

note "cut off halfway through its 7th chunk: the push asks the registry, goes on from its Range"
record_big cut
# Twice: libcurl itself sends again, once, a request whose reused connection died unanswered.
faults '[{"method": "PATCH", "path": "/blobs/uploads/", "fault": "reset", "fraction": 0.5, "skip": 6, "times": 2}]'
expect_exit 0 "$AREC" push --json "$M/cut"
expect_eq 2 "$(expect_faults_fired)" "faults fired"
expect_sessions_asked >/dev/null
case=$(fault_case)
expect_eq 1 "$(jq '[.requests[] | select(.request | test("^GET .*/blobs/uploads/")) | select(.status == 204)] | length' <<<"$case")" \
  "sessions asked about and found"
sent=$(jq .received <<<"$case")
# The layer once, twice half a chunk more, and the config and the artifacts: never a second copy.
((sent < SIZE + 3 * MiB)) || fail "the cut push sent $sent bytes for a layer of $SIZE"
expect_eq 0 "$(jq .resumed.blobs <<<"$OUT")" "uploads resumed from an earlier push"
exact_at_registry cut
expect_eq 0 "$(notes_in_store)" "upload notes left in the store"
expect_eq 0 "$(sessions_at_registry cut)" "upload sessions left at the registry"

note "killed (SIGKILL) halfway through its 7th chunk: the next push goes on with the noted session"
record_big killed
faults '[{"method": "PATCH", "path": "/blobs/uploads/", "fault": "stall", "fraction": 0.5, "delay": 5, "skip": 6}]'
"$AREC" push "$M/killed" >"$T/killed.out" 2>"$T/killed.err" &
pid=$!
kill_while_stalled
expect_eq 1 "$(notes_in_store)" "upload notes the killed push left"
note=$(cat "$AREC_STORE"/arec/uploads/"${LAYER#sha256:}"-*)
expect_eq $((6 * MiB)) "$(jq .offset <<<"$note")" "bytes the note says the registry acknowledged"
expect_eq "/v2/$M/killed/blobs/uploads/" "$(jq -r .path <<<"$note" | grep -oE '^/v2/[^?]*/uploads/')" "the noted session's path"
expect_not_contains "$note" "127.0.0.1" "the upload note"
expect_exit 0 "$AREC" check
faults '[]'
expect_exit 0 "$AREC" push --json "$M/killed"
expect_contains "$ERR" "blob $LAYER: going on with the upload an earlier push left at $((6 * MiB)) of $SIZE bytes"
expect_eq 1 "$(jq .resumed.blobs <<<"$OUT")" "uploads resumed"
expect_eq $((6 * MiB)) "$(jq .resumed.bytes <<<"$OUT")" "bytes resumed"
sent=$(received)
((sent < SIZE - 5 * MiB)) || fail "the push after the kill sent $sent bytes for a layer of $SIZE of which the registry held 6 MiB"
note "the push after the kill sent $sent bytes for a layer of $SIZE"
exact_at_registry killed
expect_eq 0 "$(notes_in_store)" "upload notes left in the store"
expect_eq 0 "$(sessions_at_registry killed)" "upload sessions left at the registry"

note "killed with part of a chunk at the registry, which then drops the session: sent whole again"
record_big partial
faults '[{"method": "PATCH", "path": "/blobs/uploads/", "fault": "stall", "fraction": 0.5, "delay": 5, "skip": 6, "forward_partial": true}]'
"$AREC" push "$M/partial" >"$T/partial.out" 2>"$T/partial.err" &
pid=$!
kill_while_stalled
# Once the stall ends, the proxy passes on what arrived: the registry holds part of the 7th chunk.
for _ in $(seq 100); do
  held=$(stat -c %s "$uploads"/partial/_uploads/*/data 2>/dev/null || echo 0)
  ((held > 6 * MiB)) && break
  sleep 0.1
done
((held > 6 * MiB)) || fail "the registry never got part of the 7th chunk (it holds $held bytes)"
faults '[]'
expect_exit 0 "$AREC" push --json "$M/partial"
expect_contains "$ERR" "blob $LAYER: the registry no longer has the upload an earlier push left: sending it all"
expect_eq 0 "$(jq .resumed.blobs <<<"$OUT")" "uploads resumed"
exact_at_registry partial
expect_eq 0 "$(notes_in_store)" "upload notes left in the store"

note "cut off again and again: the push gives up (exit 3) and cancels its upload"
record_big given_up
faults '[{"method": "PATCH", "path": "/blobs/uploads/", "fault": "reset", "skip": 3, "times": 1000}]'
AREC_RETRY_BUDGET=2 expect_exit 3 "$AREC" push "$M/given_up"
expect_contains "$(tail -n1 <<<"$ERR")" "arec: error: pushing $M/given_up to $P: uploading blob $LAYER: "
case=$(fault_case)
expect_eq 1 "$(jq '[.requests[] | select(.request | test("^DELETE .*/blobs/uploads/")) | select(.status == 204)] | length' <<<"$case")" \
  "upload sessions cancelled"
expect_eq 0 "$(sessions_at_registry given_up)" "upload sessions left at the registry"
expect_eq 0 "$(notes_in_store)" "upload notes left in the store"
faults '[]'
# plant_note NAME PATH: a note for $M/NAME's layer ($LAYER) whose session path is PATH, as anyone who can
# write the store could leave it.
plant_note() {
  local file
  file=$AREC_STORE/arec/uploads/${LAYER#sha256:}-$(printf %s "$M/$1" | sha256sum | cut -c1-16)
  mkdir -p "$AREC_STORE/arec/uploads"
  jq -nc --arg r "$M/$1" --arg b "$LAYER" --arg p "$2" '{repository: $r, blob: $b, path: $p, offset: 0}' >"$file"
}

note "a planted note naming the team's manifest: the push sends nothing there, the manifest stays"
team=$(record team)
expect_exit 0 "$AREC" push "$M/team"
manifest_at_registry() {
  curl -s -o /dev/null -w '%{http_code}' -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
    "http://$R/v2/$M/team/manifests/$team"
}
expect_eq 200 "$(manifest_at_registry)" "the team's manifest at the registry"
record_big planted
plant_note planted "/v2/$M/team/manifests/$team"
faults '[]'
expect_exit 0 "$AREC" push "$M/planted"
case=$(fault_case)
# (A HEAD of a blob in $M/team is push's own search for a repository to mount from.)
expect_eq "[]" "$(jq -c --arg team "/v2/$M/team/" '[.requests[] | select(.request | contains($team))
  | select(.request | startswith("HEAD ") | not)]' <<<"$case")" "requests but HEAD the push sent to $M/team"
expect_eq 200 "$(manifest_at_registry)" "the team's manifest at the registry after the push"
exact_at_registry planted
expect_eq 0 "$(notes_in_store)" "upload notes left in the store"

note "a planted note whose path climbs out of its repository (..): no note"
record_big climbing
plant_note climbing "/v2/$M/climbing/blobs/uploads/../../../team/manifests/$team"
faults '[]'
expect_exit 0 "$AREC" push "$M/climbing"
expect_eq "[]" "$(fault_case | jq -c --arg team "/v2/$M/team/" '[.requests[] | select(.request | contains($team))
  | select(.request | startswith("HEAD ") | not)]')" "requests but HEAD the push sent to $M/team"
expect_eq 200 "$(manifest_at_registry)" "the team's manifest at the registry after the push"

note "a planted note with CR/LF in its path: no note; the blob's pushes are not wedged"
record_big crlf
plant_note crlf $'/v2/'"$M"$'/crlf/blobs/uploads/x\r\nX-Injected: 1'
faults '[]'
expect_exit 0 "$AREC" push "$M/crlf"
expect_eq "[]" "$(fault_case | jq -c '[.requests[] | select(.request | test("X-Injected|/x$"))]')" "requests with the note's path"
exact_at_registry crlf
plant_note crlf $'/v2/'"$M"$'/crlf/blobs/uploads/x\r\nX-Injected: 1'
expect_exit 0 "$AREC" push "$M/crlf"

note "gc removes a note that is no note"
expect_eq 1 "$(notes_in_store)" "notes before gc"
expect_exit 0 "$AREC" gc --json
expect_eq 1 "$(jq .upload_notes_removed <<<"$OUT")" "notes gc removed"
expect_eq 0 "$(notes_in_store)" "notes after gc"

# A Range that makes no sense, after a cut PATCH made the push ask what the session holds.
for range in 0-9223372036854775807 0-99999999999999999999 0--5 garbage; do
  note "the registry answers Range: $range for the session: taken as gone, the blob sent whole"
  record_big "range${range//[^0-9a-z]/}"
  faults '[{"method": "PATCH", "path": "/blobs/uploads/", "fault": "reset", "fraction": 0.5, "skip": 6, "times": 2},
           {"method": "GET", "path": "/blobs/uploads/", "fault": "headers", "set": {"Range": "'"$range"'"}, "times": 1}]'
  expect_exit 0 "$AREC" push "$M/range${range//[^0-9a-z]/}"
  expect_contains "$ERR" "the registry reports an upload session with the Range \"$range\" (not 0-<last byte>): taking it as gone" \
    "the push's messages"
  expect_eq 1 "$(fault_case | jq '.rules[1].fired')" "nonsense Ranges answered"
  exact_at_registry "range${range//[^0-9a-z]/}"
done
faults '[]'
echo PASS
