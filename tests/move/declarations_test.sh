#!/usr/bin/env bash
# Every form a pinned reference is written in, found where it is written: a Dockerfile FROM ... AS
# build, an env value, an --image= argument, Helm's repository + tag, a ConfigMap entry, an endpoint
# request composed into an image in an .env template, a reference written twice; an external image is
# not reported. One row per occurrence. Replaced by image requests of recorded images, nothing is left,
# and move, refused before, plans the move. The declarations pin the registry's address at genesis,
# node n0 (10.20.0.11:5000), which no longer holds it: an address that held the registry counts.
AREC=$1
source "$(dirname "$0")/lib.sh"
start_registry OLD old
start_registry NEW new
cat >"$T/nodes.json" <<JSON
{"self": "n1",
 "nodes": {"n0": {"address": "10.20.0.11", "ports": {"registry": 5000}},
           "n1": {"ports": {"registry": ${OLD##*:}}},
           "n2": {"address": "127.0.0.1", "ports": {"registry": ${NEW##*:}}}},
 "services": {"registry": "n1"}}
JSON
export AREC_NODES=$T/nodes.json
D=$T/declarations
cp -r "$(dirname "$0")/declarations" "$D"

note "each occurrence: file, line, column and kind"
expect_exit 1 "$AREC" needs-rebuild "$D" --json
expect_eq "Dockerfile:2:6 genesis-pinned 10.20.0.11:5000/controlplane:genesis
agent.env.in:2:13 genesis-pinned arec://endpoint/registry/agent:1
configmap.yaml:6:16 no-build 10.20.0.11:5000/demo/nope:1.0
deploy.yaml:11:27 genesis-pinned 10.20.0.11:5000/builder:genesis
deploy.yaml:14:22 genesis-pinned 10.20.0.11:5000/builder:genesis
values.yaml:4:17 genesis-pinned 10.20.0.11:5000/agent:1.2" \
  "$(jq -r --arg d "$D/" '.[] | "\(.file | ltrimstr($d)):\(.line):\(.column) \(.kind) \(.reference)"' <<<"$OUT")" "rows"
expect_eq "$D/deploy.yaml:14" "$(jq -r '.[4].source' <<<"$OUT")" "source"
expect_eq "rebuild it through arec (arec_record) as demo/nope, then use arec://image/demo/nope" \
  "$(jq -r '.[2].action' <<<"$OUT")" "a known name in the action"
expect_eq "rebuild it through arec (arec_record) as <module>/agent, then use arec://image/<module>/agent" \
  "$(jq -r '.[1].action' <<<"$OUT")" "an endpoint request's action"
expect_exit 1 "$AREC" needs-rebuild "$D"
expect_contains "$OUT" "$D/Dockerfile:2 "
expect_contains "$OUT" "5 references in 6 places would break on a registry move"
expect_not_contains "$OUT" "nginx"
expect_exit 1 "$AREC" needs-rebuild "$D" -v
expect_contains "$OUT" "docker.io/library/nginx:1.25"

note "move is refused while any of them is left"
cp "$T/nodes.json" "$T/nodes.before"
expect_exit 1 "$AREC" move "$D" --to n2 --apply
expect_contains "$OUT" "$D/deploy.yaml:11"
expect_contains "$OUT" "$D/deploy.yaml:14"
expect_contains "$ERR" "arec: error: move refused: "
expect_not_contains "$OUT" "refused"
cmp "$T/nodes.before" "$T/nodes.json" || fail "a refused move changed the settings"

note "rebuilt through arec and written as image requests: nothing is left"
program controlplane >/dev/null
program builder >/dev/null
program agent >/dev/null
"$AREC" record --module demo --name nope --file "$T/bin/agent" >/dev/null || fail "recording demo/nope"
sed -i 's#10.20.0.11:5000/controlplane:genesis#arec://image/mesh/controlplane#' "$D/Dockerfile"
sed -i 's#10.20.0.11:5000/builder:genesis#arec://image/mesh/builder#' "$D/deploy.yaml"
sed -i 's#10.20.0.11:5000/agent#arec://image/mesh/agent#; /tag:/d' "$D/values.yaml"
sed -i 's#10.20.0.11:5000/demo/nope:1.0#arec://image/demo/nope#' "$D/configmap.yaml"
sed -i 's#arec://endpoint/registry/agent:1#arec://image/mesh/agent#' "$D/agent.env.in"
expect_exit 0 "$AREC" needs-rebuild "$D" --json
expect_eq "[]" "$(jq -c . <<<"$OUT")" "findings after the rebuild"
expect_exit 0 "$AREC" move "$D" --to n2
expect_contains "$OUT" "nothing would break when the registry moves"
expect_contains "$OUT" "run again with --apply"
echo PASS
