# Builds ./project with arec_compose under one generator and checks when the output is recomposed:
# after a change of the template, the node settings or a record, and only then.
#   bash run.sh PATH/TO/arec GENERATOR
source "$(dirname "$0")/../cli/lib.sh"
generator=${2:?usage: bash run.sh PATH/TO/arec GENERATOR}
here=$(cd "$(dirname "$0")" && pwd)
modules=$(cd "$here/../../cmake-module" && pwd)

cp -r "$here/project" "$work/src"
cat >"$work/nodes.json" <<'JSON'
{ "self": "n1",
  "nodes": { "n1": { "address": "10.0.0.1", "ports": { "registry": 5000, "store": 5432 } } },
  "services": { "registry": "n1", "store": "n1" } }
JSON
v1=$(record mesh app "app v1")

configure=(cmake -S "$work/src" -B "$work/build" -G "$generator" -DAREC_EXECUTABLE="$arec" -DAREC_MODULE_DIR="$modules"
           -DNODES="$work/nodes.json" -DSTORE="$AREC_STORE")
build=(cmake --build "$work/build")
deploy=$work/build/deploy.yaml
ports=$work/build/conf/ports.env
# arec writes OUT by renaming a new file over it, so a new inode means it was composed again.
inode() { stat -c %i "$1"; }
# A failed build exits 1 under Ninja and 2 under Make.
build_fails() {
  local code=0
  "${build[@]}" >"$work/.out" 2>&1 || code=$?
  out=$(<"$work/.out")
  ((code != 0)) || fail "the build succeeded; expected it to fail: <<$out>>"
}

expect_exit 0 "${configure[@]}"
expect_exit 0 "${build[@]}"
expect_eq "$(<"$deploy")" $'image: 10.0.0.1:5000/mesh/app@'"$v1"$'\nstore: postgres://app@10.0.0.1:5432/app'
expect_eq "$(<"$ports")" "STORE_PORT=5432"

# Nothing changed: nothing is recomposed.
before=$(inode "$deploy")
expect_exit 0 "${build[@]}"
expect_eq "$(inode "$deploy")" "$before" "deploy.yaml after a build with no change"

# The node settings change: both outputs are recomposed.
sleep 1  # a coarse file system clock must see the change
sed -i 's/5432/6852/' "$work/nodes.json"
expect_exit 0 "${build[@]}"
expect_contains "$(<"$deploy")" "postgres://app@10.0.0.1:6852/app"
expect_eq "$(<"$ports")" "STORE_PORT=6852"

# A new record: the output that asks for the image is recomposed, the one that does not is left alone.
ports_before=$(inode "$ports")
sleep 1
v2=$(record mesh app "app v2")
expect_exit 0 "${build[@]}"
expect_contains "$(<"$deploy")" "image: 10.0.0.1:5000/mesh/app@$v2"
expect_eq "$(inode "$ports")" "$ports_before" "ports.env after a new record"

# The template changes: recomposed.
sleep 1
echo "bus: arec://port/store" >>"$work/src/deploy.yaml.in"
expect_exit 0 "${build[@]}"
expect_contains "$(<"$deploy")" "bus: 6852"

# Composing fails: the build fails with arec's message, and the output is left as it was.
kept=$(<"$deploy")
sleep 1
echo "other: arec://image/mesh/missing" >>"$work/src/deploy.yaml.in"
build_fails
expect_contains "$out" "no record of mesh/missing"
expect_eq "$(<"$deploy")" "$kept" "deploy.yaml after a failed compose"

# STRICT: an unknown request kind fails the build.
sed -i '$d' "$work/src/deploy.yaml.in"
echo "secret: arec://vault/x" >>"$work/src/deploy.yaml.in"
build_fails
expect_contains "$out" "unknown request kind \"vault\" (--strict)"

# Unknown keywords are a FATAL_ERROR at configure time.
expect_exit 1 "${configure[@]}" -DBAD_KEYWORD=ON
expect_contains "$err" "arec_compose(bad.yaml): unknown arguments: NODE"
echo "arec_compose with $generator: ok"
