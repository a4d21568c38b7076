#!/usr/bin/env bash
# verify: every latest record is at the registry with its exact digest; exit 1 listing what is not.
AREC=$1
source "$(dirname "$0")/lib.sh"
use_registry "$REG"
a=$(record a 1000)
b=$(record b 1000)
expect_exit 0 "$AREC" push
expect_exit 0 "$AREC" verify
expect_eq "present    $M/a@$a
present    $M/b@$b" "$OUT" "verify output"

note "a manifest deleted from the registry is found missing"
curl -sf -X DELETE "http://$REG/v2/$M/b/manifests/$b" || fail "deleting the manifest"
expect_exit 1 "$AREC" verify
expect_contains "$OUT" "missing    $M/b@$b"
expect_contains "$OUT" "present    $M/a@$a"
expect_contains "$ERR" "1 of 2 records missing or different at $REG"
expect_exit 1 "$AREC" verify --json
expect_eq "$M/a present,$M/b missing" "$(jq -r 'map("\(.repository) \(.state)") | join(",")' <<<"$OUT")" "verify --json"
expect_exit 0 "$AREC" verify "$M/a"

note "a new record not pushed yet is missing too; pushing repairs both"
echo new >>"$T/in/a/id"
"$AREC" record --module "$M" --name a --dir "$T/in/a=/srv/a" >/dev/null
expect_exit 1 "$AREC" verify
expect_exit 0 "$AREC" push
expect_exit 0 "$AREC" verify
echo PASS
