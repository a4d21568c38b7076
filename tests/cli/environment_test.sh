#!/usr/bin/env bash
# The environment is read once and checked the same way for every variable: a bad value is one line
# naming the variable, the value and what it accepts, exit 2, and nothing written. Flags take the
# place of their variables; the defaults hold when nothing is set.
AREC=$1
source "$(dirname "$0")/../lib.sh"
unset AREC_STORE AREC_NODES AREC_SELF AREC_CA_FILE AREC_DEFAULT_CONFIG AREC_THREADS AREC_SYNC AREC_LOCK_TIMEOUT AREC_CHUNK_SIZE \
  AREC_RETRY_BUDGET AREC_STALL_TIMEOUT AREC_MIN_RATE SOURCE_DATE_EPOCH
export AREC_STORE=$T/store
echo app >"$T/app"
"$AREC" record --module mesh --name app --file "$T/app" >/dev/null
before=$(tree_state "$T/store")

bad() { # VARIABLE VALUE message
  env "$1=$2" "$AREC" record --module mesh --name other --file "$T/app" >"$T/.out" 2>"$T/.err" && fail "$1=$2 was accepted"
  local rc=$?
  expect_eq 2 "$rc" "exit code with $1=$2"
  expect_eq "arec: error: $1=$2: $3" "$(cat "$T/.err")" "error with $1=$2"
  expect_eq "" "$(cat "$T/.out")" "stdout with $1=$2"
  expect_eq "$before" "$(tree_state "$T/store")" "store after $1=$2"
}
bad AREC_THREADS abc "not a count (a whole number from 1 to 256)"
bad AREC_DEFAULT_CONFIG "Rel ease" "not a configuration (1 to 64 of A-Z, a-z, 0-9 and _)"
bad AREC_THREADS 0 "at least 1"
bad AREC_SYNC yes "not a switch (on or off)"
bad AREC_LOCK_TIMEOUT 3junk "not a duration (seconds, more than 0 and at most 86400, e.g. 2.5)"
bad AREC_RETRY_BUDGET 5x "not a duration (seconds from 0 to 86400, e.g. 2.5)"
bad AREC_STALL_TIMEOUT soon "not a duration (whole seconds from 1 to 86400)"
bad AREC_MIN_RATE 0 "at least 1"
bad AREC_MIN_RATE 2G "too large (at most 1G)"
bad AREC_MIN_RATE slow "not a rate (bytes a second from 1 to 1G, or a whole number with k, M or G, e.g. 4k)"
bad AREC_CHUNK_SIZE 12X "not a size (bytes from 64k to 64G, or a whole number with k, M or G, e.g. 64M)"
bad SOURCE_DATE_EPOCH yesterday "not a time (whole seconds since 1970-01-01 UTC, 0 or more)"

note "a bad variable is refused whatever the command, and where a flag takes its place"
AREC_RETRY_BUDGET=5x expect_exit 2 "$AREC" records
expect_eq "arec: error: AREC_RETRY_BUDGET=5x: not a duration (seconds from 0 to 86400, e.g. 2.5)" "$ERR"
AREC_THREADS=abc expect_exit 2 "$AREC" record --threads 2 --module mesh --name other --file "$T/app"
expect_eq "arec: error: AREC_THREADS=abc: not a count (a whole number from 1 to 256)" "$ERR"
expect_eq "$before" "$(tree_state "$T/store")" "store"

note "an empty variable is unset"
AREC_THREADS= SOURCE_DATE_EPOCH= AREC_SYNC= expect_exit 0 "$AREC" records
expect_contains "$OUT" "mesh/app"

note "--store takes the place of AREC_STORE, which is not touched"
AREC_STORE=$T/env-store expect_exit 0 "$AREC" --store "$T/flag-store" record --module mesh --name app --file "$T/app"
[[ -f $T/flag-store/index.json ]] || fail "--store was not used"
[[ ! -e $T/env-store ]] || fail "AREC_STORE was used although --store was given"
AREC_STORE=$T/env-store expect_exit 0 "$AREC" record --module mesh --name app --file "$T/app"
[[ -f $T/env-store/index.json ]] || fail "AREC_STORE was not used"

note "--nodes and --self take the place of AREC_NODES and AREC_SELF"
cat >"$T/a.json" <<'JSON'
{"self": "a", "nodes": {"a": {"address": "10.0.0.1", "ports": {"registry": 5000}}, "b": {"address": "10.0.0.2"}},
 "services": {"registry": "a"}}
JSON
cat >"$T/b.json" <<'JSON'
{"self": "b", "nodes": {"a": {"address": "10.0.0.9", "ports": {"registry": 6000}}, "b": {"address": "10.0.0.2"}},
 "services": {"registry": "a"}}
JSON
AREC_NODES=$T/a.json expect_exit 0 "$AREC" resolve registry --json
expect_eq "10.0.0.1:5000 $T/a.json" "$(jq -r '"\(.endpoint) \(.settings)"' <<<"$OUT")" "AREC_NODES"
AREC_NODES=$T/a.json expect_exit 0 "$AREC" --nodes "$T/b.json" resolve registry --json
expect_eq "10.0.0.9:6000 $T/b.json" "$(jq -r '"\(.endpoint) \(.settings)"' <<<"$OUT")" "--nodes over AREC_NODES"
AREC_NODES=$T/a.json AREC_SELF=nosuch expect_exit 2 "$AREC" resolve registry
expect_contains "$ERR" '--self "nosuch": no such node'
AREC_NODES=$T/a.json AREC_SELF=nosuch expect_exit 0 "$AREC" --self b resolve registry

note "without AREC_STORE the store is under XDG_DATA_HOME, else under HOME"
env -u AREC_STORE XDG_DATA_HOME="$T/data" "$AREC" record --module mesh --name app --file "$T/app" >/dev/null
[[ -f $T/data/arec/store/index.json ]] || fail "no store under XDG_DATA_HOME"
env -u AREC_STORE -u XDG_DATA_HOME HOME="$T/home" "$AREC" record --module mesh --name app --file "$T/app" >/dev/null
[[ -f $T/home/.local/share/arec/store/index.json ]] || fail "no store under HOME/.local/share"

note "SOURCE_DATE_EPOCH sets every mtime: the same digest for the same value, another for another"
mkdir -p "$T/in" && echo x >"$T/in/f"
one=$(SOURCE_DATE_EPOCH=1700000000 "$AREC" --store "$T/s1" record --module m --name n --dir "$T/in=/opt" --sbom none)
again=$(SOURCE_DATE_EPOCH=1700000000 "$AREC" --store "$T/s2" record --module m --name n --dir "$T/in=/opt" --sbom none)
zero=$("$AREC" --store "$T/s3" record --module m --name n --dir "$T/in=/opt" --sbom none)
expect_eq "$one" "$again" "same SOURCE_DATE_EPOCH"
expect_ne "$one" "$zero" "SOURCE_DATE_EPOCH against the default 0"
layer=$(jq -r '.layers[0].digest' "$T/s1/blobs/sha256/$(cut -d: -f2 <<<"${one#*@}")")
expect_eq "2023-11-14 22:13" "$(TZ=UTC tar -tvzf "$T/s1/blobs/sha256/${layer#sha256:}" opt/f | awk '{ print $4, $5 }')" "mtime of /opt/f"
echo PASS
