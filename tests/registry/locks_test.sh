#!/usr/bin/env bash
# The store's locks and the commands that talk to a registry: compose, push and verify only read the
# store and take no lock, so they finish while another process holds every lock of the store; pull and
# move --apply write to it, and give up after AREC_LOCK_TIMEOUT seconds with exit 2 naming the lock,
# the store as it was.
AREC=$1
source "$(dirname "$0")/lib.sh"
command -v flock >/dev/null || skip "flock is not installed (scripts/deps installs util-linux)"
# Registries of its own: move plans from the whole catalog of the one it leaves.
start_registry OLD old
start_registry NEW new
cat >"$T/nodes.json" <<JSON
{"self": "n1",
 "nodes": {"n1": {"ports": {"registry": ${OLD##*:}}}, "n2": {"address": "127.0.0.1", "ports": {"registry": 1}}},
 "services": {"registry": "n1"}}
JSON
export AREC_NODES=$T/nodes.json AREC_LOCK_TIMEOUT=1
app=$(record app 2000)
expect_exit 0 "$AREC" push
printf 'image: arec://image/%s/app\n' "$M" >"$T/deploy.yaml.in"
before=$(tree_state "$AREC_STORE")

note "every lock of the store held: readers answer at once"
exec 8>>"$AREC_STORE/arec/lock" 9>>"$AREC_STORE/arec/writers.lock"
flock -x -n 8 || fail "could not take the index lock"
flock -x -n 9 || fail "could not take the writers' lock"
timed 900 0 "$AREC" compose "$T/deploy.yaml.in" -o "$T/deploy.yaml"
expect_eq "image: $OLD/$M/app@$app" "$(cat "$T/deploy.yaml")" "composed file"
timed 900 0 "$AREC" push "$M/app"
expect_eq "$OLD/$M/app@$app" "$OUT" "push output"
timed 900 0 "$AREC" verify "$M/app"
expect_contains "$OUT" "present    $M/app@$app"

note "writers give up after AREC_LOCK_TIMEOUT=1"
timed 5000 2 "$AREC" move --to n2 --port "${NEW##*:}" --apply
((ELAPSED >= 900)) || fail "move gave up after $ELAPSED ms, before the 1 s asked for"
expect_one_line_error "writers.lock: still held by another process after 1 s (AREC_LOCK_TIMEOUT)"
exec 8>&- 9>&-
expect_eq "$before" "$(tree_state "$AREC_STORE")" "the store after the writers gave up"
[[ $(curl -s -o /dev/null -w '%{http_code}' "http://$NEW/v2/$M/app/manifests/$app") == 404 ]] ||
  fail "move --apply copied to the new registry without the store's lock"

# pull into a store of its own, which does not hold the image yet.
pulled=$T/pulled
AREC_STORE=$pulled "$AREC" record --module "$M" --name other --file "$T/deploy.yaml.in" >/dev/null
index=$(cat "$pulled/index.json")
exec 8>>"$pulled/arec/lock" 9>>"$pulled/arec/writers.lock"
flock -x -n 8 || fail "could not take the index lock"
flock -x -n 9 || fail "could not take the writers' lock"
AREC_STORE=$pulled timed 5000 2 "$AREC" pull "$M/app@$app"
((ELAPSED >= 900)) || fail "pull gave up after $ELAPSED ms, before the 1 s asked for"
expect_one_line_error "writers.lock: still held by another process after 1 s (AREC_LOCK_TIMEOUT)"
note "only the index lock held: pull fetches, then gives up at the index"
exec 9>&-
AREC_STORE=$pulled timed 5000 2 "$AREC" pull "$M/app@$app"
expect_one_line_error "arec/lock: still held by another process after 1 s (AREC_LOCK_TIMEOUT)"
exec 8>&-
expect_eq "$index" "$(cat "$pulled/index.json")" "index.json of the store pulled into"
AREC_STORE=$pulled expect_exit 0 "$AREC" check
AREC_STORE=$pulled expect_exit 0 "$AREC" pull "$M/app@$app"
echo PASS
