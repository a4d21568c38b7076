#!/usr/bin/env bash
# Two fresh build trees of examples/mesh, at different paths, with the same compiler and SOURCE_DATE_EPOCH
# and with debug information (which names paths unless they are mapped), record the same digests.
source "$(dirname "$0")/lib.sh"

export SOURCE_DATE_EPOCH=1700000000
# A compiler launcher from the caller's environment (ccache with base_dir) rewrites the paths the module
# maps, which is the developer's setup, not what is tested.
unset CMAKE_CXX_COMPILER_LAUNCHER CMAKE_C_COMPILER_LAUNCHER
for tree in one two/deeper; do
  configure "$work/configure.log" "$AREC_TEST_SOURCE_DIR/examples/mesh" "$work/$tree/build" \
    -DCMAKE_PREFIX_PATH="$AREC_TEST_PREFIX" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAREC_STORE="$work/$tree/store"
  build "$work/build.log" "$work/$tree/build"
done
for repo in mesh/controlplane mesh/builder; do
  first=$(digest_of "$work/one/store" "$repo")
  [[ $first == sha256:* ]] || fail "no record of $repo in the first tree's store"
  expect_eq "$first" "$(digest_of "$work/two/deeper/store" "$repo")" "digest of $repo in the second tree"
done
