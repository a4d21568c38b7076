#!/usr/bin/env bash
# The scheme rule: plain HTTP only to loopback or to a node marked insecure_registry; HTTPS with
# certificate verification elsewhere, trusting a CA given by --ca-file or AREC_CA_FILE.
AREC=$1
source "$(dirname "$0")/lib.sh"
# A name that is not "localhost" yet reaches this machine: Debian maps the host name to 127.0.x.1.
name=$(hostname)
[[ $(getent hosts "$name" | awk '{print $1; exit}') == 127.0.0.1 ]] || skip "$name does not resolve to 127.0.0.1"

openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=arec test CA" \
  -keyout "$T/ca.key" -out "$T/ca.pem" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=$name" -keyout "$T/server.key" -out "$T/server.csr" 2>/dev/null
printf 'subjectAltName=DNS:%s\n' "$name" >"$T/san.ext"
openssl x509 -req -in "$T/server.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" -CAcreateserial -days 2 \
  -extfile "$T/san.ext" -out "$T/server.pem" 2>/dev/null
start_registry R tls --tls "$T/server.pem" "$T/server.key"
use_registry "$R" "$name"
record app 1000 >/dev/null

note "HTTPS verifies the certificate: unknown CA, exit 3"
expect_exit 3 "$AREC" push
expect_contains "$ERR" "$name:${R##*:}"
expect_contains "$ERR" "certificate"

note "--ca-file and AREC_CA_FILE trust the test CA"
expect_exit 0 "$AREC" push --ca-file "$T/ca.pem" --json
expect_eq "$name:${R##*:} 2" "$(jq -r '"\(.registry) \(.uploaded)"' <<<"$OUT")" "registry and blobs uploaded"
AREC_CA_FILE=$T/ca.pem expect_exit 0 "$AREC" verify

note "no plain HTTP to a node that is not loopback, unless it is marked insecure_registry"
use_registry "$REG" "$name"
expect_exit 3 "$AREC" verify
use_registry "$REG" "$name" true
expect_exit 1 "$AREC" verify
expect_contains "$OUT" "missing    $M/app@"
echo PASS
