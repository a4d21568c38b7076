#!/usr/bin/env bash
# Every numeric flag of every command, as the manual page lists them, fed extreme values: each is
# refused by its range, in one line naming the command, the flag, the value and the bound (exit 2),
# never a crash (134), a wrap-around or a CLI11 conversion message. A numeric flag that is not read
# by read_number shows CLI11's own type name (INT, UINT, FLOAT) in the manual, and fails here.
AREC=$1
source "$(dirname "$0")/../lib.sh"
export AREC_STORE=$T/store
"$AREC" __man "$T/arec.1" || fail "arec __man"

# "CMD --flag TYPE" for every option of every command that takes a value.
flags=$(awk '
  /^\.SS "arec / { cmd = $3; gsub(/"|\\/, "", cmd); next }
  /^\.SH / { cmd = "" }
  cmd != "" && /^\\fB\\-\\-/ {
    flag = $1; gsub(/\\fB|\\fR|\\/, "", flag)
    type = $0; sub(/^[^ ]* /, "", type); gsub(/\\fI|\\fR|\\/, "", type)
    if (type != "" && type != $0) print cmd, flag, type
  }' "$T/arec.1")
[[ -n $flags ]] || fail "no options read from the manual page"

numeric=0
while read -r cmd flag type; do
  case $type in
    *INT* | *FLOAT* | *NUMBER*) fail "arec $cmd $flag takes $type: a number not read by read_number (no range)" ;;
    N | SIZE | PORT) ;;
    *) continue ;;
  esac
  numeric=$((numeric + 1))
  for value in 0 -1 +1 1e400 0x10 abc " 7" 99999999999999999999999 9223372036854775808 18446744073709551616 \
    "$(printf '9%.0s' {1..400})"; do
    expect_exit 2 "$AREC" "$cmd" "$flag" "$value"
    expect_contains "$ERR" "arec: error: $cmd: $flag $value: "
    expect_contains "$ERR" " (see arec $cmd --help)"
    case $ERR in
      *": at least "* | *": at most "* | *": too large (at most "* | *": not a "*" ("*")"*) ;;
      *) fail "arec $cmd $flag $value: the refusal names no range: $ERR" ;;
    esac
  done
done <<<"$flags"
# record --threads, gc --keep, push --chunk-size, push/pull/move --jobs, read-port --sealed, move --port
((numeric >= 8)) || fail "only $numeric numeric flags found in the manual page"

note "values met in use: a huge thread count, a chunk size past int64, a one-byte chunk"
expect_exit 2 "$AREC" record --module m --name n --file "$T/none" --threads 40000
expect_eq "arec: error: record: --threads 40000: at most 256 (see arec record --help)" "$ERR"
expect_exit 2 "$AREC" push --chunk-size 1000000000000000000
expect_eq "arec: error: push: --chunk-size 1000000000000000000: too large (at most 64G) (see arec push --help)" "$ERR"
expect_exit 2 "$AREC" push --chunk-size 1
expect_eq "arec: error: push: --chunk-size 1: at least 64k (see arec push --help)" "$ERR"
[[ ! -e $AREC_STORE ]] || fail "a refused flag wrote the store"
echo PASS
