#!/usr/bin/env bash
# Only what the team built gets composed and run. The team's store signs what it records and pushes;
# a machine that trusts the team's key (the node settings' trust.keys, --trust-key or AREC_TRUST_KEYS)
# pulls and composes it. The attack: a second store pushes the same module/name over the team's,
# unsigned, then signed by its own key, then with the team's signature of another image, then with a
# bundle naming exactly the right image and record under the team key's hint but signed by another key
# (only the signature check refuses it), then with the team's bundle one payload byte changed. A
# trusting store refuses each (exit 4 in every command: pull, compose, verify, push), naming why, and
# keeps nothing. A registry move refuses an
# unsigned record of a trusting store (exit 4, nothing copied); once signed, the signatures verify at the
# new registry. A trusting pull names the keys it checked; without a trusted key, pull says it checked none.
AREC=$1
source "$(dirname "$0")/lib.sh"
here=$SIGNING
trust_setup oracle jq python3 curl
start_registry R2 new
"$AREC" key generate --out foreign >/dev/null 2>&1 || fail "key generate"
fingerprint() { openssl pkey -pubin -in "$1" -outform DER | sha256sum | cut -c1-16; }

# The mesh's settings name the team's key beside them: a relative path, read from the settings' folder.
mkdir -p mesh/keys && cp team.pub mesh/keys/
cat >mesh/nodes.json <<JSON
{"self": "n1",
 "nodes": {"n1": {"ports": {"registry": ${R##*:}}}, "n2": {"address": "127.0.0.1", "ports": {"registry": ${R2##*:}}}},
 "services": {"registry": "n1"},
 "trust": {"keys": ["keys/team.pub"]}}
JSON
jq 'del(.trust)' mesh/nodes.json >plain.json
export AREC_NODES=$T/plain.json
# with STORE cmd...: cmd with that store.
with() { local store=$1; shift; AREC_STORE=$T/$store "$@"; }
# nothing_kept STORE: no record and no blob in STORE.
nothing_kept() {
  [[ -z $(with "$1" "$AREC" records 2>/dev/null) ]] || fail "store $1 kept a record: $(with "$1" "$AREC" records)"
  expect_eq 0 "$(find "$T/$1/blobs" -type f 2>/dev/null | wc -l)" "blobs kept in store $1"
}
build() { # build STORE NAME: records $M/NAME from content unique to STORE; prints the digest
  mkdir -p "src/$1/$2" && echo "$1 $2 $RANDOM" >"src/$1/$2/id"
  with "$1" "$AREC" record --module "$M" --name "$2" --dir "src/$1/$2=/srv" --runtime none "${@:3}" | cut -d@ -f2
}
echo "image: arec://image/$M/app" >deploy.yaml.in

note "the team signs what it records and pushes; a trusting machine pulls, composes and verifies it"
chmod 600 team.key foreign.key
team=$(AREC_SIGNING_KEY=$T/team.key build team app)
with team expect_exit 0 "$AREC" push
AREC_NODES=$T/mesh/nodes.json with c expect_exit 0 "$AREC" pull "$M/app"
expect_eq "$team" "$OUT" "the trusting store pulled"
expect_not_contains "$ERR" "no signature checked" "a trusting pull"
expect_eq 1 "$(grep -c "signatures checked against key $(fingerprint team.pub) (node settings" <<<"$ERR")" \
  "the info line naming the key a trusting pull checked"
AREC_NODES=$T/mesh/nodes.json with c2 expect_exit 0 "$AREC" -v pull "$M/app"
expect_contains "$ERR" "$M/app@$team: trusted, signed by key $(fingerprint team.pub)" "-v: the verdict of each record"
AREC_NODES=$T/mesh/nodes.json with c expect_exit 0 "$AREC" compose deploy.yaml.in
expect_contains "$OUT" "/$M/app@$team" "compose of the team's record"
with team expect_exit 0 "$AREC" verify --trust-key team.pub
expect_eq present "$(with team "$AREC" verify --trust-key team.pub --json | jq -r '.[0].state')" "verify of the team's record"

note "without a trusted key, pull says once that it checked no signature"
with e expect_exit 0 "$AREC" pull "$M/app"
expect_eq 1 "$(grep -c 'no signature checked' <<<"$ERR")" "info lines of an unchecked pull"

note "attack 1: an unsigned image and record pushed over the team's are refused, nothing kept"
evil=$(build evil app)
with evil expect_exit 0 "$AREC" push
for how in "--trust-key team.pub" "AREC_TRUST_KEYS" "node settings"; do
  rm -rf "$T/d"
  case $how in
    --trust-key*) with d expect_exit 4 "$AREC" pull "$M/app" --trust-key team.pub ;;
    AREC_TRUST_KEYS) AREC_TRUST_KEYS=$T/foreign.pub:$T/team.pub with d expect_exit 4 "$AREC" pull "$M/app" ;;
    *) AREC_NODES=$T/mesh/nodes.json with d expect_exit 4 "$AREC" pull "$M/app" ;;
  esac
  expect_one_line_error "the record $M/app@$evil is unsigned: no bundle verifies under a trusted key; nothing written"
  nothing_kept d
done
with evil expect_exit 4 "$AREC" verify --trust-key team.pub
expect_contains "$OUT" "unsigned   $M/app@$evil"
with evil expect_exit 4 "$AREC" push --trust-key team.pub
expect_one_line_error "push: the record $M/app@$evil is unsigned; nothing pushed"
# A machine that pulled it without checking composes nothing from it once it trusts the team.
with e expect_exit 0 "$AREC" pull "$M/app"
with e expect_exit 4 "$AREC" compose deploy.yaml.in -o deploy.yaml --trust-key team.pub
expect_one_line_error "the record $M/app@$evil is unsigned, and only records signed by a trusted key are composed"
[[ ! -e deploy.yaml ]] || fail "a refused compose wrote deploy.yaml"

note "attack 2: signed by a key nobody trusts"
# push --sign-key signs what it pushes unsigned, once.
with evil expect_exit 0 "$AREC" push --sign-key foreign.key
expect_contains "$ERR" "signed $M/app@$evil with key $(fingerprint foreign.pub), as this store recorded it"
with evil expect_exit 0 "$AREC" push --sign-key foreign.key
expect_not_contains "$ERR" "signed $M/app" "a second push --sign-key"
rm -rf "$T/d"
with d expect_exit 4 "$AREC" pull "$M/app" --trust-key team.pub
expect_one_line_error "is not trusted (signed by an unknown key $(fingerprint foreign.pub)): no bundle verifies under a trusted key"
nothing_kept d
with evil expect_exit 4 "$AREC" verify --trust-key team.pub --json
expect_eq "untrusted signed by an unknown key $(fingerprint foreign.pub)" "$(jq -r '.[0] | "\(.state) \(.why)"' <<<"$OUT")" "verify --json"

note "attack 3: the team's signature of its own image attached to another"
team_sign=$(python3 "$here/bundles.py" "$T/team" "$team" team-bundles | awk '$2 ~ /sign/ { print $1 }')
python3 "$here/attach.py" "$R" "$M/app" "$evil" "$team_sign" >/dev/null || fail "attaching a bundle"
rm -rf "$T/d"
with d expect_exit 4 "$AREC" pull "$M/app" --trust-key team.pub
expect_one_line_error "the record $M/app@$evil is not trusted (the trusted key's statement is for another digest)"
nothing_kept d

note "attack 4: exactly the right image and record named under the team key's hint, signed by another key"
# The foreign key's genuine statement of a record of the intruder's, its hint changed to the team's key:
# only the check of the signature itself can refuse it.
hinted=$(build evil hinted)
cp -a evil evil-copy
with evil-copy expect_exit 0 "$AREC" sign "$M/hinted" --sign-key foreign.key
foreign_sign=$(python3 "$here/bundles.py" "$T/evil-copy" "$hinted" hinted-bundles | awk '$2 ~ /sign/ { print $1 }')
jq -c --arg h "$(openssl pkey -pubin -in team.pub -outform DER | sha256sum | cut -d' ' -f1)" \
  '.verificationMaterial.publicKey.hint = $h' "$foreign_sign" >hinted.json
expect_eq "$M/hinted ${hinted#sha256:}" "$(python3 "$here/statement.py" hinted.json | jq -r '.subject[0] | "\(.name) \(.digest.sha256)"')" \
  "the forged bundle's first subject"
with evil expect_exit 0 "$AREC" push "$M/hinted"
python3 "$here/attach.py" "$R" "$M/hinted" "$hinted" hinted.json >/dev/null || fail "attaching a bundle"
rm -rf "$T/d"
with d expect_exit 4 "$AREC" pull "$M/hinted" --trust-key team.pub
expect_one_line_error "the record $M/hinted@$hinted is not trusted (a bundle under a trusted key has a bad signature)"
nothing_kept d
with evil expect_exit 4 "$AREC" verify "$M/hinted" --trust-key team.pub
expect_contains "$OUT" "untrusted  $M/hinted@$hinted  (a bundle under a trusted key has a bad signature)"
if node "$here/oracle/verify.js" hinted.json team.pub "${hinted#sha256:}" 2>/dev/null; then
  fail "the oracle accepts the bundle under the team's hint"
fi

note "attack 5: the team's bundle with one byte of its payload changed"
unsigned=$(build team tampered)
with team expect_exit 0 "$AREC" push "$M/tampered"
cp -a team team-copy
with team-copy expect_exit 0 "$AREC" sign "$M/tampered" --sign-key team.key
genuine=$(python3 "$here/bundles.py" "$T/team-copy" "$unsigned" tampered-bundles | awk '$2 ~ /sign/ { print $1 }')
python3 - "$genuine" tampered.json <<'PY'
import base64, json, sys
b = json.load(open(sys.argv[1]))
p = bytearray(base64.b64decode(b["dsseEnvelope"]["payload"]))
p[p.index(b'.record"') + 1] ^= 1  # one byte of the record subject's name: "team/x.record" -> "team/x.secord"
b["dsseEnvelope"]["payload"] = base64.b64encode(bytes(p)).decode()
json.dump(b, open(sys.argv[2], "w"))
PY
if node "$here/oracle/verify.js" tampered.json team.pub "${unsigned#sha256:}" 2>/dev/null; then fail "the oracle accepts the tampered bundle"; fi
python3 "$here/attach.py" "$R" "$M/tampered" "$unsigned" tampered.json >/dev/null || fail "attaching a bundle"
rm -rf "$T/d"
with d expect_exit 4 "$AREC" pull "$M/tampered" --trust-key team.pub
expect_one_line_error "the record $M/tampered@$unsigned is not trusted (a bundle under a trusted key has a bad signature)"
nothing_kept d
# The genuine bundle beside it: the record is the team's again.
python3 "$here/attach.py" "$R" "$M/tampered" "$unsigned" "$genuine" >/dev/null || fail "attaching a bundle"
with d expect_exit 0 "$AREC" pull "$M/tampered" --trust-key team.pub
expect_eq "$unsigned" "$OUT" "pull with the genuine bundle beside the tampered one"

note "a registry move takes nothing from a trusting store that no trusted key signed"
# The moving settings beside the mesh's, so that their trust.keys name the same file.
cp mesh/nodes.json mesh/moving.json
AREC_NODES=$T/mesh/moving.json with team expect_exit 4 "$AREC" move --to n2 --port "${R2##*:}" --apply --force
expect_one_line_error "moving the registry: the record $M/tampered@$unsigned is unsigned; nothing sent"
cmp -s mesh/nodes.json mesh/moving.json || fail "a refused move rewrote the node settings"
expect_eq "" "$(curl -fsS "http://$R2/v2/_catalog" | jq -r '.repositories[]')" "repositories at the new registry"

note "the team signs and pushes again; after a registry move the signatures verify at the new registry"
with team expect_exit 0 "$AREC" sign "$M/tampered" --sign-key team.key
with team expect_exit 0 "$AREC" push "$M/app"
AREC_NODES=$T/mesh/moving.json with team expect_exit 0 "$AREC" move --to n2 --port "${R2##*:}" --apply --force
expect_eq "n2 keys/team.pub" "$(jq -r '"\(.services.registry) \(.trust.keys[0])"' mesh/moving.json)" "the moved settings keep their trust"
cp mesh/moving.json mesh/nodes.json
AREC_NODES=$T/mesh/nodes.json with f expect_exit 0 "$AREC" pull "$M/app"
expect_eq "$team" "$OUT" "pull at the new registry"
AREC_NODES=$T/mesh/nodes.json with team expect_exit 0 "$AREC" verify "$M/app"
for bundle in team-bundles/*.json; do
  node "$here/oracle/verify.js" "$bundle" team.pub "${team#sha256:}" >/dev/null || fail "$bundle does not verify"
done
curl -fsS "http://$R2/v2/$M/app/manifests/sha256-${team#sha256:}" -H 'Accept: application/vnd.oci.image.index.v1+json' |
  jq -e '[.manifests[] | select(.artifactType == "application/vnd.dev.sigstore.bundle.v0.3+json")] | length == 2' >/dev/null ||
  fail "the new registry does not list the team's two bundles"
echo "ok: trust"
