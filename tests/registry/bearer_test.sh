#!/usr/bin/env bash
# A registry with Bearer token authentication, its tokens from a token service of the test's own
# (token_server.py), which also runs a front that logs what reaches the registry. Credentials from
# config.json go only to the token service, the registry sees only Bearer tokens for the scopes asked
# for; a token that expires during an operation is renewed; refused credentials exit 3; no credential
# or token appears in any output; a blob redirected to another origin is fetched there without
# Authorization, and a 401 from there is not answered with credentials; parallel transfers reuse
# connections.
AREC=$1
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
command -v openssl >/dev/null || skip "openssl is not installed"
user=arec-user-$RANDOM
pass=s3cret-$RANDOM-pw
life=3 # seconds a token lasts: shorter than some operations below
service=arec-test-registry

openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/key.pem" -out "$T/cert.pem" -days 1 -subj /CN=arec-test-issuer 2>/dev/null
mkdir -p "$T/control" "$T/registries"
python3 "$(dirname "$0")/token_server.py" --key "$T/key.pem" --cert "$T/cert.pem" --service "$service" \
  --issuer arec-test-issuer --user "$user" --password "$pass" --expires-in "$life" --log "$T/tokens.log" \
  --upstream-file "$T/registries/token/address" --control-dir "$T/control" --ports-file "$T/ports" --max-seconds 100 &
server=$!
on_exit "kill $server"
for _ in $(seq 100); do [[ -s $T/ports ]] && break; sleep 0.1; done
[[ -s $T/ports ]] || fail "token_server.py did not start"
read -r token_port front_port _ <"$T/ports"
realm=http://127.0.0.1:$token_port/token

on_exit "'$ROOT/scripts/registry' stop '$T/registries/token'"
"$ROOT/scripts/registry" start "$T/registries/token" --token "$realm" "$service" arec-test-issuer "$T/cert.pem" >/dev/null ||
  { grep -qi token "$T/registries/token/log" && skip "docker-registry has no token authentication: $(tail -1 "$T/registries/token/log")"
    fail "the registry with token authentication did not start"; }
# arec talks to the front, which passes everything on to the registry.
F=127.0.0.1:$front_port
use_registry "$F"

secrets=("$user" "$pass" "$(printf %s "$user:$pass" | base64)")
no_secret() { # text what
  local s
  for s in "${secrets[@]}" $(jq -r 'select(.token) | .token' "$T/tokens.log"); do expect_not_contains "$1" "$s" "$2"; done
}
auths() { # user password
  printf '{"auths": {"%s": {"auth": "%s"}}}\n' "$F" "$(printf %s "$1:$2" | base64)"
}
# Events of the token server's log from line $1 on, as a JSON array.
events_since() { tail -n "+$1" "$T/tokens.log" | jq -s .; }
log_lines() { wc -l <"$T/tokens.log"; }
# after_stall REQUEST_PREFIX LINE: the next three events after the front held a request, counting only
# tokens and that request, as "event[:status]".
after_stall() {
  events_since "$2" | jq -r --arg r "$1" '[.[] | select(.event != "front" or (.request | startswith($r)))] |
    (map(.event == "stall") | index(true)) as $i | .[$i + 1:$i + 4] | map(.event + (.status // "" | tostring | if . == "" then "" else ":" + . end)) | join(" ")'
}

record app 300000 >/dev/null
record lib 2000 >/dev/null

note "no credentials: exit 3, naming the registry and the token service"
expect_exit 3 "$AREC" push
expect_one_line_error "wants credentials for $F, and none were found"
expect_contains "$ERR" "http://127.0.0.1:$token_port"

note "wrong credentials: exit 3, naming where they came from, and not what they are"
auths "$user" wrong-password >"$DOCKER_CONFIG/config.json"
expect_exit 3 "$AREC" -vv push
expect_contains "$ERR" "refused the credentials for $F from $DOCKER_CONFIG/config.json"
no_secret "$OUT$ERR" "output with refused credentials"
expect_eq refused "$(jq -r 'select(.event == "token") | .auth' "$T/tokens.log" | tail -1)" "token service's verdict"

note "push with credentials from config.json: tokens for the scopes needed, only Bearer at the registry"
auths "$user" "$pass" >"$DOCKER_CONFIG/config.json"
since=$(($(log_lines) + 1))
expect_exit 0 "$AREC" -vv push --json
expect_eq 4 "$(jq .uploaded <<<"$OUT")" "blobs uploaded"
no_secret "$OUT$ERR" "output of push -vv"
events=$(events_since "$since")
expect_eq true "$(jq '[.[] | select(.event == "token")] | length > 0 and all(.auth == "ok" and .service == "'"$service"'")' <<<"$events")" \
  "every token request carried the credentials and the service: $events"
scopes=$(jq -r '[.[] | select(.event == "token") | .scopes[]] | unique | join(" ")' <<<"$events")
expect_contains "$scopes" "repository:$M/app:pull,push" "scopes asked for"
expect_contains "$scopes" "repository:$M/lib:pull,push" "scopes asked for"
expect_eq "bearer none" "$(jq -r '[.[] | select(.event == "front") | .auth] | unique | join(" ")' <<<"$events")" \
  "the Authorization schemes the registry got"
# Three tokens: for the ping, then app, then lib; the uploads renew at most once, not each its own.
tokens=$(jq '[.[] | select(.event == "token")] | length' <<<"$events")
((tokens >= 3 && tokens <= 4)) || fail "$tokens tokens fetched for a push of 2 images: $events"

note "verify and pull with a token for pull only"
since=$(($(log_lines) + 1))
expect_exit 0 "$AREC" -vv verify
no_secret "$OUT$ERR" "output of verify -vv"
app=$("$AREC" records "$M/app" --json | jq -r '.[0].digest')
AREC_STORE=$T/store-pull expect_exit 0 "$AREC" -vv pull "$M/app@$app"
no_secret "$OUT$ERR" "output of pull -vv"
events=$(events_since "$since")
expect_eq "repository:$M/app:pull repository:$M/lib:pull" \
  "$(jq -r '[.[] | select(.event == "token") | .scopes[]] | unique | join(" ")' <<<"$events")" "scopes of verify and pull"
expect_eq "bearer none" "$(jq -r '[.[] | select(.event == "front") | .auth] | unique | join(" ")' <<<"$events")" \
  "the Authorization schemes the registry got"

note "a second repository sharing the blobs mounts them, with one token for both repositories"
"$AREC" record --module "$M" --name twin --dir "$T/in/app=/srv/app" >/dev/null
since=$(($(log_lines) + 1))
expect_exit 0 "$AREC" push "$M/twin" --json
expect_eq "0 2" "$(jq -r '"\(.uploaded) \(.mounted)"' <<<"$OUT")" "uploaded mounted"
expect_eq true "$(jq 'any(.[]; .event == "token" and (.scopes | index("repository:'"$M"'/app:pull")) and
  (.scopes | index("repository:'"$M"'/twin:pull,push")))' <<<"$(events_since "$since")")" "a token for the mount's source and target"
# The registry's challenge for a mount names both scopes, space-separated: each is a scope of its own.
expect_eq "" "$(jq -r 'select(.event == "token") | .scopes[] | select(test(" "))' "$T/tokens.log")" "scopes holding a space"

note "a token that expires during a push: the registry refuses it, and a new one is fetched"
echo changed >>"$T/in/app/id"
"$AREC" record --module "$M" --name app --dir "$T/in/app=/srv/app" >/dev/null
since=$(($(log_lines) + 1))
echo "^PUT /v2/$M/app/manifests/" >"$T/control/stall"
expect_exit 0 "$AREC" -vv push "$M/app"
no_secret "$OUT$ERR" "output of push -vv with a renewal"
# Sent on with the expired token, refused; a new token; sent again.
expect_eq "front:401 token front:201" "$(after_stall "PUT /v2/$M/app/manifests/" "$since")" "events after the stall"

note "a token that expires during a pull"
echo "^GET /v2/$M/app/manifests/" >"$T/control/stall"
since=$(($(log_lines) + 1))
AREC_STORE=$T/store-pull2 expect_exit 0 "$AREC" -vv pull "$M/app@$app"
expect_eq "front:401 token front:200" "$(after_stall "GET /v2/$M/app/manifests/" "$since")" "events after the stall"
rm "$T/control/stall"

note "a blob redirected to another origin is fetched there without Authorization"
echo yes >"$T/control/redirect-blobs"
since=$(($(log_lines) + 1))
AREC_STORE=$T/store-pull3 expect_exit 0 "$AREC" -vv pull "$M/app@$app"
elsewhere=$(jq -c '[.[] | select(.event == "elsewhere") | .auth] | unique' <<<"$(events_since "$since")")
expect_eq '["none"]' "$elsewhere" "Authorization schemes the other origin got (2 blobs)"
expect_eq 2 "$(jq '[.[] | select(.event == "elsewhere")] | length' <<<"$(events_since "$since")")" "blob GETs redirected"

note "a 401 from where a redirect led is not answered with the registry's credentials"
echo challenge >"$T/control/redirect-blobs"
since=$(($(log_lines) + 1))
AREC_STORE=$T/store-pull4 expect_exit 3 "$AREC" -vv pull "$M/app@$app"
no_secret "$OUT$ERR" "output of a pull refused elsewhere"
expect_contains "$ERR" "from $F: downloading blob sha256:"
expect_contains "$ERR" "401 Unauthorized"
elsewhere=$(jq -c '[.[] | select(.event == "elsewhere")] | map(.auth) | unique' <<<"$(events_since "$since")")
expect_eq '["none"]' "$elsewhere" "Authorization schemes the other origin got"
rm "$T/control/redirect-blobs"

note "parallel transfers reuse their connections (-vv shows libcurl's account; the shared registry, no front)"
use_registry "$REG"
for n in 1 2 3; do record "many$n" 5000 >/dev/null; done
expect_exit 0 "$AREC" -vv push "$M/many1" "$M/many2" "$M/many3" --jobs 2 --json
expect_eq 6 "$(jq .uploaded <<<"$OUT")" "blobs uploaded"
connects=$(grep -c "Connected to .* port ${REG##*:}" <<<"$ERR" || true)
reuses=$(grep -c "Re-using existing connection" <<<"$ERR" || true)
((connects >= 1 && connects <= 2)) || fail "$connects connections for 2 jobs: $ERR"
((reuses >= 6)) || fail "$reuses connections reused for 6 blobs and 3 manifests: $ERR"
echo PASS
