#!/usr/bin/env bash
# `latest` under trust follows the times inside records a trusted key signed, never what anyone who may
# push can write. A forged `created` annotation in a fallback tag keeps an unchecked push off `latest`,
# and not the team's trusting push. Re-pointing `latest` to an older team build: a node holding the newer
# one keeps it (and says so), a fresh node takes the newest the registry lists (and says the tag names an
# older one); --allow-older or a pull by digest take the older one. `pull --all` writes every
# module/name that verifies, names the unsigned one and exits 4. A junk entry (a "bundle" too large, a
# co-builder's unsigned second record of the image) is passed over, named, by pull and verify alike.
AREC=$1
source "$(dirname "$0")/lib.sh"
here=$SIGNING
trust_setup jq python3 curl
with() { local store=$1; shift; AREC_STORE=$T/$store "$@"; }
build() { # build STORE NAME [record options]: records $M/NAME from content unique to STORE; prints the digest
  mkdir -p "src/$1/$2" && echo "$1 $2 $RANDOM $(date +%s%N)" >"src/$1/$2/id"
  with "$1" "$AREC" record --module "$M" --name "$2" --dir "src/$1/$2=/srv" --runtime none "${@:3}" | cut -d@ -f2
}
MT=application/vnd.oci.image.manifest.v1+json
IT=application/vnd.oci.image.index.v1+json
tag_of() { curl -fsSI -H "Accept: $MT" "http://$R/v2/$M/$1/manifests/${2:-latest}" | tr -d '\r' | sed -n 's/^Docker-Content-Digest: //Ip'; }
# point NAME DIGEST [TAG]: what anyone who may push can do: the tag names that manifest.
point() {
  curl -fsS "http://$R/v2/$M/$1/manifests/$2" -H "Accept: $MT" >manifest.json || fail "reading $2"
  curl -fsS -X PUT -H "Content-Type: $MT" --data-binary @manifest.json "http://$R/v2/$M/$1/manifests/${3:-latest}" >/dev/null ||
    fail "pointing ${3:-latest} at $2"
}
echo "image: arec://image/$M/app" >deploy.yaml.in
composed() { with "$1" "$AREC" compose deploy.yaml.in --trust-key team.pub | sed 's/.*@//'; }

note "a forged created annotation holds the tag against an unchecked push, not against the team's trusting one"
v1=$(build team app --sign-key team.key)
with team expect_exit 0 "$AREC" push
evil=$(build evil app)
with evil expect_exit 0 "$AREC" push "$M/app" --no-latest --tag evil
# The intruder's record artifact listed in its image's fallback tag as recorded four minutes from now.
future=$(date -u -d '+4 minutes' +%Y-%m-%dT%H:%M:%SZ)
curl -fsS -H "Accept: $IT" "http://$R/v2/$M/app/manifests/sha256-${evil#sha256:}" |
  jq -c --arg t "$future" '.manifests |= map(if .artifactType == "application/vnd.dev.arec.record.v1+json"
    then .annotations["org.opencontainers.image.created"] = $t else . end)' >forged.json
curl -fsS -X PUT -H "Content-Type: $IT" --data-binary @forged.json \
  "http://$R/v2/$M/app/manifests/sha256-${evil#sha256:}" >/dev/null || fail "forging the fallback tag"
point app "$evil"
sleep 1
v2=$(build team app --sign-key team.key)
cp -a team unchecked
with unchecked expect_exit 0 "$AREC" push "$M/app"
expect_contains "$ERR" "left at $evil" "an unchecked push"
expect_eq "$evil" "$(tag_of app)" "latest after an unchecked push"
with team expect_exit 0 "$AREC" push "$M/app" --trust-key team.pub
expect_contains "$ERR" "which is unsigned: not counted as newer"
expect_eq "$v2" "$(tag_of app)" "latest after the team's trusting push"
expect_exit 0 "$AREC" --store "$T/team" push "$M/app" --sign-key team.key --json
expect_eq "[\"latest\"]" "$(jq -c '.images[0].tags' <<<"$OUT")" "a push --sign-key: the signing key is trusted"

note "rollback: latest pointed back to the team's older build"
with held expect_exit 0 "$AREC" pull "$M/app" --trust-key team.pub
expect_eq "$v2" "$OUT" "the held node's pull"
point app "$v1"
# A fresh node takes the newest record a trusted key signed that the registry lists, and says so.
with fresh expect_exit 0 "$AREC" pull "$M/app" --trust-key team.pub
expect_contains "$ERR" "the tag names $M/app@$v1"
expect_contains "$ERR" "the registry lists $M/app@$v2"
expect_eq "$v2" "$(composed fresh)" "compose on a fresh node"
# Without trust the tag is followed: nothing tells the team's times from anyone's.
with plain expect_exit 0 "$AREC" pull "$M/app"
expect_eq "$v1" "$OUT" "an unchecked fresh pull"
# The registry hides the newer record too (its fallback tag emptied): the node that held it keeps it.
listing=$(curl -fsS -H "Accept: $IT" "http://$R/v2/$M/app/manifests/sha256-${v2#sha256:}")
hide() { curl -fsS -X PUT -H "Content-Type: $IT" --data-binary "$1" "http://$R/v2/$M/app/manifests/sha256-${v2#sha256:}" >/dev/null; }
hide '{"schemaVersion":2,"mediaType":"'"$IT"'","manifests":[]}' || fail "hiding $v2"
with held expect_exit 0 "$AREC" pull "$M/app" --trust-key team.pub
expect_contains "$ERR" "$M/app@$v1, recorded"
expect_contains "$ERR" "is older than the store's latest $M/app@$v2"
expect_eq "$v2" "$(composed held)" "compose on the node that held the newer record"
with held expect_exit 0 "$AREC" pull "$M/app" --trust-key team.pub --allow-older
expect_eq "$v1" "$(composed held)" "compose after --allow-older"
hide "$listing" || fail "listing $v2 again"
with bydigest expect_exit 0 "$AREC" pull "$M/app" --trust-key team.pub
expect_eq "$v2" "$(composed bydigest)" "compose after a pull of the tag"
with bydigest expect_exit 0 "$AREC" pull "$M/app@$v1" --trust-key team.pub
expect_eq "$v1" "$(composed bydigest)" "compose after a pull by digest"

note "pull --all writes every module/name that verifies and names the one that does not"
point app "$v2"
other=$(build evil other)
with evil expect_exit 0 "$AREC" push "$M/other"
with all expect_exit 4 "$AREC" pull --all --trust-key team.pub
expect_contains "$ERR" "arec: error: pulling $M/other:latest from $R: the record $M/other@$other is unsigned"
expect_contains "$ERR" "refused by the trust policy; every other written"
expect_eq "$v2" "$(composed all)" "compose after pull --all"
expect_eq "" "$(with all "$AREC" records --json | jq -r ".[] | select(.name == \"other\") | .digest")" "the refused module/name"
expect_eq "$(with all "$AREC" records --history --json | jq -r '.[].digest' | sort | tr '\n' ' ')" \
  "$(printf '%s\n' "$v1" "$v2" | sort | tr '\n' ' ')" "the team's history, and nothing of the intruder's"

note "a junk bundle beside the team's, and a co-builder's unsigned record of the same image, are passed over"
head -c 300000 /dev/urandom >junk.bin
python3 "$here/attach.py" "$R" "$M/app" "$v2" junk.bin >/dev/null || fail "attaching junk"
# A co-builder records the same bytes (reproducible), at another time, and pushes its record of them.
cp -r "src/team/app" src/co
with co expect_exit 0 "$AREC" record --module "$M" --name app --dir "src/co=/srv" --runtime none --config Debug
expect_eq "$v2" "${OUT#*@}" "the co-builder's digest"
with co expect_exit 0 "$AREC" push "$M/app" --no-latest
with junk expect_exit 0 "$AREC" pull "$M/app" --trust-key team.pub
expect_eq "$v2" "$OUT" "the pull past the junk"
expect_contains "$ERR" "passed over the bundle"
expect_contains "$ERR" "more than 262144"
# The team's signature names the team's record of these bytes, not the co-builder's.
expect_contains "$ERR" "passed over the record $M/app@$v2: not trusted (the trusted key's statement is for another digest)"
with team expect_exit 0 "$AREC" verify "$M/app" --trust-key team.pub
expect_contains "$OUT" "present    $M/app@$v2"
echo "ok: trust and latest"
