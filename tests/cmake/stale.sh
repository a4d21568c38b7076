#!/usr/bin/env bash
# A record follows every input it records, with Ninja and with Unix Makefiles: a changed FILES input
# records again (once) and recomposes what asks for the image; so does a DIRECTORIES tree (a changed
# file, a new one); a changed shared library of the project records the executable that loads it again
# though the executable does not relink (CMAKE_LINK_DEPENDS_NO_SHARED=ON); a build that changes nothing
# records nothing.
source "$(dirname "$0")/lib.sh"

AREC=$AREC_TEST_AREC
history_size() { records "$1" --history | jq length; }
history_of() { records "$1" --history | jq -r --arg repo "$2" '[.[] | select(.module + "/" + .name == $repo)] | length'; }

for generator in Ninja "Unix Makefiles"; do
  note "$generator"
  dir=$work/${generator// /-}
  store=$dir/store
  cp -r "$AREC_TEST_PROJECTS/configs" "$dir/src" 2>/dev/null || { mkdir -p "$dir" && cp -r "$AREC_TEST_PROJECTS/configs" "$dir/src"; }
  configure "$dir/configure.log" "$dir/src" "$dir/build" -G "$generator" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_LINK_DEPENDS_NO_SHARED=ON -DAREC_EXECUTABLE="$AREC" -DAREC_MODULE_DIR="$AREC_TEST_SOURCE_DIR/cmake-module" \
    -DSTORE="$store"
  build "$dir/first.log" "$dir/build"
  expect_eq 2 "$(history_size "$store")" "records of the first build"
  prod=$dir/build/prod-Release.yaml
  first=$(digest_of "$store" team/api)
  expect_contains "$(<"$prod")" "team/api@$first" "prod-Release.yaml"

  build "$dir/noop.log" "$dir/build"
  expect_eq 0 "$(recordings_in "$dir/noop.log")" "recordings of a build with nothing changed"
  expect_eq 2 "$(history_size "$store")" "records after a build with nothing changed"

  note "$generator: a FILES input changes"
  inode=$(stat -c %i "$prod")
  echo 'listen = 9090' >"$dir/src/svc.toml"
  build "$dir/files.log" "$dir/build"
  expect_eq 3 "$(history_size "$store")" "records after svc.toml changed: exactly one new"
  second=$(digest_of "$store" team/api)
  [[ $second != "$first" ]] || fail "team/api kept its digest though svc.toml changed"
  expect_eq "listen = 9090" "$(cat "$(unpack_image "$store" team/api)/rootfs/etc/api/svc.toml")" "svc.toml in the image"
  [[ $(stat -c %i "$prod") != "$inode" ]] || fail "prod-Release.yaml was not composed again"
  expect_contains "$(<"$prod")" "team/api@$second" "prod-Release.yaml after svc.toml changed"

  note "$generator: a DIRECTORIES tree changes (a file, then a new file)"
  echo '<h1>v2</h1>' >"$dir/src/static/index.html"
  build "$dir/dir.log" "$dir/build"
  expect_eq 4 "$(history_size "$store")" "records after static/index.html changed"
  sleep 1  # a new entry changes the directory's time, which must be after the stamp's
  echo 'body {}' >"$dir/src/static/site.css"
  build "$dir/newfile.log" "$dir/build"
  expect_eq 5 "$(history_size "$store")" "records after static/site.css was added"
  expect_contains "$(image_files "$store" team/api)" "./srv/static/site.css" "the image's files"

  note "$generator: the project's shared library changes; the executable does not relink"
  api_records=$(history_of "$store" team/api)
  sed -i 's/core-v1/core-v2/' "$dir/src/core.cpp"
  build "$dir/core.log" "$dir/build"
  expect_not_contains "$(<"$dir/core.log")" "Linking CXX executable" "the build output (api must not relink)"
  expect_eq $((api_records + 1)) "$(history_of "$store" team/api)" "records of team/api after libcore changed"
  expect_contains "$(run_image "$store" team/api)" "api release on core-v2" "what the recorded api prints"
  expect_contains "$(<"$prod")" "team/api@$(digest_of "$store" team/api)" "prod-Release.yaml after libcore changed"

  build "$dir/noop2.log" "$dir/build"
  expect_eq 0 "$(recordings_in "$dir/noop2.log")" "recordings of a second build with nothing changed"
  check_store "$store"
done
