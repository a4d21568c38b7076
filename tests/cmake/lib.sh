# Helpers of the CMake tests, on top of tests/lib.sh (fail, expect_eq, expect_contains, $T, cleanup):
# each test configures and builds projects with the module in its own temporary directory ($work),
# with its own stores, and checks what a user would see. Sourced by the test scripts.
#
# From tests/cmake/CMakeLists.txt, through the environment:
#   AREC_TEST_SOURCE_DIR   the arec source tree
#   AREC_TEST_PROJECTS     tests/cmake/projects
#   AREC_TEST_PREFIX       where the install fixture put arec and its package
#   AREC_TEST_AREC         the arec of this build, to query stores with
#   AREC_TEST_CXX          the C++ compiler arec was built with, for every project
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

for var in AREC_TEST_SOURCE_DIR AREC_TEST_PROJECTS AREC_TEST_PREFIX AREC_TEST_AREC AREC_TEST_CXX; do
  [[ -n ${!var:-} ]] || fail "$var is not set (run this test through ctest)"
done
# Every project is told where to record; nothing comes from the environment of the caller.
unset AREC_STORE AREC_NODES AREC_SELF AREC_EXECUTABLE CMAKE_GENERATOR CMAKE_BUILD_TYPE
export SOURCE_DATE_EPOCH=0
work=$T

# configure LOG SOURCE BUILD [cmake arguments...]: configures with Ninja unless a -G is given; fails the
# test, showing the output, if cmake fails.
configure() {
  local log=$1 source=$2 build=$3
  shift 3
  local generator=(-G Ninja)
  [[ " $* " == *" -G "* ]] && generator=()
  if ! cmake -S "$source" -B "$build" "${generator[@]}" -DCMAKE_CXX_COMPILER="$AREC_TEST_CXX" "$@" >"$log" 2>&1; then
    cat "$log" >&2
    fail "configuring $source in $build failed"
  fi
}

# build LOG BUILD [cmake --build arguments...]: builds; fails the test, showing the output, if it fails.
build() {
  local log=$1 dir=$2
  shift 2
  if ! cmake --build "$dir" "$@" >"$log" 2>&1; then
    cat "$log" >&2
    fail "building $dir failed"
  fi
}

# The records arec shows for STORE, as JSON: latest ones, or every one with --history.
records() {  # STORE [--history]
  "$AREC_TEST_AREC" --store "$1" records --json "${@:2}"
}

# The records of STORE as sorted [module, name, target, config] rows, in compact JSON.
record_rows() {  # STORE [--history]
  records "$@" | jq -c '[.[] | [.module, .name, .target, .config]] | sort'
}

# How many recordings a build printed (each prints MODULE/NAME@sha256:HEX).
recordings_in() {  # LOG
  grep -cE '^[a-z0-9._-]+/[a-z0-9._-]+@sha256:[0-9a-f]{64}$' "$1" || true
}

# The latest digest of MODULE/NAME in STORE.
digest_of() {  # STORE MODULE/NAME
  records "$1" | jq -r --arg repo "$2" '.[] | select(.module + "/" + .name == $repo) | .digest'
}

# Fails unless STORE is sound as arec check sees it (layout, index, every blob's digest, records, no
# temporaries left behind) and umoci, another reader, lists it.
check_store() {  # STORE
  local report
  report=$("$AREC_TEST_AREC" --store "$1" check --json) || fail "arec check finds $1 not sound: $report"
  expect_eq "true 0" "$(jq -r '"\(.ok) \(.stray_temporaries | length)"' <<<"$report")" "arec check of $1: $report"
  umoci ls --layout "$1" >/dev/null || fail "umoci cannot read $1"
}

# The configuration of the image MODULE/NAME of STORE (Entrypoint, Env, ...), as compact JSON, read from
# the blobs that the store's index names for it.
image_config() {  # STORE MODULE/NAME
  local manifest config
  manifest=$(jq -r --arg ref "$2" \
    '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $ref) | .digest' "$1/index.json")
  [[ $manifest == sha256:* ]] || fail "no image $2 in $1"
  config=$(jq -r .config.digest "$1/blobs/sha256/${manifest#sha256:}")
  jq -c .config "$1/blobs/sha256/${config#sha256:}"
}

# Unpacks the image MODULE/NAME of STORE with umoci, as a runtime bundle; prints the bundle's directory.
unpack_image() {  # STORE MODULE/NAME
  local bundle
  bundle=$(mktemp -d "$work/image.XXXXXX")/bundle
  umoci unpack --rootless --image "$1:$2" "$bundle" >/dev/null || fail "umoci cannot unpack $2 from $1"
  echo "$bundle"
}

# The regular files of an image, sorted, on one line.
image_files() {  # STORE MODULE/NAME
  local bundle
  bundle=$(unpack_image "$1" "$2")
  (cd "$bundle/rootfs" && find . -type f | sort | paste -sd' ')
}

# Runs an image's entrypoint, with the image's environment and ARGS after it, in its own root file
# system: chroot'ed where this user may (root, or a user namespace), else by its path in that tree.
run_image() {  # STORE MODULE/NAME [ARGS...]
  local store=$1 repo=$2 bundle
  shift 2
  bundle=$(unpack_image "$store" "$repo")
  local rootfs=$bundle/rootfs
  local -a entry env
  mapfile -t entry < <(jq -r '.process.args[]' "$bundle/config.json")
  mapfile -t env < <(jq -r '.process.env[]' "$bundle/config.json")
  ((${#entry[@]})) || fail "$repo has no entrypoint"
  # env -i clears PATH, so the host's programs are named by their paths.
  local chroot unshare
  chroot=$(PATH=$PATH:/usr/sbin:/sbin command -v chroot || true)
  unshare=$(command -v unshare || true)
  # /proc is mounted in the root, as every container runtime does: the loader finds a program's $ORIGIN
  # through /proc/self/exe.
  mkdir -p "$rootfs/proc"
  if [[ -n $chroot && -n $unshare && $(id -u) == 0 ]]; then
    env -i "${env[@]}" "$unshare" --mount --pid --fork --mount-proc="$rootfs/proc" "$chroot" "$rootfs" "${entry[@]}" "$@"
  elif [[ -n $chroot && -n $unshare ]] && "$unshare" --user --map-root-user --mount --pid --fork true 2>/dev/null; then
    env -i "${env[@]}" "$unshare" --user --map-root-user --mount --pid --fork --mount-proc="$rootfs/proc" "$chroot" "$rootfs" \
      "${entry[@]}" "$@"
  else
    env -i "${env[@]}" "$rootfs${entry[0]}" "${entry[@]:1}" "$@"
  fi
}
