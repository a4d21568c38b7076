#!/usr/bin/env bash
# Rule 3: push, pull and verify use the registry the node settings give when they run; changing the
# settings moves them, and nothing of the old address is kept anywhere.
AREC=$1
source "$(dirname "$0")/lib.sh"
start_registry A first
start_registry B second
app=$(record app 1000)

use_registry "$A"
expect_exit 0 "$AREC" push
expect_eq "$A/$M/app@$app" "$OUT" "pushed to the first registry"
expect_exit 0 "$AREC" verify

use_registry "$B"
expect_exit 1 "$AREC" verify
expect_contains "$ERR" "missing or different at $B"
expect_exit 0 "$AREC" push
expect_eq "$B/$M/app@$app" "$OUT" "pushed to the second registry"
"$ROOT/scripts/registry" stop "$T/registries/first"
expect_exit 0 "$AREC" verify
AREC_STORE=$T/pulled expect_exit 0 "$AREC" pull "$M/app@$app"

note "the node's address, when it has one, is where they go"
use_registry "$B" 127.0.0.1
expect_exit 0 "$AREC" push --json
expect_eq "127.0.0.1:${B##*:}" "$(jq -r .registry <<<"$OUT")" "registry from the node's address"
hits=$(grep -rlaF -e "${A##*:}" -e "${B##*:}" "$AREC_STORE" "$T/pulled" || true)
expect_eq "" "$hits" "store files holding a registry port"
echo PASS
