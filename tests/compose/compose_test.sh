#!/usr/bin/env bash
# `arec compose` on real files: connection strings, loopback, unknown kinds, JSON, images, atomic output.
AREC=$1
source "$(dirname "$0")/../lib.sh"
export AREC_STORE=$T/store SOURCE_DATE_EPOCH=0
unset AREC_NODES AREC_SELF

cat >"$T/nodes.json" <<'JSON'
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
export AREC_NODES=$T/nodes.json

# Connection strings with an embedded endpoint keep their credentials, path and query untouched.
cat >"$T/conn.env" <<'TEXT'
BUS_URL=amqp://mesh@arec://endpoint/bus/vhost
STORE_URL=postgres://cp:p%40ss@arec://endpoint/store/controlplane?sslmode=disable&x=arec
MGMT=http://guest:guest@arec://endpoint/broker-mgmt/api/vhosts/%2F
MGMT_HOST=arec://address/broker-mgmt
TEXT
expect_exit 0 "$AREC" compose "$T/conn.env"
expect_eq "BUS_URL=amqp://mesh@10.20.0.11:5679/vhost
STORE_URL=postgres://cp:p%40ss@10.20.0.11:6852/controlplane?sslmode=disable&x=arec
MGMT=http://guest:guest@[fd00::12]:15672/api/vhosts/%2F
MGMT_HOST=fd00::12" "$OUT"

# A first node with no address composes 127.0.0.1, but only for itself.
cat >"$T/genesis.json" <<'JSON'
{
  "self": "first",
  "nodes": { "first": { "ports": { "registry": 5000 } }, "second": { "address": "10.0.0.2" } },
  "services": { "registry": "first" }
}
JSON
digest=$(record_artifact mesh controlplane "control plane")
echo "image: arec://image/mesh/controlplane" >"$T/cp.yaml.in"
expect_exit 0 "$AREC" --nodes "$T/genesis.json" compose "$T/cp.yaml.in" -o "$T/cp.yaml"
expect_eq "image: 127.0.0.1:5000/mesh/controlplane@$digest" "$(<"$T/cp.yaml")"
echo "previous content" >"$T/cp.yaml"
expect_exit 2 "$AREC" --nodes "$T/genesis.json" --self second compose "$T/cp.yaml.in" -o "$T/cp.yaml"
expect_contains "$ERR" "held by node first, which has no address yet, and this is node second"
expect_eq "previous content" "$(<"$T/cp.yaml")" "OUT after a failed compose"
[[ -z $(find "$T" -maxdepth 1 -name '.tmp-*') ]] || fail "a temporary file was left beside OUT"

# An image with no record behind it is an error naming module/name; a pinned digest must be recorded.
printf 'a: 1\nimage: arec://image/mesh/builder:v1\n' >"$T/builder.yaml.in"
expect_exit 2 "$AREC" compose "$T/builder.yaml.in" -o "$T/builder.yaml"
expect_contains "$ERR" "$T/builder.yaml.in:2: arec://image/mesh/builder:v1: no record of mesh/builder in store $AREC_STORE"
[[ ! -e $T/builder.yaml ]] || fail "OUT was written although compose failed"
old=$(record_artifact mesh builder "builder v1")
new=$(record_artifact mesh builder "builder v2")
printf 'latest: arec://image/mesh/builder:v2\npinned: arec://image/mesh/builder@%s\n' "$old" >"$T/pinned.yaml.in"
expect_exit 0 "$AREC" compose "$T/pinned.yaml.in"
expect_eq "latest: 10.20.0.11:5000/mesh/builder:v2@$new
pinned: 10.20.0.11:5000/mesh/builder@$old" "$OUT"
echo "pinned: arec://image/mesh/controlplane@$old" >"$T/wrong.yaml.in"
expect_exit 2 "$AREC" compose "$T/wrong.yaml.in"
expect_contains "$ERR" "no record of mesh/controlplane@$old"

# An unknown request kind (a template newer than this arec) warns, naming file and line, and composes;
# under --strict it is an error and nothing is written.
printf 'port: arec://port/store\nsecret: arec://vault/db-password\n' >"$T/newer.yaml.in"
expect_exit 0 "$AREC" compose "$T/newer.yaml.in" -o "$T/newer.yaml"
expect_eq $'port: 6852\nsecret: arec://vault/db-password' "$(<"$T/newer.yaml")"
expect_contains "$ERR" "warning: $T/newer.yaml.in:2: arec://vault/db-password: unknown request kind \"vault\""
rm "$T/newer.yaml"
expect_exit 2 "$AREC" compose "$T/newer.yaml.in" -o "$T/newer.yaml" --strict
expect_contains "$ERR" "$T/newer.yaml.in:2: arec://vault/db-password: unknown request kind \"vault\" (--strict)"
[[ ! -e $T/newer.yaml ]] || fail "OUT was written under --strict"

# Malformed requests of a known kind are errors with their line.
printf '\n\nimage: arec://image/controlplane\n' >"$T/bad.yaml.in"
expect_exit 2 "$AREC" compose "$T/bad.yaml.in"
expect_contains "$ERR" "$T/bad.yaml.in:3: arec://image/controlplane: expected arec://image/MODULE/NAME"

# JSON: a string that is exactly a port request becomes a number, or "" when not given; order is kept.
cat >"$T/deploy.json" <<'JSON'
{"zeta": "arec://port/store", "alpha": {"dashboard": "arec://port/dashboard", "url": "amqp://arec://endpoint/bus/v"},
 "list": ["arec://port/bus", 3, null], "image": "arec://image/mesh/builder"}
JSON
expect_exit 0 "$AREC" compose "$T/deploy.json"
expect_eq "{\"zeta\":6852,\"alpha\":{\"dashboard\":\"\",\"url\":\"amqp://10.20.0.11:5679/v\"},\"list\":[5679,3,null],\"image\":\"10.20.0.11:5000/mesh/builder@$new\"}" \
  "$(jq -c . <<<"$OUT")"
# --format json for a name that does not say so; --format text keeps a .json file as text.
cp "$T/deploy.json" "$T/deploy.tmpl"
expect_exit 0 "$AREC" compose "$T/deploy.tmpl" --format json
expect_contains "$OUT" '"zeta": 6852'
expect_exit 0 "$AREC" compose "$T/deploy.json" --format text
expect_contains "$OUT" '{"zeta": "6852", "alpha": {"dashboard": "", '

# --depfile names what OUT was composed from: the store's index only when images are asked for.
expect_exit 0 "$AREC" compose "$T/pinned.yaml.in" -o "$T/pinned.yaml" --depfile "$T/pinned.d"
expect_eq "$T/pinned.yaml: $T/pinned.yaml.in $T/nodes.json $AREC_STORE/index.json" "$(<"$T/pinned.d")"
expect_exit 0 "$AREC" compose "$T/conn.env" -o "$T/conn" --depfile "$T/conn.d"
expect_eq "$T/conn: $T/conn.env $T/nodes.json" "$(<"$T/conn.d")"
expect_exit 2 "$AREC" compose "$T/conn.env" --depfile "$T/conn.d"

# OUT named without a directory is written in the working directory.
(cd "$T" && "$AREC" compose conn.env -o conn.composed) || fail "compose -o with a bare file name"
expect_contains "$(<"$T/conn.composed")" "BUS_URL=amqp://mesh@10.20.0.11:5679/vhost"

# A template that is not there.
expect_exit 2 "$AREC" compose "$T/missing.in"
expect_contains "$ERR" "reading template"
expect_contains "$ERR" "$T/missing.in"
echo "compose: ok"
