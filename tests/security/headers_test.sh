#!/usr/bin/env bash
# Header values from the network are refused when they hold control characters: a token service
# answering "TOKEN\r\nX-Injected: yes" gets exit 3 and no request ever carries X-Injected. Basic
# credentials go to a token realm only on the registry's own origin (scheme, host and port) or over
# HTTPS: a realm on another port of the same host, over plain HTTP, gets none.
AREC=$1
source "$(dirname "$0")/hostile.sh"

note "a token holding CR LF and a header of the service's choosing: refused, exit 3"
start_hostile token-crlf
timed 10000 3 "$AREC" pull "$HOSTILE/evil/app:latest"
expect_one_line_error "holds a token with control characters"
expect_not_contains "$ERR" $'\r' "error"
grep -q '/token' "$HOSTILE_LOG" || fail "the token service was never asked"
expect_eq 0 "$(jq -s '[.[] | select(.headers["X-Injected"] != null)] | length' "$HOSTILE_LOG")" "requests carrying X-Injected"
expect_eq 0 "$(jq -s '[.[] | select((.headers.Authorization // "") | test("TOKEN"))] | length' "$HOSTILE_LOG")" "requests carrying the token"

note "a realm on another port of the registry's host, over plain HTTP: no Basic credentials go there"
start_hostile realm-port
printf '{"auths": {"%s": {"auth": "%s"}}}\n' "$HOSTILE" "$(printf 'alice:s3cret-password' | base64)" >"$DOCKER_CONFIG/config.json"
"$AREC" pull "$HOSTILE/evil/app:latest" >"$T/.out" 2>"$T/.err" || true
grep -q "\"port\": $NEIGHBOUR_PORT" "$HOSTILE_LOG" || fail "the realm on port $NEIGHBOUR_PORT was never asked for a token"
expect_eq 0 "$(jq -s --argjson p "$NEIGHBOUR_PORT" '[.[] | select(.port == $p and .headers.Authorization != null)] | length' "$HOSTILE_LOG")" \
  "requests to port $NEIGHBOUR_PORT carrying Authorization"
expect_not_contains "$(cat "$HOSTILE_LOG")" "$(printf 'alice:s3cret-password' | base64)" "what the hostile servers received"
