#!/usr/bin/env bash
# The signing key is an input of every record, with Ninja, Unix Makefiles and Ninja Multi-Config: a build
# over an up-to-date tree with AREC_SIGNING_KEY set records again, exactly once, and signs (a cached CI
# build does not push unsigned records); the same key again records nothing; a key that goes away is
# another key signs again; a SIGN_KEY file whose key is replaced in place records again what it signs,
# and only that; a key that goes away is said (a warning, once) and leaves the records signed.
source "$(dirname "$0")/lib.sh"

AREC=$AREC_TEST_AREC
unset AREC_SIGNING_KEY
cd "$work"
for key in team team2 release release2; do "$AREC" key generate --out "$key" >/dev/null 2>&1 || fail "key generate $key"; done
fingerprint() { openssl pkey -pubin -in "$1" -outform DER | sha256sum | cut -c1-64; }

# signer STORE NAME: the key whose bundles sign team/NAME's latest record ("" when unsigned).
signer() { "$AREC" --store "$1" inspect "team/$2" --json | jq -r '.signature.key // ""'; }
# bundles STORE NAME: how many Sigstore bundles the store keeps for team/NAME's latest record.
bundles() {
  jq --arg d "$(digest_of "$1" "team/$2")" \
    '[.manifests[] | select(.artifactType == "application/vnd.dev.sigstore.bundle.v0.3+json")
      | select(.annotations["dev.arec.subject"] == $d)] | length' "$1/index.json"
}
history_size() { records "$1" --history | jq length; }

for generator in Ninja "Unix Makefiles" "Ninja Multi-Config"; do
  note "$generator"
  dir=$work/${generator// /-}
  store=$dir/store
  mkdir -p "$dir" && cp release.key "$dir.release.key"
  configure "$dir/configure.log" "$AREC_TEST_PROJECTS/signing" "$dir/build" -G "$generator" -DCMAKE_BUILD_TYPE=Release \
    -DAREC_EXECUTABLE="$AREC" -DAREC_MODULE_DIR="$AREC_TEST_SOURCE_DIR/cmake-module" -DSTORE="$store" \
    -DRELEASE_KEY="$dir.release.key"
  # build_as LOG [KEY]: a build of Release with AREC_SIGNING_KEY=KEY in its environment, or none.
  build_as() {
    local log=$1
    if [[ -n ${2:-} ]]; then
      AREC_SIGNING_KEY=$2 build "$log" "$dir/build" --config Release
    else
      build "$log" "$dir/build" --config Release
    fi
  }

  build_as "$dir/first.log"
  expect_eq 3 "$(recordings_in "$dir/first.log")" "recordings of the first build"
  expect_eq "" "$(signer "$store" api)" "signer of team/api built without a key"
  expect_eq "$(fingerprint release.pub)" "$(signer "$store" release)" "signer of team/release (SIGN_KEY)"
  build_as "$dir/noop.log"
  expect_eq 0 "$(recordings_in "$dir/noop.log")" "recordings of a build with nothing changed"

  note "$generator: AREC_SIGNING_KEY set over the up-to-date tree: recorded again, once, and signed"
  build_as "$dir/signed.log" "$work/team.key"
  expect_eq 2 "$(recordings_in "$dir/signed.log")" "recordings once the key is set (api, tool)"
  expect_contains "$(<"$dir/signed.log")" "signing with the key $(fingerprint team.pub | cut -c1-16)" "the build's output"
  expect_eq 3 "$(history_size "$store")" "records (the same bytes: none new)"
  for name in api tool; do
    expect_eq "$(fingerprint team.pub)" "$(signer "$store" "$name")" "signer of team/$name"
    expect_eq 2 "$(bundles "$store" "$name")" "bundles of team/$name (signature and provenance)"
  done
  expect_eq "$(fingerprint release.pub)" "$(signer "$store" release)" "signer of team/release (its own key)"
  expect_eq 2 "$(bundles "$store" release)" "bundles of team/release"

  build_as "$dir/signed-again.log" "$work/team.key"
  expect_eq 0 "$(recordings_in "$dir/signed-again.log")" "recordings of a build with the same key"
  expect_eq 2 "$(bundles "$store" api)" "bundles of team/api after a build with the same key"

  note "$generator: another key signs again"
  build_as "$dir/team2.log" "$work/team2.key"
  expect_eq 2 "$(recordings_in "$dir/team2.log")" "recordings with another key"
  expect_contains "$(<"$dir/team2.log")" "the signing key is now $(fingerprint team2.pub | cut -c1-16)" "the build's output"
  expect_eq 4 "$(bundles "$store" api)" "bundles of team/api signed by two keys"

  note "$generator: the SIGN_KEY file's key replaced in place: only what it signs is recorded again"
  cp release2.key "$dir.release.key"
  build_as "$dir/rotated.log" "$work/team2.key"
  expect_eq 1 "$(recordings_in "$dir/rotated.log")" "recordings once the release key is replaced"
  expect_eq 4 "$(bundles "$store" release)" "bundles of team/release signed by both release keys"
  build_as "$dir/rotated-again.log" "$work/team2.key"
  expect_eq 0 "$(recordings_in "$dir/rotated-again.log")" "recordings of the next build"

  note "$generator: the key goes away: said once; the records stay signed"
  build_as "$dir/gone.log"
  expect_contains "$(<"$dir/gone.log")" "now no signing key is set (AREC_SIGNING_KEY or SIGN_KEY): what it records from now on is unsigned" \
    "the build's output once the key is gone"
  expect_eq 3 "$(history_size "$store")" "records after the key went away"
  expect_eq 4 "$(bundles "$store" api)" "bundles of team/api after the key went away"
  build_as "$dir/gone-again.log"
  expect_eq 0 "$(recordings_in "$dir/gone-again.log")" "recordings of a second build without the key"
  expect_not_contains "$(<"$dir/gone-again.log")" "no signing key" "the second build's output without the key"

  note "$generator: a key that does not load fails the build, naming it"
  if AREC_SIGNING_KEY=$work/missing.key cmake --build "$dir/build" --config Release >"$dir/bad.log" 2>&1; then
    fail "a build with AREC_SIGNING_KEY naming no file succeeded"
  fi
  expect_contains "$(<"$dir/bad.log")" "AREC_SIGNING_KEY" "the failed build's output"
  check_store "$store"
done
echo PASS
