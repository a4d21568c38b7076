#!/usr/bin/env bash
# A registry that is not there: push, pull and verify exit 3 within the retry budget, naming the
# address, what was being done, and how often it was tried.
AREC=$1
source "$(dirname "$0")/lib.sh"
start_registry R gone
"$ROOT/scripts/registry" stop "$T/registries/gone"
use_registry "$R"
record app 1000 >/dev/null
export AREC_RETRY_BUDGET=2

for cmd in push verify "pull $M/app:latest"; do
  start=$(date +%s%N)
  # shellcheck disable=SC2086
  expect_exit 3 "$AREC" $cmd
  elapsed_ms=$((($(date +%s%N) - start) / 1000000))
  ((elapsed_ms < 6000)) || fail "$cmd took ${elapsed_ms} ms, over the retry budget"
  expect_contains "$ERR" "$R" "error of $cmd"
  expect_contains "$ERR" "checking the registry (GET /v2/)" "error of $cmd"
  expect_contains "$ERR" "gave up after" "error of $cmd"
  expect_contains "$ERR" "trying again in" "warnings of $cmd"
done

note "no port for the registry in the node settings: exit 2 naming node and service"
printf '{"self": "n1", "nodes": {"n1": {"ports": {}}}, "services": {"registry": "n1"}}\n' >"$T/nodes.json"
expect_exit 2 "$AREC" push
expect_one_line_error "node n1 was given no port for registry"
echo PASS
