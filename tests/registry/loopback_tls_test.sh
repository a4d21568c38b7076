#!/usr/bin/env bash
# A registry on a loopback address (an ssh tunnel, a port-forward) is tried over HTTPS first, verified:
# a TLS registry there is used with --ca-file, and refused without it (exit 3, no fall back to plain
# HTTP); a plain HTTP registry there answers the handshake in plain HTTP and is used over HTTP. The
# scheme is decided once per run.
AREC=$1
source "$(dirname "$0")/lib.sh"
command -v skopeo >/dev/null || skip "skopeo is not installed (scripts/deps installs it)"

# A self-signed certificate for the address itself, as a tunnel to a TLS registry presents.
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" \
  -keyout "$T/server.key" -out "$T/server.pem" 2>/dev/null
start_registry R tls --tls "$T/server.pem" "$T/server.key"
use_registry "$R"  # node n1 has no address and is self: reached by loopback
app=$(record app 1000)

note "the certificate is not trusted: exit 3, saying to use --ca-file, and nothing sent over plain HTTP"
expect_exit 3 "$AREC" -v push
expect_contains "$ERR" "$R"
expect_contains "$ERR" "certificate"
expect_contains "$ERR" "--ca-file"
expect_not_contains "$ERR" "http://" "requests"

note "with --ca-file: pushed over HTTPS, where skopeo finds it by its latest tag"
expect_exit 0 "$AREC" -v push --ca-file "$T/server.pem" --json
expect_eq "$R 2" "$(jq -r '"\(.registry) \(.uploaded)"' <<<"$OUT")" "registry and blobs uploaded"
expect_not_contains "$ERR" "http://" "requests"
expect_eq "$app" "$(skopeo inspect --tls-verify=false --no-tags "docker://$R/$M/app:latest" | jq -r .Digest)" "digest at tag latest"
AREC_CA_FILE=$T/server.pem expect_exit 0 "$AREC" verify

note "a plain HTTP registry on loopback: HTTPS tried once, then plain HTTP for the whole run"
use_registry "$REG"
other=$(record other 300000)
expect_exit 0 "$AREC" -v push --json
expect_eq "$M/other $other" "$(jq -r '.images[] | select(.repository == "'"$M/other"'") | "\(.repository) \(.digest)"' <<<"$OUT")" "pushed"
expect_eq 1 "$(grep -c "GET https://$REG/v2/\$" <<<"$ERR")" "HTTPS attempts"
expect_eq 0 "$(grep -c "https://$REG/v2/$M" <<<"$ERR" || true)" "HTTPS requests after the first"
expect_contains "$ERR" "answers in plain HTTP"
expect_eq "$other" "$(skopeo inspect --tls-verify=false --no-tags "docker://$REG/$M/other:latest" | jq -r .Digest)" "digest at tag latest"
expect_exit 0 "$AREC" verify
echo PASS
