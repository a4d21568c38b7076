#!/usr/bin/env bash
# What arec export writes, other tools read: a docker archive through skopeo's docker-archive:
# transport, an OCI bundle through oci-archive: and, unpacked, umoci.
AREC=$1
source "$(dirname "$0")/lib.sh"
command -v skopeo >/dev/null || skip "skopeo is not installed (scripts/deps installs it)"
command -v umoci >/dev/null || skip "umoci is not installed (scripts/deps installs it)"
make_history

note "--format docker: manifest.json as docker save writes it, skopeo reads every image"
expect_exit 0 "$AREC" export mesh --format docker -o "$T/docker.tar" --json
expect_eq "2 0" "$(jq -r '"\(.records) \(.referrers)"' <<<"$OUT")" "records referrers (docker archives have no referrers)"
manifest=$(tar -xOf "$T/docker.tar" manifest.json)
expect_eq '["mesh/app:latest"] ["mesh/tool:latest"]' "$(jq -c '.[].RepoTags' <<<"$manifest" | paste -sd' ')" "RepoTags"
"$AREC" export mesh --format docker -o "$T/docker2.tar" >/dev/null
cmp "$T/docker.tar" "$T/docker2.tar" || fail "two docker exports differ"
for name in app tool; do
  skopeo copy -q "docker-archive:$T/docker.tar:mesh/$name:latest" "oci:$T/from-docker:$name" ||
    fail "skopeo could not read mesh/$name from the docker archive"
  expect_eq "$(skopeo inspect --config "oci:$T/store:mesh/$name" | jq -c '{config, rootfs}')" \
    "$(skopeo inspect --config "oci:$T/from-docker:$name" | jq -c '{config, rootfs}')" "config and DiffIDs of mesh/$name"
done
umoci unpack --rootless --image "$T/from-docker:app" "$T/unpacked-docker" >/dev/null
cmp "$T/in/app/data.bin" "$T/unpacked-docker/rootfs/srv/app/data.bin" || fail "data.bin differs after the docker archive"
expect_eq data.bin "$(readlink "$T/unpacked-docker/rootfs/srv/app/data.link")" "symlink after the docker archive"
umoci unpack --rootless --image "$T/from-docker:tool" "$T/unpacked-tool" >/dev/null
"$T/unpacked-tool/rootfs/usr/local/bin/tool" || fail "the tool from the docker archive does not run"

note "--format oci: skopeo's oci-archive: finds each latest by module/name, digests kept"
"$AREC" export mesh --history -o "$T/oci.tar" >/dev/null
for name in app tool; do
  digest=$(skopeo inspect "oci-archive:$T/oci.tar:mesh/$name" | jq -r .Digest)
  expect_eq "$("$AREC" records --json | jq -r --arg n "$name" '.[] | select(.name == $n) | .digest')" "$digest" "digest of mesh/$name"
done
skopeo copy -q --preserve-digests "oci-archive:$T/oci.tar:mesh/app" "oci:$T/from-oci:app"
expect_eq "$APP2" "$(skopeo inspect "oci:$T/from-oci:app" | jq -r .Digest)" "digest after skopeo copy"

note "unpacked, the bundle is an OCI layout umoci reads"
mkdir "$T/layout"
tar -xf "$T/oci.tar" -C "$T/layout"
umoci unpack --rootless --image "$T/layout:mesh/app" "$T/unpacked-oci" >/dev/null
cmp "$T/in/app/data.bin" "$T/unpacked-oci/rootfs/srv/app/data.bin" || fail "data.bin differs after the OCI bundle"
expect_eq two "$(cat "$T/unpacked-oci/rootfs/srv/app/etc/version")" "the latest mesh/app"
echo PASS
