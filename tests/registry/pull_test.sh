#!/usr/bin/env bash
# pull: an image comes into the store digest-verified, kept by digest with no name and no address;
# `record --base REF` pulls once and records only the base's digest.
AREC=$1
source "$(dirname "$0")/lib.sh"
start_registry R own
use_registry "$R"

app=$(record app 200000)
"$AREC" push --tag v1 >/dev/null
src=$AREC_STORE

note "pull by digest into a new store: the same bytes, listed by digest only"
export AREC_STORE=$T/pulled
expect_exit 0 "$AREC" pull "$R/$M/app@$app"
expect_eq "$app" "$OUT" "printed digest"
# manifest, config and layer, and its SBOM's manifest, empty config and document
expect_eq 6 "$(same_blobs "$AREC_STORE" "$src")" "blobs identical to the pushed store's"
expect_eq "$app true" "$(jq -r '.manifests[0] | "\(.digest) \(.annotations["dev.arec.pulled"])"' "$AREC_STORE/index.json")" "index.json entry"
expect_eq "null" "$(jq -r '.manifests[0].annotations["org.opencontainers.image.ref.name"]' "$AREC_STORE/index.json")" "ref name"
expect_eq "[]" "$("$AREC" records --json)" "records (a pulled image is not a record)"

note "pulling again fetches nothing; a tag and a domain-less reference work too"
expect_exit 0 "$AREC" pull "$M/app:v1" --json
expect_eq "$app 0 2" "$(jq -r '"\(.digest) \(.downloaded) \(.present)"' <<<"$OUT")" "digest downloaded present"

note "record --base REF: pulled into the store, only the digest recorded"
export AREC_STORE=$T/built
mkdir -p "$T/in/top" && echo top >"$T/in/top/file"
"$AREC" record --module "$M" --name top --dir "$T/in/top=/srv/top" --base "$R/$M/app:v1" >/dev/null
expect_eq "$app" "$("$AREC" records "$M/top" --json | jq -r '.[0].base')" "recorded base digest"
hits=$(grep -rlaF -e "$R" -e "127.0.0.1" "$AREC_STORE" || true)
expect_eq "" "$hits" "files of the store holding the registry's address"
top=$("$AREC" records "$M/top" --json | jq -r '.[0].digest')

note "arec_record(BASE <reference>) in a CMake build: the base pulled and recorded by digest"
if command -v cmake >/dev/null && command -v ninja >/dev/null && command -v cc >/dev/null; then
  mkdir -p "$T/proj"
  echo 'int main(void) { return 0; }' >"$T/proj/tool.c"
  cat >"$T/proj/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(based LANGUAGES C)
include("$ROOT/cmake-module/ArtifactRecorder.cmake")
add_executable(tool tool.c)
arec_record(tool MODULE $M NAME based BASE "$R/$M/app:v1" STORE "$T/cmake-store")
CMAKE
  cmake -S "$T/proj" -B "$T/proj/build" -G Ninja "-DAREC_EXECUTABLE=$AREC" >"$T/cmake.log" 2>&1 ||
    fail "configuring: $(cat "$T/cmake.log")"
  cmake --build "$T/proj/build" >>"$T/cmake.log" 2>&1 || fail "building: $(cat "$T/cmake.log")"
  expect_eq "$app" "$("$AREC" --store "$T/cmake-store" records "$M/based" --json | jq -r '.[0].base')" \
    "base digest recorded by the CMake build"
else
  note "skipped: cmake, ninja or cc missing"
fi

note "with a digest, a base the store holds needs no registry at all"
"$ROOT/scripts/registry" stop "$T/registries/own"
echo more >>"$T/in/top/file"
expect_exit 0 "$AREC" record --module "$M" --name top --dir "$T/in/top=/srv/top" --base "$R/$M/app@$app"
expect_exit 3 "$AREC" pull "$R/$M/app:v1"
expect_contains "$ERR" "$R"

note "an index: the manifest for this machine's platform"
use_registry "$REG"
export AREC_STORE=$src
"$AREC" push >/dev/null
size=$(stat -c %s "$src/blobs/sha256/${app#sha256:}")
index=$(jq -cn --arg d "$app" --argjson s "$size" '{schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json",
  manifests: [{mediaType: "application/vnd.oci.image.manifest.v1+json", digest: $d, size: $s, platform: {architecture: "amd64", os: "linux"}},
              {mediaType: "application/vnd.oci.image.manifest.v1+json", digest: $d, size: $s, platform: {architecture: "arm64", os: "linux"}}]}')
curl -sf -X PUT -H "Content-Type: application/vnd.oci.image.index.v1+json" --data-binary "$index" \
  "http://$REG/v2/$M/app/manifests/multi" >/dev/null || fail "putting an index"
export AREC_STORE=$T/multi
expect_exit 0 "$AREC" pull "$M/app:multi" --json
expect_eq "application/vnd.oci.image.index.v1+json $app" "$(jq -r '"\(.mediaType) \(.manifest)"' <<<"$OUT")" "pulled index"
expect_eq "$(printf %s "$index" | sha256sum | cut -d' ' -f1)" "$(jq -r '.digest' <<<"$OUT" | cut -d: -f2)" "index digest"

note "a reference that names nothing: exit 3 naming it"
expect_exit 3 "$AREC" pull "$M/app:nope"
expect_contains "$ERR" "$M/app:nope"
expect_contains "$ERR" "MANIFEST_UNKNOWN"
echo PASS
