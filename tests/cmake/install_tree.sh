#!/usr/bin/env bash
# tests/cmake/projects/install_tree built with GENERATOR (Ninja, or Ninja Multi-Config): a service that is
# an install tree, recorded with arec_record(gateway COMPONENT runtime PLUGINS gwplugin). Its image holds
# exactly what `cmake --install --component runtime` installs, at the install paths (no header, no _deps
# path), with the runtime closure: the FetchContent, ExternalProject and vendor libraries each a layer of its
# own named after them, and named in both SBOMs (CycloneDX's with what needs them). A changed data file, a
# new install(FILES) rule and a rebuilt plugin each record again in the same build; a build that changes
# nothing records nothing. With Ninja: cpack -G External with arec's script gives the same digest, a second
# build tree gives the same digest,
# the program recorded without COMPONENT warns of its build-tree paths and of the vendor's library nothing
# names, a MODULE library in no image is warned about, and the image runs under containerd, finding its
# plugin and configuration. With Ninja Multi-Config, Debug and Release are recorded apart.
source "$(dirname "$0")/lib.sh"

generator=${1:-Ninja}
AREC=$AREC_TEST_AREC
project=$AREC_TEST_PROJECTS/install_tree
deps=$project/deps
store=$work/store
history_of() { records "$store" --history | jq --arg repo "$1" '[.[] | select(.module + "/" + .name == $repo)] | length'; }

note "the dependencies: a tagged git repository, a release tarball, a vendor's library"
mkdir -p "$work/repos" "$work/dist"
cp -r "$deps/tinyidx" "$work/repos/tinyidx"
git -C "$work/repos/tinyidx" init -q
git -C "$work/repos/tinyidx" add .
git -C "$work/repos/tinyidx" -c user.name=test -c user.email=test@example.com commit -qm "tinyidx 1.2.3"
git -C "$work/repos/tinyidx" tag v1.2.3
cp -r "$deps/fastcrc" "$work/dist/fastcrc-0.9.1"
tar -C "$work/dist" -czf "$work/dist/fastcrc-0.9.1.tar.gz" fastcrc-0.9.1
fastcrc_sha256=$(sha256sum "$work/dist/fastcrc-0.9.1.tar.gz" | cut -d' ' -f1)
# The vendor's library where vendors put theirs, /opt (as root; removed afterwards), else in a directory
# outside the build as well: what matters is that it is neither the build's nor a Debian package's.
if [[ $(id -u) == 0 ]]; then
  vendor=$(mktemp -d /opt/arec-test-vendor.XXXXXX)
  on_exit "rm -rf '$vendor'"
else
  vendor=$work/opt/vendor
fi
mkdir -p "$vendor/lib"
"$AREC_TEST_CXX" -shared -fPIC -Wl,-soname,libvendor.so.4 -o "$vendor/lib/libvendor.so.4" "$deps/vendor/vendor.cpp"

src=$work/src
cp -r "$project" "$src"
config_args=()
[[ $generator == Ninja ]] && config_args=(-DCMAKE_BUILD_TYPE=Release)
configure_shop() {  # LOG BUILD STORE [cmake arguments...]
  configure "$1" "$src" "$2" -G "$generator" "${config_args[@]}" -DCMAKE_PREFIX_PATH="$AREC_TEST_PREFIX" \
    -DAREC_STORE="$3" -DTINYIDX_REPOSITORY="$work/repos/tinyidx" -DFASTCRC_TARBALL="$work/dist/fastcrc-0.9.1.tar.gz" \
    -DFASTCRC_SHA256="$fastcrc_sha256" -DVENDOR_DIR="$vendor" "${@:4}"
}
build_dir=$work/build
configure_shop "$work/configure.log" "$build_dir" "$store"
config=Release
build_config=()
[[ $generator != Ninja ]] && build_config=(--config Release)
build "$work/first.log" "$build_dir" "${build_config[@]}"
expect_eq 2 "$(recordings_in "$work/first.log")" "recordings of the first build"
expect_eq "[[\"shop\",\"gateway\",\"gateway\",\"$config\"],[\"shop\",\"indexer-tree\",\"indexer-tree\",\"$config\"]]" \
  "$(record_rows "$store")" "records"
expect_not_contains "$(<"$work/first.log")" "calls dlopen" "the first build (every MODULE library is in an image)"

note "the image is the component at its install paths"
# What cmake --install puts under the prefix, beside what the image holds there.
DESTDIR=$work/expected cmake --install "$build_dir" --component runtime --prefix /usr/local --config "$config" \
  >"$work/install.log" 2>&1 || fail "cmake --install: $(cat "$work/install.log")"
installed=$(cd "$work/expected/usr/local" && find . \( -type f -o -type l \) | sort | paste -sd' ')
rootfs=$(unpack_image "$store" shop/gateway)/rootfs
expect_eq "$installed" "$(cd "$rootfs/usr/local" && find . \( -type f -o -type l \) | sort | paste -sd' ')" \
  "the files under /usr/local of shop/gateway"
for f in ./bin/gateway ./bin/indexer ./lib/libgwcore.so.2.1.0 ./lib/libgwcore.so.2 ./lib/gateway/plugins/libgwplugin.so \
  ./etc/gateway/gateway.conf ./share/gateway/banner.txt ./lib/libtinyidx.so.1.2.3 ./lib/libfastcrc.so.0; do
  expect_contains " $installed " " $f " "what the component installs"
done
everything=$(cd "$rootfs" && find . | sort | paste -sd' ')
expect_not_contains "$everything" "include" "shop/gateway's files (a header is in the dev component)"
expect_not_contains "$everything" "_deps" "shop/gateway's files"
expect_contains " $everything " " .$vendor/lib/libvendor.so.4 " "shop/gateway's files (the vendor's library where its RUNPATH names it)"
expect_contains " $everything " " ./usr/lib/x86_64-linux-gnu/libstdc++.so.6 " "shop/gateway's files (its runtime closure)"
expect_eq '["/usr/local/bin/gateway"]' "$(image_config "$store" shop/gateway | jq -c .Entrypoint)" "the entrypoint"

note "each dependency is a layer of its own and a package of the SBOM"
manifest=$(jq -r '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == "shop/gateway") | .digest' \
  "$store/index.json")
origins=$(jq -r '.layers[].annotations["dev.arec.layer.origin"]' "$store/blobs/sha256/${manifest#sha256:}" | paste -sd' ')
for origin in dep:tinyidx=1.2.3 dep:fastcrc=0.9.1 dep:vendorlib=4.2.0; do
  expect_contains " $origins " " $origin " "the layers of shop/gateway"
done
sbom=$("$AREC" --store "$store" sbom shop/gateway) || fail "arec sbom shop/gateway"
package() { jq -c --arg n "$1" '.packages[] | select(.name == $n) | {versionInfo, downloadLocation, licenseDeclared,
  checksums, purl: .externalRefs[0].referenceLocator}' <<<"$sbom"; }
expect_eq "{\"versionInfo\":\"1.2.3\",\"downloadLocation\":\"git+file://$work/repos/tinyidx@v1.2.3\",\"licenseDeclared\":null,\"checksums\":null,\"purl\":\"pkg:generic/tinyidx@1.2.3?vcs_url=git%2Bfile%3A%2F%2F${work//\//%2F}%2Frepos%2Ftinyidx%40v1.2.3\"}" \
  "$(package tinyidx)" "the FetchContent dependency in the SBOM"
expect_eq "{\"algorithm\":\"SHA256\",\"checksumValue\":\"$fastcrc_sha256\"}" "$(package fastcrc | jq -c '.checksums[0]')" \
  "the ExternalProject dependency's checksum in the SBOM"
expect_eq "0.9.1 file://$work/dist/fastcrc-0.9.1.tar.gz" "$(package fastcrc | jq -r '"\(.versionInfo) \(.downloadLocation)"')" \
  "the ExternalProject dependency in the SBOM"
expect_eq "4.2.0 LicenseRef-Vendor" "$(package vendorlib | jq -r '"\(.versionInfo) \(.licenseDeclared)"')" \
  "the vendor's library in the SBOM (PACKAGES_INFO)"
expect_eq "SPDXRef-Package-dep-tinyidx" \
  "$(jq -r '(.files[] | select(.fileName == "./usr/local/lib/libtinyidx.so.1.2.3") | .SPDXID) as $f |
    .relationships[] | select(.relatedSpdxElement == $f) | .spdxElementId' <<<"$sbom")" "what holds libtinyidx in the SBOM"
cdx=$("$AREC" --store "$store" sbom --format cyclonedx shop/gateway) || fail "arec sbom --format cyclonedx shop/gateway"
expect_eq "dep:fastcrc dep:tinyidx dep:vendorlib" \
  "$(jq -r '[.components[]."bom-ref" | select(startswith("dep:"))] | sort | join(" ")' <<<"$cdx")" \
  "the dependencies among the CycloneDX SBOM's components"
expect_eq "$(package tinyidx | jq -r .purl) /usr/local/lib/libtinyidx.so.1.2.3" \
  "$(jq -r '.components[] | select(."bom-ref" == "dep:tinyidx") | "\(.purl) \([.components[].name] | join(" "))"' <<<"$cdx")" \
  "tinyidx in the CycloneDX SBOM (the SPDX one's purl, its file its component)"
expect_eq '["dep:fastcrc","dep:tinyidx","dep:vendorlib"]' \
  "$(jq -c '[.dependencies[] | select(.ref == "file:usr/local/bin/indexer") | .dependsOn[] | select(startswith("dep:"))] | sort' <<<"$cdx")" \
  "what indexer needs, in the CycloneDX SBOM"

note "a build that changes nothing records nothing"
build "$work/noop.log" "$build_dir" "${build_config[@]}"
expect_eq 0 "$(recordings_in "$work/noop.log")" "recordings of a build with nothing changed"

note "a changed data file, a new install(FILES) rule and a rebuilt plugin each record again"
echo "welcome back" >"$src/share/banner.txt"
build "$work/data.log" "$build_dir" "${build_config[@]}"
expect_eq "shop/gateway" "$(grep -oE '^shop/[a-z-]+' "$work/data.log" | paste -sd' ')" "what a changed data file recorded"
expect_eq "welcome back" "$(cat "$(unpack_image "$store" shop/gateway)/rootfs/usr/local/share/gateway/banner.txt")" \
  "the data file in the image"
echo "read me" >"$src/notes.txt"
echo 'install(FILES notes.txt DESTINATION share/gateway COMPONENT runtime)' >>"$src/CMakeLists.txt"
before=$(history_of shop/gateway)
build "$work/rule.log" "$build_dir" "${build_config[@]}"
expect_eq $((before + 1)) "$(history_of shop/gateway)" "records of shop/gateway after a new install(FILES) rule"
expect_contains "$(image_files "$store" shop/gateway)" "./usr/local/share/gateway/notes.txt" "the files of shop/gateway"
sed -i 's/plugin-v1/plugin-v2/' "$src/plugin.cpp"
build "$work/plugin.log" "$build_dir" "${build_config[@]}"
expect_eq "shop/gateway" "$(grep -oE '^shop/[a-z-]+' "$work/plugin.log" | paste -sd' ')" "what a rebuilt plugin recorded"
build "$work/noop2.log" "$build_dir" "${build_config[@]}"
expect_eq 0 "$(recordings_in "$work/noop2.log")" "recordings of a second build with nothing changed"
check_store "$store"

note "docs/cmake.md's examples of install trees are lines of this project"
docs=$(awk '/^## A service that is an install tree/ { on = 1 } /^## Configurations/ { on = 0 } on' \
  "$AREC_TEST_SOURCE_DIR/docs/cmake.md")
trimmed() { sed -e 's/^ *//' -e 's/ *$//' -e '/^$/d' -e '/^#/d'; }
lines=$(awk '/^```cmake$/ { on = 1; next } /^```$/ { on = 0 } on' <<<"$docs" | trimmed)
[[ $(wc -l <<<"$lines") -gt 30 ]] || fail "docs/cmake.md shows no examples of install trees"
while IFS= read -r line; do
  grep -qxF -- "$line" <(trimmed <"$project/CMakeLists.txt") || fail "docs/cmake.md: [$line] is not a line of $project/CMakeLists.txt"
done <<<"$lines"
expect_eq "$(cat "$project/vendor.json.in")" "$(awk '/^```json$/ { on = 1; next } /^```$/ { on = 0 } on' <<<"$docs")" \
  "docs/cmake.md's packages-info file"

if [[ $generator != Ninja ]]; then
  note "$generator: Debug is recorded apart, from its own install"
  build "$work/debug.log" "$build_dir" --config Debug
  expect_eq 2 "$(recordings_in "$work/debug.log")" "recordings of the Debug build"
  digests=$(records "$store" --config Debug | jq -r '.[] | select(.name == "gateway") | .digest')
  expect_ne "$(digest_of "$store" shop/gateway)" "$digests" "the Debug and Release digests of shop/gateway"
  build "$work/debug-noop.log" "$build_dir" --config Debug
  expect_eq 0 "$(recordings_in "$work/debug-noop.log")" "recordings of a Debug build with nothing changed"
  echo PASS
  exit 0
fi

note "arec record: an install tree asked for wrongly is refused before the store is touched"
before=$(tree_state "$store")
expect_exit 2 "$AREC" --store "$store" record --module shop --name bad --file "$build_dir/gateway" --prefix /opt/shop
expect_one_line_error "--prefix goes with --component or --staged (an install tree)"
expect_exit 2 "$AREC" --store "$store" record --module shop --name bad --component runtime
expect_one_line_error "--component runtime: give the build tree to install it from (--cmake-build DIR)"
expect_exit 2 "$AREC" --store "$store" record --module shop --name bad --component runtime --cmake-build "$work/repos"
expect_one_line_error "--cmake-build $work/repos: not a CMake build tree (it has no CMakeCache.txt)"
expect_exit 2 "$AREC" --store "$store" record --module shop --name bad --cmake-build "$build_dir" --component Runtime
expect_one_line_error "the component Runtime of $build_dir installs no file; did you mean the component runtime?"
expect_exit 2 "$AREC" --store "$store" record --module shop --name bad --cmake-build "$build_dir" --component server
expect_one_line_error "the component server of $build_dir installs no file; the install rules name the components Unspecified, dev, runtime"
expect_exit 2 "$AREC" --store "$store" record --module shop --name bad --cmake-build "$build_dir" --component runtime \
  --plugin "$build_dir/libnone.so"
expect_one_line_error "--plugin $build_dir/libnone.so: the component runtime installs no libnone.so"
expect_eq "$before" "$(tree_state "$store")" "the store after the refusals"
note "arec record: a Debian package's file stays its package's, whatever a packages-info file names"
echo '{"packages": [{"name": "notlibc", "version": "1", "files": ["libc.so.6"]}]}' >"$work/libc.json"
expect_exit 0 "$AREC" --store "$work/store-libc" record --module shop --name libc --file "$build_dir/gateway" \
  --packages-info "$work/libc.json"
expect_eq 0 "$("$AREC" --store "$work/store-libc" sbom shop/libc | jq '[.packages[] | select(.name == "notlibc")] | length')" \
  "packages notlibc in the SBOM"
expect_contains "$("$AREC" --store "$work/store-libc" inspect shop/libc --json | jq -r '.layers[].origin')" "deb:libc6=" \
  "the layers of shop/libc"
[[ -z $(find "$build_dir/CMakeFiles" -maxdepth 1 -name 'arec-stage.*') ]] || fail "a staging directory was left behind"

digest=$(digest_of "$store" shop/gateway)
note "cpack -G External with arec's script: the same digest"
count=$(history_of shop/gateway)
(cd "$build_dir" && cpack -G External >"$work/cpack.log" 2>&1) || fail "cpack -G External: $(cat "$work/cpack.log")"
expect_contains "$(<"$work/cpack.log")" "arec: runtime: shop/gateway@$digest" "cpack's output"
expect_eq "$count" "$(history_of shop/gateway)" "records of shop/gateway after cpack (the same image)"

note "a second build tree elsewhere: the same digest"
configure_shop "$work/configure2.log" "$work/elsewhere/deeper/build" "$work/store2"
build "$work/build2.log" "$work/elsewhere/deeper/build" --target arec_record_gateway
expect_eq "$digest" "$(digest_of "$work/store2" shop/gateway)" "the digest of shop/gateway built in two build trees"

note "without COMPONENT: paths of the build tree's layout, and a vendor library nothing names, are warned about"
tree_warning=$(grep -c "made from the build tree's layout" "$work/first.log" || true)
expect_eq 1 "$tree_warning" "warnings of build-tree paths in the first build"
expect_contains "$(<"$work/first.log")" "/usr/local/bin/_deps/tinyidx-build/libtinyidx.so.1" "the warning"
expect_contains "$(<"$work/first.log")" "(CMake: arec_record(... COMPONENT <name>)" "the warning"
expect_contains "$(<"$work/first.log")" \
  "arec: warning: $vendor/lib/libvendor.so.4 is recorded at that path, from this machine, since the RUNPATH" \
  "the warning of the vendor's library in shop/indexer-tree"
expect_not_contains "$(<"$work/first.log")" "BUILD_RPATH_USE_ORIGIN" "the first build"
expect_contains " $(image_files "$store" shop/indexer-tree) " " .$vendor/lib/libvendor.so.4 " "the files of shop/indexer-tree"

note "a MODULE library in no image, while the program calls dlopen: warned about"
configure_shop "$work/configure3.log" "$build_dir" "$store" -DSPARE_PLUGIN=ON
build "$work/spare.log" "$build_dir"
expect_contains "$(<"$work/spare.log")" \
  "arec: warning: /usr/local/bin/gateway calls dlopen, and the project's MODULE library $build_dir/libspare.so is in no image" \
  "the build with a plugin nothing installs"
expect_eq 1 "$(grep -c "calls dlopen" "$work/spare.log")" "dlopen warnings (indexer-tree calls no dlopen)"

note "the image runs under containerd, finding its plugin and configuration"
start_containerd
"$AREC" --store "$store" export shop/gateway -o "$work/gateway.tar" >/dev/null || fail "arec export shop/gateway"
ctr images import "$work/gateway.tar" >"$work/import.log" 2>&1 || fail "ctr images import: $(tail -3 "$work/import.log")"
output=$(ctr run --rm shop/gateway "gateway-$$") || fail "shop/gateway failed in its container: $output"
expect_eq "gateway core=gwcore-v1 config=listen = 8080 banner=welcome back plugin=plugin-v2" "$output" \
  "shop/gateway run by containerd"
output=$(ctr run --rm shop/gateway "indexer-$$" /usr/local/bin/indexer) || fail "indexer failed in its container: $output"
expect_eq "indexer tinyidx=1.2.3 fastcrc=96354 vendor=4" "$output" "indexer run by containerd from shop/gateway"
echo PASS
