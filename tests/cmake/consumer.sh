#!/usr/bin/env bash
# A consumer project gets arec through find_package (from the install prefix), add_subdirectory or
# FetchContent (of this source tree), and records a shared library and a program built on its image with
# the same calls.
#
#   consumer.sh find_package|add_subdirectory|fetchcontent
source "$(dirname "$0")/lib.sh"

mode=$1
store=$work/store
# Without a build type: single-config builds record no configuration. Where the consumer compiles arec,
# it does so as a unity build: that takes half the CPU of one file at a time, and proves arec's sources
# stay fit for it (no two files define the same name in an anonymous namespace).
unity=()
[[ $mode == find_package ]] || unity=(-DCMAKE_UNITY_BUILD=ON)
configure "$work/configure.log" "$AREC_TEST_PROJECTS/consumer" "$work/build" -DAREC_CONSUME="$mode" \
  -DCMAKE_PREFIX_PATH="$AREC_TEST_PREFIX" -DAREC_SOURCE_DIR="$AREC_TEST_SOURCE_DIR" -DAREC_STORE="$store" "${unity[@]}"
build "$work/build.log" "$work/build" --parallel 2
expect_eq 2 "$(recordings_in "$work/build.log")" "recordings in the build"
expect_eq '[["consumer","greeting","greeting",null],["consumer","hello","hello",null]]' \
  "$(record_rows "$store")" "records"
check_store "$store"

# The library's image holds it under its file name and its SONAME.
expect_eq "./usr/local/lib/libgreeting.so.1 ./usr/local/lib/libgreeting.so.1.0.0" \
  "$(image_files "$store" consumer/greeting)" "files of consumer/greeting"

# The program's image is built on the library's.
expect_eq "$(digest_of "$store" consumer/greeting)" "$(records "$store" | jq -r '.[] | select(.name == "hello") | .base')" \
  "the base of consumer/hello"
expect_eq "./usr/local/bin/hello ./usr/local/lib/libgreeting.so.1 ./usr/local/lib/libgreeting.so.1.0.0" \
  "$(image_files "$store" consumer/hello)" "files of consumer/hello"

case $mode in
  find_package) grep -qF "$AREC_TEST_PREFIX/bin/arec" "$work/build/build.ninja" || fail "the recording does not run the installed arec" ;;
  add_subdirectory) [[ -x $work/build/arec/cli/arec ]] || fail "add_subdirectory did not build arec in the consumer's tree" ;;
  fetchcontent) [[ -x $work/build/_deps/arec-build/cli/arec ]] || fail "FetchContent did not build arec in the consumer's tree" ;;
esac
