#!/usr/bin/env bash
# Mistakes in arec_record() calls fail the configure step with a message naming them; a recording that
# fails fails the build with arec's own message, records nothing, and runs again once the cause is fixed.
#
# A FILES or DIRECTORIES source that does not exist fails the configure step naming it, unless a custom
# command (declared even after arec_record()) generates it: then it is recorded once made.
#
#   errors.sh unknown_keyword|missing_target|unsupported_type|other_directory|bad_module|bad_runtime|bad_user|
#             bad_package|missing_file|missing_directory|swallowed_keyword|generated|component_destination|
#             prefix_alone|bad_plugin|plugin_destination|missing_packages_info|component_twice|recording_fails
source "$(dirname "$0")/lib.sh"

case=$1
store=$work/store
arguments=(-DCMAKE_PREFIX_PATH="$AREC_TEST_PREFIX" -DAREC_STORE="$store" -DAREC_TEST_CASE="$case")

if [[ $case != recording_fails && $case != generated ]]; then
  if cmake -S "$AREC_TEST_PROJECTS/errors" -B "$work/build" -G Ninja -DCMAKE_CXX_COMPILER="$AREC_TEST_CXX" \
    "${arguments[@]}" >"$work/configure.log" 2>&1; then
    cat "$work/configure.log" >&2
    fail "configuring with the mistake \"$case\" succeeded"
  fi
  case $case in
    unknown_keyword) message='arec_record(app): unknown argument(s): MODUEL mesh (MODUEL: did you mean MODULE?)' ;;
    missing_file) message="arec_record(app) in CMakeLists.txt: FILES missing.conf: $AREC_TEST_PROJECTS/errors/missing.conf does not exist, and no custom command gives it as its OUTPUT" ;;
    missing_directory) message="arec_record(app) in CMakeLists.txt: DIRECTORIES static: $AREC_TEST_PROJECTS/errors/static does not exist, and" ;;
    swallowed_keyword) message="FILES DIRECTORYS: $AREC_TEST_PROJECTS/errors/DIRECTORYS does not exist (did you mean the keyword DIRECTORIES?)" ;;
    missing_target) message='arec_record(nothere): there is no target named "nothere"' ;;
    unsupported_type) message='arec_record(archive): target "archive" is a STATIC_LIBRARY' ;;
    other_directory) message="arec_record(elsewhere): target \"elsewhere\" is defined in $AREC_TEST_PROJECTS/errors/elsewhere" ;;
    bad_module) message='arec_record(app): MODULE "Mesh" is not a repository path component' ;;
    bad_runtime) message='arec_record(app): RUNTIME "static" is not one of auto, none' ;;
    bad_user) message='arec_record(app): USER "Admin:wheel" is not a user name or number, optionally followed by :group or :gid' ;;
    bad_package) message='arec_record(app): PACKAGES "libssl3 " is not a Debian package name, optionally followed by :arch' ;;
    component_destination) message='arec_record(app): DESTINATION does not go with COMPONENT' ;;
    prefix_alone) message='arec_record(app): PREFIX goes with COMPONENT' ;;
    bad_plugin) message='arec_record(app): PLUGINS: "archive" is not a MODULE or SHARED library the project builds' ;;
    plugin_destination) message='arec_record(app): PLUGINS plugin=/usr/lib/plugins/: with COMPONENT, the install rules say where a plugin goes' ;;
    missing_packages_info) message="arec_record(app): PACKAGES_INFO $AREC_TEST_PROJECTS/errors/nothere.json does not exist" ;;
    component_twice) message='arec_record(other): COMPONENT runtime is recorded by arec_record(app) already' ;;
    *) fail "unknown case $case" ;;
  esac
  # CMake wraps long messages; compare with the line breaks and indentation taken out.
  flat=$(tr -s ' \n' ' ' <"$work/configure.log")
  expect_contains "$flat" "$message" "the configure output"
  expect_contains "$flat" "CMakeLists.txt" "the configure output (the call site)"
  [[ ! -e $store ]] || fail "a failed configure step created the store"
  exit 0
fi

configure "$work/configure.log" "$AREC_TEST_PROJECTS/errors" "$work/build" "${arguments[@]}"
if [[ $case == generated ]]; then
  build "$work/build1.log" "$work/build"
  expect_eq "errors/app" "$(records "$store" | jq -r '.[] | .module + "/" + .name')" "records of a generated FILES source"
  "$AREC_TEST_AREC" --store "$store" inspect errors/app --files >"$work/files.txt" || fail "arec inspect errors/app"
  expect_contains "$(<"$work/files.txt")" "/etc/app.conf" "the files of errors/app"
  exit 0
fi
if cmake --build "$work/build" >"$work/build1.log" 2>&1; then
  cat "$work/build1.log" >&2
  fail "the build succeeded though the recording could not"
fi
expect_contains "$(<"$work/build1.log")" "arec: error: --file \"$work/build/app.conf\": No such file or directory" "the build output"
expect_eq 0 "$(records "$store" | jq length)" "records after the failed recording"

echo "listen = 8080" >"$work/build/app.conf"
build "$work/build2.log" "$work/build"
expect_eq 1 "$(recordings_in "$work/build2.log")" "recordings once app.conf exists"
expect_eq "errors/app" "$(records "$store" | jq -r '.[] | .module + "/" + .name')" "records once app.conf exists"
