#!/usr/bin/env bash
# `arec read-port`: a port, or nothing said (the sealed value stands), or "not a port" (exit 2).
AREC=$1
source "$(dirname "$0")/../lib.sh"
export AREC_STORE=$T/store SOURCE_DATE_EPOCH=0
unset AREC_NODES AREC_SELF

expect_exit 0 "$AREC" read-port 6852 --sealed 5000
expect_eq "6852" "$OUT"
expect_eq "" "$ERR" "stderr for a port"

# Empty: nothing said, quietly.
expect_exit 0 "$AREC" read-port "" --sealed 5000
expect_eq "5000" "$OUT"
expect_eq "" "$ERR" "stderr for an empty value"

# An unfilled request: nothing said, loudly, naming it. Never "not a port".
expect_exit 0 "$AREC" read-port "arec://port/store" --sealed 5432
expect_eq "5432" "$OUT"
expect_contains "$ERR" "warning: unfilled request arec://port/store"
expect_contains "$ERR" "the sealed port 5432 stands"
expect_exit 0 "$AREC" read-port "arec://port/store" --sealed 5432 --json
expect_eq '{"port":5432,"request":"arec://port/store","said":"unfilled request"}' "$OUT"

# Nothing said and nothing sealed: an empty line.
expect_exit 0 "$AREC" read-port ""
expect_eq "" "$OUT"

# Garbage is still an error.
for value in abc 0 65536 5000x " 50 00" "http://x"; do
  expect_exit 2 "$AREC" read-port "$value" --sealed 5000
  expect_contains "$ERR" "\"$value\" is not a port"
  expect_eq "" "$OUT"
done
expect_exit 2 "$AREC" read-port 80 --sealed 70000
echo "read-port: ok"
