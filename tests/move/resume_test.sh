#!/usr/bin/env bash
# A move killed while it copies leaves the node settings as they were, and run again it finishes.
AREC=$1
source "$(dirname "$0")/lib.sh"
start_registry OLD old
start_registry NEW new
mesh_settings "${OLD##*:}" "${NEW##*:}"
for i in 1 2 3 4 5 6; do program "p$i" 8000000 >/dev/null; done
expect_exit 0 "$AREC" push
cp "$T/nodes.json" "$T/nodes.before"

note "kill the move once some blobs have reached the new registry"
"$AREC" move --to n2 --apply --jobs 1 >"$T/move.out" 2>&1 &
pid=$!
blobs=$T/registries/new/data/docker/registry/v2/blobs
for _ in $(seq 400); do
  n=$( (find "$blobs" -name data 2>/dev/null || true) | wc -l)
  ((n >= 2)) && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.02
done
kill -9 "$pid" 2>/dev/null || skip "the move finished before it could be interrupted (a faster machine): nothing to resume"
wait "$pid" || true
copied=$(find "$blobs" -name data | wc -l)
note "killed with $copied of 12 blobs at the new registry"
((copied < 12)) || skip "every blob was copied before the kill: nothing to resume"
cmp "$T/nodes.before" "$T/nodes.json" || fail "an interrupted move changed the node settings"

note "run again: it resumes, verifies everything, then rewrites the settings"
expect_exit 0 "$AREC" move --to n2 --apply
expect_contains "$OUT" "6 manifests verified"
expect_contains "$OUT" "already there"
expect_eq '"n2"' "$(jq .services.registry "$T/nodes.json")" "settings after the resumed move"
expect_exit 0 "$AREC" verify
echo PASS
