# `arec compose` on real files: connection strings, loopback, unknown kinds, JSON, images, atomic output.
source "$(dirname "$0")/lib.sh"

cat >"$work/nodes.json" <<'JSON'
{
  "self": "n1",
  "nodes": {
    "n1": { "address": "10.20.0.11", "ports": { "registry": 5000, "store": 6852, "bus": 5679 } },
    "n2": { "address": "fd00::12", "ports": { "broker-mgmt": 15672 } },
    "n3": { "address": "10.20.0.13" }
  },
  "services": { "registry": "n1", "store": "n1", "bus": "n1", "broker-mgmt": "n2", "dashboard": "n3" }
}
JSON
export AREC_NODES=$work/nodes.json

# Connection strings with an embedded endpoint keep their credentials, path and query untouched.
cat >"$work/conn.env" <<'TEXT'
BUS_URL=amqp://mesh@arec://endpoint/bus/vhost
STORE_URL=postgres://cp:p%40ss@arec://endpoint/store/controlplane?sslmode=disable&x=arec
MGMT=http://guest:guest@arec://endpoint/broker-mgmt/api/vhosts/%2F
MGMT_HOST=arec://address/broker-mgmt
TEXT
expect_exit 0 "$arec" compose "$work/conn.env"
expect_eq "$out" "BUS_URL=amqp://mesh@10.20.0.11:5679/vhost
STORE_URL=postgres://cp:p%40ss@10.20.0.11:6852/controlplane?sslmode=disable&x=arec
MGMT=http://guest:guest@[fd00::12]:15672/api/vhosts/%2F
MGMT_HOST=fd00::12"

# A first node with no address composes 127.0.0.1, but only for itself.
cat >"$work/genesis.json" <<'JSON'
{
  "self": "first",
  "nodes": { "first": { "ports": { "registry": 5000 } }, "second": { "address": "10.0.0.2" } },
  "services": { "registry": "first" }
}
JSON
digest=$(record mesh controlplane "control plane")
echo "image: arec://image/mesh/controlplane" >"$work/cp.yaml.in"
expect_exit 0 "$arec" --nodes "$work/genesis.json" compose "$work/cp.yaml.in" -o "$work/cp.yaml"
expect_eq "$(<"$work/cp.yaml")" "image: 127.0.0.1:5000/mesh/controlplane@$digest"
echo "previous content" >"$work/cp.yaml"
expect_exit 2 "$arec" --nodes "$work/genesis.json" --self second compose "$work/cp.yaml.in" -o "$work/cp.yaml"
expect_contains "$err" "held by node first, which has no address yet, and this is node second"
expect_eq "$(<"$work/cp.yaml")" "previous content" "OUT after a failed compose"
[[ -z $(find "$work" -maxdepth 1 -name '.tmp-*') ]] || fail "a temporary file was left beside OUT"

# An image with no record behind it is an error naming module/name; a pinned digest must be recorded.
printf 'a: 1\nimage: arec://image/mesh/builder:v1\n' >"$work/builder.yaml.in"
expect_exit 2 "$arec" compose "$work/builder.yaml.in" -o "$work/builder.yaml"
expect_contains "$err" "$work/builder.yaml.in:2: arec://image/mesh/builder:v1: no record of mesh/builder in store $AREC_STORE"
[[ ! -e $work/builder.yaml ]] || fail "OUT was written although compose failed"
old=$(record mesh builder "builder v1")
new=$(record mesh builder "builder v2")
printf 'latest: arec://image/mesh/builder:v2\npinned: arec://image/mesh/builder@%s\n' "$old" >"$work/pinned.yaml.in"
expect_exit 0 "$arec" compose "$work/pinned.yaml.in"
expect_eq "$out" "latest: 10.20.0.11:5000/mesh/builder:v2@$new
pinned: 10.20.0.11:5000/mesh/builder@$old"
echo "pinned: arec://image/mesh/controlplane@$old" >"$work/wrong.yaml.in"
expect_exit 2 "$arec" compose "$work/wrong.yaml.in"
expect_contains "$err" "no record of mesh/controlplane@$old"

# An unknown request kind (a template newer than this arec) warns, naming file and line, and composes;
# under --strict it is an error and nothing is written.
printf 'port: arec://port/store\nsecret: arec://vault/db-password\n' >"$work/newer.yaml.in"
expect_exit 0 "$arec" compose "$work/newer.yaml.in" -o "$work/newer.yaml"
expect_eq "$(<"$work/newer.yaml")" $'port: 6852\nsecret: arec://vault/db-password'
expect_contains "$err" "warning: $work/newer.yaml.in:2: arec://vault/db-password: unknown request kind \"vault\""
rm "$work/newer.yaml"
expect_exit 2 "$arec" compose "$work/newer.yaml.in" -o "$work/newer.yaml" --strict
expect_contains "$err" "$work/newer.yaml.in:2: arec://vault/db-password: unknown request kind \"vault\" (--strict)"
[[ ! -e $work/newer.yaml ]] || fail "OUT was written under --strict"

# Malformed requests of a known kind are errors with their line.
printf '\n\nimage: arec://image/controlplane\n' >"$work/bad.yaml.in"
expect_exit 2 "$arec" compose "$work/bad.yaml.in"
expect_contains "$err" "$work/bad.yaml.in:3: arec://image/controlplane: expected arec://image/MODULE/NAME"

# JSON: a string that is exactly a port request becomes a number, or "" when not given; order is kept.
cat >"$work/deploy.json" <<'JSON'
{"zeta": "arec://port/store", "alpha": {"dashboard": "arec://port/dashboard", "url": "amqp://arec://endpoint/bus/v"},
 "list": ["arec://port/bus", 3, null], "image": "arec://image/mesh/builder"}
JSON
expect_exit 0 "$arec" compose "$work/deploy.json"
expect_eq "$(jq -c . <<<"$out")" \
  "{\"zeta\":6852,\"alpha\":{\"dashboard\":\"\",\"url\":\"amqp://10.20.0.11:5679/v\"},\"list\":[5679,3,null],\"image\":\"10.20.0.11:5000/mesh/builder@$new\"}"
# --format json for a name that does not say so; --format text keeps a .json file as text.
cp "$work/deploy.json" "$work/deploy.tmpl"
expect_exit 0 "$arec" compose "$work/deploy.tmpl" --format json
expect_contains "$out" '"zeta": 6852'
expect_exit 0 "$arec" compose "$work/deploy.json" --format text
expect_contains "$out" '{"zeta": "6852", "alpha": {"dashboard": "", '

# --depfile names what OUT was composed from: the store's index only when images are asked for.
expect_exit 0 "$arec" compose "$work/pinned.yaml.in" -o "$work/pinned.yaml" --depfile "$work/pinned.d"
expect_eq "$(<"$work/pinned.d")" "$work/pinned.yaml: $work/pinned.yaml.in $work/nodes.json $AREC_STORE/index.json"
expect_exit 0 "$arec" compose "$work/conn.env" -o "$work/conn" --depfile "$work/conn.d"
expect_eq "$(<"$work/conn.d")" "$work/conn: $work/conn.env $work/nodes.json"
expect_exit 2 "$arec" compose "$work/conn.env" --depfile "$work/conn.d"

# OUT named without a directory is written in the working directory.
(cd "$work" && "$arec" compose conn.env -o conn.composed) || fail "compose -o with a bare file name"
expect_contains "$(<"$work/conn.composed")" "BUS_URL=amqp://mesh@10.20.0.11:5679/vhost"

# A template that is not there.
expect_exit 2 "$arec" compose "$work/missing.in"
expect_contains "$err" "reading template"
expect_contains "$err" "$work/missing.in"
echo "compose: ok"
