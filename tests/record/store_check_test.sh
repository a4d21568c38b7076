#!/usr/bin/env bash
# arec check finds what is wrong with a store; arec gc removes only what no record needs
# (each dropped record here frees its manifest, config and layer, and its SBOM's manifest and document:
# five blobs; the SBOM's empty config is shared).
AREC=$1
source "$(dirname "$0")/../lib.sh"
export AREC_STORE=$T/store
mkdir -p "$T/in"
for v in 1 2 3; do
  echo "version $v" >"$T/in/app"
  head -c 100000 /dev/urandom >>"$T/in/app"
  "$AREC" record --module mesh --name app --file "$T/in/app" >/dev/null
done
echo other >"$T/in/other"
"$AREC" record --module mesh --name other --file "$T/in/other" >/dev/null

note "a sound store"
expect_exit 0 "$AREC" check --json
expect_eq "true 4 0" "$(json_get '"\(.ok) \(.records) \(.problems | length)"' <<<"$OUT")"

note "gc --keep 1 drops the two older records of mesh/app and their blobs, nothing else"
latest=$("$AREC" records --json | jq -r 'map(.digest) | sort | join(" ")')
expect_exit 0 "$AREC" gc --keep 1 --dry-run --json
expect_eq "2 10" "$(json_get '"\(.records_dropped) \(.blobs_removed)"' <<<"$OUT")" "dry run"
expect_exit 0 "$AREC" records --history --json
expect_eq 4 "$(json_get length <<<"$OUT")" "history after a dry run"
expect_exit 0 "$AREC" gc --keep 1 --json
expect_eq "2 10" "$(json_get '"\(.records_dropped) \(.blobs_removed)"' <<<"$OUT")" "gc"
expect_eq 2 "$(jq '[.manifests[] | select(.annotations["dev.arec.subject"])] | length' "$T/store/index.json")" \
  "SBOMs listed after gc: those of the two records kept"
"$AREC" sbom mesh/app >/dev/null || fail "the kept record lost its SBOM"
expect_eq "$latest" "$("$AREC" records --history --json | jq -r 'map(.digest) | sort | join(" ")')" "records kept"
expect_exit 0 "$AREC" check
skopeo inspect "oci:$T/store:mesh/app" >/dev/null || fail "skopeo cannot read mesh/app after gc"
expect_exit 0 "$AREC" gc --json
expect_eq 0 "$(json_get .blobs_removed <<<"$OUT")" "a second gc"

note "a blob whose content changed"
manifest=$("$AREC" records mesh/app --json | jq -r '.[0].digest')
layer=$(jq -r '.layers[0].digest' "$T/store/blobs/sha256/${manifest#sha256:}")
blob=$T/store/blobs/sha256/${layer#sha256:}
cp "$blob" "$T/good"
printf 'X' | dd of="$blob" bs=1 seek=100 conv=notrunc status=none
expect_exit 1 "$AREC" check
expect_contains "$OUT" "problem: $blob: content does not hash to its name"
expect_contains "$OUT" "NOT ok"

note "a missing blob"
rm "$blob"
expect_exit 1 "$AREC" check
expect_contains "$OUT" "$blob: missing"
cp "$T/good" "$blob"
expect_exit 0 "$AREC" check

note "a temporary left by a killed writer is reported, harmless, and --repair removes it"
echo partial >"$T/store/arec/tmp/.tmp-killed"
touch -d '1 minute ago' "$T/store/arec/tmp/.tmp-killed"
expect_exit 0 "$AREC" check
expect_contains "$OUT" "stray temporary: $T/store/arec/tmp/.tmp-killed"
expect_exit 0 "$AREC" check --repair
expect_contains "$OUT" "removed 1 stray temporaries"
expect_eq "" "$(ls -A "$T/store/arec/tmp")" "temporaries after repair"

note "a malformed or missing index.json is a finding (exit 1), not an error; the history still checks"
cp "$T/store/index.json" "$T/index.good"
printf '{"schemaVersion": 2, "manifests": [' >"$T/store/index.json"
expect_exit 1 "$AREC" check
expect_eq "problem: $T/store/index.json: malformed JSON at byte 36 (--repair rewrites it from the history)
store $T/store: 2 records, 11 blobs verified, NOT ok" "$OUT" "check of a malformed index.json"
expect_eq "" "$ERR" "stderr of check finding a malformed index.json"
expect_exit 1 "$AREC" check --json
expect_eq 'false ["'"$T"'/store/index.json: malformed JSON at byte 36 (--repair rewrites it from the history)"]' "$(json_get '"\(.ok) \(.problems | tojson)"' <<<"$OUT")"
rm "$T/store/index.json"
expect_exit 1 "$AREC" check
expect_eq "problem: $T/store/index.json: missing (--repair writes it from the history)" "$(head -1 <<<"$OUT")" "check without index.json"
expect_exit 0 "$AREC" check --repair
expect_contains "$OUT" "rewrote index.json from the history"
cmp "$T/index.good" "$T/store/index.json" || fail "index.json written by --repair differs from the one it replaced"
expect_exit 0 "$AREC" check

note "a directory that is not a store is a finding; bad usage stays exit 2"
expect_exit 1 "$AREC" check --store "$T/in"
expect_eq "problem: $T/in: not an OCI image layout (no readable oci-layout file)
store $T/in: 0 records, 0 blobs verified, NOT ok" "$OUT" "check of a directory that is not a store"
expect_exit 2 "$AREC" check --repiar
expect_one_line_error "--repiar"
echo PASS
