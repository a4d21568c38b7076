#!/usr/bin/env bash
# tests/cmake/projects/options: default record names from the project's and targets' names; generator
# expressions in FILES, DIRECTORIES, ENTRYPOINT and ENV (the image's files and configuration); and where
# each recording goes: STORE, else the AREC_STORE cache variable, else the AREC_STORE environment
# variable of the build, else arec's default under XDG_DATA_HOME. One configure step; the later builds
# relink what a touched source or a changed store asks for.
source "$(dirname "$0")/lib.sh"

src=$work/options
cp -r "$AREC_TEST_PROJECTS/options" "$src"
# arec's own default store, never the home directory of whoever runs the tests.
export XDG_DATA_HOME=$work/xdg
default_store=$XDG_DATA_HOME/arec/store
env_store=$work/env-store
probe_store=$work/build/probe-store
tool='[["my_fancy.project","tool","Tool","Release"]]'
probe='[["my_fancy.project","net-probe","Net+Probe","Release"]]'

# Neither STORE nor -DAREC_STORE: Tool goes to the store the build's environment names.
configure "$work/configure.log" "$src" "$work/build" -DCMAKE_PREFIX_PATH="$AREC_TEST_PREFIX" -DCMAKE_BUILD_TYPE=Release
AREC_STORE=$env_store build "$work/build1.log" "$work/build"
expect_eq 2 "$(recordings_in "$work/build1.log")" "recordings in the first build"
expect_eq "$tool" "$(record_rows "$env_store")" "records in the environment's store"
expect_eq "$probe" "$(record_rows "$probe_store")" "records in the STORE of Net+Probe"
[[ ! -e $default_store ]] || fail "the first build wrote to arec's default store"
check_store "$env_store"
# SBOM spdx cyclonedx for Tool (a list), none for Net+Probe.
"$AREC_TEST_AREC" --store "$env_store" sbom my_fancy.project/tool | jq -e '.files | length == 4' >/dev/null ||
  fail "Tool's record has no SBOM listing its four files"
"$AREC_TEST_AREC" --store "$env_store" sbom --format cyclonedx my_fancy.project/tool |
  jq -e '[.components[] | select(.type == "file")] | length == 4' >/dev/null ||
  fail "Tool's record has no CycloneDX SBOM listing its four files (SBOM spdx cyclonedx)"
expect_eq 0 "$(jq '[.manifests[] | select(.annotations["dev.arec.subject"])] | length' "$probe_store/index.json")" \
  "SBOMs in the store of Net+Probe (SBOM none)"
# LAYERS 1: Net+Probe and its runtime closure are one layer.
probe_manifest=$(jq -r '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == "my_fancy.project/net-probe") | .digest' \
  "$probe_store/index.json")
expect_eq 1 "$(jq '.layers | length' "$probe_store/blobs/sha256/${probe_manifest#sha256:}")" "layers of Net+Probe (LAYERS 1)"
probe_config=$(jq -r .config.digest "$probe_store/blobs/sha256/${probe_manifest#sha256:}")
expect_eq 65532:65532 "$(jq -r .config.User "$probe_store/blobs/sha256/${probe_config#sha256:}")" "the User of Net+Probe (USER nonroot)"
"$AREC_TEST_AREC" --store "$probe_store" inspect my_fancy.project/net-probe --files >"$work/probe-files.txt" || fail "inspect net-probe"
expect_contains "$(<"$work/probe-files.txt")" "/usr/share/zoneinfo/Europe/Berlin" "the files of Net+Probe (PACKAGES tzdata)"
expect_contains "$(<"$work/probe-files.txt")" "/etc/passwd" "the files of Net+Probe (no base)"

# Only the Release items, and the target file names filled in.
expect_eq "./etc/tool/release.conf ./usr/local/bin/Tool ./usr/local/libexec/Net+Probe ./usr/share/tool/data.txt" \
  "$(image_files "$env_store" my_fancy.project/tool)" "files of my_fancy.project/tool"
config=$(image_config "$env_store" my_fancy.project/tool)
expect_eq '["/usr/local/bin/Tool","--level","0"]' "$(jq -c .Entrypoint <<<"$config")" "the entrypoint of my_fancy.project/tool"
expect_eq '["LANG=C","MODE=release","TZ=UTC"]' "$(jq -c '.Env | sort' <<<"$config")" "the environment of my_fancy.project/tool"

# Nothing names a store: arec's default.
touch "$src/tool.cpp"
build "$work/build2.log" "$work/build"
expect_eq "$tool" "$(record_rows "$default_store")" "records in arec's default store"
expect_eq "$tool" "$(record_rows "$env_store" --history)" "history of the environment's store, built without it"
expect_eq "$probe" "$(record_rows "$probe_store" --history)" "history of the STORE of Net+Probe, built without AREC_STORE"

# The cache variable (relative: from where cmake runs) wins over the environment; STORE over both.
(cd "$work" && configure "$work/configure2.log" "$src" "$work/build" -DAREC_STORE=cache-store)
touch "$src/tool.cpp"
AREC_STORE=$env_store build "$work/build3.log" "$work/build"
expect_eq 2 "$(recordings_in "$work/build3.log")" "recordings with AREC_STORE in the cache"
expect_eq "$tool" "$(record_rows "$work/cache-store")" "records in the cache variable's store"
expect_eq "$tool" "$(record_rows "$env_store" --history)" "history of the environment's store, overridden by the cache"
expect_eq "$probe" "$(record_rows "$probe_store" --history)" "history of the STORE of Net+Probe, with both set"

# The AREC_SIGNING_KEY cache variable (relative: from where cmake runs) signs every record of the build
# that names no SIGN_KEY: Tool and Net+Probe alike.
"$AREC_TEST_AREC" key generate --out "$work/team" >"$work/team.fingerprint" 2>/dev/null || fail "key generate"
(cd "$work" && configure "$work/configure3.log" "$src" "$work/build" -DAREC_SIGNING_KEY=team.key)
touch "$src/tool.cpp"
build "$work/build4.log" "$work/build"
expect_eq 2 "$(recordings_in "$work/build4.log")" "recordings with AREC_SIGNING_KEY in the cache"
for store in "$work/cache-store" "$probe_store"; do
  "$AREC_TEST_AREC" --store "$store" records --wide >"$work/wide.txt" || fail "records --wide of $store"
  expect_eq "$(cut -c1-16 "$work/team.fingerprint")" "$(awk 'NR == 2 { print $(NF - 1) }' "$work/wide.txt")" \
    "the signer of the latest record in $store"
done
