#!/usr/bin/env bash
# Every way a record enters a trusting store asks the one policy, and refuses (exit 4, nothing written)
# what no trusted key signed. `record --base` of a registry tag or of the store's M/N must be signed; a
# base pinned by digest is taken as the team pinned it, and the signed provenance and `inspect` say
# which. `import` checks the bundle's own bundles, and applies pull's future-time rule and the record
# document's own form (a record claiming to be an index is refused, trust or not). A history row that
# claims to be an index makes compose judge exactly that row, and refuse it. `sign` and `push
# --sign-key` sign only what this store recorded: a pulled record is refused (exit 4) unless signed on
# request (`sign --pulled`), and then its provenance names who built it and who signed.
AREC=$1
source "$(dirname "$0")/lib.sh"
here=$SIGNING
trust_setup oracle jq python3 sqlite3
fp() { openssl pkey -pubin -in "$1" -outform DER | sha256sum | cut -d' ' -f1; }
with() { local store=$1; shift; AREC_STORE=$T/$store "$@"; }
build() { # build STORE NAME [record options]: records $M/NAME from content unique to STORE; prints the digest
  mkdir -p "src/$1/$2" && echo "$1 $2 $RANDOM" >"src/$1/$2/id"
  with "$1" "$AREC" record --module "$M" --name "$2" --dir "src/$1/$2=/srv" --runtime none "${@:3}" | cut -d@ -f2
}
provenance_of() { # provenance_of STORE DIGEST: the provenance's predicate
  python3 "$here/bundles.py" "$T/$1" "$2" "prov-$2" | awk '$2 ~ /slsa/ { print $1 }' | head -1 |
    xargs python3 "$here/statement.py" | jq -c .predicate
}
blobs_of() { find "$T/$1/blobs" -type f 2>/dev/null | wc -l; }

note "record --base: a registry tag must be signed; the intruder's unsigned image over the team's is refused"
team_base=$(AREC_SIGNING_KEY=$T/team.key build team base)
with team expect_exit 0 "$AREC" push "$M/base"
evil_base=$(build evil base)
with evil expect_exit 0 "$AREC" push "$M/base"
expect_eq "$evil_base" "$(curl -fsSI -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
  "http://$R/v2/$M/base/manifests/latest" | tr -d '\r' | sed -n 's/^Docker-Content-Digest: //Ip')" "latest at the registry"
export AREC_TRUST_KEYS=$T/team.pub AREC_SIGNING_KEY=$T/team.key
chmod 600 team.key
mkdir -p src/b && echo app >src/b/app
expect_exit 4 env AREC_STORE=$T/b "$AREC" record --module "$M" --name app --dir src/b=/srv --runtime none \
  --base "$R/$M/base:latest"
expect_one_line_error "$M/base@$evil_base is unsigned: no bundle verifies under a trusted key; nothing written"
expect_eq "" "$(with b "$AREC" records)" "records of the refused build"
expect_eq 0 "$(blobs_of b)" "blobs of the refused build"
note "a base pinned by digest is what the team pinned: taken, and the provenance and inspect say so"
expect_exit 0 env AREC_STORE=$T/b "$AREC" record --module "$M" --name app --dir src/b=/srv --runtime none \
  --base "$R/$M/base@$evil_base"
expect_contains "$ERR" "pinned by digest, taken as it is"
pinned=$(provenance_of b "${OUT#*@}")
expect_eq "${evil_base#sha256:} pinned by digest: taken without a signature check" \
  "$(jq -r '.buildDefinition.resolvedDependencies[] | select(.name == "base") | "\(.digest.sha256) \(.annotations.taken)"' <<<"$pinned")" \
  "the provenance's base"
with b expect_exit 0 "$AREC" inspect "$M/app"
expect_contains "$OUT" "base taken  pinned by digest: taken without a signature check" "inspect"
note "a base of the store (M/N) must be signed too"
unsigned_base=$(AREC_SIGNING_KEY= build b ubase)
echo tool >src/b/tool
expect_exit 4 env AREC_STORE=$T/b "$AREC" record --module "$M" --name tool --dir src/b=/srv --runtime none \
  --base "$M/ubase"
expect_one_line_error "base \"$M/ubase\": the record $M/ubase@$unsigned_base is unsigned; a base named by module/name must be signed by a trusted key"
with team expect_exit 0 "$AREC" record --module "$M" --name tool --dir src/b=/srv --runtime none --base "$M/base"
signed_base=$(provenance_of team "${OUT#*@}")
expect_eq "signed by trusted key $(fp team.pub)" \
  "$(jq -r '.buildDefinition.resolvedDependencies[] | select(.name == "base") | .annotations.taken' <<<"$signed_base")" \
  "the provenance's base of a signed store base"
unset AREC_SIGNING_KEY

note "import: only what a trusted key signed, by the bundles the tarball holds; nothing written otherwise"
with team expect_exit 0 "$AREC" export "$M/base" -o signed.tar
with evil expect_exit 0 "$AREC" export "$M/base" -o unsigned.tar
expect_exit 4 env AREC_STORE=$T/i "$AREC" import unsigned.tar
expect_one_line_error "the record $M/base@$evil_base is unsigned: no bundle verifies under a trusted key; nothing imported"
[[ ! -e $T/i ]] || expect_eq 0 "$(blobs_of i)" "blobs of the refused import"
expect_exit 0 env AREC_STORE=$T/i "$AREC" import signed.tar
expect_eq "$team_base" "$(with i "$AREC" records --json | jq -r '.[0].digest')" "the signed import"
note "import applies pull's future-time rule, and a record is of an image manifest, trust or not"
future=$(date -u -d '+1 hour' +%Y-%m-%dT%H:%M:%SZ)
rm -rf x && mkdir x && tar -xf unsigned.tar -C x
jq --arg t "$future" '.manifests |= map(if .annotations["dev.arec.module"] then .annotations["org.opencontainers.image.created"] = $t else . end)' \
  x/index.json >x/i && mv x/i x/index.json && (cd x && tar -cf ../future.tar oci-layout index.json blobs)
expect_exit 2 env AREC_TRUST_KEYS= AREC_STORE=$T/k "$AREC" import future.tar
expect_one_line_error "is recorded $future, more than 5 minutes ahead of this machine's clock"
rm -rf x && mkdir x && tar -xf unsigned.tar -C x
jq '.manifests |= map(if .annotations["dev.arec.module"] then .mediaType = "application/vnd.oci.image.index.v1+json" else . end)' \
  x/index.json >x/i && mv x/i x/index.json && (cd x && tar -cf ../index-claim.tar oci-layout index.json blobs)
expect_exit 2 env AREC_TRUST_KEYS= AREC_STORE=$T/k "$AREC" import index-claim.tar
expect_one_line_error "\"mediaType\" \"application/vnd.oci.image.index.v1+json\" is not application/vnd.oci.image.manifest.v1+json"
[[ ! -e $T/k ]] || expect_eq "" "$(with k "$AREC" records)" "records of the refused imports"

note "import never makes an older record the latest, unless asked"
# Store h holds a newer team record of base than signed.tar's: importing that older export leaves it out.
sleep 1
newest=$(AREC_SIGNING_KEY=$T/team.key build team base)
with team expect_exit 0 "$AREC" export "$M/base" -o newest.tar
with o expect_exit 0 "$AREC" import newest.tar
with o expect_exit 0 "$AREC" import signed.tar --json
expect_eq 0 "$(jq .records_added <<<"$OUT")" "records added from the older export"
expect_contains "$(jq -r '.kept[0]' <<<"$OUT")" "$M/base@$team_base, recorded" "what the import left out"
expect_contains "$ERR" "is older than the store's latest $M/base@$newest"
expect_eq "$newest" "$(with o "$AREC" records --json | jq -r '.[0].digest')" "the latest after the older import"
with o expect_exit 0 "$AREC" import signed.tar --allow-older
expect_eq "$team_base" "$(with o "$AREC" records --json | jq -r '.[0].digest')" "the latest after --allow-older"

note "a history row claiming to be an index: compose judges exactly that row, and refuses it"
# The intruder's image recorded into a trusting store, then the team's newer record imported beside it,
# then the intruder's row edited to claim an index: a request pinning its digest must still be refused.
mkdir -p src/i && echo intruder >src/i/x
with h expect_exit 0 env AREC_TRUST_KEYS= "$AREC" record --module "$M" --name base --dir src/i=/srv --runtime none
intruder=${OUT#*@}
sleep 1
newer=$(AREC_SIGNING_KEY=$T/team.key build team base)
with team expect_exit 0 "$AREC" export "$M/base" -o newer.tar
with h expect_exit 0 "$AREC" import newer.tar
echo "image: arec://image/$M/base" >deploy.yaml.in
with h expect_exit 0 "$AREC" compose deploy.yaml.in
expect_contains "$OUT" "@$newer" "compose of the team's record"
for table in records heads; do
  sqlite3 "$T/h/arec/history.db" "UPDATE $table SET media_type = 'application/vnd.oci.image.index.v1+json' WHERE digest = '$intruder'"
done
echo "image: arec://image/$M/base@$intruder" >pinned.yaml.in
with h expect_exit 4 "$AREC" compose pinned.yaml.in -o pinned.yaml
expect_one_line_error "the record $M/base@$intruder is not trusted"
expect_contains "$ERR" "\"mediaType\""
[[ ! -e pinned.yaml ]] || fail "a refused compose wrote pinned.yaml"

note "sign and push --sign-key sign what this store recorded; a pulled record only on request"
with p expect_exit 0 env AREC_TRUST_KEYS= "$AREC" pull "$M/base"
expect_eq "$evil_base" "$OUT" "the unchecked pull"
expect_exit 4 env AREC_STORE=$T/p "$AREC" sign "$M/base" --sign-key team.key
expect_one_line_error "signing $M/base@$evil_base: this store did not record it (it was pulled or imported)"
expect_exit 0 env AREC_STORE=$T/p "$AREC" sign --sign-key team.key
expect_contains "$ERR" "1 record left unsigned: pulled or imported, not recorded by this store (arec sign --pulled signs them)"
expect_exit 4 env AREC_STORE=$T/p "$AREC" push "$M/base" --sign-key team.key
expect_one_line_error "push: the record $M/base@$evil_base is unsigned, and signing $M/base@$evil_base: this store did not record it"
expect_contains "$ERR" "nothing pushed"
expect_eq 0 "$(python3 "$here/bundles.py" "$T/p" "$evil_base" none | wc -l)" "bundles of the refused record"
expect_exit 0 env AREC_STORE=$T/p AREC_BUILDER_ID=https://release.example/job/9 "$AREC" sign "$M/base" --pulled --sign-key team.key
resigned=$(provenance_of p "$evil_base")
expect_eq "urn:arec:builder:unknown https://release.example/job/9" \
  "$(jq -r '"\(.runDetails.builder.id) \(.buildDefinition.internalParameters.signedBy)"' <<<"$resigned")" \
  "the provenance of a pulled record signed on request: who built it, who signed"
with p expect_exit 0 "$AREC" inspect "$M/base"
expect_contains "$OUT" "signer      https://release.example/job/9"
for bundle in prov-"$evil_base"/*.json; do
  node "$here/oracle/verify.js" "$bundle" team.pub "${evil_base#sha256:}" >/dev/null || fail "$bundle does not verify"
done
echo "ok: trust boundaries"
