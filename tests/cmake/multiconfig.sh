#!/usr/bin/env bash
# examples/mesh built with Ninja Multi-Config: Debug and Release are both recorded, each record with its
# configuration, and rebuilding either with nothing changed records nothing.
source "$(dirname "$0")/lib.sh"

store=$work/store
configure "$work/configure.log" "$AREC_TEST_SOURCE_DIR/examples/mesh" "$work/build" -G "Ninja Multi-Config" \
  -DCMAKE_PREFIX_PATH="$AREC_TEST_PREFIX" -DAREC_STORE="$store"
build "$work/debug.log" "$work/build" --config Debug
build "$work/release.log" "$work/build" --config Release
expect_eq 2 "$(recordings_in "$work/debug.log")" "recordings in the Debug build"
expect_eq 2 "$(recordings_in "$work/release.log")" "recordings in the Release build"
expect_eq '[["mesh","builder","builder","Debug"],["mesh","builder","builder","Release"],["mesh","controlplane","controlplane","Debug"],["mesh","controlplane","controlplane","Release"]]' \
  "$(record_rows "$store" --history)" \
  "history"
for name in controlplane builder; do
  expect_eq 2 "$(records "$store" --history | jq --arg n "$name" '[.[] | select(.name == $n) | .digest] | unique | length')" \
    "distinct digests of mesh/$name in Debug and Release"
done
check_store "$store"

history=$(records "$store" --history)
for config in Debug Release; do
  build "$work/again-$config.log" "$work/build" --config "$config"
  expect_eq 0 "$(recordings_in "$work/again-$config.log")" "recordings in a $config rebuild with nothing changed"
done
expect_eq "$history" "$(records "$store" --history)" "history after rebuilds with nothing changed"
