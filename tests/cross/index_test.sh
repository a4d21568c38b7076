#!/usr/bin/env bash
# One image index per module/name: the same program built natively and cross-compiled for arm64, recorded
# into one store as the same module/name. Alone, a platform's record stays a plain manifest; with both,
# the latest of module/name is an OCI image index over the newest record of each platform. `records`
# lists each platform, compose names the index, gc keeps it; `push` puts both manifests and then the index
# as `latest`, which the registry serves as an index, skopeo picks arm64 from, and `skopeo copy --all`
# copies byte for byte. Recording arm64 again replaces the arm64 entry only. `export --platform` writes
# one platform's record alone, which umoci unpacks where it refuses the index.
source "$(dirname "$0")/../registry/lib.sh"
AREC=$1
command -v aarch64-linux-gnu-g++ >/dev/null || skip "no aarch64-linux-gnu-g++ (Debian's g++-aarch64-linux-gnu; scripts/deps installs it)"
[[ $(uname -m) == x86_64 ]] || skip "the checks name this machine's platform as linux/amd64; this one is $(uname -m)"
for tool in skopeo jq curl; do command -v $tool >/dev/null || skip "no $tool (scripts/deps installs it)"; done
use_registry "$REG"
export SOURCE_DATE_EPOCH=0
store=$AREC_STORE
blob() { cat "$store/blobs/sha256/${1#sha256:}"; }
latest_entry() { jq -c --arg ref "$M/hello" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $ref)' "$store/index.json"; }
compose_hello() { echo "image: arec://image/$M/hello" | "$AREC" compose - | sed 's/.*@//'; }

printf '#include <cstdio>\nint main() { std::puts("hello %s"); }\n' native >"$T/native.cpp"
printf '#include <cstdio>\nint main() { std::puts("hello %s"); }\n' arm64 >"$T/arm64.cpp"
printf '#include <cstdio>\nint main() { std::puts("hello %s"); }\n' arm64-again >"$T/arm64-again.cpp"
mkdir -p "$T/native" "$T/arm64" "$T/arm64-again"
g++ -O1 -static -o "$T/native/hello" "$T/native.cpp" || fail "g++ cannot build the native program"
aarch64-linux-gnu-g++ -O1 -static -o "$T/arm64/hello" "$T/arm64.cpp" || fail "aarch64-linux-gnu-g++ cannot build the arm64 program"
aarch64-linux-gnu-g++ -O1 -static -o "$T/arm64-again/hello" "$T/arm64-again.cpp" || fail "aarch64-linux-gnu-g++ cannot build the second arm64 program"

note "one platform: the latest is the record's manifest"
amd64=$("$AREC" record --module "$M" --name hello --target hello --file "$T/native/hello" | cut -d@ -f2)
expect_eq "application/vnd.oci.image.manifest.v1+json $amd64" "$(latest_entry | jq -r '"\(.mediaType) \(.digest)"')" "the store's latest of $M/hello"
expect_eq "$amd64" "$(compose_hello)" "compose of arec://image/$M/hello"
expect_not_contains "$("$AREC" records "$M/hello")" "PLATFORM" "records of one platform"

note "two platforms: the latest is an index over both"
arm64=$("$AREC" record --module "$M" --name hello --target hello --file "$T/arm64/hello" | cut -d@ -f2)
entry=$(latest_entry)
expect_eq "application/vnd.oci.image.index.v1+json" "$(jq -r .mediaType <<<"$entry")" "the store's latest of $M/hello"
index=$(jq -r .digest <<<"$entry")
expect_eq "linux/amd64 $amd64,linux/arm64 $arm64" \
  "$(blob "$index" | jq -r '[.manifests[] | "\(.platform.os)/\(.platform.architecture) \(.digest)"] | join(",")')" "the index's manifests"
expect_eq "$index" "$(compose_hello)" "compose of arec://image/$M/hello"
expect_exit 0 "$AREC" records "$M/hello"
expect_contains "$OUT" "PLATFORM" "records"
expect_eq "linux/amd64 $amd64|linux/arm64 $arm64" "$(awk 'NR > 1 { print $2, $3 }' <<<"$OUT" | paste -sd'|')" "records: a row per platform"
expect_exit 0 "$AREC" records --wide
expect_contains "$OUT" "linux/arm64" "records --wide"
expect_contains "$OUT" "linux/amd64" "records --wide"
expect_exit 0 "$AREC" records "$M/hello" --json
expect_eq "$index $index" "$(jq -r '[.[].index] | join(" ")' <<<"$OUT")" "records --json: the index of each platform's record"
note "the store is an OCI layout with the index: skopeo reads the arm64 image from it, gc keeps it"
expect_eq "arm64" "$(skopeo inspect --override-arch arm64 "oci:$store:$M/hello" | jq -r .Architecture)" "skopeo on the store, arm64"
expect_eq "amd64" "$(skopeo inspect --override-arch amd64 "oci:$store:$M/hello" | jq -r .Architecture)" "skopeo on the store, amd64"
expect_eq "$(printf '%s\n' "$amd64" "$arm64" | sort | paste -sd' ')" \
  "$(jq -r '[.manifests[] | .annotations["dev.arec.subject"] // empty] | sort | join(" ")' "$store/index.json")" \
  "the subjects of the SBOMs the store's index lists"
expect_exit 0 "$AREC" gc
expect_exit 0 "$AREC" check
[[ -f $store/blobs/sha256/${index#sha256:} ]] || fail "gc removed the index $index"

note "push: both manifests, then the index as latest"
expect_exit 0 "$AREC" push "$M/hello" --json
expect_eq "$index latest" "$(jq -r --arg d "$index" '.images[] | select(.digest == $d) | "\(.digest) \(.tags | join(","))"' <<<"$OUT")" "the pushed index and its tags"
got=$(curl -sf -H "Accept: application/vnd.oci.image.index.v1+json" "http://$REG/v2/$M/hello/manifests/latest") ||
  fail "GET /v2/$M/hello/manifests/latest failed"
expect_eq "$index" "sha256:$(printf %s "$got" | sha256sum | cut -d' ' -f1)" "the digest of the registry's latest"
expect_eq "application/vnd.oci.image.index.v1+json linux/amd64,linux/arm64" \
  "$(jq -r '"\(.mediaType) \([.manifests[].platform | "\(.os)/\(.architecture)"] | join(","))"' <<<"$got")" "the registry's latest"
# skopeo's Digest is the index's, its Architecture that of the manifest it picked.
expect_eq "arm64 $index" "$(skopeo inspect --tls-verify=false --override-arch arm64 "docker://$REG/$M/hello:latest" | jq -r '"\(.Architecture) \(.Digest)"')" \
  "skopeo inspect --override-arch arm64"
expect_eq "$arm64" "sha256:$(skopeo inspect --raw --tls-verify=false --override-arch arm64 "docker://$REG/$M/hello@$arm64" | sha256sum | cut -d' ' -f1)" \
  "the arm64 manifest at the registry"
skopeo copy -q --all --src-tls-verify=false "docker://$REG/$M/hello:latest" "oci:$T/back:hello" || fail "skopeo copy --all failed"
expect_eq "$index" "$(jq -r '.manifests[0].digest' "$T/back/index.json")" "the index skopeo copied"
expect_eq 7 "$(same_blobs "$T/back" "$store")" "blobs identical to the store's (index; per platform manifest, config, layer)"

note "recording arm64 again replaces the arm64 entry only"
again=$("$AREC" record --module "$M" --name hello --target hello --file "$T/arm64-again/hello" | cut -d@ -f2)
expect_ne "$arm64" "$again" "the second arm64 record"
index2=$(latest_entry | jq -r .digest)
expect_eq "linux/amd64 $amd64,linux/arm64 $again" \
  "$(blob "$index2" | jq -r '[.manifests[] | "\(.platform.os)/\(.platform.architecture) \(.digest)"] | join(",")')" "the index after a new arm64 record"

note "the same set gives the same index: the amd64 record made latest again changes nothing"
expect_exit 0 "$AREC" tag "$M/hello@$amd64"
expect_eq "$index2" "$(latest_entry | jq -r .digest)" "the index after tagging amd64 again"

note "another module/name of one platform keeps a plain manifest"
solo=$("$AREC" record --module "$M" --name solo --file "$T/arm64/hello" | cut -d@ -f2)
expect_eq "application/vnd.oci.image.manifest.v1+json $solo" \
  "$(jq -r --arg ref "$M/solo" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $ref) | "\(.mediaType) \(.digest)"' "$store/index.json")" \
  "the store's latest of $M/solo"
expect_exit 0 "$AREC" push "$M/solo" --json
expect_eq "application/vnd.oci.image.manifest.v1+json" \
  "$(curl -sf -H "Accept: application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json" "http://$REG/v2/$M/solo/manifests/latest" | jq -r .mediaType)" \
  "the registry's latest of $M/solo"

note "pull and --base pick the platform asked for from the index"
expect_exit 0 "$AREC" push "$M/hello"
expect_exit 0 "$AREC" --store "$T/other" pull "$REG/$M/hello:latest" --platform linux/arm64 --json
expect_eq "$index2 $again" "$(jq -r '"\(.digest) \(.manifest)"' <<<"$OUT")" "pull --platform linux/arm64: the index and the manifest picked"
expect_exit 0 "$AREC" --store "$T/other" pull "$REG/$M/hello:latest" --json
expect_eq "$amd64" "$(jq -r .manifest <<<"$OUT")" "pull without --platform: this machine's"
echo data >"$T/data.txt"
expect_exit 0 "$AREC" record --module "$M" --name onbase --file "$T/data.txt" --base "$M/hello" --platform linux/arm64 --json
expect_eq "$again" "$(jq -r .base <<<"$OUT")" "the base of an arm64 record on $M/hello"
expect_exit 2 "$AREC" record --module "$M" --name onbase --file "$T/data.txt" --base "$M/hello" --platform linux/riscv64
expect_one_line_error "no record for linux/riscv64 (recorded for linux/amd64, linux/arm64)"
# The index by digest, held whole by the store that pulled both platforms: its arm64 manifest, no network.
expect_exit 0 "$AREC" --store "$T/other" record --module "$M" --name onbase --file "$T/data.txt" --base "$REG/$M/hello@$index2" --platform linux/arm64 --json
expect_eq "$again" "$(jq -r .base <<<"$OUT")" "the base of an arm64 record on $REG/$M/hello@$index2 (the store's copy)"
# The same index as a local layout (the store is one): its arm64 manifest too.
expect_exit 0 "$AREC" --store "$T/third" record --module "$M" --name onbase --file "$T/data.txt" --base "oci:$store:$M/hello" --platform linux/arm64 --json
expect_eq "$again" "$(jq -r .base <<<"$OUT")" "the base of an arm64 record on oci:$store:$M/hello"

note "verify checks the index and each platform's record"
expect_exit 0 "$AREC" verify "$M/hello" --json
expect_eq "$(printf '%s present\n' "$amd64" "$again" "$index2" | sort | paste -sd,)" \
  "$(jq -r '.[] | "\(.digest) \(.state)"' <<<"$OUT" | sort | paste -sd,)" "verify of $M/hello"

note "export carries the index: OCI tools read each platform from the bundle, import derives the index again"
expect_exit 0 "$AREC" export "$M/hello" -o "$T/hello.tar"
expect_eq "arm64" "$(skopeo inspect --override-arch arm64 "oci-archive:$T/hello.tar:$M/hello" | jq -r .Architecture)" \
  "skopeo on the bundle, arm64"
expect_exit 0 "$AREC" --store "$T/imported" import "$T/hello.tar"
expect_exit 0 "$AREC" --store "$T/imported" index "$M/hello" --json
expect_eq "$index2 linux/amd64,linux/arm64" "$(jq -r '"\(.digest) \([.platforms[].platform] | join(","))"' <<<"$OUT")" \
  "the imported store's image of $M/hello"

note "export --platform: that platform's record alone, which umoci (reading no index) unpacks; another platform refused"
if command -v umoci >/dev/null; then
  mkdir "$T/whole" && tar -xf "$T/hello.tar" -C "$T/whole"
  umoci unpack --rootless --image "$T/whole:$M/hello" "$T/whole-bundle" >/dev/null 2>"$T/umoci.err" && fail "umoci unpacked an image index"
  expect_contains "$(cat "$T/umoci.err")" "tag is ambiguous" "umoci on the bundle with the index"
  expect_exit 0 "$AREC" export "$M/hello" --platform linux/arm64 -o "$T/hello-arm64.tar" --json
  expect_eq "1 1" "$(jq -r '"\(.records) \(.referrers)"' <<<"$OUT")" "records and referrers exported for linux/arm64"
  mkdir "$T/arm64-layout" && tar -xf "$T/hello-arm64.tar" -C "$T/arm64-layout"
  expect_eq "$again application/vnd.oci.image.manifest.v1+json|$again" \
    "$(jq -r --arg ref "$M/hello" '[(.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $ref) | "\(.digest) \(.mediaType)"),
        (.manifests[] | .annotations["dev.arec.subject"] // empty)] | join("|")' "$T/arm64-layout/index.json")" \
    "the arm64 bundle's tagged manifest and its referrer's subject"
  umoci unpack --rootless --image "$T/arm64-layout:$M/hello" "$T/arm64-bundle" >/dev/null || fail "umoci unpack of the linux/arm64 export failed"
  # e_machine of the ELF header: 183 is AArch64 (62 would be x86-64).
  expect_eq 183 "$(od -An -tu2 -j18 -N2 "$T/arm64-bundle/rootfs/usr/local/bin/hello" | tr -d ' ')" "e_machine of the unpacked hello"
else
  note "umoci is not installed: the unpacking of export --platform is not checked (scripts/deps installs it)"
fi
expect_exit 2 "$AREC" export "$M/hello" --platform linux/riscv64 -o "$T/never.tar"
expect_one_line_error "\"$M/hello\": no record for --platform linux/riscv64 in its image: $M/hello@$amd64 (linux/amd64), $M/hello@$again (linux/arm64)"
[[ ! -e $T/never.tar ]] || fail "a refused export wrote $T/never.tar"

note "move --apply copies the index, and each platform's record, to the new registry"
# Registries of this test alone: move reads the old one's catalog, which the shared one fills with
# other tests' repositories as they run.
start_registry OLD old
start_registry NEW new
printf '{"self": "n1", "nodes": {"n1": {"address": "127.0.0.1", "ports": {"registry": %s}}, "n2": {"address": "127.0.0.1", "ports": {"registry": %s}}}, "services": {"registry": "n1"}}\n' \
  "${OLD##*:}" "${NEW##*:}" >"$T/move-nodes.json"
expect_exit 0 "$AREC" --nodes "$T/move-nodes.json" push
expect_exit 0 "$AREC" --nodes "$T/move-nodes.json" move --to n2 --apply
expect_eq "$index2" "sha256:$(curl -sf -H "Accept: application/vnd.oci.image.index.v1+json" "http://$NEW/v2/$M/hello/manifests/latest" | sha256sum | cut -d' ' -f1)" \
  "the new registry's latest of $M/hello"
for d in "$amd64" "$again"; do
  curl -sf -o /dev/null -H "Accept: application/vnd.oci.image.manifest.v1+json" "http://$NEW/v2/$M/hello/manifests/$d" ||
    fail "the new registry lacks $d"
done

note "arec index shows the image, keeps only the platforms named, or brings every one back"
expect_exit 0 "$AREC" index "$M/hello"
expect_contains "$OUT" "$M/hello@$index2 (image index)"
expect_contains "$OUT" "linux/arm64  $again"
expect_exit 0 "$AREC" index "$M/hello" --platform linux/amd64 --json
expect_eq "$amd64 application/vnd.oci.image.manifest.v1+json 1" "$(jq -r '"\(.digest) \(.media_type) \(.platforms | length)"' <<<"$OUT")" \
  "the image of linux/amd64 alone"
expect_eq "$amd64" "$(compose_hello)" "compose of the amd64 image alone"
expect_eq "$amd64" "$(latest_entry | jq -r .digest)" "the store's latest of $M/hello"
expect_exit 0 "$AREC" index "$M/hello" --all --json
expect_eq "$index2" "$(json_get .digest <<<"$OUT")" "the image after --all"
expect_exit 2 "$AREC" index "$M/hello" --platform linux/riscv64
expect_one_line_error "$M/hello has no record for linux/riscv64 (it has records for linux/amd64, linux/arm64)"

note "rm of the newest arm64 record: the image takes the arm64 record before it"
expect_exit 0 "$AREC" rm "$M/hello@$again"
expect_exit 0 "$AREC" index "$M/hello" --json
expect_eq "linux/amd64 $amd64,linux/arm64 $arm64" "$(jq -r '[.platforms[] | "\(.platform) \(.digest)"] | join(",")' <<<"$OUT")" \
  "the image after rm"
expect_eq "$index" "$(json_get .digest <<<"$OUT")" "the same set as before gives the same index"
expect_exit 0 "$AREC" check

note "gc --keep 1 keeps each platform's record of the image, not only the newest entry"
expect_exit 0 "$AREC" gc --keep 1
expect_exit 0 "$AREC" index "$M/hello" --json
expect_eq "$index" "$(json_get .digest <<<"$OUT")" "the image after gc --keep 1"
expect_eq "$(printf '%s\n' "$amd64" "$arm64" | sort | paste -sd' ')" \
  "$("$AREC" records "$M/hello" --history --json | jq -r '[.[].digest] | unique | join(" ")')" "the history after gc --keep 1"
expect_exit 0 "$AREC" check
echo PASS
