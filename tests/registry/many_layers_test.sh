#!/usr/bin/env bash
# Images of many layers (a stack of records, each on the one before as --base) through every command
# that moves or reads them: inspect and records --wide count every layer; push sends each layer once and
# mounts what another repository has, also when the record that took it there was removed; verify;
# pull into another store, byte for byte; export and import; move to another registry; an index over
# two platforms of many layers each; gc keeps the layers a record still needs and check finds a
# damaged middle layer.
AREC=$1
source "$(dirname "$0")/lib.sh"
start_registry R own
start_registry R2 other
use_registry "$R"

# stack PREFIX LEVELS [record options]: records $M/PREFIX1 .. $M/PREFIX<LEVELS>, each a directory of its
# own on the one before; prints the digest of the last.
stack() {
  local prefix=$1 levels=$2 i base=() digest
  shift 2
  for i in $(seq "$levels"); do
    mkdir -p "$T/in/$prefix$i"
    echo "$M $prefix level $i" >"$T/in/$prefix$i/id"
    head -c $((20000 + i * 1000)) /dev/urandom >"$T/in/$prefix$i/data"
    digest=$("$AREC" record --module "$M" --name "$prefix$i" --dir "$T/in/$prefix$i=/srv/$prefix$i" "${base[@]}" "$@" | cut -d@ -f2) ||
      fail "recording $M/$prefix$i"
    base=(--base "$M/$prefix$i")
  done
  echo "$digest"
}
blob() { cat "$AREC_STORE/blobs/sha256/${1#sha256:}"; }

top=$(stack l 6)
manifest=$(blob "$top")
expect_eq 6 "$(jq '.layers | length' <<<"$manifest")" "layers of $M/l6"
layers=$(jq -r '.layers[].digest' <<<"$manifest")
size=$(jq '[.config.size, .layers[].size] | add' <<<"$manifest")

note "inspect lists every layer with its size; records --wide SIZE is the image's: config and every layer"
expect_exit 0 "$AREC" inspect "$M/l6" --json
expect_eq "$(jq -c '[.layers[] | {digest, size}]' <<<"$manifest")" "$(jq -c '[.layers[] | {digest, size}]' <<<"$OUT")" "inspect --json layers"
expect_eq "$size" "$(jq .size <<<"$OUT")" "inspect --json size"
expect_eq "null" "$(jq -c '[.layers[].origin] | unique | .[0]' <<<"$OUT")" "origin of layers that name none"
expect_exit 0 "$AREC" inspect "$M/l6"
expect_eq 6 "$(grep -c '^layer ' <<<"$OUT")" "layer lines of inspect"
third=$(jq -r '.layers[2] | "\(.digest) \(.mediaType) \(.size) bytes"' <<<"$manifest")
expect_contains "$OUT" $'\n'"layer       $third"$'\n'
expect_exit 0 "$AREC" records "$M/l6" --wide
expect_eq "$size" "$(awk 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "SIZE") c = i } NR == 2 { print $c }' <<<"$OUT")" "records --wide SIZE"
expect_eq "$size" "$("$AREC" records "$M/l6" --json | jq '.[0].size')" "records --json size"

note "push: the config and each layer once; a record on the same base mounts the layers it shares"
expect_exit 0 "$AREC" push "$M/l6" --json
expect_eq "7 0 0" "$(jq -r '"\(.uploaded) \(.mounted) \(.skipped)"' <<<"$OUT")" "uploaded mounted skipped"
expect_eq "$size" "$(jq .bytes <<<"$OUT")" "bytes uploaded"
expect_exit 0 "$AREC" push "$M/l4" --json
expect_eq "1 4 0" "$(jq -r '"\(.uploaded) \(.mounted) \(.skipped)"' <<<"$OUT")" "uploaded (its config) mounted (its 4 layers) skipped"
expect_exit 0 "$AREC" verify "$M/l6" "$M/l4"

note "a layer pushed under a module/name whose record was removed is mounted from there"
# $M/twin is $M/l6's content again under another name: the same layers and config. Every other record
# holding those layers (l1..l5, of the base chain) went nowhere but l4; with l6 removed from the store,
# only the store's note of where its blobs went says that $M/l6 has them.
expect_exit 0 "$AREC" rm "$M/l6"
twin=$("$AREC" record --module "$M" --name twin --dir "$T/in/l6=/srv/l6" --base "$M/l5" | cut -d@ -f2)
expect_eq "$top" "$twin" "digest of the twin"
expect_exit 0 "$AREC" -v push "$M/twin" --json
expect_eq "0 7 0" "$(jq -r '"\(.uploaded) \(.mounted) \(.skipped)"' <<<"$OUT")" "uploaded mounted skipped"
expect_contains "$ERR" "from $M/l6" "where the mounts came from (-v)"
expect_exit 0 "$AREC" verify "$M/twin"

note "at another registry the noted repositories hold nothing: the mount falls back to an upload"
use_registry "$R2"
expect_exit 0 "$AREC" push "$M/twin" --json
expect_eq "7 0 0 $size" "$(jq -r '"\(.uploaded) \(.mounted) \(.skipped) \(.bytes)"' <<<"$OUT")" "uploaded mounted skipped bytes"
expect_eq "$top" "$(skopeo inspect --no-tags --tls-verify=false "docker://$R2/$M/twin@$top" | jq -r .Digest)" "digest at $R2"
use_registry "$R"

note "pull into another store: every layer, byte for byte; unpacked (umoci), the image holds every level"
src=$AREC_STORE
AREC_STORE=$T/pulled expect_exit 0 "$AREC" pull "$R/$M/twin@$top" --json
expect_eq "7 0" "$(jq -r '"\(.downloaded) \(.present)"' <<<"$OUT")" "downloaded present"
for d in $layers; do cmp -s "$T/pulled/blobs/sha256/${d#sha256:}" "$src/blobs/sha256/${d#sha256:}" || fail "layer $d pulled differs"; done
skopeo copy -q --src-tls-verify=false "docker://$R/$M/twin@$top" "oci:$T/unpack:twin" || fail "skopeo copy from $R"
umoci unpack --rootless --image "$T/unpack:twin" "$T/bundle" >/dev/null || fail "umoci unpack"
for i in $(seq 6); do cmp "$T/bundle/rootfs/srv/l$i/data" "$T/in/l$i/data" || fail "level $i differs in the unpacked image"; done

note "export and import: every layer travels, the store reads them back"
expect_exit 0 "$AREC" export "$M/twin" -o "$T/twin.tar"
listed=$(tar -tf "$T/twin.tar")
for d in $layers; do grep -qx "blobs/sha256/${d#sha256:}" <<<"$listed" || fail "layer $d not exported"; done
expect_exit 0 "$AREC" --store "$T/imported" import "$T/twin.tar" --json
expect_exit 0 "$AREC" --store "$T/imported" check
expect_exit 0 "$AREC" --store "$T/imported" inspect "$M/twin" --json
expect_eq 6 "$(jq '.layers | length' <<<"$OUT")" "layers of the imported record"

note "move to another registry: every layer of every record arrives"
start_registry R3 moved
printf '{"self": "n1", "nodes": {"n1": {"ports": {"registry": %s}}, "n2": {"address": "127.0.0.1", "ports": {"registry": %s}}},
 "services": {"registry": "n1"}}\n' "${R##*:}" "${R3##*:}" >"$T/nodes.json"
# --force: the old registry also holds $M/l6, whose record was removed, which the new one will not have.
expect_exit 0 "$AREC" move --to n2 --apply --force
expect_contains "$OUT" "manifests verified"
expect_exit 0 "$AREC" verify "$M/twin"  # at the new registry, now in the settings
for d in $layers; do
  curl -fsS "http://$R3/v2/$M/twin/blobs/$d" | cmp -s - "$src/blobs/sha256/${d#sha256:}" || fail "layer $d at the new registry"
done
use_registry "$R"

note "an index over two platforms of many layers each: push sends both, pull picks either"
arm=$(stack a 4 --platform linux/arm64)
amd=$(stack a 4)
index=$(jq -r --arg ref "$M/a4" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $ref) | .digest' "$src/index.json")
expect_eq "application/vnd.oci.image.index.v1+json" "$(jq -r .mediaType <<<"$(blob "$index")")" "the latest of $M/a4"
expect_exit 0 "$AREC" push "$M/a4" --json
expect_eq 10 "$(jq .uploaded <<<"$OUT")" "blobs uploaded: two configs, eight layers"
AREC_STORE=$T/arm expect_exit 0 "$AREC" pull "$R/$M/a4:latest" --platform linux/arm64 --json
expect_eq "$arm 5" "$(jq -r '"\(.manifest) \(.downloaded)"' <<<"$OUT")" "the arm64 manifest and its blobs"
expect_eq 4 "$(jq '.layers | length' "$T/arm/blobs/sha256/${arm#sha256:}")" "layers of the pulled arm64 image"
expect_exit 0 "$AREC" verify "$M/a4"
[[ $amd != "$arm" ]] || fail "the two platforms' images are the same"

note "gc keeps every layer a record still needs, and drops the notes of blobs it removes"
expect_exit 0 "$AREC" rm "$M/l5"
expect_exit 0 "$AREC" rm "$M/l4"
expect_exit 0 "$AREC" gc --json
for d in $layers; do [[ -f $src/blobs/sha256/${d#sha256:} ]] || fail "gc removed layer $d, which $M/twin needs"; done
expect_exit 0 "$AREC" check
[[ -f $src/arec/mounts/$(sed -n 6p <<<"$layers" | cut -d: -f2) ]] || fail "the note of a kept layer is gone"
expect_exit 0 "$AREC" rm "$M/twin"
expect_exit 0 "$AREC" gc --json
gone=$(sed -n 6p <<<"$layers")
[[ ! -f $src/blobs/sha256/${gone#sha256:} ]] || fail "gc kept $gone, which no record needs"
[[ ! -f $src/arec/mounts/${gone#sha256:} ]] || fail "gc kept the note of the removed blob $gone"

note "check names a damaged middle layer"
mid=$(jq -r '.layers[1].digest' "$src/blobs/sha256/${amd#sha256:}")
printf 'x' | dd of="$src/blobs/sha256/${mid#sha256:}" bs=1 seek=100 conv=notrunc 2>/dev/null
expect_exit 1 "$AREC" check
expect_contains "$OUT$ERR" "${mid#sha256:}" "check's report"
echo PASS
