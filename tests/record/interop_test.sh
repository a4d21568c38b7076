#!/usr/bin/env bash
# What arec writes, OCI tools read: skopeo and umoci find records by module/name and yield the files;
# of a module/name built in Release and Debug, module/name is the default configuration's latest and
# module/name:latest-debug the other's, in the store and in what export writes.
AREC=$1
source "$(dirname "$0")/../lib.sh"
command -v skopeo >/dev/null || skip "skopeo is not installed (scripts/deps installs it)"
command -v umoci >/dev/null || skip "umoci is not installed (scripts/deps installs it)"
export AREC_STORE=$T/store

mkdir -p "$T/in/lib"
cp /usr/bin/true "$T/in/tool"
head -c 3000000 /dev/urandom >"$T/in/lib/data.bin"
ln -s data.bin "$T/in/lib/data.link"

for compression in gzip zstd none; do
  note "compression $compression"
  expect_exit 0 "$AREC" record --module mesh --name "tool-$compression" --compression "$compression" \
    --file "$T/in/tool" --dir "$T/in/lib=/opt/lib" --entrypoint /usr/local/bin/tool --env A=b
  digest=${OUT#*@}
  inspect=$(skopeo inspect "oci:$T/store:mesh/tool-$compression")
  expect_eq "$digest" "$(json_get .Digest <<<"$inspect")" "skopeo's digest"
  expect_eq "amd64 linux" "$(json_get '"\(.Architecture) \(.Os)"' <<<"$inspect")" "platform"
  expect_contains "$(json_get '.Env | join(" ")' <<<"$inspect")" "A=b"
  config=$(skopeo inspect --config "oci:$T/store:mesh/tool-$compression")
  expect_eq '["/usr/local/bin/tool"]' "$(jq -c .config.Entrypoint <<<"$config")" "entrypoint"

  # zstd layers need umoci >= 0.4.8 to unpack. skopeo reads them: it decompresses the zstd layer to
  # write it again as gzip, keeping its DiffID, and umoci unpacks that copy.
  image="$T/store:mesh/tool-$compression"
  if [[ $compression == zstd ]]; then
    skopeo copy -q --dest-compress-format gzip "oci:$image" "oci:$T/regzipped:x"
    layer=$(jq -r '.layers[0].digest' "$T/regzipped/blobs/sha256/$(jq -r '.manifests[0].digest' "$T/regzipped/index.json" | cut -d: -f2)")
    gzip -t <"$T/regzipped/blobs/sha256/${layer#sha256:}" || fail "the layer skopeo wrote is not gzip"
    diff_id=$(skopeo inspect --config "oci:$image" | jq -r '.rootfs.diff_ids[0]')
    expect_eq "$diff_id" "sha256:$(gzip -dc "$T/regzipped/blobs/sha256/${layer#sha256:}" | sha256sum | cut -d' ' -f1)" \
      "DiffID of the zstd layer as skopeo read it"
    image="$T/regzipped:x"
  fi
  umoci unpack --rootless --image "$image" "$T/bundle-$compression" >/dev/null
  root=$T/bundle-$compression/rootfs
  cmp "$T/in/tool" "$root/usr/local/bin/tool" || fail "umoci: tool differs"
  cmp "$T/in/lib/data.bin" "$root/opt/lib/data.bin" || fail "umoci: data differs"
  expect_eq data.bin "$(readlink "$root/opt/lib/data.link")" "symlink"
  [[ -x $root/usr/local/bin/tool ]] || fail "tool is not executable"
  "$root/usr/local/bin/tool" || fail "the unpacked tool does not run"

  # --preserve-digests: skopeo would otherwise gzip an uncompressed layer on its way.
  skopeo copy -q --preserve-digests "oci:$T/store:mesh/tool-$compression" "oci:$T/copy-$compression:x"
  expect_eq "$digest" "$(skopeo inspect "oci:$T/copy-$compression:x" | json_get .Digest)" "digest after skopeo copy"
done

note "Release then Debug: OCI tools read module/name as arec composes it, the default configuration's"
mkdir -p "$T/cfg"
echo release >"$T/cfg/build" && expect_exit 0 "$AREC" record --module team --name api --config Release --dir "$T/cfg=/srv"
release=${OUT#*@}
echo debug >"$T/cfg/build" && expect_exit 0 "$AREC" record --module team --name api --config Debug --dir "$T/cfg=/srv"
debug=${OUT#*@}
expect_eq "$release" "$(skopeo inspect "oci:$T/store:team/api" | json_get .Digest)" "skopeo's team/api"
expect_eq "$debug" "$(skopeo inspect "oci:$T/store:team/api:latest-debug" | json_get .Digest)" "skopeo's team/api:latest-debug"
umoci unpack --rootless --image "$T/store:team/api" "$T/api-default" >/dev/null || fail "umoci: team/api"
expect_eq release "$(cat "$T/api-default/rootfs/srv/build")" "umoci's team/api"
umoci unpack --rootless --image "$T/store:team/api:latest-debug" "$T/api-debug" >/dev/null || fail "umoci: team/api:latest-debug"
expect_eq debug "$(cat "$T/api-debug/rootfs/srv/build")" "umoci's team/api:latest-debug"
expect_eq "$release" "$("$AREC" inspect team/api --json | json_get .manifest.digest)" "inspect's team/api"
expect_eq "$debug" "$("$AREC" inspect team/api --config Debug --json | json_get .manifest.digest)" "inspect --config Debug"
expect_exit 0 "$AREC" check
note "AREC_DEFAULT_CONFIG=Debug: the next write names team/api the Debug build, and index.json says so"
echo debug2 >"$T/cfg/build" && AREC_DEFAULT_CONFIG=Debug expect_exit 0 "$AREC" record --module team --name api --config Debug --dir "$T/cfg=/srv"
debug2=${OUT#*@}
expect_eq "$debug2" "$(skopeo inspect "oci:$T/store:team/api" | json_get .Digest)" "skopeo's team/api with the default Debug"
expect_eq "$release" "$(skopeo inspect "oci:$T/store:team/api:latest-release" | json_get .Digest)" "team/api:latest-release"
expect_eq Debug "$(jq -r '.annotations["dev.arec.default-config"]' "$T/store/index.json")" "the view's default configuration"
expect_exit 0 "$AREC" check
note "export: --config takes one configuration; without it, the latest of each, named as in the store"
expect_exit 0 "$AREC" export team/api -o "$T/both.tar"
mkdir -p "$T/both" && tar -xf "$T/both.tar" -C "$T/both"
expect_eq "$release" "$(skopeo inspect "oci:$T/both:team/api" | json_get .Digest)" "the bundle's team/api"
expect_eq "$debug2" "$(skopeo inspect "oci:$T/both:team/api:latest-debug" | json_get .Digest)" "the bundle's team/api:latest-debug"
expect_exit 0 "$AREC" export team/api --config Debug -o "$T/debug.tar"
mkdir -p "$T/debug" && tar -xf "$T/debug.tar" -C "$T/debug"
expect_eq "$debug2" "$(skopeo inspect "oci:$T/debug:team/api" | json_get .Digest)" "the Debug bundle's team/api"
expect_eq 1 "$(jq '[.manifests[] | select(.annotations["org.opencontainers.image.ref.name"])] | length' "$T/debug/index.json")" \
  "names in the Debug bundle"
expect_exit 2 "$AREC" export team/api --config MinSizeRel -o "$T/none.tar"
expect_one_line_error "no such record"
echo PASS
