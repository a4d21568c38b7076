#!/usr/bin/env bash
# examples/mesh built with Ninja through find_package(Arec): two records that run in their images; a
# rebuild with nothing changed runs no recording and changes no record; a touched source relinks and
# records nothing new; a changed source records exactly one new digest.
source "$(dirname "$0")/lib.sh"

src=$work/mesh
cp -r "$AREC_TEST_SOURCE_DIR/examples/mesh" "$src"
store=$work/store
configure "$work/configure.log" "$src" "$work/build" -DCMAKE_PREFIX_PATH="$AREC_TEST_PREFIX" \
  -DCMAKE_BUILD_TYPE=Release -DAREC_STORE="$store"

build "$work/build1.log" "$work/build"
expect_eq 2 "$(recordings_in "$work/build1.log")" "recordings in the first build"
expect_eq '[["mesh","builder","builder","Release"],["mesh","controlplane","controlplane","Release"]]' \
  "$(record_rows "$store")" "records"
check_store "$store"
expect_eq "controlplane 1.0.0" "$(run_image "$store" mesh/controlplane --version)" "controlplane run in its image"
expect_eq "builder 1.0.0: ready (role builder)" "$(run_image "$store" mesh/builder)" "builder run in its image"

history=$(records "$store" --history)
build "$work/build2.log" "$work/build"
# Only the signing key's check runs (at every build: the build's environment may give another key).
# (Ninja counts the recording steps it then finds it need not run: restat.)
expect_eq "Checking the signing key" "$(grep -E '^\[[0-9]+/[0-9]+\]' "$work/build2.log" | cut -d' ' -f2-)" \
  "the steps a rebuild with nothing changed runs"
expect_eq 0 "$(recordings_in "$work/build2.log")" "recordings in a rebuild with nothing changed"
expect_eq "$history" "$(records "$store" --history)" "history after a rebuild with nothing changed"

# Same content, newer time: the program relinks and is recorded again, to the digest already recorded.
touch "$src/controlplane.cpp"
build "$work/build3.log" "$work/build"
expect_contains "$(<"$work/build3.log")" "Linking CXX executable controlplane" "a rebuild after touching controlplane.cpp"
expect_eq 1 "$(recordings_in "$work/build3.log")" "recordings after touching controlplane.cpp"
expect_eq "$history" "$(records "$store" --history)" "history after touching controlplane.cpp"

old_controlplane=$(digest_of "$store" mesh/controlplane)
old_builder=$(digest_of "$store" mesh/builder)
sed -i 's/: ready/: ready again/' "$src/controlplane.cpp"
build "$work/build4.log" "$work/build"
expect_eq 1 "$(recordings_in "$work/build4.log")" "recordings after changing controlplane.cpp"
expect_eq 3 "$(records "$store" --history | jq length)" "history length after changing controlplane.cpp"
new_controlplane=$(digest_of "$store" mesh/controlplane)
expect_ne "$old_controlplane" "$new_controlplane" "the digest of mesh/controlplane after changing controlplane.cpp"
expect_eq "$new_controlplane" "$(records "$store" --history | jq -r '.[-1].digest')" "the newest history entry"
expect_eq "$old_builder" "$(digest_of "$store" mesh/builder)" "builder's digest after changing controlplane.cpp"
expect_eq "controlplane 1.0.0: ready again" "$(run_image "$store" mesh/controlplane)" "the new controlplane in its image"
check_store "$store"
