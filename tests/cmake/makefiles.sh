#!/usr/bin/env bash
# examples/mesh built with Unix Makefiles: two records, and a rebuild with nothing changed records nothing.
source "$(dirname "$0")/lib.sh"

store=$work/store
configure "$work/configure.log" "$AREC_TEST_SOURCE_DIR/examples/mesh" "$work/build" -G "Unix Makefiles" \
  -DCMAKE_PREFIX_PATH="$AREC_TEST_PREFIX" -DCMAKE_BUILD_TYPE=Release -DAREC_STORE="$store"
build "$work/build1.log" "$work/build" --parallel 2
expect_eq 2 "$(recordings_in "$work/build1.log")" "recordings in the first build"
expect_eq '[["mesh","builder","builder","Release"],["mesh","controlplane","controlplane","Release"]]' \
  "$(record_rows "$store")" "records"
check_store "$store"

history=$(records "$store" --history)
build "$work/build2.log" "$work/build" --parallel 2
expect_eq 0 "$(recordings_in "$work/build2.log")" "recordings in a rebuild with nothing changed"
expect_eq "$history" "$(records "$store" --history)" "history after a rebuild with nothing changed"
