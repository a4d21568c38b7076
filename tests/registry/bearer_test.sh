#!/usr/bin/env bash
# A registry with Bearer token authentication, its tokens from a token service of the test's own
# (token_server.py), behind faultproxy.py, which says what reached the registry. Credentials from
# config.json go only to the token service, the registry sees only Bearer tokens for the scopes asked
# for; a token that expires during an operation is renewed; refused credentials exit 3; no credential
# or token appears in any output; a blob redirected to another origin is fetched there without
# Authorization, and a 401 from there is not answered with credentials; parallel transfers reuse
# connections.
AREC=$1
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed (scripts/deps installs it)"
command -v openssl >/dev/null || skip "openssl is not installed"
user=arec-user-$RANDOM
pass=s3cret-$RANDOM-pw
life=3 # seconds a token lasts: shorter than some operations below
service=arec-test-registry

openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/key.pem" -out "$T/cert.pem" -days 1 -subj /CN=arec-test-issuer 2>/dev/null
# The token service speaks HTTPS: Basic credentials go to a realm on another port than the registry's
# only over HTTPS (security.headers checks that plain HTTP there gets none).
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" \
  -keyout "$T/tls.key" -out "$T/tls.pem" 2>/dev/null
export AREC_CA_FILE=$T/tls.pem
mkdir -p "$T/registries"
touch "$T/tokens.log"
python3 "$(dirname "$0")/token_server.py" --key "$T/key.pem" --cert "$T/cert.pem" --service "$service" \
  --issuer arec-test-issuer --user "$user" --password "$pass" --expires-in "$life" --log "$T/tokens.log" \
  --upstream-file "$T/registries/token/address" --ports-file "$T/ports" --max-seconds 100 \
  --tls-cert "$T/tls.pem" --tls-key "$T/tls.key" &
on_exit "kill $!"
for _ in $(seq 100); do [[ -s $T/ports ]] && break; sleep 0.1; done
[[ -s $T/ports ]] || fail "token_server.py did not start"
read -r token_port elsewhere_port <"$T/ports"
realm=https://127.0.0.1:$token_port/token

# Not start_registry: a docker-registry without token authentication is a reason to skip.
on_exit "'$ROOT/scripts/registry' stop '$T/registries/token'"
R=$("$ROOT/scripts/registry" start "$T/registries/token" --token "$realm" "$service" arec-test-issuer "$T/cert.pem" 2>"$T/registry.err") ||
  { grep -qi token "$T/registry.err" && skip "docker-registry has no token authentication: $(grep -i token "$T/registry.err" | tail -1)"
    fail "the registry with token authentication did not start: $(cat "$T/registry.err")"; }
# arec talks to the proxy, which passes everything on to the registry and lists what it got.
start_fault_proxy F "$R"
use_registry "$F"

secrets=("$user" "$pass" "$(printf %s "$user:$pass" | base64)")
no_secret() { # text what
  local s
  for s in "${secrets[@]}" $(jq -r 'select(.token) | .token' "$T/tokens.log"); do expect_not_contains "$1" "$s" "$2"; done
}
auths() { # user password
  printf '{"auths": {"%s": {"auth": "%s"}}}\n' "$F" "$(printf %s "$1:$2" | base64)"
}
answered() { curl -sf --max-time 5 "http://$F/__faults" | jq -c .requests; }
# mark, then since: what happened in between, as JSON arrays: $tokens (requests to the token
# service), $elsewhere (requests to the other origin) and $front (requests that reached the registry).
mark() {
  t0=$(wc -l <"$T/tokens.log")
  f0=$(answered | jq length)
}
since() {
  local events
  events=$(tail -n "+$((t0 + 1))" "$T/tokens.log" | jq -sc .)
  tokens=$(jq -c 'map(select(.event == "token"))' <<<"$events")
  elsewhere=$(jq -c 'map(select(.event == "elsewhere"))' <<<"$events")
  front=$(answered | jq -c ".[$f0:]")
}
schemes() { jq -r 'map(.auth) | unique | join(" ")' <<<"$1"; }
# held REQUEST_PREFIX: the statuses the registry gave requests starting so since the mark, and how many
# tokens were issued between the first answer and the last: "401 201, 1 token".
held() {
  since
  local answers
  answers=$(jq -c --arg p "$1" 'map(select(.request | startswith($p)))' <<<"$front")
  jq -r --argjson t "$tokens" '"\(map(.status | tostring) | join(" ")), \(.[0].time as $a | .[-1].time as $b |
    $t | map(select(.time > $a and .time < $b)) | length) token"' <<<"$answers"
}

record app 300000 >/dev/null
record lib 2000 >/dev/null

note "no credentials: exit 3, naming the registry and the token service"
expect_exit 3 "$AREC" push
expect_one_line_error "wants credentials for $F, and none were found"
expect_contains "$ERR" "https://127.0.0.1:$token_port"

note "wrong credentials: exit 3, naming where they came from, and not what they are"
auths "$user" wrong-password >"$DOCKER_CONFIG/config.json"
expect_exit 3 "$AREC" -vv push
expect_contains "$ERR" "refused the credentials for $F from $DOCKER_CONFIG/config.json"
no_secret "$OUT$ERR" "output with refused credentials"
expect_eq refused "$(jq -r 'select(.event == "token") | .auth' "$T/tokens.log" | tail -1)" "token service's verdict"

note "push with credentials from config.json: tokens for the scopes needed, only Bearer at the registry"
auths "$user" "$pass" >"$DOCKER_CONFIG/config.json"
mark
expect_exit 0 "$AREC" -vv push --json
expect_eq 4 "$(jq .uploaded <<<"$OUT")" "blobs uploaded"
no_secret "$OUT$ERR" "output of push -vv"
since
expect_eq "ok" "$(schemes "$tokens")" "the token service's verdicts"
expect_eq "$service" "$(jq -r 'map(.service) | unique | join(" ")' <<<"$tokens")" "the service tokens were asked for"
scopes=$(jq -r 'map(.scopes[]) | unique | join(" ")' <<<"$tokens")
expect_contains "$scopes" "repository:$M/app:pull,push" "scopes asked for"
expect_contains "$scopes" "repository:$M/lib:pull,push" "scopes asked for"
expect_eq "bearer none" "$(schemes "$front")" "the Authorization schemes the registry got"
# Three tokens: for the ping, then app, then lib; the uploads renew at most once, not each its own.
n=$(jq length <<<"$tokens")
((n >= 3 && n <= 4)) || fail "$n tokens fetched for a push of 2 images: $tokens"

note "verify and pull with a token for pull only"
mark
expect_exit 0 "$AREC" -vv verify
no_secret "$OUT$ERR" "output of verify -vv"
app=$("$AREC" records "$M/app" --json | jq -r '.[0].digest')
AREC_STORE=$T/store-pull expect_exit 0 "$AREC" -vv pull "$M/app@$app"
no_secret "$OUT$ERR" "output of pull -vv"
since
expect_eq "repository:$M/app:pull repository:$M/lib:pull" "$(jq -r 'map(.scopes[]) | unique | join(" ")' <<<"$tokens")" \
  "scopes of verify and pull"
expect_eq "bearer none" "$(schemes "$front")" "the Authorization schemes the registry got"

note "a second repository sharing the blobs mounts them, with one token for both repositories"
"$AREC" record --module "$M" --name twin --dir "$T/in/app=/srv/app" >/dev/null
mark
expect_exit 0 "$AREC" push "$M/twin" --json
expect_eq "0 2" "$(jq -r '"\(.uploaded) \(.mounted)"' <<<"$OUT")" "uploaded mounted"
since
expect_eq true "$(jq --arg a "repository:$M/app:pull" --arg t "repository:$M/twin:pull,push" \
  'any(.[]; .scopes | index($a) and index($t))' <<<"$tokens")" "a token for the mount's source and target"
# The registry's challenge for a mount names both scopes, space-separated: each is a scope of its own.
expect_eq "" "$(jq -r 'select(.event == "token") | .scopes[] | select(test(" "))' "$T/tokens.log")" "scopes holding a space"

note "a token that expires during a push: the registry refuses it, and a new one is fetched"
echo changed >>"$T/in/app/id"
changed=$("$AREC" record --module "$M" --name app --dir "$T/in/app=/srv/app" | cut -d@ -f2)
mark
faults '[{"method": "PUT", "path": "/manifests/", "fault": "hold", "delay": '$((life + 1))', "times": 1}]'
# --no-latest: the digest's PUT is the only manifest PUT (the latest tag would be one more).
expect_exit 0 "$AREC" -vv push "$M/app" --no-latest
no_secret "$OUT$ERR" "output of push -vv with a renewal"
# Held until its token expired, refused; a new token; sent again.
# (the image's manifest: its SBOM's manifest and fallback tag follow with the new token)
expect_eq "401 201, 1 token" "$(held "PUT /v2/$M/app/manifests/$changed")" "the manifest PUT held"

note "a token that expires during a pull"
mark
faults '[{"method": "GET", "path": "/manifests/", "fault": "hold", "delay": '$((life + 1))', "times": 1}]'
AREC_STORE=$T/store-pull2 expect_exit 0 "$AREC" -vv pull "$M/app@$app"
expect_eq "401 200, 1 token" "$(held "GET /v2/$M/app/manifests/$app")" "the manifest GET held"

note "a blob redirected to another origin is fetched there without Authorization"
mark
faults '[{"method": "GET", "path": "/blobs/", "fault": "redirect", "to": "http://127.0.0.1:'"$elsewhere_port"'", "times": 2}]'
AREC_STORE=$T/store-pull3 expect_exit 0 "$AREC" -vv pull "$M/app@$app"
since
expect_eq "2 none" "$(jq length <<<"$elsewhere") $(schemes "$elsewhere")" "blob GETs at the other origin, their Authorization"

note "a 401 from where a redirect led is not answered with the registry's credentials"
mark
faults '[{"method": "GET", "path": "/blobs/", "fault": "redirect", "to": "http://127.0.0.1:'"$elsewhere_port"'/challenge", "times": 2}]'
AREC_STORE=$T/store-pull4 expect_exit 3 "$AREC" -vv pull "$M/app@$app"
no_secret "$OUT$ERR" "output of a pull refused elsewhere"
# The first blob a pull of records reads is its record document.
expect_contains "$ERR" "from $F: getting the document of the record artifact sha256:"
expect_contains "$ERR" "401 Unauthorized"
since
expect_eq "none" "$(schemes "$elsewhere")" "Authorization schemes the other origin got"
faults '[]'

note "parallel transfers reuse their connections (-vv shows libcurl's account; the shared registry, no front)"
use_registry "$REG"
for n in 1 2 3; do record "many$n" 5000 >/dev/null; done
expect_exit 0 "$AREC" -vv push "$M/many1" "$M/many2" "$M/many3" --jobs 2 --json
expect_eq 6 "$(jq .uploaded <<<"$OUT")" "blobs uploaded"
connects=$(grep -c "Connected to .* port ${REG##*:}" <<<"$ERR" || true)
reuses=$(grep -c "Re-using existing connection" <<<"$ERR" || true)
# One more for the HTTPS attempt a loopback registry gets first, which fails at the handshake.
((connects >= 2 && connects <= 3)) || fail "$connects connections for 2 jobs: $ERR"
((reuses >= 6)) || fail "$reuses connections reused for 6 blobs and 3 manifests: $ERR"
echo PASS
