#!/usr/bin/env bash
# Signing where the record is made: `arec key generate`, `record --sign-key` (PKCS#8, SEC1 and Ed25519
# keys, AREC_SIGNING_KEY), `arec sign` of records made before. Every bundle arec makes is verified by
# the sigstore project's own verifier (oracle/verify.js) under the team's key and refused under another;
# the provenance is checked against SLSA v1's required fields (slsa-provenance-v1.schema.json). A key
# that does not parse or that others can read is refused (exit 2), naming the file and never its bytes,
# with nothing written. Signing twice adds nothing; check, gc, export and import keep the bundles.
AREC=$1
source "$(dirname "$0")/../lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
[[ -d $here/oracle/node_modules/@sigstore/verify ]] || skip "$here/oracle/node_modules missing: run scripts/deps"
for tool in node jq openssl python3; do command -v $tool >/dev/null || skip "no $tool (scripts/deps installs it)"; done
python3 -c 'import jsonschema' 2>/dev/null || skip "no python3-jsonschema (scripts/deps installs it)"
export AREC_STORE=$T/store
unset AREC_SIGNING_KEY AREC_TRUST_KEYS AREC_BUILDER_ID
cd "$T"

oracle() { node "$here/oracle/verify.js" "$@"; }
# bundles_of DIGEST DIR: the bundles the store keeps for the image, one "FILE PREDICATE" line each.
bundles_of() { python3 "$here/bundles.py" "$AREC_STORE" "$1" "$2"; }
referrer_count() { jq --arg d "$1" '[.manifests[] | select(.annotations["dev.arec.subject"] == $d)] | length' "$AREC_STORE/index.json"; }
# every_bundle_verifies DIGEST DIR PUB OTHERPUB: each bundle of the image verifies under PUB, not OTHERPUB.
every_bundle_verifies() {
  local n=0 file kind
  while read -r file kind; do
    oracle "$file" "$3" "${1#sha256:}" >/dev/null || fail "$file ($kind) does not verify under $3"
    if oracle "$file" "$4" "${1#sha256:}" 2>/dev/null; then fail "$file ($kind) verifies under another key $4"; fi
    n=$((n + 1))
  done < <(bundles_of "$1" "$2")
  echo "$n"
}

note "key generate: a P-256 pair, the private key mode 600, its fingerprint the SHA-256 of the public key's DER"
expect_exit 0 "$AREC" key generate --out team
expect_eq 600 "$(stat -c %a team.key)" "team.key's mode"
expect_eq "$(openssl pkey -pubin -in team.pub -outform DER | sha256sum | cut -d' ' -f1)" "$OUT" "the fingerprint printed"
expect_contains "$(openssl pkey -in team.key -noout -text 2>/dev/null | head -1)" "Private-Key: (256 bit" "team.key"
expect_exit 2 "$AREC" key generate --out team
expect_one_line_error "team.key: exists already"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out foreign.key 2>/dev/null
openssl pkey -in foreign.key -pubout -out foreign.pub

note "record --sign-key: a signature and SLSA provenance, each a bundle the sigstore verifier accepts"
mkdir -p src && head -c 3000 /dev/urandom >src/data
expect_exit 0 "$AREC" record --module team --name base --dir src=/srv --runtime none
revision=0123456789abcdef0123456789abcdef01234567
chmod 600 team.key
expect_exit 0 env AREC_BUILDER_ID=https://ci.example/runner/7 "$AREC" record --module team --name app \
  --file /usr/bin/true --base team/base --target app --config Release --revision $revision --sign-key team.key
digest=${OUT#*@}
expect_eq 2 "$(every_bundle_verifies "$digest" b1 team.pub foreign.pub)" "bundles of team/app verified"
sign=$(ls b1/sign.*.json) provenance=$(ls b1/provenance.*.json)
statement=$(python3 "$here/statement.py" "$sign")
expect_eq https://sigstore.dev/cosign/sign/v1 "$(jq -r .predicateType <<<"$statement")" "signature's predicate"
expect_eq "team/app ${digest#sha256:}" "$(jq -r '.subject[0] | "\(.name) \(.digest.sha256)"' <<<"$statement")" "its first subject"
expect_eq team/app.record "$(jq -r '.subject[1].name' <<<"$statement")" "its second subject: the record's document"
# No address in any signed byte (rule 1): the statements name module/name only.
expect_not_contains "$(cat "$sign" "$provenance")" "127.0.0.1" "the bundles"
prov=$(python3 "$here/statement.py" "$provenance")
jq .predicate <<<"$prov" >predicate.json
python3 - "$here/slsa-provenance-v1.schema.json" predicate.json <<'PY' || fail "the provenance is not SLSA v1"
import json, sys, jsonschema
schema, doc = (json.load(open(p)) for p in sys.argv[1:3])
jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).validate(doc)
PY
expect_eq https://slsa.dev/provenance/v1 "$(jq -r .predicateType <<<"$prov")" "provenance's predicate"
expect_eq "team app app Release $revision" \
  "$(jq -r '.externalParameters | "\(.module) \(.name) \(.target) \(.configuration) \(.revision)"' <<<"$(jq .buildDefinition predicate.json)")" \
  "the provenance's external parameters"
expect_eq https://ci.example/runner/7 "$(jq -r .runDetails.builder.id predicate.json)" "builder (AREC_BUILDER_ID)"
deps=$(jq -c .buildDefinition.resolvedDependencies predicate.json)
expect_contains "$deps" "{\"digest\":{\"gitCommit\":\"$revision\"},\"uri\":\"urn:arec:revision:$revision\"}" "the source revision"
base=$("$AREC" records --json team/base | jq -r '.[0].digest')
expect_contains "$deps" "{\"digest\":{\"sha256\":\"${base#sha256:}\"},\"name\":\"base\"}" "the base image"
# /usr/bin/true's runtime closure is libc6's: its Debian package, as a purl.
libc=$(dpkg-query -W -f '${Version}' libc6)
# The build machine's distribution names the purl: os-release's ID, and the release a scanner reads.
os_id=$(. /etc/os-release && echo "$ID")
release=$(if [[ $os_id == debian ]]; then head -1 /etc/debian_version; else . /etc/os-release && echo "$VERSION_ID"; fi)
expect_contains "$deps" "\"uri\":\"pkg:deb/$os_id/libc6@$libc?arch=$(dpkg --print-architecture)&distro=$os_id-$release\"" "libc6 as a purl"
expect_eq "$(openssl pkey -pubin -in team.pub -outform DER | sha256sum | cut -c1-16)" \
  "$("$AREC" records --wide team/app | awk 'NR == 2 { print $(NF - 1) }')" "records --wide: SIGNED_BY"
expect_eq https://ci.example/runner/7 "$("$AREC" records --wide team/app | awk 'NR == 2 { print $NF }')" "records --wide: BUILDER"
expect_exit 0 "$AREC" inspect team/app --json
expect_eq "$(openssl pkey -pubin -in team.pub -outform DER | sha256sum | cut -d' ' -f1)" "$(jq -r .signature.key <<<"$OUT")" "inspect's signer"

note "SEC1 and Ed25519 keys sign as well, through AREC_SIGNING_KEY"
openssl ec -in foreign.key -out sec1.key 2>/dev/null
expect_contains "$(head -1 sec1.key)" "BEGIN EC PRIVATE KEY" "sec1.key"
openssl genpkey -algorithm ED25519 -out ed.key 2>/dev/null
openssl pkey -in ed.key -pubout -out ed.pub
chmod 600 sec1.key ed.key
for key in sec1 ed; do
  pub=$([[ $key == sec1 ]] && echo foreign.pub || echo ed.pub)
  echo "$key" >src/which
  expect_exit 0 env AREC_SIGNING_KEY=$key.key "$AREC" record --module team --name "k$key" --dir src=/srv --runtime none
  expect_eq 2 "$(every_bundle_verifies "${OUT#*@}" "b-$key" "$pub" team.pub)" "bundles signed by the $key key"
done

note "a key others can read, or one that does not parse, is refused before anything is written"
cp -a "$AREC_STORE" before
chmod 644 team.key
echo other >src/which
expect_exit 2 "$AREC" record --module team --name app --dir src=/srv --runtime none --sign-key team.key
expect_one_line_error "team.key: the signing key is readable by others (mode 644); run chmod 600 on it"
expect_not_contains "$ERR" "PRIVATE" "the error"
chmod 600 team.key
printf -- '-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----\n' >broken.key
chmod 600 broken.key
expect_exit 2 env AREC_SIGNING_KEY=broken.key "$AREC" record --module team --name app --dir src=/srv --runtime none
expect_one_line_error "AREC_SIGNING_KEY: broken.key: not a PEM private key"
expect_not_contains "$ERR" "MIGHAgEA" "the error"
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:1024 -out rsa.key 2>/dev/null
chmod 600 rsa.key
expect_exit 2 "$AREC" record --module team --name app --dir src=/srv --runtime none --sign-key rsa.key
expect_one_line_error "rsa.key: not an EC P-256 or Ed25519 key"
diff -r before "$AREC_STORE" >/dev/null || fail "a refused key changed the store"

note "arec sign: records made before get signed once; a second key adds its own"
expect_exit 0 "$AREC" record --module team --name late --dir src=/srv --runtime none
late=${OUT#*@}
expect_eq 1 "$(referrer_count "$late")" "referrers of an unsigned record (its SBOM)"
expect_exit 0 "$AREC" sign team/late --sign-key team.key --json
expect_eq true "$(jq '.[0].signed' <<<"$OUT")" "sign --json: signed"
expect_eq 2 "$(every_bundle_verifies "$late" b-late team.pub foreign.pub)" "bundles of team/late"
expect_exit 0 "$AREC" sign team/late --sign-key team.key
expect_contains "$OUT" "was signed  team/late@$late" "signing twice"
expect_eq 3 "$(referrer_count "$late")" "referrers after signing twice"
expect_exit 0 "$AREC" sign team/late --sign-key ed.key
expect_eq 5 "$(referrer_count "$late")" "referrers after a second key"
# Recording the same outputs again with a key signs the record the store holds.
mkdir -p again && head -c 3000 /dev/urandom >again/data
expect_exit 0 "$AREC" record --module team --name again --dir again=/srv --runtime none
expect_eq 1 "$(referrer_count "${OUT#*@}")" "referrers of team/again, unsigned"
expect_exit 0 "$AREC" record --module team --name again --dir again=/srv --runtime none --sign-key team.key
[[ $(referrer_count "${OUT#*@}") == 3 ]] || fail "record of unchanged outputs with a key: $(referrer_count "${OUT#*@}") referrers, expected 3"
expect_exit 2 "$AREC" sign team/late
expect_one_line_error "sign: name the key with --sign-key FILE or AREC_SIGNING_KEY"

note "check, gc, export and import keep the bundles"
expect_exit 0 "$AREC" check
expect_exit 0 "$AREC" gc
expect_eq 2 "$(every_bundle_verifies "$digest" b-gc team.pub foreign.pub)" "bundles after gc"
expect_exit 0 "$AREC" export team/app -o app.tar
expect_exit 0 env AREC_STORE=$T/imported "$AREC" import app.tar
expect_eq 2 "$(AREC_STORE=$T/imported every_bundle_verifies "$digest" b-imp team.pub foreign.pub)" "bundles after export and import"
echo "ok: bundles"
