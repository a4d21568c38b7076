#!/usr/bin/env bash
# The test oracle itself: verify.js (the sigstore project's verifier) accepts a bundle made by hand with
# openssl under its key, and refuses it under another key, with one payload byte changed, or for another
# subject. The arec signing tests trust verify.js because this test can fail.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
oracle=$here/oracle
if [[ ! -d $oracle/node_modules/@sigstore/verify ]]; then
  echo "SKIP: $oracle/node_modules missing: run scripts/deps" >&2
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# make_bundle KEY PUB OUT DIGEST: an in-toto Statement v1 about sha256:DIGEST, DSSE-signed with KEY.
make_bundle() {
  local key=$1 pub=$2 out=$3 digest=$4
  printf '{"_type":"https://in-toto.io/Statement/v1","subject":[{"name":"team/app","digest":{"sha256":"%s"}}],"predicateType":"https://sigstore.dev/cosign/sign/v1","predicate":{}}' \
    "$digest" >statement.json
  python3 - statement.json pae.bin <<'PY'
import sys
body = open(sys.argv[1], 'rb').read()
t = b'application/vnd.in-toto+json'
open(sys.argv[2], 'wb').write(b'DSSEv1 %d %s %d %s' % (len(t), t, len(body), body))
PY
  if [[ $(openssl pkey -in "$key" -noout -text 2>/dev/null | head -1) == ED25519* ]]; then
    openssl pkeyutl -sign -rawin -inkey "$key" -in pae.bin -out sig.bin
  else
    openssl dgst -sha256 -sign "$key" -out sig.bin pae.bin # DER ECDSA signature
  fi
  local hint
  hint=$(openssl pkey -pubin -in "$pub" -outform DER | sha256sum | cut -d' ' -f1)
  python3 - statement.json sig.bin "$hint" "$out" <<'PY'
import base64, json, sys
body, sig, hint, out = open(sys.argv[1], 'rb').read(), open(sys.argv[2], 'rb').read(), sys.argv[3], sys.argv[4]
json.dump({
    "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
    "verificationMaterial": {"publicKey": {"hint": hint}, "tlogEntries": [], "timestampVerificationData": {"rfc3161Timestamps": []}},
    "dsseEnvelope": {"payload": base64.b64encode(body).decode(), "payloadType": "application/vnd.in-toto+json",
                     "signatures": [{"sig": base64.b64encode(sig).decode(), "keyid": ""}]},
}, open(out, 'w'))
PY
}

expect() { # expect accepted|refused WHAT BUNDLE PUB DIGEST
  local want=$1 what=$2 rc=0
  node "$oracle/verify.js" "$3" "$4" "$5" >out.txt 2>err.txt || rc=$?
  if [[ $want == accepted && $rc -ne 0 ]] || [[ $want == refused && $rc -ne 1 ]]; then
    echo "FAIL: $what: expected $want, exit $rc: $(cat err.txt)" >&2
    exit 1
  fi
  echo "ok: $what $want $(head -c 200 err.txt)"
}

digest=$(printf image | sha256sum | cut -d' ' -f1)
other=$(printf other | sha256sum | cut -d' ' -f1)
for kind in ec ed25519; do
  if [[ $kind == ec ]]; then gen=(-algorithm EC -pkeyopt ec_paramgen_curve:P-256); else gen=(-algorithm ED25519); fi
  openssl genpkey "${gen[@]}" -out team.key 2>/dev/null
  openssl genpkey "${gen[@]}" -out foreign.key 2>/dev/null
  openssl pkey -in team.key -pubout -out team.pub
  openssl pkey -in foreign.key -pubout -out foreign.pub
  make_bundle team.key team.pub bundle.json "$digest"
  expect accepted "$kind: team's bundle under the team's key" bundle.json team.pub "$digest"
  expect refused "$kind: team's bundle under another key" bundle.json foreign.pub "$digest"
  expect refused "$kind: team's bundle for another subject" bundle.json team.pub "$other"
  # One payload byte changed (team/app -> team/apq), the signature kept.
  python3 - bundle.json tampered.json <<'PY'
import base64, json, sys
b = json.load(open(sys.argv[1]))
p = base64.b64decode(b["dsseEnvelope"]["payload"]).replace(b'team/app', b'team/apq')
b["dsseEnvelope"]["payload"] = base64.b64encode(p).decode()
json.dump(b, open(sys.argv[2], 'w'))
PY
  expect refused "$kind: one payload byte changed" tampered.json team.pub "$digest"
  # Signed by the foreign key but naming the team's key id: the signature does not verify.
  make_bundle foreign.key team.pub forged.json "$digest"
  expect refused "$kind: foreign signature under the team's key id" forged.json team.pub "$digest"
done
