#!/usr/bin/env bash
# export -> import into an empty store: the same blobs byte for byte, the same records with their
# history and fields, the same referrers (SBOMs); exporting twice writes the same bytes; importing
# again adds nothing.
AREC=$1
source "$(dirname "$0")/lib.sh"
make_history

note "the latest of each: two records, their SBOMs"
expect_exit 0 "$AREC" export mesh -o "$T/latest.tar" --json
expect_eq "2 2" "$(jq -r '"\(.records) \(.referrers)"' <<<"$OUT")" "records referrers exported"
expect_eq "$(printf '%s\n' blobs/ blobs/sha256/ index.json oci-layout)" \
  "$(tar -tf "$T/latest.tar" | grep -v '^blobs/sha256/.')" "entries besides the blobs"
expect_eq "$(tar -tf "$T/latest.tar" | sort)" "$(tar -tf "$T/latest.tar")" "entries sorted"
expect_eq "0/0" "$(tar --numeric-owner -tvf "$T/latest.tar" | awk '{print $2}' | sort -u)" "owner of every entry"
expect_eq "1970-01-01" "$(TZ=UTC tar -tvf "$T/latest.tar" | awk '{print $4}' | sort -u)" "mtime of every entry"

note "one record is said in the singular; -o - is refused, never a file named -"
expect_exit 0 "$AREC" export mesh/app -o "$T/one.tar"
expect_contains "$OUT" "exported 1 record, 1 referrer, "
(cd "$T" && expect_exit 2 "$AREC" export mesh/app -o - && [[ ! -e "$T/-" ]]) || fail "export -o - wrote a file named -"

note "--history: every record, oldest first; a second export is byte-identical"
expect_exit 0 "$AREC" export mesh/app mesh/tool --history -o "$T/all.tar"
expect_contains "$OUT" "exported 3 records, 3 referrers"
"$AREC" export mesh/app mesh/tool --history -o "$T/again.tar"
cmp "$T/all.tar" "$T/again.tar" || fail "two exports of the same records differ"
SOURCE_DATE_EPOCH=1700000000 "$AREC" export mesh --history -o "$T/dated.tar" >/dev/null
expect_eq "2023-11-14" "$(TZ=UTC tar -tvf "$T/dated.tar" | awk '{print $4}' | sort -u)" "mtime from SOURCE_DATE_EPOCH"

note "import into an empty store"
expect_exit 0 "$AREC" --store "$T/other" import "$T/all.tar" --json
expect_eq "3 0 3" "$(jq -r '"\(.records_added) \(.records_present) \(.referrers)"' <<<"$OUT")" "added present referrers"
expect_eq "$("$AREC" records --history --json)" "$("$AREC" --store "$T/other" records --history --json)" \
  "records --history --json of the two stores"
expect_eq "$("$AREC" records --json)" "$("$AREC" --store "$T/other" records --json)" "the latest of each"
n=0
for b in "$T"/other/blobs/sha256/*; do
  cmp -s "$b" "$T/store/blobs/sha256/$(basename "$b")" || fail "blob $(basename "$b") differs"
  n=$((n + 1))
done
expect_eq "$(tar -tf "$T/all.tar" | grep -c '^blobs/sha256/.')" "$n" "blobs imported"
expect_eq "$("$AREC" sbom mesh/app)" "$("$AREC" --store "$T/other" sbom mesh/app)" "the SBOM came along"
expect_eq "$("$AREC" sbom "mesh/app@$APP1")" "$("$AREC" --store "$T/other" sbom "mesh/app@$APP1")" "the older record's SBOM"
expect_exit 0 "$AREC" --store "$T/other" check
note "skopeo reads the imported store"
expect_eq "$APP2" "$(skopeo inspect "oci:$T/other:mesh/app" | jq -r .Digest)" "skopeo finds the latest"

note "importing again adds nothing"
before=$(tree_state "$T/other")
expect_exit 0 "$AREC" --store "$T/other" import "$T/all.tar"
expect_eq "imported 0 records (3 already held), 0 referrers, 0 blobs written (0 bytes), $n already held" "$OUT" "second import"
expect_eq "$before" "$(tree_state "$T/other")" "the store after a second import"

note "a record by digest, and selectors that name nothing"
expect_exit 0 "$AREC" export "mesh/app@$APP1" -o "$T/one.tar" --json
expect_eq 1 "$(jq .records <<<"$OUT")" "records"
expect_exit 2 "$AREC" export mesh/nothing -o "$T/none.tar"
expect_one_line_error '"mesh/nothing": no such record in the store'
[[ ! -e $T/none.tar ]] || fail "a failed export left $T/none.tar"
expect_exit 2 "$AREC" export mesh -o "$T/missing/dir/none.tar"
expect_one_line_error "writing $T/missing/dir/none.tar: "
expect_exit 2 "$AREC" export mesh --format tarball -o "$T/none.tar"
[[ ! -e $T/none.tar ]] || fail "a failed export left $T/none.tar"
note "a blob that does not match its digest stops the export; the tarball there before is kept whole"
cp -a "$T/store" "$T/broken"
layer=$(jq -r .layers[0].digest "$T/broken/blobs/sha256/${TOOL#sha256:}")
blob=$T/broken/blobs/sha256/${layer#sha256:}
chmod u+w "$blob"
head -c "$(stat -c %s "$blob")" /dev/zero >"$blob"
mkdir "$T/out"
cp "$T/latest.tar" "$T/out/bundle.tar"
expect_exit 2 "$AREC" --store "$T/broken" export mesh -o "$T/out/bundle.tar"
expect_one_line_error "$blob: content does not match its digest"
cmp "$T/latest.tar" "$T/out/bundle.tar" || fail "a failed export changed the tarball it was to replace"
expect_eq bundle.tar "$(ls -A "$T/out")" "files beside the tarball after a failed export"
note "the same bytes recorded again from another revision: export and import count its referrers alike"
export AREC_STORE=$T/again-store
"$AREC" record --module mesh --name same --file "$T/in/tool/tool" --revision 1111111111111111111111111111111111111111 >/dev/null
"$AREC" record --module mesh --name same --file "$T/in/tool/tool" --revision 2222222222222222222222222222222222222222 >/dev/null
expect_eq 2 "$("$AREC" records mesh/same --history --json | jq length)" "records of mesh/same"
expect_exit 0 "$AREC" export mesh/same --history -o "$T/same.tar" --json
exported=$(jq -c '[.records, .referrers]' <<<"$OUT")
expect_exit 0 "$AREC" --store "$T/same-imported" import "$T/same.tar" --json
expect_eq "$exported" "$(jq -c '[.records_added, .referrers]' <<<"$OUT")" "records and referrers: import against export"
echo PASS
