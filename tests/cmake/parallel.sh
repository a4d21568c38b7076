#!/usr/bin/env bash
# Sixteen recorded targets built with -j 16 into one new store: sixteen records, a valid store.
source "$(dirname "$0")/lib.sh"

store=$work/store
configure "$work/configure.log" "$AREC_TEST_PROJECTS/many" "$work/build" -DCMAKE_PREFIX_PATH="$AREC_TEST_PREFIX" \
  -DAREC_STORE="$store"
build "$work/build.log" "$work/build" --parallel 16
expect_eq 16 "$(recordings_in "$work/build.log")" "recordings in the build"
expected=$(for i in $(seq 16); do echo "many/program$i"; done | sort | paste -sd' ')
expect_eq "$expected" "$(records "$store" | jq -r '.[] | .module + "/" + .name' | sort | paste -sd' ')" "records"
expect_eq 16 "$(records "$store" --history | jq length)" "history length"
expect_eq 16 "$(records "$store" | jq '[.[].digest] | unique | length')" "distinct digests"
check_store "$store"
