#!/usr/bin/env bash
# Verified bytes only: a tag is read once, and the digest it named then is what is judged, fetched and
# stored. A proxy in front of a real registry answers the tag `latest` with the team's signed image on
# one read and the intruder's unsigned image on the next (faultproxy.py's flip, every other read).
# Whichever read a trusting pull or `record --base` gets first, what it stores is what it judged: the
# team's image, or nothing (exit 4). The proxy's report shows the tag asked for once.
AREC=$1
source "$(dirname "$0")/../signing/lib.sh"
trust_setup python3 jq curl
team=$(AREC_SIGNING_KEY=$T/team.key record app)
expect_exit 0 "$AREC" push "$M/app"
evil=$(AREC_STORE=$T/evil record app)
AREC_STORE=$T/evil expect_exit 0 "$AREC" push "$M/app" --no-latest --tag evil
start_fault_proxy P "$R"
use_registry "$P"
export AREC_TRUST_KEYS=$T/team.pub
# flip EVERY: the tag answered with the intruder's image on every EVERYth read of it: 2, the second,
# fourth...; 1, each.
flip() {
  faults "[{\"method\": \"GET\", \"path\": \"/v2/$M/app/manifests/latest\$\", \"fault\": \"flip\",
            \"to\": \"/v2/$M/app/manifests/evil\", \"every\": $1, \"times\": 100}]"
}
tag_reads() { fault_case | jq "[.requests[].request | select(test(\"^GET /v2/$M/app/manifests/latest\$\"))] | length"; }
holds() { [[ -e $T/$1/blobs/sha256/${2#sha256:} ]]; }
# pulled_team STORE: the pull printed the team's digest, read the tag once, and STORE holds the team's
# manifest and not the intruder's.
pulled_team() {
  expect_eq "$team" "$OUT" "the digest pulled"
  expect_eq 1 "$(tag_reads)" "reads of the tag"
  holds "$1" "$team" || fail "the team's manifest is not in the store"
  ! holds "$1" "$evil" || fail "the intruder's manifest is in the store"
}

note "a trusting pull whose first read is the team's: the team's image is stored, never the second read"
flip 2
AREC_STORE=$T/a expect_exit 0 "$AREC" pull "$M/app"
pulled_team a
expect_eq "$team" "$(AREC_STORE=$T/a "$AREC" records --json | jq -r '.[0].digest')" "the record pulled"

note "a trusting pull whose first read is the intruder's: refused, nothing stored"
flip 1
AREC_STORE=$T/b expect_exit 4 "$AREC" pull "$M/app"
expect_one_line_error "the record $M/app@$evil is unsigned"
expect_eq 1 "$(tag_reads)" "reads of the tag"
expect_eq 0 "$(find "$T/b/blobs" -type f 2>/dev/null | wc -l)" "blobs of the refused pull"

note "a trusting pull of the image by its host reference: the image judged is the image stored"
flip 2
AREC_STORE=$T/h expect_exit 0 "$AREC" pull "$P/$M/app:latest"
pulled_team h

note "record --base of the tag: the base judged is the base recorded on"
mkdir -p src && echo tool >src/tool
flip 2
AREC_STORE=$T/c expect_exit 0 "$AREC" record --module "$M" --name tool --dir src=/srv --runtime none \
  --base "$P/$M/app:latest"
expect_eq "$team" "$(AREC_STORE=$T/c "$AREC" records --json | jq -r '.[0].base')" "the base recorded"
expect_eq 1 "$(tag_reads)" "reads of the tag"
! holds c "$evil" || fail "the intruder's manifest is in the store"
flip 1
AREC_STORE=$T/d expect_exit 4 "$AREC" record --module "$M" --name tool --dir src=/srv --runtime none \
  --base "$P/$M/app:latest"
expect_one_line_error "$M/app@$evil is unsigned: no bundle verifies under a trusted key; nothing written"
expect_eq "" "$(AREC_STORE=$T/d "$AREC" records)" "records after the refused base"
echo "ok: trust toctou"
