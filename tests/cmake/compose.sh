#!/usr/bin/env bash
# tests/cmake/projects/compose: arec_compose under one generator, with the module of this source tree and
# the arec of this build. Checks when the output is recomposed: after a change of the template, the node
# settings or a record, and only then.
#
#   compose.sh GENERATOR
source "$(dirname "$0")/lib.sh"

generator=${1:?usage: compose.sh GENERATOR}
AREC=$AREC_TEST_AREC  # for record_artifact
export AREC_STORE=$work/store

cp -r "$AREC_TEST_PROJECTS/compose" "$T/src"
cat >"$T/nodes.json" <<'JSON'
{ "self": "n1",
  "nodes": { "n1": { "address": "10.0.0.1", "ports": { "registry": 5000, "store": 5432 } } },
  "services": { "registry": "n1", "store": "n1" } }
JSON
v1=$(record_artifact mesh app "app v1")

configure_cmd=(cmake -S "$T/src" -B "$T/build" -G "$generator" -DAREC_EXECUTABLE="$AREC"
               -DAREC_MODULE_DIR="$AREC_TEST_SOURCE_DIR/cmake-module" -DNODES="$T/nodes.json" -DSTORE="$AREC_STORE")
build_cmd=(cmake --build "$T/build")
deploy=$T/build/deploy.yaml
ports=$T/build/conf/ports.env
# arec writes OUT by renaming a new file over it, so a new inode means it was composed again.
inode() { stat -c %i "$1"; }
# A failed build exits 1 under Ninja and 2 under Make; its output is in $OUT.
build_fails() {
  local rc=0
  "${build_cmd[@]}" >"$T/.out" 2>&1 || rc=$?
  OUT=$(<"$T/.out")
  ((rc != 0)) || fail "the build succeeded; expected it to fail: $OUT"
}

note "the first build composes both outputs"
expect_exit 0 "${configure_cmd[@]}"
expect_exit 0 "${build_cmd[@]}"
expect_eq $'image: 10.0.0.1:5000/mesh/app@'"$v1"$'\nstore: postgres://app@10.0.0.1:5432/app' "$(<"$deploy")"
expect_eq "STORE_PORT=5432" "$(<"$ports")"
[[ -e $T/build/stamp ]] || fail "ports.env was composed without building what it DEPENDS on"

note "nothing changed: nothing is recomposed"
before=$(inode "$deploy")
expect_exit 0 "${build_cmd[@]}"
expect_eq "$before" "$(inode "$deploy")" "deploy.yaml after a build with no change"

note "the node settings change: both outputs are recomposed"
sleep 1  # a coarse file system clock must see the change
sed -i 's/5432/6852/' "$T/nodes.json"
expect_exit 0 "${build_cmd[@]}"
expect_contains "$(<"$deploy")" "postgres://app@10.0.0.1:6852/app"
expect_eq "STORE_PORT=6852" "$(<"$ports")"

note "a new record: the output asking for the image is recomposed, the other is left alone"
ports_before=$(inode "$ports")
sleep 1
v2=$(record_artifact mesh app "app v2")
expect_exit 0 "${build_cmd[@]}"
expect_contains "$(<"$deploy")" "image: 10.0.0.1:5000/mesh/app@$v2"
expect_eq "$ports_before" "$(inode "$ports")" "ports.env after a new record"

note "the template changes: recomposed"
sleep 1
echo "bus: arec://port/store" >>"$T/src/deploy.yaml.in"
expect_exit 0 "${build_cmd[@]}"
expect_contains "$(<"$deploy")" "bus: 6852"

note "composing fails: the build fails with arec's message, and the output is left as it was"
kept=$(<"$deploy")
sleep 1
echo "other: arec://image/mesh/missing" >>"$T/src/deploy.yaml.in"
build_fails
expect_contains "$OUT" "no record of mesh/missing"
expect_eq "$kept" "$(<"$deploy")" "deploy.yaml after a failed compose"

note "STRICT: an unknown request kind fails the build"
sed -i '$d' "$T/src/deploy.yaml.in"
echo "secret: arec://vault/x" >>"$T/src/deploy.yaml.in"
build_fails
expect_contains "$OUT" "unknown request kind \"vault\" (--strict)"

note "unknown keywords are a FATAL_ERROR at configure time"
expect_exit 1 "${configure_cmd[@]}" -DBAD_KEYWORD=ON
expect_contains "$ERR" "arec_compose(bad.yaml): unknown argument(s): NODE"
expect_contains "$ERR" "(NODE: did you mean NODES?)"
