#!/usr/bin/env bash
# Usage errors: one line naming the word, the nearest known one when there is one, the command's page
# to read; exit 2, and nothing written.
AREC=$1
source "$(dirname "$0")/../lib.sh"
export AREC_STORE=$T/store
echo app >"$T/app"
"$AREC" record --module mesh --name app --file "$T/app" >/dev/null
before=$(tree_state "$T/store")

usage() { # message args...
  local message=$1
  shift
  expect_exit 2 "$AREC" "$@"
  expect_eq "arec: error: $message" "$ERR" "arec $*"
  expect_eq "" "$OUT" "stdout of arec $*"
  expect_eq "$before" "$(tree_state "$T/store")" "store after arec $*"
}

note "unknown commands and options, with the nearest"
usage 'unknown command "recrod"; did you mean "record"?' recrod --module m --name n
usage 'unknown command "recods"; did you mean "records"?' recods
usage 'unknown command "frobnicate" (see arec --help)' frobnicate
usage 'unknown command "recrod"; did you mean "record"?' help recrod
usage 'unknown option "--stroe"; did you mean "--store"? (see arec --help)' --stroe "$T/x"
usage 'records: unknown option "--stroe"; did you mean "--store"? (see arec records --help)' --stroe "$T/x" records
usage 'records: unknown option "--jsn"; did you mean "--json"? (see arec records --help)' records --jsn
usage 'records: unknown option "--hitsory"; did you mean "--history"? (see arec records --help)' records --hitsory
usage 'push: unknown option "--tga"; did you mean "--tag"? (see arec push --help)' push --tga 1
usage 'records: unknown option "--verbse"; did you mean "--verbose"? (see arec records --help)' records --verbse
usage 'records: unknown option "--zzzzzz" (see arec records --help)' records --zzzzzz
usage 'ref: unexpected argument "b/c" (see arec ref --help)' ref a/b b/c
usage 'no command given (see arec --help)'
usage 'no command given (see arec --help)' -v

note "a subcommand's usage errors point to its page"
usage 'record: --module is required (see arec record --help)' record --name app --file "$T/app"
usage 'ref: reference is required (see arec ref --help)' ref
usage 'record: --module was given 2 times; give it once (see arec record --help)' record --module a --module b --name n --file "$T/app"
usage 'records: --store was given 2 times; give it once (see arec records --help)' --store a records --store b
usage 'gc: --keep 0: at least 1 (see arec gc --help)' gc --keep 0
usage 'gc: --keep x: not a count (a whole number from 1 to 1000000000) (see arec gc --help)' gc --keep x
usage 'push: --jobs many: not a count (a whole number from 1 to 64) (see arec push --help)' push --jobs many
usage 'push: --jobs -1: not a count (a whole number from 1 to 64) (see arec push --help)' push --jobs -1
usage 'records: --store needs a value (DIR) (see arec records --help)' records --store
usage 'record: --module needs a value (TEXT) (see arec record --help)' record --module
usage 'completion: shell "tcsh": expected bash, zsh or fish' completion tcsh

note "-q and -v together are refused, naming both"
usage 'records: --verbose and --quiet cannot be used together (see arec records --help)' -q -v records
usage 'records: --verbose and --quiet cannot be used together (see arec records --help)' records -v -q

note "--jobs 0 is refused by push and move alike"
usage 'push: --jobs 0: at least 1 (see arec push --help)' push --jobs 0
usage 'move: --jobs 0: at least 1 (see arec move --help)' move --to n2 --jobs 0

note "a misspelt option is named with the nearest known one, not as the required option it left out"
usage 'record: unknown option "--modul"; did you mean "--module"? (see arec record --help)' record --modul mesh --name app --file "$T/app"
echo PASS
