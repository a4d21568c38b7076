#!/usr/bin/env bash
# Every record gets an SPDX 2.3 SBOM of its layer, kept in the store as a referrer of its image:
# valid against the SPDX 2.3 schema, naming the Debian package of a system library it holds once (with
# the version dpkg reports, a purl naming this machine's distribution, its DEP-5 licence) and the SHA-256
# of every file of no package, the package's files left to the package; the same for the same inputs;
# gone with --sbom none; a CycloneDX one beside it with --sbom spdx,cyclonedx; the record's digest is the
# same either way.
AREC=$1
source "$(dirname "$0")/../lib.sh"
SCHEMA=$(dirname "$0")/spdx-schema-2.3.json
export AREC_STORE=$T/store
python3 -c 'import jsonschema' 2>/dev/null || skip "python3-jsonschema is not installed (scripts/deps installs it)"
libcrypto=/usr/lib/x86_64-linux-gnu/libcrypto.so.3
[[ -f $libcrypto ]] || skip "$libcrypto is not here (libssl3 on amd64 is what this test reads the dpkg database for)"
ssl_version=$(dpkg-query -W -f='${Version}' libssl3) || skip "dpkg-query knows no libssl3"

validate() { # file
  python3 - "$SCHEMA" "$1" <<'PY' || fail "$1 is not valid SPDX 2.3"
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))
PY
}

mkdir -p "$T/in"
printf 'int main(void) { return 0; }\n' >"$T/in/hello.c"
cc -o "$T/in/hello" "$T/in/hello.c" || skip "no C compiler"
# The library is named under /lib, as a loader would find it: merged /usr makes it /usr/lib's file.
image=$("$AREC" record --module demo --name hello --file "$T/in/hello" --file "/lib/x86_64-linux-gnu/libcrypto.so.3=$libcrypto")
digest=${image#*@}

note "arec sbom prints the document; it is valid SPDX 2.3"
expect_exit 0 "$AREC" sbom demo/hello
printf '%s' "$OUT" >"$T/sbom.json"
validate "$T/sbom.json"
expect_eq "SPDX-2.3" "$(jq -r .spdxVersion "$T/sbom.json")" "spdxVersion"
expect_eq "1970-01-01T00:00:00Z" "$(jq -r .creationInfo.created "$T/sbom.json")" "created (SOURCE_DATE_EPOCH unset)"
expect_contains "$(jq -r .documentNamespace "$T/sbom.json")" "${digest#sha256:}" "namespace"

note "the program's SHA-256, and the Debian package of libcrypto.so.3 with dpkg's version and a purl, named once"
expect_eq "$(sha256sum <"$T/in/hello" | cut -d' ' -f1)" \
  "$(jq -r '.files[] | select(.fileName == "./usr/local/bin/hello") | .checksums[] | select(.algorithm == "SHA256") | .checksumValue' "$T/sbom.json")" "hello's SHA256"
expect_eq "./usr/local/bin/hello" "$(jq -r '[.files[].fileName | select(startswith("./usr/"))] | join(" ")' "$T/sbom.json")" \
  "the files under /usr listed: the program only (libcrypto.so.3 is libssl3's)"
expect_eq "libssl3 $ssl_version" "$(jq -r '.packages[] | select(.name == "libssl3") | "\(.name) \(.versionInfo)"' "$T/sbom.json")" "package"
expect_eq "installed by dpkg as libssl3:amd64 $ssl_version" "$(jq -r '.packages[] | select(.name == "libssl3") | .sourceInfo' "$T/sbom.json")" \
  "the package as dpkg knows it"
# The build machine's distribution names it: os-release's ID and the release a scanner reads (Trivy's purls).
os_id=$(. /etc/os-release && echo "$ID")
release=$(if [[ $os_id == debian ]]; then head -1 /etc/debian_version; else . /etc/os-release && echo "$VERSION_ID"; fi)
purl="pkg:deb/$os_id/libssl3@$ssl_version?arch=amd64&distro=$os_id-$release"
expect_eq "$purl" \
  "$(jq -r '.packages[] | select(.name == "libssl3") | .externalRefs[] | select(.referenceType == "purl") | .referenceLocator' "$T/sbom.json")" "purl"
expect_contains "$(jq -r '.packages[] | select(.name == "libssl3") | .licenseDeclared' "$T/sbom.json")" "Apache-2.0" \
  "libssl3's licence, from its DEP-5 copyright file"
expect_contains "$(jq -r '.packages[] | select(.name == "libssl3") | .supplier' "$T/sbom.json")" "Organization: Debian OpenSSL Team" "supplier"
hello_id=$(jq -r '.files[] | select(.fileName == "./usr/local/bin/hello") | .SPDXID' "$T/sbom.json")
ssl_id=$(jq -r '.packages[] | select(.name == "libssl3") | .SPDXID' "$T/sbom.json")
rel() { jq -r --arg a "$1" --arg b "$2" '.relationships[] | select(.spdxElementId == $a and .relatedSpdxElement == $b) | .relationshipType' "$T/sbom.json"; }
expect_eq CONTAINS "$(rel SPDXRef-Package-record "$ssl_id")" "the record's package contains libssl3"
expect_eq CONTAINS "$(rel SPDXRef-Package-record "$hello_id")" "the record's package contains hello"
expect_eq DESCRIBES "$(rel SPDXRef-DOCUMENT SPDXRef-Package-record)" "the document describes the record"
expect_eq "demo/hello" "$(jq -r '.packages[] | select(.SPDXID == "SPDXRef-Package-record") | .name' "$T/sbom.json")" "record package"

note "in the store: an artifact manifest whose subject is the image, listed in index.json, not a record"
entry=$(jq -c --arg d "$digest" '.manifests[] | select(.annotations["dev.arec.subject"] == $d)' "$AREC_STORE/index.json")
expect_eq "application/spdx+json" "$(jq -r .artifactType <<<"$entry")" "index.json artifactType"
sbom_manifest=$AREC_STORE/blobs/sha256/$(jq -r '.digest | sub("sha256:"; "")' <<<"$entry")
expect_eq "$digest application/spdx+json application/vnd.oci.empty.v1+json" \
  "$(jq -r '"\(.subject.digest) \(.artifactType) \(.config.mediaType)"' "$sbom_manifest")" "subject, artifactType, config"
expect_eq "$(jq -r '.layers[0].digest' "$sbom_manifest")" "sha256:$(sha256sum <"$T/sbom.json" | cut -d' ' -f1)" \
  "arec sbom prints the stored blob byte for byte"
expect_eq 1 "$("$AREC" records --history --json | jq length)" "records"
expect_exit 0 "$AREC" check --json
expect_eq "true 1" "$(jq -r '"\(.ok) \(.records)"' <<<"$OUT")" "check"
skopeo inspect "oci:$AREC_STORE:demo/hello" >/dev/null || fail "skopeo cannot read the record beside its SBOM"

note "the same inputs give the same SBOM: again in this store (nothing written), in another store, with 1 and 2 threads"
before=$(sha256sum <"$AREC_STORE/index.json")
expect_eq "$image" "$("$AREC" record --module demo --name hello --file "$T/in/hello" --file "/lib/x86_64-linux-gnu/libcrypto.so.3=$libcrypto")" "again"
expect_eq "$before" "$(sha256sum <"$AREC_STORE/index.json")" "index.json after recording the same again"
sbom_digest() { jq -r --arg d "$2" '.manifests[] | select(.annotations["dev.arec.subject"] == $d) | .digest' "$1/index.json"; }
for threads in 1 2; do
  other=$("$AREC" record --store "$T/s$threads" --threads "$threads" --module demo --name hello --file "$T/in/hello" \
    --file "/lib/x86_64-linux-gnu/libcrypto.so.3=$libcrypto")
  expect_eq "$image" "$other" "digest with $threads threads"
  expect_eq "$(sbom_digest "$AREC_STORE" "$digest")" "$(sbom_digest "$T/s$threads" "$digest")" "SBOM with $threads threads"
done
SOURCE_DATE_EPOCH=1700000000 "$AREC" record --store "$T/sde" --module demo --name hello --file "$T/in/hello" >/dev/null
expect_eq "2023-11-14T22:13:20Z" "$("$AREC" sbom --store "$T/sde" demo/hello | jq -r .creationInfo.created)" "created from SOURCE_DATE_EPOCH"

note "build outputs alone: one package, the record's, holding every file"
mkdir -p "$T/tree/bin" "$T/tree/share"
echo a >"$T/tree/bin/a"
echo b >"$T/tree/share/b"
ln -s a "$T/tree/bin/c"
"$AREC" record --module demo --name tree --dir "$T/tree=/opt/tree" --revision 0123456789abcdef0123456789abcdef01234567 >/dev/null
"$AREC" sbom demo/tree >"$T/tree.json"
validate "$T/tree.json"
expect_eq "opt/tree/bin/a opt/tree/share/b" "$(jq -r '[.files[].fileName | sub("^\\./"; "")] | join(" ")' "$T/tree.json")" "files (regular files only, sorted)"
expect_eq "1 0123456789abcdef0123456789abcdef01234567" \
  "$(jq -r '"\(.packages | length) \(.packages[0].versionInfo)"' "$T/tree.json")" "one package, the revision its version"

note "--sbom none: no SBOM, the same image digest; recording with one later adds it"
image_none=$("$AREC" record --store "$T/none" --sbom none --module demo --name hello --file "$T/in/hello" \
  --file "/lib/x86_64-linux-gnu/libcrypto.so.3=$libcrypto")
expect_eq "$image" "$image_none" "digest with --sbom none"
expect_eq 1 "$(jq '.manifests | length' "$T/none/index.json")" "index.json entries with --sbom none"
expect_exit 2 "$AREC" sbom --store "$T/none" demo/hello
expect_one_line_error "no SBOM was recorded"
"$AREC" record --store "$T/none" --module demo --name hello --file "$T/in/hello" --file "/lib/x86_64-linux-gnu/libcrypto.so.3=$libcrypto" >/dev/null
expect_eq "$(sbom_digest "$AREC_STORE" "$digest")" "$(sbom_digest "$T/none" "$digest")" "SBOM added to the record made without one"
expect_eq 1 "$("$AREC" records --store "$T/none" --history --json | jq length)" "still one record"

note "--sbom spdx,cyclonedx: a CycloneDX document beside it, of the same facts, a referrer of its own"
cyclonedx=$("$AREC" record --store "$T/both" --sbom spdx,cyclonedx --module demo --name hello --file "$T/in/hello" \
  --file "/lib/x86_64-linux-gnu/libcrypto.so.3=$libcrypto")
expect_eq "$image" "$cyclonedx" "the image with both SBOMs"
expect_eq "$(sbom_digest "$AREC_STORE" "$digest")" \
  "$(jq -r --arg d "$digest" '.manifests[] | select(.annotations["dev.arec.subject"] == $d and .artifactType == "application/spdx+json") | .digest' "$T/both/index.json")" \
  "the SPDX SBOM, the same beside a CycloneDX one"
"$AREC" sbom --store "$T/both" --format cyclonedx demo/hello >"$T/cdx.json"
expect_eq "CycloneDX 1.6 container demo/hello" "$(jq -r '"\(.bomFormat) \(.specVersion) \(.metadata.component.type) \(.metadata.component.name)"' "$T/cdx.json")" "the CycloneDX document"
expect_eq "$purl" "$(jq -r '.components[] | select(.name == "libssl3") | .purl' "$T/cdx.json")" "libssl3's purl in CycloneDX"
expect_eq "$(sha256sum <"$T/in/hello" | cut -d' ' -f1)" \
  "$(jq -r '.components[] | select(.name == "/usr/local/bin/hello") | .hashes[] | select(.alg == "SHA-256") | .content' "$T/cdx.json")" "hello's SHA-256 in CycloneDX"
expect_eq "deb:libc6:amd64" "$(jq -r '.dependencies[] | select(.ref == "file:usr/local/bin/hello") | .dependsOn | join(" ")' "$T/cdx.json")" \
  "what hello needs at run time: libc6 (its loader and libc.so.6)"
expect_eq "$(jq -r '.metadata.timestamp' "$T/cdx.json")" "$(jq -r .creationInfo.created "$T/sbom.json")" "the two documents' time"

note "bad input"
expect_exit 2 "$AREC" record --sbom xml --module demo --name x --file "$T/in/hello"
expect_one_line_error '--sbom "xml": expected spdx, cyclonedx, both separated by a comma (spdx,cyclonedx), or none'
expect_exit 2 "$AREC" record --sbom spdx,spdx --module demo --name x --file "$T/in/hello"
expect_one_line_error '--sbom "spdx,spdx"'
expect_exit 2 "$AREC" sbom demo/nothing
expect_one_line_error '"demo/nothing": no such record'
expect_exit 2 "$AREC" sbom "demo/hello@sha256:0000000000000000000000000000000000000000000000000000000000000000"
expect_one_line_error "no such record"
expect_exit 0 "$AREC" sbom "$image"
echo PASS
