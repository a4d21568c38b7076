#!/usr/bin/env bash
# arec inspect: a record's manifest, config (platform, entrypoint, env), layers and referrers, as text
# and as JSON; --files lists what each layer holds, read from the layer; the history by digest; errors.
AREC=$1
source "$(dirname "$0")/lib.sh"
make_history
manifest=$(cat "$T/store/blobs/sha256/${TOOL#sha256:}")
config=$(jq -r .config.digest <<<"$manifest")
layer=$(jq -r .layers[0].digest <<<"$manifest")
layer_size=$(jq -r .layers[0].size <<<"$manifest")
sbom=$(jq -r --arg d "$TOOL" '.manifests[] | select(.annotations["dev.arec.subject"] == $d) | .digest' "$T/store/index.json")

note "text"
expect_exit 0 "$AREC" inspect mesh/tool
expect_eq "reference   mesh/tool@$TOOL" "$(sed -n 1p <<<"$OUT")" "first line"
expect_contains "$OUT" $'\n'"manifest    $TOOL application/vnd.oci.image.manifest.v1+json $(stat -c %s "$T/store/blobs/sha256/${TOOL#sha256:}") bytes"
expect_contains "$OUT" $'\n'"config      $config "
expect_contains "$OUT" $'\n'"platform    linux/amd64"$'\n'
expect_contains "$OUT" $'\n'"entrypoint  /usr/local/bin/tool"$'\n'
expect_contains "$OUT" $'\n'"env         MODE=fast"$'\n'
# Each layer with its size and, where its descriptor names one, its origin (a program's libraries come
# one Debian package a layer).
expect_eq "$(jq -r '.layers[] | "layer       \(.digest) \(.mediaType) \(.size) bytes\(.annotations["dev.arec.layer.origin"] // "" | if . == "" then "" else " " + . end)"' <<<"$manifest")" \
  "$(grep '^layer ' <<<"$OUT")" "the layer lines"
expect_contains "$OUT" $'\n'"layer       $layer application/vnd.oci.image.layer.v1.tar+gzip $layer_size bytes"
# A referrer's size is its document's (the SBOM), not its manifest's.
sbom_size=$(jq -r '.layers[0].size' "$T/store/blobs/sha256/${sbom#sha256:}")
sbom_manifest_size=$(stat -c %s "$T/store/blobs/sha256/${sbom#sha256:}")
[[ $sbom_size != "$sbom_manifest_size" ]] || fail "the SBOM and its manifest have one size: the check below shows nothing"
expect_contains "$OUT" $'\n'"referrer    $sbom application/spdx+json $sbom_size bytes"
expect_not_contains "$OUT" "/usr/local/bin/tool -> " "files without --files"

note "--json"
expect_exit 0 "$AREC" inspect mesh/tool --json
expect_eq "mesh/tool@$TOOL" "$(jq -r .reference <<<"$OUT")" "reference"
expect_eq "$TOOL $config linux/amd64" "$(jq -r '"\(.manifest.digest) \(.config.digest) \(.config.platform)"' <<<"$OUT")" "digests, platform"
expect_eq '["/usr/local/bin/tool"]' "$(jq -c .config.entrypoint <<<"$OUT")" "entrypoint"
expect_eq MODE=fast "$(jq -r '.config.env[] | select(startswith("MODE="))' <<<"$OUT")" "env"
expect_eq "$(jq -c '[.layers[] | {digest, size, origin: .annotations["dev.arec.layer.origin"]}]' <<<"$manifest")" \
  "$(jq -c '[.layers[] | {digest, size, origin}]' <<<"$OUT")" "layers: digest, size, origin"
expect_eq "$(jq '[.config.size, .layers[].size] | add' <<<"$manifest")" "$(jq .size <<<"$OUT")" "size: the config and every layer"
expect_eq "$sbom application/spdx+json $sbom_size $sbom_manifest_size" \
  "$(jq -r '.referrers[] | "\(.digest) \(.artifactType) \(.size) \(.manifest_size)"' <<<"$OUT")" "referrers: document and manifest sizes"
expect_eq "$(jq .size <<<"$OUT")" "$(jq .record.size <<<"$OUT")" "the record's size: the image's, as records --json says"
expect_eq "mesh tool" "$(jq -r '"\(.record.module) \(.record.name)"' <<<"$OUT")" "record"
expect_eq null "$(jq -c .layers[0].files <<<"$OUT")" "files without --files"

note "--files: each entry of the layer, as tar lists it"
expect_exit 0 "$AREC" inspect "mesh/app@$APP1" --files
expect_eq "reference   mesh/app@$APP1" "$(sed -n 1p <<<"$OUT")" "an older record by digest"
expect_contains "$OUT" $'\n'"target      app"$'\n'
expect_contains "$OUT" $'\n'"build       Release"$'\n'
expect_contains "$OUT" $'\n'"  drwxr-xr-x          0 /srv/app"$'\n'
expect_contains "$OUT" $'\n'"  -rw-r--r--     200000 /srv/app/data.bin"$'\n'
expect_contains "$OUT" $'\n'"  lrwxrwxrwx          0 /srv/app/data.link -> data.bin"$'\n'
expect_contains "$OUT" $'\n'"  -rw-r--r--          4 /srv/app/etc/version"$'\n'
expect_exit 0 "$AREC" inspect mesh/app --files --json
expect_eq "$(cd "$T/in/app" && { find . -mindepth 1 | sed 's|^\.|/srv/app|'; echo /srv; echo /srv/app; } | sort)" \
  "$(jq -r '.layers[0].files[].path' <<<"$OUT" | sort)" "the files of the layer are the recorded tree"
expect_eq "/srv/app/data.bin file 200000 -rw-r--r--" \
  "$(jq -r '.layers[0].files[] | select(.path == "/srv/app/data.bin") | "\(.path) \(.type) \(.size) \(.mode)"' <<<"$OUT")" "data.bin"
expect_eq "data.bin" "$(jq -r '.layers[0].files[] | select(.path == "/srv/app/data.link") | .linkTarget' <<<"$OUT")" "link target"

note "errors: one line naming the input, exit 2"
expect_exit 2 "$AREC" inspect mesh/nothing
expect_one_line_error "\"mesh/nothing\": no such record in the store $T/store"
expect_exit 2 "$AREC" inspect Mesh
expect_one_line_error '"Mesh": not MODULE/NAME[@DIGEST], or HOST[:PORT]/MODULE/NAME[:TAG][@DIGEST] for a registry'
expect_exit 2 "$AREC" inspect mesh/app@sha256:1234
expect_one_line_error '"mesh/app@sha256:1234"'
expect_exit 2 "$AREC" inspect "mesh/app@sha256:$(printf '0%.0s' {1..64})"
expect_one_line_error "no such record"

note "a module/name of two platforms: inspect asks which, naming each; by --platform or its digest, that one"
echo multi >"$T/multi"
amd=$("$AREC" record --store "$T/multi-store" --module m --name multi --file "$T/multi" --runtime none --platform linux/amd64 -q)
arm=$("$AREC" record --store "$T/multi-store" --module m --name multi --file "$T/multi" --runtime none --platform linux/arm64 -q)
expect_exit 2 "$AREC" inspect --store "$T/multi-store" m/multi
expect_one_line_error "\"m/multi\" is an image of 2 platforms; name one with --platform OS/ARCH[/VARIANT] or by its digest: $amd (linux/amd64), $arm (linux/arm64)"
expect_exit 0 "$AREC" inspect --store "$T/multi-store" "$arm"
expect_contains "$OUT" "linux/arm64"
expect_exit 0 "$AREC" inspect --store "$T/multi-store" m/multi --platform linux/arm64 --json
expect_eq "$arm linux/arm64" "$(jq -r '"m/multi@\(.manifest.digest) \(.config.platform)"' <<<"$OUT")" "inspect --platform linux/arm64"
expect_exit 0 "$AREC" inspect --store "$T/multi-store" m/multi --platform linux/amd64
expect_eq "reference   $amd" "$(sed -n 1p <<<"$OUT")" "inspect --platform linux/amd64"
expect_exit 2 "$AREC" inspect --store "$T/multi-store" m/multi --platform linux/riscv64
expect_one_line_error "\"m/multi\": no record for --platform linux/riscv64 in its image: $amd (linux/amd64), $arm (linux/arm64)"
expect_exit 2 "$AREC" inspect --store "$T/multi-store" m/multi --platform linux
expect_one_line_error "linux"
note "tag --json: size is the image's, as records --json says"
expect_exit 0 "$AREC" tag "mesh/app@$APP1" --json
expect_eq "$("$AREC" records mesh/app --json | jq -c '.[0] | {digest, size, manifest_size}')" \
  "$(jq -c '{digest, size, manifest_size}' <<<"$OUT")" "tag --json against records --json"
echo PASS
