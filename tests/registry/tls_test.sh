#!/usr/bin/env bash
# The scheme rule: HTTPS with certificate verification everywhere, trusting a CA given by --ca-file or
# AREC_CA_FILE; plain HTTP only to loopback or to a node marked insecure_registry, and there only when
# the server answers the handshake in plain HTTP (registry.loopback_tls covers TLS on loopback).
# An address that is not loopback is needed, and one that does not depend on this machine's names: the
# test runs in a network namespace of its own (unshare -n, as root) and gives its lo 10.99.0.1 and
# 10.99.0.2, which exist nowhere else. Its registries listen on fixed ports of that namespace.
AREC=$1
if [[ -z ${AREC_TLS_TEST_NAMESPACE:-} ]]; then
  if ! err=$(unshare -n true 2>&1); then
    echo "SKIP: cannot create a network namespace (unshare -n needs root or CAP_SYS_ADMIN): $err" >&2
    exit 77
  fi
  AREC_TLS_TEST_NAMESPACE=1 exec unshare -n bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"
ip link set lo up
ip addr add 10.99.0.1/32 dev lo
ip addr add 10.99.0.2/32 dev lo

# serve NAME PORT [TLS config]: docker-registry on every address of the namespace, stopped at the end.
serve() {
  local dir=$T/registries/$1 port=$2 tls=${3:-} scheme=http
  mkdir -p "$dir/data"
  [[ -n $tls ]] && scheme=https tls=", tls: {$tls}"
  printf 'version: 0.1\nlog: {level: warn, accesslog: {disabled: true}}\nstorage: {filesystem: {rootdirectory: %s}}\nhttp: {addr: ":%s"%s}\n' \
    "$dir/data" "$port" "$tls" >"$dir/config.yml"
  docker-registry serve "$dir/config.yml" >"$dir/log" 2>&1 &
  local pid=$!
  on_exit "kill $pid"
  for _ in $(seq 100); do
    [[ $(curl -sk -o /dev/null -w '%{http_code}' --max-time 1 "$scheme://10.99.0.1:$port/v2/" || true) == 200 ]] && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  fail "registry $1 did not start: $(cat "$dir/log")"
}

note "a CA and a server certificate for 10.99.0.1 (and localhost, 127.0.0.1), not for 10.99.0.2"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=arec test CA" \
  -keyout "$T/ca.key" -out "$T/ca.pem" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=arec test registry" -keyout "$T/server.key" -out "$T/server.csr" 2>/dev/null
printf 'subjectAltName=IP:10.99.0.1,DNS:localhost,IP:127.0.0.1\n' >"$T/san.ext"
openssl x509 -req -in "$T/server.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" -CAcreateserial -days 2 \
  -extfile "$T/san.ext" -out "$T/server.pem" 2>/dev/null
serve tls 5000 "certificate: $T/server.pem, key: $T/server.key"
serve plain 5001

use_registry 10.99.0.1:5000 10.99.0.1
app=$(record app 1000)

note "HTTPS verifies the certificate: unknown CA, exit 3"
expect_exit 3 "$AREC" push
expect_one_line_error "10.99.0.1:5000"
expect_contains "$ERR" "certificate"

note "--ca-file and AREC_CA_FILE trust the test CA"
expect_exit 0 "$AREC" push --ca-file "$T/ca.pem" --json
expect_eq "10.99.0.1:5000 2" "$(jq -r '"\(.registry) \(.uploaded)"' <<<"$OUT")" "registry and blobs uploaded"
AREC_CA_FILE=$T/ca.pem expect_exit 0 "$AREC" verify
expect_contains "$OUT" "present    $M/app@"
# Read back over HTTPS by another client trusting the same CA.
expect_eq 200 "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$T/ca.pem" -I \
  -H 'Accept: application/vnd.oci.image.manifest.v1+json' "https://10.99.0.1:5000/v2/$M/app/manifests/$app")" \
  "the manifest at the registry, through curl"

note "a certificate that does not name the address is refused, even from a trusted CA"
use_registry 10.99.0.2:5000 10.99.0.2
AREC_CA_FILE=$T/ca.pem expect_exit 3 "$AREC" verify
expect_one_line_error "10.99.0.2:5000"
expect_contains "$ERR" "10.99.0.2"

note "no plain HTTP to a node that is not loopback, unless it is marked insecure_registry"
use_registry 10.99.0.1:5001 10.99.0.1
expect_exit 3 "$AREC" verify
expect_one_line_error "10.99.0.1:5001"
use_registry 10.99.0.1:5001 10.99.0.1 true
expect_exit 1 "$AREC" verify
expect_contains "$OUT" "missing    $M/app@"

note "a plain-HTTP registry on loopback is spoken to in plain HTTP"
use_registry 127.0.0.1:5001
expect_exit 1 "$AREC" verify
expect_contains "$OUT" "missing    $M/app@"
echo PASS
