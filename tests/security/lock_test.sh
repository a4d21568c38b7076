#!/usr/bin/env bash
# A process holding the store's locks forever blocks no reader and makes no writer wait forever:
# `arec records` and `arec check` answer at once, `arec record` and `arec gc` give up after AREC_LOCK_TIMEOUT seconds
# (default 120) with exit 2 and one line naming the lock, and the store stays as it was.
AREC=$1
source "$(dirname "$0")/../lib.sh"
command -v flock >/dev/null || skip "flock is not installed"
export AREC_STORE=$T/store AREC_LOCK_TIMEOUT=1.5
echo app >"$T/app"
"$AREC" record --module sec --name app --file "$T/app" >/dev/null
echo more >>"$T/app"
before=$(cat "$AREC_STORE/index.json")

# hold MODE FILE: this shell holds FILE's lock (fd 9) until release; arec opens the file anew, so
# inheriting the descriptor gives it nothing.
hold() {
  exec 9>>"$2"
  flock "-$1" -n 9 || fail "could not take $2"
}
release() { exec 9>&-; }

note "the index lock held: records reads at once, record and gc give up after 1.5 s"
hold x "$AREC_STORE/arec/lock"
timed 3000 0 "$AREC" records
expect_contains "$OUT" "sec/app "
timed 3000 0 "$AREC" check
timed 6000 2 "$AREC" record --module sec --name app --file "$T/app"
((ELAPSED >= 1400)) || fail "record gave up after $ELAPSED ms, before the 1.5 s asked for"
expect_one_line_error "locking $AREC_STORE/arec/lock: still held by another process after 1.5 s (AREC_LOCK_TIMEOUT)"
timed 6000 2 "$AREC" gc
expect_one_line_error "locking $AREC_STORE/arec/lock: still held by another process after 1.5 s"
release
# The refused record's blobs are complete (content-addressed, for gc to remove); the index is untouched.
expect_eq "$before" "$(cat "$AREC_STORE/index.json")" "index.json after the refused writers"
expect_eq "" "$(ls "$AREC_STORE/arec/tmp")" "temporaries after the refused writers"
expect_exit 0 "$AREC" check

note "the writers' lock held exclusively (as gc holds it): record gives up, saying what it waited for"
hold x "$AREC_STORE/arec/writers.lock"
timed 3000 0 "$AREC" records
timed 6000 2 "$AREC" record --module sec --name app --file "$T/app"
expect_one_line_error "waiting for a garbage collection to finish: locking $AREC_STORE/arec/writers.lock: still held"
release

note "the writers' lock held shared (as a recorder holds it): record goes on, gc gives up"
hold s "$AREC_STORE/arec/writers.lock"
timed 6000 0 "$AREC" record --module sec --name app --file "$T/app"
timed 6000 2 "$AREC" gc
expect_one_line_error "waiting for recorders to finish: locking $AREC_STORE/arec/writers.lock: still held"
release
expect_exit 0 "$AREC" gc
expect_exit 0 "$AREC" check
echo PASS
