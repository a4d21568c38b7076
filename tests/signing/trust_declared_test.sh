#!/usr/bin/env bash
# Trust declared is trust meant. A second "trust" block in the node settings, "keys": [], an empty name
# in AREC_TRUST_KEYS or --trust-key, a key file holding no key: each is an error (exit 2) naming what is
# wrong, never a silent "no trust". A trusted key file, or its directory, that others may write is
# refused, naming the file. A file of two public keys trusts both (a key and the one it rotates to).
AREC=$1
source "$(dirname "$0")/../lib.sh"
for tool in jq openssl; do command -v $tool >/dev/null || skip "no $tool"; done
unset AREC_SIGNING_KEY AREC_TRUST_KEYS AREC_BUILDER_ID AREC_NODES
export AREC_STORE=$T/store
cd "$T"
umask 022
mkdir keys && chmod 755 keys
"$AREC" key generate --out keys/old >/dev/null 2>&1 || fail "key generate"
"$AREC" key generate --out keys/new >/dev/null 2>&1 || fail "key generate"
mkdir -p src && echo app >src/app
expect_exit 0 "$AREC" record --module team --name app --dir src=/srv --runtime none --sign-key keys/new.key
echo "image: arec://image/team/app" >deploy.yaml.in
settings() {
  printf '{"self": "n1", "nodes": {"n1": {"ports": {"registry": 5000}}}, "services": {"registry": "n1"}, %s}\n' "$1" >nodes.json
}

note "a key twice in one object of the node settings is an error naming its path, not the last one winning"
settings '"trust": {"keys": ["keys/old.pub"]}, "trust": {"keys": ["keys/new.pub"]}'
expect_exit 2 "$AREC" --nodes nodes.json compose deploy.yaml.in
expect_one_line_error "node settings nodes.json: .trust: appears twice in its object; keep one"

note "trust that names nothing is an error"
settings '"trust": {"keys": []}'
expect_exit 2 "$AREC" --nodes nodes.json compose deploy.yaml.in
expect_one_line_error "node settings nodes.json: .trust.keys: names no key"
for keys in ":" "keys/new.pub:" "keys/new.pub::keys/old.pub"; do
  expect_exit 2 env AREC_TRUST_KEYS="$keys" "$AREC" compose deploy.yaml.in
  expect_one_line_error "AREC_TRUST_KEYS=$keys: an empty file name"
done
expect_exit 2 "$AREC" compose deploy.yaml.in --trust-key ""
expect_one_line_error "--trust-key \"\": an empty file name"
echo "no key in here" >keys/none.pub
expect_exit 2 "$AREC" compose deploy.yaml.in --trust-key keys/none.pub
expect_one_line_error "--trust-key: keys/none.pub: holds no public key"

note "a trusted key others may write, or in a directory others may write, is refused"
chmod 666 keys/new.pub
expect_exit 2 "$AREC" compose deploy.yaml.in --trust-key keys/new.pub
expect_one_line_error "keys/new.pub: the trusted key is writable by others (mode 666)"
chmod 644 keys/new.pub
chmod 777 keys
expect_exit 2 env AREC_TRUST_KEYS=keys/new.pub "$AREC" compose deploy.yaml.in
expect_one_line_error "AREC_TRUST_KEYS: keys/new.pub: the trusted key's directory"
expect_contains "$ERR" "is writable by others (mode 777)"
chmod 755 keys

note "a file of two public keys trusts both"
cat keys/old.pub keys/new.pub >keys/team.pub
settings '"trust": {"keys": ["keys/team.pub"]}'
expect_exit 0 "$AREC" --nodes nodes.json compose deploy.yaml.in
expect_contains "$OUT" "team/app@" "compose under the second key of the file"
settings '"trust": {"keys": ["keys/old.pub"]}'
expect_exit 4 "$AREC" --nodes nodes.json compose deploy.yaml.in
expect_one_line_error "is not trusted (signed by an unknown key $(openssl pkey -pubin -in keys/new.pub -outform DER | sha256sum | cut -c1-16))"
echo "ok: trust declared"
