#!/usr/bin/env bash
# Every form a pinned reference is written in, found where it is written: a Dockerfile FROM ... AS
# build, an env value, an --image= argument, Helm's repository + tag, a ConfigMap entry, an endpoint
# request composed into an image in an .env template, a reference written twice, references in
# ${VAR:-…} and ${VAR-…} defaults, Helm's three keys (registry, repository, tag), a digest no record
# has; an external image is not reported, another service's address is information only, and arec's
# own sha256-… referrer tags in the catalog are no references. One row per occurrence; a file too large
# to read is named and counted, never silently passed over. Each action
# followed, every declaration composes, nothing is left, and move, refused before, plans the move. The
# declarations pin the registry's address at genesis, node n0 (10.20.0.11:5000), which no longer holds
# it: an address that held the registry counts.
AREC=$1
source "$(dirname "$0")/lib.sh"
start_registry OLD old
start_registry NEW new
cat >"$T/nodes.json" <<JSON
{"self": "n1",
 "nodes": {"n0": {"address": "10.20.0.11", "ports": {"registry": 5000, "db": 6379}},
           "n1": {"ports": {"registry": ${OLD##*:}}},
           "n2": {"address": "127.0.0.1", "ports": {"registry": ${NEW##*:}}}},
 "services": {"registry": "n1", "db": "n0"}}
JSON
export AREC_NODES=$T/nodes.json
D=$T/declarations
zeros=0000000000000000000000000000000000000000000000000000000000000000
cp -r "$(dirname "$0")/declarations" "$D"
echo tool >"$T/tool"
"$AREC" record --module tools --name sha256 --file "$T/tool" >/dev/null || fail "recording tools/sha256"

note "each occurrence: file, line, column and kind"
expect_exit 1 "$AREC" needs-rebuild "$D" --json
expect_eq "Dockerfile:2:6 genesis-pinned 10.20.0.11:5000/controlplane:genesis
agent.env.in:2:13 genesis-pinned arec://endpoint/registry/agent:1
chart-values.yaml:4:15 no-build 10.20.0.11:5000/demo/helm:2.0
compose.yaml:5:24 no-build 10.20.0.11:5000/demo/web:1
compose.yaml:7:16 no-build 10.20.0.11:5000/demo/web:1
compose.yaml:9:34 other-service 10.20.0.11:6379
configmap.yaml:6:16 no-build 10.20.0.11:5000/demo/nope:1.0
deploy.yaml:11:27 genesis-pinned 10.20.0.11:5000/builder:genesis
deploy.yaml:14:22 genesis-pinned 10.20.0.11:5000/builder:genesis
tools.env:2:6 no-build 10.20.0.11:5000/tools/sha256@sha256:$zeros
values.yaml:4:17 genesis-pinned 10.20.0.11:5000/agent:1.2" \
  "$(jq -r --arg d "$D/" '.[] | "\(.file | ltrimstr($d)):\(.line):\(.column) \(.kind) \(.reference)"' <<<"$OUT")" "rows"
expect_eq "$D/deploy.yaml:14" "$(jq -r '.[8].source' <<<"$OUT")" "source"
expect_eq "rebuild it through arec (arec_record) as demo/nope, then use arec://image/demo/nope" \
  "$(jq -r '.[6].action' <<<"$OUT")" "a known name in the action"
# The store's one module (tools) names it.
expect_eq "rebuild it through arec (arec_record) as tools/agent, then use arec://image/tools/agent" \
  "$(jq -r '.[1].action' <<<"$OUT")" "an endpoint request's action"
expect_eq "none: db does not move with the registry (arec://endpoint/db would follow it if it did)" \
  "$(jq -r '.[5].action' <<<"$OUT")" "another service's address is information"
expect_eq "no record of tools/sha256 has sha256:$zeros: rebuild it through arec (arec_record) as tools/sha256, then use arec://image/tools/sha256" \
  "$(jq -r '.[9].action' <<<"$OUT")" "a digest never recorded is rebuilt, not requested"
expect_exit 1 "$AREC" needs-rebuild "$D"
expect_contains "$OUT" "$D/Dockerfile:2 "
expect_contains "$OUT" "8 references in 10 places would break on a registry move (read 8 files)"

note "a file larger than 16 MiB is not read, and said: a warning naming it, the count in the summary and in move --json"
truncate -s 17M "$D/huge.yaml"
expect_exit 1 "$AREC" needs-rebuild "$D"
expect_contains "$ERR" "arec: warning: $D/huge.yaml: not read, larger than the 16 MiB a declaration may be"
expect_contains "$OUT" "8 references in 10 places would break on a registry move (read 8 files, skipped 1 larger than 16 MiB)"
expect_exit 1 "$AREC" move "$D" --to n2 --json
expect_eq "8 1" "$(jq -r '"\(.declarations.read) \(.declarations.skipped_for_size)"' <<<"$OUT")" "move --json: declarations read, skipped for size"
rm "$D/huge.yaml"

note "without a path, the current directory; reading no file is an error, never an all-clear"
(cd "$D" && expect_exit 1 "$AREC" needs-rebuild && expect_contains "$OUT" "8 references in 10 places would break on a registry move (read 8 files)") ||
  fail "needs-rebuild in $D"
mkdir -p "$T/empty"
(cd "$T/empty" && expect_exit 2 "$AREC" needs-rebuild && expect_eq "arec: error: needs-rebuild read no file: . holds no text file (of at most 16 MiB)" "$ERR") ||
  fail "needs-rebuild in an empty directory"
expect_exit 2 "$AREC" needs-rebuild "$T/empty"
expect_contains "$ERR" "read no file"
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
"$AREC" record --module demo --name web --file "$T/bin/agent" >/dev/null || fail "recording demo/web"
"$AREC" record --module demo --name helm --file "$T/bin/agent" >/dev/null || fail "recording demo/helm"
sed -i 's#${REGISTRY:-10.20.0.11:5000}/demo/web:1#arec://image/demo/web#; s#${R-10.20.0.11:5000}/demo/web:1#arec://image/demo/web#' "$D/compose.yaml"
printf 'web:\n  image: arec://image/demo/helm\n' >"$D/chart-values.yaml"
"$AREC" record --module tools --name sha256 --file "$T/bin/agent" >/dev/null || fail "rebuilding tools/sha256"
sed -i "s#10.20.0.11:5000/tools/sha256@sha256:$zeros#arec://image/tools/sha256#" "$D/tools.env"
expect_exit 0 "$AREC" needs-rebuild "$D" --json
expect_eq '[{"reference":"10.20.0.11:6379","kind":"other-service"}]' "$(jq -c 'map({reference, kind})' <<<"$OUT")" "findings after the rebuild"
for f in "$D"/*; do
  expect_exit 0 "$AREC" compose "$f" -o "$T/composed.out"
done

note "arec's own referrer tags at the registry are no references; another service's address never refuses a move"
"$AREC" push demo/web >/dev/null || fail "pushing demo/web with its SBOM"
expect_exit 0 "$AREC" move "$D" --to n2 --json
expect_eq "false" "$(jq -r .refused <<<"$OUT")" "refused"
expect_not_contains "$(jq -c .findings <<<"$OUT")" "sha256-"
expect_exit 0 "$AREC" move "$D" --to n2
expect_contains "$OUT" "nothing would break when the registry moves; these stay as they are:"
expect_contains "$OUT" "10.20.0.11:6379"
expect_contains "$OUT" "run again with --apply"
echo PASS
