#!/usr/bin/env bash
# Configurations are kept apart: with Ninja Multi-Config, a Debug build after a Release one changes
# nothing that a Release compose (CMake's and arec compose --config Release), push or gc --keep sees;
# a request can name its configuration; a Makefiles single-config build with CMAKE_BUILD_TYPE behaves
# as before configurations were told apart.
source "$(dirname "$0")/lib.sh"

AREC=$AREC_TEST_AREC
[[ -n ${AREC_TEST_REGISTRY:-} ]] || fail "AREC_TEST_REGISTRY is not set: run the tests through scripts/test"
store=$work/store
cp -r "$AREC_TEST_PROJECTS/configs" "$work/src"
project=(-DAREC_EXECUTABLE="$AREC" -DAREC_MODULE_DIR="$AREC_TEST_SOURCE_DIR/cmake-module" -DSTORE="$store")
digest_in() {  # STORE CONFIG MODULE/NAME: the latest digest of that configuration
  "$AREC" --store "$1" records "$3" --config "$2" --json | jq -r '.[0].digest'
}

note "Release, then Debug"
configure "$work/configure.log" "$work/src" "$work/build" -G "Ninja Multi-Config" "${project[@]}"
build "$work/release.log" "$work/build" --config Release
release=$(digest_in "$store" Release team/api)
[[ $release == sha256:* ]] || fail "no Release record of team/api: $(records "$store")"
expect_contains "$(<"$work/build/prod-Release.yaml")" "api: 10.0.0.1:5000/team/api@$release" "prod-Release.yaml after the Release build"
build "$work/debug.log" "$work/build" --config Debug
debug=$(digest_in "$store" Debug team/api)
[[ $debug == sha256:* && $debug != "$release" ]] || fail "Debug record of team/api: $debug (Release: $release)"
expect_contains "$(<"$work/build/prod-Debug.yaml")" "api: 10.0.0.1:5000/team/api@$debug" "prod-Debug.yaml"
expect_contains "$(<"$work/build/prod-Release.yaml")" "api: 10.0.0.1:5000/team/api@$release" "prod-Release.yaml after the Debug build"
build "$work/release2.log" "$work/build" --config Release
expect_contains "$(<"$work/build/prod-Release.yaml")" "api: 10.0.0.1:5000/team/api@$release" "prod-Release.yaml after building Release again"
expect_eq '["team","core-debug","core","Debug"]' "$(record_rows "$store" | jq -c '.[] | select(.[1] == "core-debug")')" \
  "the record of a NAME given as a generator expression"
expect_eq 0 "$(recordings_in "$work/release2.log")" "recordings of a Release build with nothing changed"

note "arec compose: --config, the default, a request's ?config="
template=$work/src/deploy.yaml.in
nodes=(--store "$store" --nodes "$work/src/prod.json")
expect_exit 0 "$AREC" "${nodes[@]}" compose "$template" --config Release
expect_contains "$OUT" "team/api@$release" "compose --config Release"
expect_exit 0 "$AREC" "${nodes[@]}" compose "$template"
expect_contains "$OUT" "team/api@$release" "compose without --config (the default, Release)"
expect_contains "$ERR" "team/api has records of Debug, Release: using the default configuration, Release" "what compose says"
AREC_DEFAULT_CONFIG=Debug expect_exit 0 "$AREC" "${nodes[@]}" compose "$template"
expect_contains "$OUT" "team/api@$debug" "compose with AREC_DEFAULT_CONFIG=Debug"
expect_exit 0 "$AREC" "${nodes[@]}" --default-config Debug compose - --config Release <<<"a: arec://image/team/api?config=Debug"
expect_eq "a: 10.0.0.1:5000/team/api@$debug" "$OUT" "a request naming its configuration"
expect_exit 2 "$AREC" "${nodes[@]}" compose - <<<"a: arec://image/team/api?config=MinSizeRel"
expect_contains "$ERR" "team/api: no record of configuration MinSizeRel (its records are of Debug, Release)" "an unknown configuration"
expect_exit 2 "$AREC" "${nodes[@]}" --default-config MinSizeRel compose "$template"
expect_contains "$ERR" "none of the default configuration MinSizeRel" "several configurations, none the default"

note "records, inspect and sbom follow the same choice"
expect_exit 0 "$AREC" --store "$store" records team/api --json
expect_eq "$release" "$(jq -r '.[0].digest' <<<"$OUT")" "records team/api"
expect_exit 0 "$AREC" --store "$store" inspect team/api --config Debug --json
expect_contains "$OUT" "$debug" "inspect --config Debug"
expect_exit 2 "$AREC" --store "$store" records --config 'Re lease'
expect_contains "$ERR" "not a configuration" "records --config with a bad name"

note "push tags latest from Release, latest-debug from Debug"
printf '{"self": "n1", "nodes": {"n1": {"ports": {"registry": %s}}}, "services": {"registry": "n1"}}\n' \
  "${AREC_TEST_REGISTRY##*:}" >"$work/registry.json"
expect_exit 0 "$AREC" --store "$store" --nodes "$work/registry.json" push team/api --json
expect_eq "[[\"$debug\",[\"latest-debug\"]],[\"$release\",[\"latest\"]]]" \
  "$(jq -c '[.images[] | [.digest, .tags]] | sort_by(.[1][0]) | reverse' <<<"$OUT")" "the tags push wrote"
expect_eq "$release" "$(skopeo inspect --tls-verify=false --no-tags "docker://$AREC_TEST_REGISTRY/team/api:latest" | jq -r .Digest)" \
  "team/api:latest at the registry"
expect_exit 0 "$AREC" --store "$store" --nodes "$work/registry.json" verify team/api --config Release --json
expect_eq "[\"$release\"]" "$(jq -c '[.[].digest]' <<<"$OUT")" "verify --config Release"

note "gc --keep 1 keeps one record of each configuration"
echo 'listen = 8081' >"$work/src/svc.toml"
build "$work/release3.log" "$work/build" --config Release
release2=$(digest_in "$store" Release team/api)
[[ $release2 != "$release" ]] || fail "changing svc.toml made no new Release record"
expect_exit 0 "$AREC" --store "$store" gc --keep 1
expect_eq "[[\"Debug\",\"$debug\"],[\"Release\",\"$release2\"]]" \
  "$("$AREC" --store "$store" records team/api --history --json | jq -c '[.[] | [.config, .digest]] | sort')" \
  "the history of team/api after gc --keep 1"
check_store "$store"

note "Makefiles, one configuration (CMAKE_BUILD_TYPE): as before"
cp -r "$AREC_TEST_PROJECTS/configs" "$work/src-make"
configure "$work/make-configure.log" "$work/src-make" "$work/make" -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=Release \
  "${project[@]/#-DSTORE=*/-DSTORE=$work/make-store}"
build "$work/make.log" "$work/make"
expect_eq '[["team","api","api","Release"],["team","core-release","core","Release"]]' "$(record_rows "$work/make-store")" "records"
made=$(digest_of "$work/make-store" team/api)
expect_exit 0 "$AREC" --store "$work/make-store" --nodes "$work/src-make/prod.json" compose "$work/src-make/deploy.yaml.in"
expect_contains "$OUT" "team/api@$made" "compose without --config"
expect_not_contains "$ERR" "default configuration" "what compose says of one configuration"
expect_contains "$(<"$work/make/prod-Release.yaml")" "team/api@$made" "prod-Release.yaml"
build "$work/make-again.log" "$work/make"
expect_eq 0 "$(recordings_in "$work/make-again.log")" "recordings of a Makefiles build with nothing changed"
