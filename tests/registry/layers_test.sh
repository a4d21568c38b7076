#!/usr/bin/env bash
# Layers by origin at the registry. A C++ program linking OpenSSL, zlib and libstdc++, changed by one
# line and recorded again: its push uploads at most 3x the gzip of the changed program plus 2 KiB of
# image (the package layers are there already), which the registry's storage confirms: it grows by the
# program's layer, the config, the manifests and the SBOM, nothing else. The SBOM, one SPDX document
# listing every file of the image, is new with every change and is counted apart (push --json
# referrers.bytes). A second service on the same libraries:
# every package layer (and the OS identity's) is mounted from the first service's repository or skipped, and the registry grows
# by that service's own layer, config, manifest and SBOM only.
AREC=$1
source "$(dirname "$0")/lib.sh"
command -v g++ >/dev/null || skip "g++ is missing"
[[ -f /usr/include/openssl/ssl.h && -f /usr/include/zlib.h ]] || skip "libssl-dev or zlib1g-dev is missing"
start_registry R own
use_registry "$R"
storage=$T/registries/own/data

# program NAME MESSAGE [EXTRA]: a C++ program using libssl, libcrypto, zlib and libstdc++, printing
# MESSAGE; EXTRA is more code (another service). Built into $T/bin/NAME.
program() {
  mkdir -p "$T/src" "$T/bin"
  cat >"$T/src/$1.cpp" <<CPP
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <zlib.h>
#include <iostream>
#include <string>
${3:-}
int main(int argc, char** argv) {
  const std::string text = argc > 1 ? argv[1] : "$2";
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(text.data(), text.size(), md, &length, EVP_sha256(), nullptr);
  SSL_CTX* context = SSL_CTX_new(TLS_client_method());
  const uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(text.data()), static_cast<uInt>(text.size()));
  std::cout << "$2 " << length << " " << crc << " " << (context != nullptr) << "\n";
  SSL_CTX_free(context);
  return 0;
}
CPP
  g++ -O2 -o "$T/bin/$1" "$T/src/$1.cpp" -lssl -lcrypto -lz || fail "building $1"
}
# The digests of the blobs the registry stores (each blob's data file), sorted.
stored_blobs() { find "$storage/docker/registry/v2/blobs" -name data -type f 2>/dev/null | awk -F/ '{print "sha256:" $(NF-1)}' | sort; }
stored_size() { find "$storage" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}'; }
blob_size() { stat -c %s "$AREC_STORE/blobs/sha256/${1#sha256:}"; }
manifest_of() { cat "$AREC_STORE/blobs/sha256/$("$AREC" records "$1" --json | jq -r '.[0].digest' | cut -d: -f2)"; }
# The referrers (SBOM) of an image: their manifests, and the blobs those name.
sbom_blobs() {
  local sbom
  for sbom in $(jq -r --arg d "$1" '.manifests[] | select(.annotations["dev.arec.subject"] == $d) | .digest' "$AREC_STORE/index.json"); do
    echo "$sbom"
    jq -r '.config.digest, .layers[].digest' "$AREC_STORE/blobs/sha256/${sbom#sha256:}"
  done
}
# The blobs of the record artifacts the registry lists for image $1 of repository $2: each artifact's
# manifest, its empty config and its document.
record_blobs() {
  local artifact
  for artifact in $(curl -fsS -H 'Accept: application/vnd.oci.image.index.v1+json' "http://$R/v2/$2/manifests/sha256-${1#sha256:}" |
    jq -r '.manifests[] | select(.artifactType == "application/vnd.dev.arec.record.v1+json") | .digest'); do
    echo "$artifact"
    curl -fsS -H 'Accept: application/vnd.oci.image.manifest.v1+json' "http://$R/v2/$2/manifests/$artifact" | jq -r '.config.digest, .layers[].digest'
  done
}
# push_json REPOSITORY: pushes it, leaves the --json summary in $OUT, the bytes of the image's blobs
# uploaded in $BYTES, those of its referrers' (the SBOM document) in $SBOM_BYTES, those of the record
# artifact in $RECORD_BYTES, their sum in $ALL_BYTES, and the bytes of the manifests put in $MANIFEST_BYTES.
push_json() {
  expect_exit 0 "$AREC" push "$1" --json
  BYTES=$(jq .bytes <<<"$OUT") SBOM_BYTES=$(jq .referrers.bytes <<<"$OUT") RECORD_BYTES=$(jq .records.bytes <<<"$OUT")
  MANIFEST_BYTES=$(jq .manifests.bytes <<<"$OUT")
  ALL_BYTES=$((BYTES + SBOM_BYTES + RECORD_BYTES))
}
# manifest_bytes DIGEST...: the bytes of those manifests at the registry, as the push put them.
manifest_bytes() {
  local d sum=0
  for d in "$@"; do sum=$((sum + $(find "$storage/docker/registry/v2/blobs" -path "*/${d#sha256:}/data" -printf '%s'))); done
  echo "$sum"
}
# new_bytes DIGESTS: the bytes of those of DIGESTS (blobs of the store) that are in $new_blobs.
new_bytes() {
  local d sum=0
  for d in $(comm -12 <(echo "$new_blobs") <(printf '%s\n' "$@" | sort -u)); do sum=$((sum + $(blob_size "$d"))); done
  echo "$sum"
}
# sbom_documents IMAGE: the blobs of the image's SBOM manifests (its empty config and its document).
sbom_documents() { sbom_blobs "$1" | grep -vxF -f <(jq -r '.manifests[].digest' "$AREC_STORE/index.json"); }

program svc 'hello from the service'
"$AREC" record --module "$M" --name svc --file "$T/bin/svc" --entrypoint /usr/local/bin/svc >/dev/null
manifest=$(manifest_of "$M/svc")
packages=$(jq -r '[.layers[] | select(.annotations["dev.arec.layer.origin"] // "" | test("^(deb|os):")) | .digest] | .[]' <<<"$manifest")
for p in libc6 libgcc-s1 libstdc++6 libssl3 zlib1g; do
  jq -e --arg p "deb:$p=" 'any(.layers[]; .annotations["dev.arec.layer.origin"] // "" | startswith($p))' <<<"$manifest" >/dev/null ||
    fail "no layer of $p in $M/svc: $(jq -c '[.layers[].annotations]' <<<"$manifest")"
done
expect_exit 0 "$AREC" inspect "$M/svc" --json
expect_eq "$(jq -c '[.layers[] | {digest, size, origin: .annotations["dev.arec.layer.origin"]}]' <<<"$manifest")" \
  "$(jq -c '[.layers[] | {digest, size, origin}]' <<<"$OUT")" "inspect --json: each layer's size and origin"
expect_exit 0 "$AREC" inspect "$M/svc"
libssl=$(jq -r '.layers[] | select(.annotations["dev.arec.layer.origin"] | startswith("deb:libssl3=")) | "\(.digest) \(.mediaType) \(.size) bytes \(.annotations["dev.arec.layer.origin"])"' <<<"$manifest")
expect_contains "$OUT" $'\n'"layer       $libssl"$'\n' "inspect: the libssl3 layer"
push_json "$M/svc"
note "first push: $BYTES bytes in $(jq .uploaded <<<"$OUT") blobs"

note "a one-line change: the push uploads the program's layer and the config, nothing of the libraries"
program svc 'hello from the changed service'
gz=$(gzip -c "$T/bin/svc" | wc -c)
"$AREC" record --module "$M" --name svc --file "$T/bin/svc" --entrypoint /usr/local/bin/svc >/dev/null
changed=$(manifest_of "$M/svc")
changed_digest=$("$AREC" records "$M/svc" --json | jq -r '.[0].digest')
expect_eq "$packages" "$(jq -r '[.layers[] | select(.annotations["dev.arec.layer.origin"] // "" | test("^(deb|os):")) | .digest] | .[]' <<<"$changed")" \
  "package layers after the change"
before_blobs=$(stored_blobs) before_size=$(stored_size)
push_json "$M/svc"
bytes=$BYTES
limit=$((3 * gz + 2048))
note "pushed $ALL_BYTES bytes of blobs ($bytes of image, $SBOM_BYTES of SBOM, $RECORD_BYTES of record) for a change whose program gzips to $gz bytes (limit $limit)"
((ALL_BYTES <= limit)) || fail "push uploaded $ALL_BYTES bytes of blobs after a one-line change ($bytes of image, $SBOM_BYTES of SBOM, $RECORD_BYTES of record): more than 3 x $gz + 2048 = $limit"
expect_eq "$(wc -w <<<"$packages")" "$(jq .skipped <<<"$OUT")" "blobs skipped: every package layer"
expect_eq "2 0" "$(jq -r '"\(.uploaded) \(.mounted)"' <<<"$OUT")" "blobs uploaded (the program's layer, the config) and mounted"

note "the registry's storage confirms it"
new_blobs=$(comm -13 <(echo "$before_blobs") <(stored_blobs))
own=$(jq -r '.config.digest, (.layers[] | select(.annotations["dev.arec.layer.origin"] // "" | test("^(deb|os):") | not) | .digest)' <<<"$changed")
# A fallback tag sha256-<hex> (Debian's registry has no referrers API) is an index written as a manifest.
referrers_tag=$(curl -fsS -H 'Accept: application/vnd.oci.image.index.v1+json' "http://$R/v2/$M/svc/manifests/sha256-${changed_digest#sha256:}" |
  sha256sum | awk '{print "sha256:" $1}')
expected=$(printf '%s\n' $own "$changed_digest" $(sbom_blobs "$changed_digest") $(record_blobs "$changed_digest" "$M/svc") "$referrers_tag" | sort -u)
expect_eq "" "$(comm -23 <(echo "$new_blobs") <(echo "$expected"))" \
  "blobs the registry stored that are not the program's layer, config, manifest, SBOM or record"
expect_eq "$bytes" "$(new_bytes $own)" "bytes of the image's new blobs at the registry = bytes the push reports"
expect_eq "$SBOM_BYTES" "$(new_bytes $(sbom_documents "$changed_digest"))" "bytes of the SBOM's new blobs at the registry = what the push reports"
manifests=$(manifest_bytes "$changed_digest" $(jq -r --arg d "$changed_digest" '.manifests[] | select(.annotations["dev.arec.subject"] == $d) | .digest' "$AREC_STORE/index.json") \
  $(curl -fsS -H 'Accept: application/vnd.oci.image.index.v1+json' "http://$R/v2/$M/svc/manifests/sha256-${changed_digest#sha256:}" |
    jq -r '.manifests[] | select(.artifactType == "application/vnd.dev.arec.record.v1+json") | .digest') "$referrers_tag")
note "and $manifests bytes of manifests (the image's, the SBOM's, the record's, the referrers' tag): $((ALL_BYTES + manifests)) bytes in all"
# Each put once, but the image's twice: by digest, then under its tag once its records are listed (a
# push that reads the tag finds how new what it names is), so push --json counts that one twice.
expect_eq "$((manifests + $(manifest_bytes "$changed_digest")))" "$MANIFEST_BYTES" \
  "bytes of manifests push --json counts = those of the new manifests at the registry, the image's twice"
growth=$(($(stored_size) - before_size))
note "the registry grew by $growth bytes (every file under its root: blobs, manifests, links)"
((growth <= ALL_BYTES + manifests + 4096)) || fail "the registry grew by $growth bytes for $ALL_BYTES bytes of blobs and $manifests of manifests uploaded"

note "a second service on the same libraries mounts every package layer"
program other 'another service' 'static int extra(int x) { return x * 7; }'
"$AREC" record --module "$M" --name other --file "$T/bin/other" --entrypoint /usr/local/bin/other >/dev/null
other=$(manifest_of "$M/other")
other_digest=$("$AREC" records "$M/other" --json | jq -r '.[0].digest')
other_packages=$(jq -r '.layers[] | select(.annotations["dev.arec.layer.origin"] // "" | test("^(deb|os):")) | .digest' <<<"$other")
expect_eq "$(sort <<<"$packages")" "$(sort <<<"$other_packages")" "the second service's package layers: the first's"
before_blobs=$(stored_blobs) before_size=$(stored_size)
push_json "$M/other"
bytes=$BYTES
expect_eq "$(wc -w <<<"$other_packages")" "$(($(jq .mounted <<<"$OUT") + $(jq .skipped <<<"$OUT")))" "package layers mounted or skipped"
own=$(jq -r '.config.digest, (.layers[] | select(.annotations["dev.arec.layer.origin"] // "" | test("^(deb|os):") | not) | .digest)' <<<"$other")
expect_eq "$(wc -w <<<"$own")" "$(jq .uploaded <<<"$OUT")" "blobs uploaded: the service's own layer(s) and config"
new_blobs=$(comm -13 <(echo "$before_blobs") <(stored_blobs))
referrers_tag=$(curl -fsS -H 'Accept: application/vnd.oci.image.index.v1+json' "http://$R/v2/$M/other/manifests/sha256-${other_digest#sha256:}" |
  sha256sum | awk '{print "sha256:" $1}')
expected=$(printf '%s\n' $own "$other_digest" $(sbom_blobs "$other_digest") $(record_blobs "$other_digest" "$M/other") "$referrers_tag" | sort -u)
expect_eq "" "$(comm -23 <(echo "$new_blobs") <(echo "$expected"))" "blobs the registry stored beyond the service's own layer, config, manifest, SBOM and record"
expect_eq "$bytes" "$(new_bytes $own)" "bytes of the service's new blobs at the registry = bytes the push reports"
growth=$(($(stored_size) - before_size))
note "the second service: $bytes bytes of image, $SBOM_BYTES of SBOM and $RECORD_BYTES of record uploaded, the registry grew by $growth bytes"
((growth <= ALL_BYTES + 8192)) || fail "the registry grew by $growth bytes for a service of $ALL_BYTES bytes"
echo PASS
