#!/usr/bin/env bash
# runtime.containerd: images recorded to run as services, run by a real containerd (its own, started
# here) with runc, imported from `arec export` as a user would. A C program linking OpenSSL, recorded
# with --user nonroot --package tzdata and no base: it runs as 65532 and getpwuid names nonroot, OpenSSL's
# default file holds the CA bundle arec added (said on one info line), Europe/Berlin's summer time is CEST,
# /tmp is writable; the SBOM names tzdata and ca-certificates. Recorded without --user it runs as 65532
# too (nonroot by default), and with --user root as root, which inspect shows. Then HTTPS: the program verifies a TLS server
# of this test's own CA when that CA is recorded under /usr/local/share/ca-certificates (arec adds it to the
# bundle), and refuses it without. One script for both: one containerd start, one compile.
AREC=$1
source "$(dirname "$0")/../lib.sh"
command -v cc >/dev/null || skip "no C compiler"
[[ -f /usr/include/openssl/ssl.h ]] || skip "libssl-dev is not installed (scripts/deps)"
for package in tzdata ca-certificates; do
  [[ $(dpkg-query -W -f='${Status}' "$package" 2>/dev/null) == *" installed" ]] || skip "$package is not installed (scripts/deps)"
done
start_containerd
export AREC_STORE=$T/store

cc -O1 -o "$T/service" "$(dirname "$0")/service.c" -lssl -lcrypto || fail "compiling service.c"

note "recorded with --user nonroot --package tzdata: run by containerd"
expect_exit 0 "$AREC" record --module runtime --name service --file "$T/service" --user nonroot --package tzdata \
  --entrypoint /usr/local/bin/service
expect_contains "$ERR" "arec: info: added the CA certificates of ca-certificates " "the record's output"
expect_contains "$ERR" "since the image holds /usr/lib/x86_64-linux-gnu/libssl.so.3" "the record's output"
expect_eq 1 "$(grep -c 'CA certificates' <<<"$ERR")" "lines naming the CA certificates"
note "refused before anything is written: a package not installed, a user the base does not name"
expect_exit 2 "$AREC" record --module runtime --name refused --file "$T/service" --package arec-not-a-package
expect_one_line_error "--package arec-not-a-package: not installed for amd64 on this machine; install it with apt-get install arec-not-a-package:amd64"
base=$("$AREC" records runtime/service --json | jq -r '.[0].digest')
expect_exit 2 "$AREC" record --module runtime --name refused --file "$T/service" --base runtime/service --user app
expect_one_line_error "--user app: the base image $base names no such user; give a user it names, or a number"
expect_exit 0 "$AREC" records runtime/refused
expect_eq "" "$OUT" "records of runtime/refused"
# On a base, a name is the base's own: nonroot, from the passwd arec wrote into runtime/service.
expect_exit 0 "$AREC" record --module runtime --name onbase --file "$T/service=/usr/local/bin/other" --base runtime/service --user nonroot
expect_eq 65532:65532 "$("$AREC" inspect runtime/onbase --json | jq -r .config.user)" "the user of runtime/onbase"

# run NAME ID ARGS...: the latest record of runtime/NAME, exported, imported and run once.
run() {
  local name=$1 id=$2
  shift 2
  "$AREC" export "runtime/$name" -o "$T/$name.tar" >/dev/null || fail "arec export runtime/$name"
  ctr images import "$T/$name.tar" >"$T/import.log" 2>&1 || fail "ctr images import: $(tail -3 "$T/import.log")"
  ctr run --rm --net-host "runtime/$name" "$id" /usr/local/bin/service "$@"
}
facts=$(run service "$$-facts" facts) || fail "the service failed in its container: $facts"
expect_contains "$facts" "uid=65532 user=nonroot" "the user, by getpwuid"
expect_eq "verify_paths=1 file=/usr/lib/ssl/cert.pem" "$(grep verify_paths <<<"$facts" | sed 's/ certs=[0-9]*//')" "OpenSSL's default paths"
certs=$(sed -n 's/.* certs=\([0-9]*\) .*/\1/p' <<<"$facts")
((certs > 50)) || fail "OpenSSL's default file holds $certs certificates, expected more than 50: $facts"
expect_contains "$facts" "tz=CEST" "Europe/Berlin in summer"
expect_contains "$facts" "tmp=writable" "/tmp for nonroot"
sbom=$("$AREC" sbom runtime/service) || fail "arec sbom"
for package in tzdata ca-certificates libssl3; do
  version=$(dpkg-query -W -f='${Version}' "$package")
  expect_eq "$version" "$(jq -r --arg p "$package" '.packages[] | select(.name == $p) | .versionInfo' <<<"$sbom")" "$package in the SBOM"
done
expect_contains "$(jq -r '.packages[].externalRefs[]?.referenceLocator' <<<"$sbom")" "pkg:deb/debian/tzdata@" "tzdata's purl (the OS, a package too, has none)"

note "--no-ca-certificates: no bundle, no info line; without --user, nonroot (65532:65532) runs it"
expect_exit 0 "$AREC" record --module runtime --name bare --file "$T/service" --no-ca-certificates
expect_not_contains "$ERR" "CA certificates" "the record's output"
"$AREC" inspect runtime/bare --files >"$T/bare.txt" || fail "arec inspect runtime/bare"
expect_not_contains "$(<"$T/bare.txt")" "ca-certificates" "the files of runtime/bare"
expect_eq "user        65532:65532" "$(grep '^user ' "$T/bare.txt")" "inspect's user line of runtime/bare"
expect_eq 65532:65532 "$("$AREC" inspect runtime/bare --json | jq -r .config.user)" "the config's User of runtime/bare"
facts=$(run bare "$$-bare" facts) || fail "runtime/bare failed in its container: $facts"
expect_contains "$facts" "uid=65532 user=nonroot" "runtime/bare's user, by getpwuid"

note "--user root asks for root, and says so"
expect_exit 0 "$AREC" record --module runtime --name asroot --file "$T/service" --no-ca-certificates --user root
expect_contains "$ERR" "arec: info: the image runs as root, as --user root asks" "the record's output"
expect_eq "user        0:0 (root)" "$("$AREC" inspect runtime/asroot | grep '^user ')" "inspect's user line of runtime/asroot"
facts=$(run asroot "$$-asroot" facts) || fail "runtime/asroot failed in its container: $facts"
expect_contains "$facts" "uid=0 user=root" "runtime/asroot's user, by getpwuid"

note "HTTPS to a server of this test's CA: verified with the CA recorded, refused without"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T/ca.key" -out "$T/ca.pem" -days 2 \
  -subj "/CN=arec runtime test CA" 2>/dev/null || fail "making the CA"
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T/server.key" -out "$T/server.csr" \
  -subj "/CN=localhost" 2>/dev/null || fail "making the server's key"
printf 'subjectAltName=DNS:localhost\n' >"$T/ext"
openssl x509 -req -in "$T/server.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" -CAcreateserial -out "$T/server.pem" -days 2 \
  -extfile "$T/ext" 2>/dev/null || fail "signing the server's certificate"
python3 "$(dirname "$0")/tls_server.py" "$T/server.pem" "$T/server.key" >"$T/port" 2>"$T/server.log" &
server=$!
on_exit "kill $server"
for _ in $(seq 50); do [[ -s $T/port ]] && break; sleep 0.1; done
port=$(cat "$T/port")
[[ -n $port ]] || fail "the TLS server did not start: $(cat "$T/server.log")"
expect_exit 0 "$AREC" record --module runtime --name https --file "$T/service" --file "$T/ca.pem=/usr/local/share/ca-certificates/arec-test.crt"
expect_eq "verified 127.0.0.1:$port" "$(run https "$$-https" connect "$port")" "the service with the test's CA"
out=$(run service "$$-no-ca" connect "$port") && fail "the service verified the server without its CA: $out"
expect_contains "$out" "not verified: unable to get local issuer certificate" "the service without the test's CA"
echo PASS
