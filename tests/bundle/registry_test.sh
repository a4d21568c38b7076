#!/usr/bin/env bash
# With the test registry: inspect reads a pushed image from the registry (the store untouched), and
# the air-gapped move: export, carry, import into another store, push from there.
AREC=$1
source "$(dirname "$0")/../registry/lib.sh"
use_registry "$REG"

app=$(record app 300000)
expect_exit 0 "$AREC" push
sbom=$(jq -r --arg d "$app" '.manifests[] | select(.annotations["dev.arec.subject"] == $d) | .digest' "$AREC_STORE/index.json")
layer=$(jq -r .layers[0].digest "$AREC_STORE/blobs/sha256/${app#sha256:}")

note "inspect HOST:PORT/MODULE/NAME:TAG reads the registry; the store is not changed"
before=$(tree_state "$AREC_STORE")
expect_exit 0 "$AREC" inspect "$REG/$M/app:latest" --json --files
expect_eq "$REG/$M/app@$app" "$(jq -r .reference <<<"$OUT")" "reference"
expect_eq "$app linux/amd64 null" "$(jq -r '"\(.manifest.digest) \(.config.platform) \(.record)"' <<<"$OUT")" "digest platform record"
expect_eq "$layer" "$(jq -r '.layers[].digest' <<<"$OUT")" "layers"
expect_eq "$sbom" "$(jq -r '.referrers[].digest' <<<"$OUT")" "the SBOM, found in the registry"
expect_eq "/srv/app/data file 300000" \
  "$(jq -r '.layers[0].files[] | select(.path == "/srv/app/data") | "\(.path) \(.type) \(.size)"' <<<"$OUT")" "a file of the layer"
expect_eq "$before" "$(tree_state "$AREC_STORE")" "the store after inspecting a registry image"
expect_exit 0 "$AREC" inspect "$REG/$M/app@$app"
expect_eq "reference   $REG/$M/app@$app" "$(sed -n 1p <<<"$OUT")" "text, by digest"
expect_exit 3 "$AREC" inspect "$REG/$M/nothing:latest"
expect_one_line_error "$M/nothing"

note "export, carry, import, push: the air-gapped move"
echo changed >>"$T/in/app/id"
app2=$("$AREC" record --module "$M" --name app --dir "$T/in/app=/srv/app" | cut -d@ -f2)
tool=$(record tool 2000)
expect_exit 0 "$AREC" export "$M" --history -o "$T/carry.tar"
carried=$T/carried-store
expect_exit 0 "$AREC" --store "$carried" import "$T/carry.tar"
expect_contains "$OUT" "imported 3 records"
expect_exit 0 "$AREC" --store "$carried" push "$M" --json
expect_eq "$(printf '%s\n' "$M/app $app2" "$M/tool $tool" | sort)" \
  "$(jq -r '.images[] | "\(.repository) \(.digest)"' <<<"$OUT" | sort)" "pushed from the carried store"
expect_eq "$app2" "$(skopeo inspect --no-tags --tls-verify=false "docker://$REG/$M/app:latest" | jq -r .Digest)" "the registry's latest"
expect_exit 0 "$AREC" --store "$carried" verify "$M"
echo PASS
