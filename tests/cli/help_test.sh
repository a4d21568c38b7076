#!/usr/bin/env bash
# The help: `arec help COMMAND` is `arec COMMAND --help`; every page has examples and exit codes;
# `arec --help` lists every environment variable and where the store and node settings come from.
AREC=$1
source "$(dirname "$0")/../lib.sh"

expect_exit 0 "$AREC" --help
main=$OUT
expect_exit 0 "$AREC" help
expect_eq "$main" "$OUT" "arec help"
commands=$(sed -n '/^Subcommands:/,/^$/p' <<<"$main" | awk 'NR > 1 && NF { print $1 }')
for c in record records sbom ref check gc resolve compose push pull verify read-port needs-rebuild move help completion; do
  grep -qx "$c" <<<"$commands" || fail "arec --help lists no command $c: $commands"
done
expect_not_contains "$commands" "__man" "hidden commands"

note "where the store and the node settings come from, and every variable"
expect_contains "$main" "The store is --store, else AREC_STORE, else \$XDG_DATA_HOME/arec/store, else ~/.local/share/arec/store."
expect_contains "$main" "The node settings are --nodes, else AREC_NODES, else built in: one node \"local\" (this machine)"
for v in AREC_STORE AREC_NODES AREC_SELF AREC_CA_FILE AREC_DEFAULT_CONFIG AREC_THREADS AREC_SYNC AREC_LOCK_TIMEOUT AREC_CHUNK_SIZE \
  AREC_RETRY_BUDGET AREC_STALL_TIMEOUT AREC_MIN_RATE SOURCE_DATE_EPOCH XDG_DATA_HOME HOME DOCKER_CONFIG REGISTRY_AUTH_FILE XDG_RUNTIME_DIR; do
  grep -qE "^  $v +[A-Za-z]" <<<"$main" || fail "arec --help does not list $v"
done
expect_contains "$main" "  AREC_THREADS         Compression threads of record, unless --threads. Default: all cores. Accepts
                       a whole number from 1 to 256."
long=$(sed -n '/^Environment/,$p' <<<"$main" | awk 'length > 100')
expect_eq "" "$long" "lines of the environment list longer than 100 columns"

note "each command's page: the same from help and --help, with a description, examples and exit codes"
for c in $commands; do
  expect_exit 0 "$AREC" help "$c"
  page=$OUT
  expect_exit 0 "$AREC" "$c" --help
  expect_eq "$page" "$OUT" "arec help $c and arec $c --help"
  expect_contains "$page" "Usage: arec $c" "page of $c"
  expect_contains "$page" "Examples:
  " "page of $c"
  examples=$(sed -n '/^Examples:/,/^$/p' <<<"$page" | grep -c '^  [^ ]') || true
  ((examples >= 1 && examples <= 3)) || fail "page of $c has $examples examples"
  expect_contains "$page" "Exit codes: 0 " "page of $c"
done
expect_exit 0 "$AREC" help check
expect_contains "$OUT" "Exit codes: 0 the store is sound, 1 a problem was found, 2 bad input or usage."
expect_exit 0 "$AREC" help gc
expect_contains "$OUT" "  arec gc --keep 3
      Keeps the newest 3 records of each module/name and the blobs they need."

note "--version: version, commit and the libraries"
expect_exit 0 "$AREC" --version
mapfile -t lines <<<"$OUT"
expect_eq 5 "${#lines[@]}" "lines of --version: $OUT"
[[ ${lines[0]} =~ ^arec\ [0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "version line: ${lines[0]}"
[[ ${lines[1]} =~ ^commit\ ([0-9a-f]{7,}|v[^ ]+|unknown)(-dirty)?$ ]] || fail "commit line: ${lines[1]}"
[[ ${lines[2]} =~ ^libarchive\ [0-9]+\.[0-9]+ ]] || fail "libarchive line: ${lines[2]}"
[[ ${lines[3]} =~ ^OpenSSL\ [0-9]+\.[0-9]+ ]] || fail "OpenSSL line: ${lines[3]}"
[[ ${lines[4]} =~ ^libcurl\ [0-9]+\.[0-9]+ ]] || fail "libcurl line: ${lines[4]}"
libcurl=$(curl --version | head -1 | grep -o 'libcurl/[0-9.]*')
expect_eq "libcurl ${libcurl#libcurl/}" "${lines[4]}" "libcurl version"
echo PASS
