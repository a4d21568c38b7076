#!/usr/bin/env bash
# arec ref: the canonical form, the exact JSON shape, and invalid references named by their bad part.
AREC=$1
source "$(dirname "$0")/../lib.sh"

d=sha256:$(printf '%064d' 0 | tr 0 a)

# expect_ref REF CANONICAL JSON
expect_ref() {
  expect_exit 0 "$AREC" ref "$1"
  expect_eq "$2" "$OUT" "arec ref $1"
  expect_exit 0 "$AREC" ref "$1" --json
  expect_eq "$3" "$OUT" "arec ref $1 --json"
}

note "canonical form and JSON, key order included"
expect_ref "10.20.0.11:5000/mesh/builder:1.2@$d" "10.20.0.11:5000/mesh/builder:1.2@$d" \
  "{\"domain\":\"10.20.0.11:5000\",\"path\":\"mesh/builder\",\"tag\":\"1.2\",\"digest\":\"$d\",\"segments\":2}"
expect_ref "10.20.0.11:5000/builder" "10.20.0.11:5000/builder" \
  '{"domain":"10.20.0.11:5000","path":"builder","tag":"","digest":"","segments":1}'
expect_ref "localhost/a/b/c:v1" "localhost/a/b/c:v1" \
  '{"domain":"localhost","path":"a/b/c","tag":"v1","digest":"","segments":3}'
expect_ref "localhost:5000/mesh/cp@$d" "localhost:5000/mesh/cp@$d" \
  "{\"domain\":\"localhost:5000\",\"path\":\"mesh/cp\",\"tag\":\"\",\"digest\":\"$d\",\"segments\":2}"
# No domain: none is invented, and a first component without '.', ':' or "localhost" is path.
expect_ref "mesh/builder:latest" "mesh/builder:latest" \
  '{"domain":"","path":"mesh/builder","tag":"latest","digest":"","segments":2}'
expect_ref "busybox" "busybox" '{"domain":"","path":"busybox","tag":"","digest":"","segments":1}'
expect_ref "[::1]:5000/x" "[::1]:5000/x" '{"domain":"[::1]:5000","path":"x","tag":"","digest":"","segments":1}'

note "invalid: exit 2, one line naming the offending part"
expect_exit 2 "$AREC" ref "mesh/Builder"
expect_one_line_error 'reference "mesh/Builder": repository path component "Builder" must be lowercase'
# 255 characters for the whole name, domain included: example.com/ and 243 more.
long=$(printf 'a%.0s' $(seq 243))
expect_ref "example.com/$long" "example.com/$long" \
  "{\"domain\":\"example.com\",\"path\":\"$long\",\"tag\":\"\",\"digest\":\"\",\"segments\":1}"
expect_exit 2 "$AREC" ref "example.com/${long}a" --json
expect_one_line_error 'name is 256 characters, more than 255 (domain and path together)'
expect_eq "" "$OUT" "stdout of a name too long"
# Upper case does not make a domain: refused as docker refuses it, not read as a registry "Mesh".
expect_exit 2 "$AREC" ref "Mesh/controlplane"
expect_one_line_error 'reference "Mesh/controlplane": repository path component "Mesh" must be lowercase'
expect_eq "" "$OUT" "stdout of an invalid reference"
expect_exit 2 "$AREC" ref "mesh/builder@sha256:abc"
expect_one_line_error 'reference "mesh/builder@sha256:abc": digest "sha256:abc": sha256 needs 64 hex characters, got 3'
upper=sha256:$(printf '%064d' 0 | tr 0 A)
expect_exit 2 "$AREC" ref "mesh/builder@$upper"
expect_one_line_error "digest \"$upper\": 'A' is not lowercase hex"
expect_exit 2 "$AREC" ref "10.20.0.11:port/x"
expect_one_line_error 'port "port" is not a number'
echo PASS
