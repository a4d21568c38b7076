#!/usr/bin/env bash
# Every read from a registry is bounded. A catalog whose Link goes round in circles, or on for ever;
# a manifest declaring a 1 TB layer; a layer announced longer than its manifest says; a registry that
# trickles a byte every half second: each fails within seconds, exit 3, naming what was wrong, with
# bounded memory and nothing left in the store.
AREC=$1
source "$(dirname "$0")/hostile.sh"

note "a catalog whose next page is itself: exit 3 at the second page"
start_hostile catalog-loop
timed 10000 3 "$AREC" needs-rebuild --catalog
expect_one_line_error "links back to a page it already sent"
expect_eq 2 "$(grep -c '_catalog' "$HOSTILE_LOG")" "catalog pages requested"

note "a catalog that goes on for ever: exit 3 at the bound on names, memory bounded"
start_hostile catalog-endless
measure=()
[[ -x /usr/bin/time ]] && measure=(/usr/bin/time -v -o "$T/time")
timed 60000 3 "${measure[@]}" "$AREC" needs-rebuild --catalog
expect_one_line_error "holds more than 1000000 names; arec reads no more"
pages=$(grep -c '_catalog' "$HOSTILE_LOG")
((pages <= 101)) || fail "$pages catalog pages requested, more than the bound allows"
if [[ -s $T/time ]]; then
  rss=$(max_rss_kib "$T/time")
  note "largest resident set: $rss KiB after $pages pages"
  ((rss < 400000)) || fail "reading the catalog took $rss KiB"
fi
note "move reads the catalog the same way: its plan says the catalog was not read, and why"
: >"$HOSTILE_LOG"
timed 60000 0 "$AREC" move --to n1 --port 5001
expect_contains "$OUT$ERR" "holds more than 1000000 names" "move's plan"
pages=$(grep -c '_catalog' "$HOSTILE_LOG")
((pages <= 101)) || fail "move requested $pages catalog pages"

note "a manifest declaring a 1 TB layer: refused before a byte of it is written"
start_hostile huge-layer
timed 10000 3 "$AREC" pull "$HOSTILE/evil/huge:latest"
expect_one_line_error "bytes of blobs to download, more than the"
expect_eq 0 "$(grep -c '"GET", "path": "/v2/evil/huge/blobs/sha256:abab' "$HOSTILE_LOG" || true)" "layer downloads started"
expect_eq "" "$(find "$AREC_STORE" -type f -size +1M)" "large files in the store"

note "a layer announced with a Content-Length its manifest does not allow: abandoned before its first byte"
start_hostile long-layer
timed 10000 3 "$AREC" pull "$HOSTILE/evil/long:latest"
expect_one_line_error "the registry announces 1099511627776 bytes for"
expect_contains "$ERR" "more than the 1048576 its descriptor says" "error"
expect_eq "" "$(find "$AREC_STORE" -type f -size +1M)" "large files in the store"

note "a registry trickling a byte every 0.5 s: abandoned after AREC_STALL_TIMEOUT below AREC_MIN_RATE"
start_hostile trickle
AREC_STALL_TIMEOUT=2 timed 15000 3 "$AREC" pull "$HOSTILE/evil/slow:latest"
expect_one_line_error "evil/slow"
expect_contains "$ERR" "too slow" "error"
