#!/usr/bin/env bash
# The plan of a move: the settings change as a diff in the file's order (exactly what --apply writes),
# --json, a plan made while the registry is down (its catalog reported as not checked; --apply still
# needs it), refusals on stderr, and --to the node that holds the registry already.
AREC=$1
source "$(dirname "$0")/lib.sh"
start_registry OLD old
start_registry NEW new
mesh_settings "${OLD##*:}" "${NEW##*:}"
old_port=${OLD##*:} new_port=${NEW##*:}
cp "$T/nodes.json" "$T/nodes.before"
controlplane=$(program controlplane)
expect_exit 0 "$AREC" push -q

note "the settings change is a diff of the file, in its order"
expect_exit 0 "$AREC" move --to n2 --port 5999
# The file as written: four lines, compact; the diff is of those lines, and only two values change.
expected_diff="--- $T/nodes.json
+++ $T/nodes.json (after the move)
@@ -1,4 +1,4 @@
 {\"self\": \"n1\",
  \"nodes\": {\"n1\": {\"ports\": {\"registry\": $old_port, \"store\": 6852, \"bus\": 5679}},
-           \"n2\": {\"address\": \"127.0.0.1\", \"ports\": {\"registry\": $new_port}}},
- \"services\": {\"registry\": \"n1\", \"store\": \"n1\", \"bus\": \"n1\"}}
+           \"n2\": {\"address\": \"127.0.0.1\", \"ports\": {\"registry\": 5999}}},
+ \"services\": {\"registry\": \"n2\", \"store\": \"n1\", \"bus\": \"n1\"}}"
expect_eq "moving the registry from node n1 ($OLD) to node n2 (127.0.0.1:5999)

nothing would break when the registry moves

records to copy (1):
  $controlplane

node settings change:
$expected_diff

this is the plan; run again with --apply to carry it out" "$OUT" "the plan"
expect_eq "" "$ERR" "stderr of the plan"
cmp "$T/nodes.before" "$T/nodes.json" || fail "a plan changed the settings"

note "--json: the same plan for scripts"
expect_exit 0 "$AREC" move --to n2 --json
expect_eq "n1 $OLD n2 $NEW false true $controlplane false false" \
  "$(json_get '"\(.from.node) \(.from.registry) \(.to.node) \(.to.registry) \(.nothing_to_move) \(.catalog.checked) \(.records | join(",")) \(.refused) \(.applied)"' <<<"$OUT")" "plan --json"
expect_eq "self nodes services" "$(json_get '.settings.after | keys_unsorted | join(" ")' <<<"$OUT")" "keys of the settings after, in the file's order"
json_diff=$(json_get .settings.diff <<<"$OUT")

note "--apply writes what the diff says: GNU diff of the old file and the new one gives the same hunks"
expect_exit 0 "$AREC" move --to n2 --apply --json
expect_eq "true 1" "$(json_get '"\(.applied) \(.copied.verified)"' <<<"$OUT")" "move --apply --json"
# Only the value that moves changes; every other byte of the file stays as it was written.
expect_eq "$(sed 's/"services": {"registry": "n1"/"services": {"registry": "n2"/' "$T/nodes.before")" "$(cat "$T/nodes.json")" \
  "settings written: the file as it was, but the registry's node"
expect_eq "$(diff -u "$T/nodes.before" "$T/nodes.json" | tail -n +3)" "$(tail -n +3 <<<"$json_diff")" "the diff shown against diff -u"

note "--to the node that holds the registry at that port: nothing to move, exit 0"
expect_exit 0 "$AREC" move --to n2
expect_eq "nothing to move: node n2 holds the registry at $NEW already" "$OUT"
expect_exit 0 "$AREC" move --to n2 --port "$new_port" --json
expect_eq "true n2 $NEW" "$(json_get '"\(.nothing_to_move) \(.to.node) \(.to.registry)"' <<<"$OUT")" "nothing to move --json"

note "with the registry down the plan is still made; its catalog is reported as not checked"
"$ROOT/scripts/registry" stop "$T/registries/new"
timed 5000 0 "$AREC" move --to n1
expect_contains "$OUT" "moving the registry from node n2 ($NEW) to node n1 ($OLD)"
expect_contains "$OUT" "records to copy (1):
  $controlplane"
expect_contains "$OUT" "nothing would break when the registry moves
the registry's catalog was not checked (reading the catalog of $NEW: checking the registry (GET /v2/): Failed to connect"
expect_contains "$OUT" "--apply checks it first"
expect_exit 0 "$AREC" move --to n1 --json
expect_eq "false" "$(json_get .catalog.checked <<<"$OUT")" "catalog checked with the registry down"
expect_contains "$(json_get .catalog.reason <<<"$OUT")" "reading the catalog of $NEW: checking the registry (GET /v2/): Failed to connect"
cp "$T/nodes.json" "$T/nodes.moved"
AREC_RETRY_BUDGET=1 expect_exit 3 "$AREC" move --to n1 --apply -q
expect_one_line_error "arec: error: reading the catalog of $NEW: checking the registry (GET /v2/): Failed to connect"
cmp "$T/nodes.moved" "$T/nodes.json" || fail "a move that could not read the catalog changed the settings"

note "a refusal goes to stderr, the findings with the plan to stdout"
mkdir -p "$T/deploy"
printf 'image: %s/builder:genesis\n' "$NEW" >"$T/deploy/builder.yaml"
expect_exit 1 "$AREC" move "$T/deploy" --to n1
expect_contains "$OUT" "$NEW/builder:genesis"
expect_not_contains "$OUT" "refused"
expect_eq "arec: error: move refused: 1 reference would break (listed with the plan); rebuild it through arec first, or move anyway with --force" "$ERR"
expect_exit 1 "$AREC" move "$T/deploy" --to n1 --json
expect_eq "true genesis-pinned" "$(json_get '"\(.refused) \(.findings[0].kind)"' <<<"$OUT")" "refused plan --json"
cmp "$T/nodes.moved" "$T/nodes.json" || fail "a refused move changed the settings"
echo PASS
