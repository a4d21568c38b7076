#!/usr/bin/env bash
# The mesh example cross-compiled for arm64 with its toolchain file (examples/mesh/aarch64-linux-gnu.cmake)
# and arec's installed CMake package: controlplane (static) and builder (dynamic) are recorded as
# linux/arm64 images. Unpacked with umoci, each runs in a chroot through qemu-aarch64-static (copied into
# the unpacked tree, never into the image) and prints what it prints under qemu on this machine. builder's
# loader and libraries come from the cross packages (/usr/aarch64-linux-gnu), at the paths the arm64
# loader searches, are AArch64 files, and the SBOM names the cross packages they belong to. Given a
# --sysroot laid out as an arm64 Debian root, libc comes from there, at /lib/aarch64-linux-gnu, and runs.
#
#   mesh_arm64_test.sh AREC BUILD_DIR CONFIG
source "$(dirname "$0")/../lib.sh"
AREC=$1 build_dir=$2 config=${3:-}
command -v aarch64-linux-gnu-g++ >/dev/null || skip "no aarch64-linux-gnu-g++ (Debian's g++-aarch64-linux-gnu; scripts/deps installs it)"
qemu=$(command -v qemu-aarch64-static) || skip "no qemu-aarch64-static (Debian's qemu-user-static; scripts/deps installs it)"
for tool in umoci jq ninja; do command -v $tool >/dev/null || skip "no $tool (scripts/deps installs it)"; done
unset AREC_STORE AREC_EXECUTABLE CMAKE_GENERATOR CMAKE_BUILD_TYPE
export SOURCE_DATE_EPOCH=0

# arec as a user has it: installed into a prefix, its package found by the cross build.
cmake --install "$build_dir" --prefix "$T/prefix" ${config:+--config "$config"} >"$T/install.log" 2>&1 ||
  { cat "$T/install.log" >&2; fail "installing arec into $T/prefix failed"; }
src=$AREC_TEST_SOURCE_DIR/examples/mesh
store=$T/store
if ! cmake -S "$src" -B "$T/build" -G Ninja --toolchain "$src/aarch64-linux-gnu.cmake" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$T/prefix" -DAREC_STORE="$store" >"$T/configure.log" 2>&1; then
  cat "$T/configure.log" >&2
  fail "configuring the mesh example for arm64 failed"
fi
cmake --build "$T/build" >"$T/build.log" 2>&1 || { cat "$T/build.log" >&2; fail "building the mesh example for arm64 failed"; }

# The module told arec the toolchain's platform and root.
expect_contains "$(<"$T/build/build.ninja")" "--platform=linux/arm64 --sysroot=/usr/aarch64-linux-gnu" "the recording commands"

manifest_of() { # REPO: the manifest digest the store's index names for MODULE/NAME
  jq -r --arg ref "$1" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $ref) | .digest' "$store/index.json"
}
for repo in mesh/controlplane mesh/builder; do
  manifest=$(manifest_of $repo)
  [[ $manifest == sha256:* ]] || fail "no record of $repo in $store"
  config_digest=$(jq -r .config.digest "$store/blobs/sha256/${manifest#sha256:}")
  expect_eq "linux arm64" "$(jq -r '"\(.os) \(.architecture)"' "$store/blobs/sha256/${config_digest#sha256:}")" "the platform in $repo's config"
  expect_eq "linux arm64" "$(jq -r --arg ref $repo '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $ref) | "\(.platform.os) \(.platform.architecture)"' "$store/index.json")" \
    "the platform of $repo in the store's index"
done

# Each image in a chroot through qemu-user, as on an arm64 machine: what qemu runs on this machine.
run_arm64() { # REPO [ARGS...]: runs the image's entrypoint under qemu in a chroot of its unpacked tree
  local bundle rootfs
  bundle=$(mktemp -d "$T/image.XXXXXX")/bundle
  umoci unpack --rootless --image "$store:$1" "$bundle" >/dev/null || fail "umoci cannot unpack $1 from $store"
  rootfs=$bundle/rootfs
  local -a entry env
  mapfile -t entry < <(jq -r '.process.args[]' "$bundle/config.json")
  mapfile -t env < <(jq -r '.process.env[]' "$bundle/config.json")
  cp "$qemu" "$rootfs/.qemu-aarch64-static"
  env -i "${env[@]}" chroot "$rootfs" /.qemu-aarch64-static "${entry[@]}" "${@:2}"
}
unpacked() { # REPO: the unpacked tree of the image
  local bundle
  bundle=$(mktemp -d "$T/image.XXXXXX")/bundle
  umoci unpack --rootless --image "$store:$1" "$bundle" >/dev/null || fail "umoci cannot unpack $1 from $store"
  echo "$bundle/rootfs"
}
on_host=$("$qemu" "$T/build/controlplane")
expect_eq "controlplane 1.0.0: ready" "$on_host" "controlplane under qemu on this machine"
on_host_builder=$(MESH_ROLE=builder "$qemu" -L /usr/aarch64-linux-gnu "$T/build/builder")
expect_eq "builder 1.0.0: ready (role builder)" "$on_host_builder" "builder under qemu on this machine"

# builder's closure: the arm64 loader and every library builder needs (DT_NEEDED), from the cross
# packages, at the paths the arm64 loader searches (PT_INTERP, then /lib among its default directories).
rootfs=$(unpacked mesh/builder)
needed=$(readelf -d "$T/build/builder" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p')
expect_contains " $(paste -sd' ' <<<"$needed") " " libc.so.6 " "libraries builder needs"
for f in lib/ld-linux-aarch64.so.1 $(sed 's|^|lib/|' <<<"$needed"); do
  [[ -e $rootfs/$f ]] || fail "/$f is not in the image of mesh/builder: $(cd "$rootfs" && find . -type f -o -type l | sort | paste -sd' ')"
  # e_machine 183 (0xb7) is AArch64, little-endian at byte 18 of the ELF header.
  expect_eq "b7 00" "$(od -An -tx1 -j18 -N2 "$rootfs/$f" | xargs)" "e_machine of /$f in the image"
  cmp -s "$rootfs/$f" "/usr/aarch64-linux-gnu/$f" || fail "/$f of the image is not /usr/aarch64-linux-gnu/$f"
done
[[ -z $(cd "$rootfs" && find . -path '*x86_64*') ]] || fail "files of this machine in the arm64 image: $(cd "$rootfs" && find . -path '*x86_64*')"
# A program without a base: its users (root, nonroot) and /tmp besides, nothing of this machine.
expect_eq "./etc/group ./etc/passwd ./usr/local/bin/controlplane" \
  "$(cd "$(unpacked mesh/controlplane)" && find . -type f | sort | paste -sd' ')" "files of mesh/controlplane (static)"
expect_eq 1777 "$(stat -c %a "$(unpacked mesh/controlplane)/tmp")" "the mode of /tmp in mesh/controlplane"

# The SBOM names the Debian cross packages the loader and libraries came from.
sbom=$("$AREC" --store "$store" sbom mesh/builder)
expect_contains " $(jq -r '.packages[].name' <<<"$sbom" | paste -sd' ') " " libc6-arm64-cross " "packages of mesh/builder's SBOM"

if [[ $(id -u) != 0 ]] || ! command -v chroot >/dev/null; then
  skip "running the images in a chroot needs root; the records and their files were checked"
fi
expect_eq "$on_host" "$(run_arm64 mesh/controlplane)" "controlplane run from its image"
expect_eq "controlplane 1.0.0" "$(run_arm64 mesh/controlplane --version)" "controlplane --version run from its image"
expect_eq "$on_host_builder" "$(run_arm64 mesh/builder)" "builder run from its image (its own loader and libraries)"

# A sysroot laid out as an arm64 Debian root (multiarch /lib/aarch64-linux-gnu), given with --sysroot:
# libc goes to the same path in the image, where the arm64 loader finds it, and builder runs there too.
sysroot=$T/sysroot
mkdir -p "$sysroot/lib/aarch64-linux-gnu"
cp /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 "$sysroot/lib/"
for lib in $needed; do cp -L "/usr/aarch64-linux-gnu/lib/$lib" "$sysroot/lib/aarch64-linux-gnu/"; done
store=$T/store-sysroot
"$AREC" --store "$store" record --module mesh --name builder --file "$T/build/builder" --entrypoint /usr/local/bin/builder \
  --env MESH_ROLE=builder --sysroot "$sysroot" >/dev/null
expect_eq "./etc/group ./etc/passwd ./lib/aarch64-linux-gnu/libc.so.6 ./lib/ld-linux-aarch64.so.1 ./usr/local/bin/builder" \
  "$(cd "$(unpacked mesh/builder)" && find . -type f | sort | paste -sd' ')" "files of mesh/builder recorded with --sysroot"
expect_eq "$on_host_builder" "$(run_arm64 mesh/builder)" "builder run from its image with the sysroot's libraries"
