#!/usr/bin/env bash
# What arec writes, OCI tools read: skopeo and umoci find records by module/name and yield the files.
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
echo PASS
