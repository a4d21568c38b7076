#!/usr/bin/env bash
# A registry with htpasswd (Basic) authentication: credentials from docker's config.json, a credential
# helper or REGISTRY_AUTH_FILE; refused or missing credentials exit 3 with a clear message; and no
# credential ever appears in any output, even at the most verbose.
AREC=$1
source "$(dirname "$0")/lib.sh"
user=arec-user-$RANDOM
pass=s3cret-$RANDOM-pw
htpasswd -Bbn "$user" "$pass" >"$T/htpasswd"
start_registry R auth --htpasswd "$T/htpasswd"
use_registry "$R"
record app 1000 >/dev/null
secrets=("$user" "$pass" "$(printf %s "$user:$pass" | base64)")
no_secret() { # text what
  for s in "${secrets[@]}"; do expect_not_contains "$1" "$s" "$2"; done
}
auths() { # user password
  printf '{"auths": {"%s": {"auth": "%s"}}}\n' "$R" "$(printf %s "$1:$2" | base64)"
}

note "no credentials: exit 3, saying so"
expect_exit 3 "$AREC" push
expect_one_line_error "no credentials for $R were found"
expect_contains "$ERR" "pushing $M/app to $R"

note "wrong credentials: exit 3, naming where they came from, and not what they are"
auths "$user" wrong-password >"$DOCKER_CONFIG/config.json"
expect_exit 3 "$AREC" -vv push
expect_contains "$ERR" "refused the credentials for $R from $DOCKER_CONFIG/config.json"
no_secret "$OUT$ERR" "output with refused credentials"

note "credentials from \$DOCKER_CONFIG/config.json"
auths "$user" "$pass" >"$DOCKER_CONFIG/config.json"
expect_exit 0 "$AREC" -vv push --json
expect_eq 2 "$(jq .uploaded <<<"$OUT")" "blobs uploaded"
no_secret "$OUT$ERR" "output of push -vv"
expect_exit 0 "$AREC" -vv verify
no_secret "$OUT$ERR" "output of verify -vv"
expect_exit 0 "$AREC" -vv pull "$M/app@$("$AREC" records "$M/app" --json | jq -r '.[0].digest')"
no_secret "$OUT$ERR" "output of pull -vv"

note "a credential helper gets the server on its standard input, never on its command line"
mkdir -p "$T/bin"
cat >"$T/bin/docker-credential-arectest" <<HELPER
#!/bin/sh
printf '%s\n' "\$*" >"$T/helper.args"
env >"$T/helper.env"
tr '\\0' ' ' </proc/\$PPID/cmdline >"$T/parent.cmdline"
cat >"$T/helper.stdin"
printf '{"ServerURL": "%s", "Username": "%s", "Secret": "%s"}' "$R" "$user" "$pass"
HELPER
chmod +x "$T/bin/docker-credential-arectest"
printf '{"credHelpers": {"%s": "arectest"}, "auths": {"%s": {"auth": "%s"}}}\n' "$R" "$R" "$(printf %s "$user:wrong" | base64)" \
  >"$DOCKER_CONFIG/config.json"
PATH=$T/bin:$PATH expect_exit 0 "$AREC" -vv verify
expect_eq "get" "$(cat "$T/helper.args")" "helper arguments"
expect_eq "$R" "$(cat "$T/helper.stdin")" "helper input"
# Credentials reach no child through its environment, nor sit on arec's own command line.
no_secret "$(cat "$T/helper.env")" "environment of the credential helper"
expect_contains "$(cat "$T/parent.cmdline")" "verify" "command line of the helper's parent (arec)"
no_secret "$(cat "$T/parent.cmdline")" "command line of arec"
no_secret "$OUT$ERR" "output with a credential helper"

note "a helper that knows nothing: anonymous, so refused"
printf '#!/bin/sh\necho "credentials not found in native keychain"; exit 1\n' >"$T/bin/docker-credential-empty"
chmod +x "$T/bin/docker-credential-empty"
printf '{"credsStore": "empty"}\n' >"$DOCKER_CONFIG/config.json"
PATH=$T/bin:$PATH expect_exit 3 "$AREC" verify
expect_contains "$ERR" "no credentials for $R were found"

note "REGISTRY_AUTH_FILE (containers' auth.json)"
rm "$DOCKER_CONFIG/config.json"
auths "$user" "$pass" >"$T/auth.json"
REGISTRY_AUTH_FILE=$T/auth.json expect_exit 0 "$AREC" verify
echo PASS
