#!/usr/bin/env bash
# A registry behind a proxy that breaks requests (500s, 429 with Retry-After, resets mid-upload,
# truncated, slow and stalled answers, wrong Docker-Content-Digest headers, corrupted bodies, uploads
# claimed but never made): every push either completes with the exact image at the registry (read back
# with skopeo, not through the proxy) or exits 3 with one clear line; every pull refuses content that
# does not match its digest, with exit 3 and a store that `arec check` passes and that lists nothing
# new. Every case checks from the proxy's report that each of its faults fired as planned; where an upload
# failed, that the next attempt first asked the registry what the session holds. Prints how many faults
# were injected.
AREC=$1
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed (scripts/deps installs it)"
start_registry R own
start_fault_proxy P "$R"
use_registry "$P"

blob_put='/v2/.*/blobs/uploads/.*digest='
blob_get='/v2/.*/blobs/sha256:'
manifest='/v2/.*/manifests/'

# The image is at the registry exactly: the manifest by digest, and every blob byte for byte.
exact_at_registry() { # name digest
  local copy=$T/copies/$1
  mkdir -p "$T/copies"
  expect_eq "$2" "sha256:$(skopeo inspect --raw --tls-verify=false "docker://$R/$M/$1@$2" | sha256sum | cut -d' ' -f1)" \
    "digest of the manifest of $M/$1 at the registry"
  skopeo copy -q --src-tls-verify=false "docker://$R/$M/$1@$2" "oci:$copy:x" || fail "skopeo cannot copy $M/$1@$2"
  expect_eq 3 "$(same_blobs "$copy" "$AREC_STORE")" "blobs of $M/$1 copied back"
}

# push_survives NAME RULES [needle in the warnings]: a push through the faults completes, exact, and
# every fault fired. With ASKED_SESSIONS=1, each broken upload's session was asked about before its next
# use (expect_sessions_asked). @LAYER@ in RULES
# stands for the hex digest of the record's layer.
push_survives() {
  local name=$1 digest layer
  digest=$(record "$name" 300000)
  layer=$(jq -r '.layers[0].digest' "$AREC_STORE/blobs/sha256/${digest#sha256:}")
  faults "${2//@LAYER@/${layer#sha256:}}"
  expect_exit 0 "$AREC" push "$M/$name"
  expect_eq "$P/$M/$name@$digest" "$OUT" "output of the push of $name"
  [[ -z ${3:-} ]] || expect_contains "$ERR" "$3" "warnings of the push of $name"
  local fired sessions
  fired=$(expect_faults_fired)
  note "$name: $fired faults fired"
  if [[ ${ASKED_SESSIONS:-} == 1 ]]; then
    sessions=$(expect_sessions_asked)
    note "$name: $sessions upload requests failed, each session asked about before its next use"
  fi
  faults '[]'
  exact_at_registry "$name" "$digest"
}

# push_fails NAME RULES NEEDLE...: exit 3, one line naming the registry, the step and each needle.
push_fails() {
  local name=$1 rules=$2
  shift 2
  record "$name" 300000 >/dev/null
  faults "$rules"
  expect_exit 3 "$AREC" push "$M/$name"
  local fired
  fired=$(expect_faults_fired)
  note "$name: $fired faults fired"
  faults '[]'
  local last_line
  last_line=$(tail -n1 <<<"$ERR")
  expect_contains "$last_line" "arec: error: pushing $M/$name to $P: "
  for needle; do expect_contains "$last_line" "$needle" "error of the push of $name"; done
  note "$last_line"
  expect_not_contains "$OUT" "$M/$name@" "output of a failed push"
}

note "500 on the first two uploads: retried, exact"
ASKED_SESSIONS=1 push_survives e500 "[{\"method\": \"PUT\", \"path\": \"$blob_put\", \"fault\": \"status\", \"status\": 500, \"times\": 2}]" \
  "500 Internal Server Error"
note "500 on every upload: exit 3, saying what was tried and how often"
push_fails always500 "[{\"method\": \"PUT\", \"path\": \"$blob_put\", \"fault\": \"status\", \"status\": 500, \"times\": 1000}]" \
  "uploading blob sha256:" "500 Internal Server Error" "gave up after 5 attempts"

note "408 and 504: retried, exact"
ASKED_SESSIONS=1 push_survives e408 "[{\"method\": \"PUT\", \"path\": \"$blob_put\", \"fault\": \"status\", \"status\": 408}]" \
  "408 Request Timeout"
push_survives e504 "[{\"method\": \"POST\", \"path\": \"/blobs/uploads/\", \"fault\": \"status\", \"status\": 504, \"times\": 2}]" \
  "504 Gateway Timeout"

note "records whose manifests the registry has already: one request each, after the one version check"
expect_exit 0 "$AREC" push "$M/e500" "$M/e408"
# Reads only: the version check (and the probe of a plain-HTTP loopback registry), then per record a
# HEAD of its manifest and of its latest tag, the referrers API, the fallback tag, the SBOM's manifest and
# the record artifact's.
requests=$(fault_case | jq -r '.requests[].request' | sort)
expect_eq "" "$(grep -vE '^(GET|HEAD) ' <<<"$requests")" "writes of a push of records already there"
for r in e500 e408; do
  expect_contains "$requests" "HEAD /v2/$M/$r/manifests/$(grep "$r@" <<<"$OUT" | cut -d@ -f2)"
done
expect_eq 14 "$(wc -l <<<"$requests")" "requests of a push of records already there"

note "429 with Retry-After: 1: waited for, within the budget"
start=$(date +%s%N)
push_survives e429 "[{\"method\": \"HEAD\", \"path\": \"$manifest\", \"fault\": \"status\", \"status\": 429, \"code\": \"TOOMANYREQUESTS\", \"retry_after\": 1}]" \
  "trying again in 1000 ms"
(($(date +%s%N) - start >= 1000000000)) || fail "the push did not wait the second Retry-After asked for"
note "429 with a Retry-After past the budget: exit 3 at once, saying so"
start=$(date +%s%N)
AREC_RETRY_BUDGET=5 push_fails late429 \
  "[{\"method\": \"POST\", \"path\": \"/blobs/uploads/\", \"fault\": \"status\", \"status\": 429, \"retry_after\": 30, \"times\": 1000}]" \
  "429 Too Many Requests" "asked to wait 30 s (Retry-After)" "retry budget of 5 s (AREC_RETRY_BUDGET)"
(($(date +%s%N) - start < 4000000000)) || fail "a Retry-After past the budget was waited for"

note "connections reset mid-upload: the session asked about, then gone on with, exact"
# libcurl itself sends once more a request whose reused connection died before any answer, in the same
# session, and arec never learns of it; so each upload is reset twice in a row, and the second reset
# is one arec sees. (The layer's upload only: the config's, in parallel, would take one of the two.)
ASKED_SESSIONS=1 push_survives reset "[{\"method\": \"PUT\", \"path\": \"/blobs/uploads/.*digest=sha256(:|%3[aA])@LAYER@\", \"fault\": \"reset\", \"fraction\": 0.5, \"times\": 2}]"
AREC_CHUNK_SIZE=64k ASKED_SESSIONS=1 push_survives chunked "[{\"method\": \"PATCH\", \"path\": \"/blobs/uploads/\", \"fault\": \"reset\", \"fraction\": 0.3, \"times\": 2},
  {\"method\": \"PATCH\", \"path\": \"/blobs/uploads/\", \"fault\": \"status\", \"status\": 502, \"times\": 2}]" "502 Bad Gateway"
push_fails always_reset "[{\"method\": \"PUT\", \"path\": \"$blob_put\", \"fault\": \"reset\", \"times\": 1000}]" \
  "uploading blob sha256:" "gave up after"

note "answers cut short after the registry acted on the request: repeated, exact"
push_survives cut_blob "[{\"method\": \"PUT\", \"path\": \"$blob_put\", \"fault\": \"truncate\", \"times\": 2}]"
push_survives cut_manifest "[{\"method\": \"PUT\", \"path\": \"$manifest\", \"fault\": \"truncate\"},
  {\"method\": \"GET\", \"path\": \"^/v2/\$\", \"fault\": \"truncate\"}]"

note "slow answers: waited for"
push_survives slow "[{\"method\": \"HEAD\", \"path\": \"$blob_get\", \"fault\": \"slow\", \"delay\": 1.5},
  {\"method\": \"GET\", \"path\": \"^/v2/\$\", \"fault\": \"slow\", \"delay\": 0.5, \"piece\": 1, \"gap\": 0.3}]"
note "a registry that says nothing for longer than AREC_STALL_TIMEOUT: abandoned and tried again, or exit 3"
AREC_STALL_TIMEOUT=1 push_survives stalled "[{\"method\": \"HEAD\", \"path\": \"$blob_get\", \"fault\": \"slow\", \"delay\": 4}]" \
  "Operation too slow"
AREC_STALL_TIMEOUT=1 AREC_RETRY_BUDGET=3 push_fails always_stalled \
  "[{\"method\": \"HEAD\", \"path\": \"$blob_get\", \"fault\": \"slow\", \"delay\": 4, \"times\": 1000}]" \
  "checking blob sha256:" "Operation too slow" "gave up after"

note "a wrong Docker-Content-Digest: exit 3, never a success"
push_fails digest_blob "[{\"method\": \"PUT\", \"path\": \"$blob_put\", \"fault\": \"digest\"}]" \
  "uploading blob sha256:" "the registry reports Docker-Content-Digest sha256:"
push_fails digest_manifest "[{\"method\": \"PUT\", \"path\": \"$manifest\", \"fault\": \"digest\"}]" \
  "putting manifest sha256:" "the registry reports Docker-Content-Digest sha256:"

note "a proxy that claims what the registry never got: the registry refuses the manifest, exit 3"
push_fails lost_upload "[{\"method\": \"PUT\", \"path\": \"$blob_put\", \"fault\": \"status\", \"status\": 201, \"times\": 1000}]" \
  "putting manifest sha256:" "MANIFEST_BLOB_UNKNOWN"
push_fails lost_blob "[{\"method\": \"HEAD\", \"path\": \"$blob_get\", \"fault\": \"status\", \"status\": 200, \"times\": 1000}]" \
  "putting manifest sha256:" "MANIFEST_BLOB_UNKNOWN"

note "verify: retried through a 503; a wrong digest is reported as different, never as present"
faults "[{\"method\": \"HEAD\", \"path\": \"$manifest\", \"fault\": \"status\", \"status\": 503}]"
expect_exit 0 "$AREC" verify "$M/e500"
expect_contains "$OUT" "present    $M/e500@"
expect_faults_fired >/dev/null
faults "[{\"method\": \"HEAD\", \"path\": \"$manifest\", \"fault\": \"digest\"}]"
expect_exit 1 "$AREC" verify "$M/e500"
expect_contains "$OUT" "different  $M/e500@"
expect_faults_fired >/dev/null
faults '[]'
pushed=$(faults_injected)

note "pulls: content that does not match its digest is refused, and nothing of it is kept"
app=$(record app 300000)
# Pushed straight to the registry: the faults are for the pulls.
use_registry "$R"
"$AREC" push "$M/app" --tag v1 >/dev/null 2>&1
use_registry "$P"
layer=$(jq -r '.layers[0].digest' "$AREC_STORE/blobs/sha256/${app#sha256:}")
n=0
# pull_refused RULES REF NEEDLE...: exit 3 naming each needle; a store as sound as before, listing nothing.
pull_refused() {
  local rules=$1 ref=$2
  shift 2
  n=$((n + 1))
  faults "$rules"
  AREC_STORE=$T/pulled$n expect_exit 3 "$AREC" pull "$ref"
  expect_faults_fired >/dev/null
  faults '[]'
  expect_one_line_error "pulling $M/app"
  for needle; do expect_contains "$ERR" "$needle" "error of the pull of $ref"; done
  note "$ERR"
  AREC_STORE=$T/pulled$n expect_exit 0 "$AREC" check
  expect_eq "[]" "$(jq -c .manifests "$T/pulled$n/index.json")" "images listed after a refused pull"
  expect_eq "" "$(ls "$T/pulled$n/arec/tmp")" "temporaries left by a refused pull"
  [[ ! -e $T/pulled$n/blobs/sha256/${layer#sha256:} ]] || fail "the refused layer is in the store"
}
# Its record document is the first blob a pull of records reads, before anything is written.
pull_refused "[{\"method\": \"GET\", \"path\": \"$blob_get\", \"fault\": \"corrupt\", \"times\": 1000}]" "$M/app@$app" \
  "getting the document of the record artifact sha256:" "has the digest sha256:"
pull_refused "[{\"method\": \"GET\", \"path\": \"$blob_get\", \"fault\": \"corrupt\", \"times\": 1000}]" "$P/$M/app@$app" \
  "downloading blob sha256:" "has the digest sha256:"
pull_refused "[{\"method\": \"GET\", \"path\": \"$manifest\", \"fault\": \"corrupt\"}]" "$M/app@$app" \
  "the manifest the registry sent for $app has the digest"
pull_refused "[{\"method\": \"GET\", \"path\": \"$manifest\", \"fault\": \"corrupt\"}]" "$M/app:v1" \
  "the registry reports Docker-Content-Digest $app for content whose digest is sha256:"
pull_refused "[{\"method\": \"GET\", \"path\": \"$manifest\", \"fault\": \"digest\"}]" "$M/app:v1" \
  "the registry reports Docker-Content-Digest sha256:" "for content whose digest is $app"
pull_refused "[{\"method\": \"GET\", \"path\": \"$manifest\", \"fault\": \"corrupt\", \"drop_digest\": true}]" "$M/app:v1" \
  "getting manifest v1: the manifest the registry sent: malformed JSON"

note "a pull through answers cut short (with and without a Content-Length) and a 503: retried, the same bytes"
faults "[{\"method\": \"GET\", \"path\": \"$blob_get\", \"fault\": \"truncate\", \"times\": 2},
  {\"method\": \"GET\", \"path\": \"$blob_get\", \"fault\": \"truncate\", \"drop_length\": true},
  {\"method\": \"GET\", \"path\": \"$manifest\", \"fault\": \"status\", \"status\": 503}]"
AREC_STORE=$T/pulled expect_exit 0 "$AREC" pull "$M/app:v1"
expect_eq "$app" "$OUT" "pulled digest"
expect_faults_fired >/dev/null
AREC_STORE=$T/pulled expect_exit 0 "$AREC" check
expect_eq 6 "$(same_blobs "$T/pulled" "$AREC_STORE")" "pulled blobs identical to the store's (the image's and its SBOM's)"

total=$(faults_injected)
note "faults injected: $total ($pushed during pushes and verifies, $((total - pushed)) during pulls)"
((total >= 20)) || fail "only $total faults were injected; the test proved little"
echo "faults injected: $total"
echo PASS
