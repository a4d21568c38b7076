#!/usr/bin/env bash
# `arec records` and `arec check` on stores with nothing in them, filters that are not filters, the
# table's named columns, --wide, and the sizes --json gives.
AREC=$1
source "$(dirname "$0")/../lib.sh"
export AREC_STORE=$T/store
cd "$T"  # outside any git work tree: a record's revision is only what --revision says

note "a store that does not exist, and an empty directory: nothing listed, exit 0, an info line"
expect_exit 0 "$AREC" records --store "$T/none"
expect_eq "" "$OUT" "records of a store that does not exist"
expect_eq "arec: info: no records: the store $T/none does not exist yet" "$ERR"
expect_exit 0 "$AREC" records --store "$T/none" --json
expect_eq "[]" "$OUT" "records --json of a store that does not exist"
mkdir "$T/empty"
expect_exit 0 "$AREC" records --store "$T/empty" demo
expect_eq "" "$OUT" "records of an empty directory"
expect_eq "arec: info: no records: the store $T/empty is empty" "$ERR"
expect_exit 0 "$AREC" check --store "$T/none"
expect_eq "store $T/none: 0 records, 0 blobs verified, ok" "$OUT" "check of a store that does not exist"
expect_eq "arec: info: the store $T/none does not exist yet: nothing to check" "$ERR"
expect_exit 0 "$AREC" check --store "$T/empty" --json
expect_eq "true 0" "$(json_get '"\(.ok) \(.records)"' <<<"$OUT")" "check --json of an empty directory"
expect_eq "arec: info: the store $T/empty is empty: nothing to check" "$ERR"
expect_exit 2 "$AREC" --store "$T/empty" --nodes "" compose - <<<'image: arec://image/demo/app'
expect_eq "arec: error: <stdin>:1: arec://image/demo/app: no record of demo/app in store $T/empty (record it with arec record --module demo --name app)" "$ERR" \
  "compose asking an empty store for an image"
[[ ! -e $T/none ]] || fail "reading a store that does not exist created it"
expect_eq "" "$(ls -A "$T/empty")" "the empty directory after records and check"

note "records in a store"
mkdir -p "$T/in"
printf 'app\n' >"$T/in/app"
head -c 5000 /dev/urandom >>"$T/in/app"
app=$("$AREC" record --module demo --name app --file "$T/in/app" --config Release --target app_exe \
  --revision 0123456789abcdef0123456789abcdef01234567 --json)
app_digest=$(json_get .digest <<<"$app")
tool=$("$AREC" record --module demo --name tool --file "$T/in/app=/usr/bin/tool" --runtime none --revision '' --json)
tool_digest=$(json_get .digest <<<"$tool")
other=$("$AREC" record --module other --name x --file "$T/in/app" --runtime none --base demo/tool --json)

note "filters: M, M/ and M/N; anything else is exit 2 naming the grammar"
expect_exit 0 "$AREC" records demo --json
expect_eq "demo/app demo/tool" "$(json_get '[.[] | "\(.module)/\(.name)"] | join(" ")' <<<"$OUT")" "records demo"
expect_exit 0 "$AREC" records demo/ --json
expect_eq "demo/app demo/tool" "$(json_get '[.[] | "\(.module)/\(.name)"] | join(" ")' <<<"$OUT")" "records demo/"
expect_exit 0 "$AREC" records demo/tool --json
expect_eq "$tool_digest" "$(json_get '[.[].digest] | join(" ")' <<<"$OUT")" "records demo/tool"
expect_exit 0 "$AREC" records demo/nothing
expect_eq "" "$OUT" "records of a module/name with none"
expect_eq "arec: info: no records for demo/nothing in $T/store" "$ERR"
for filter in Demo 'd*' demo/App a/b/c /app demo//; do
  expect_exit 2 "$AREC" records "$filter"
  expect_eq "arec: error: records \"$filter\": expected MODULE, MODULE/ or MODULE/NAME, each of lowercase letters and digits separated by '.', '_', '__' or '-'" "$ERR"
  expect_eq "" "$OUT" "stdout of records $filter"
done

note "the table names every column; an empty cell is -"
expect_exit 0 "$AREC" records demo
expect_eq "REPOSITORY DIGEST RECORDED CONFIG TARGET REVISION
demo/app $app_digest $(json_get .recorded <<<"$app") Release app_exe 0123456789abcdef0123456789abcdef01234567
demo/tool $tool_digest $(json_get .recorded <<<"$tool") - - -" "$(tr -s ' ' <<<"$OUT")" "records table"
# Columns are aligned: every digest starts where DIGEST does.
expect_eq 1 "$(awk '{print index($0, $2)}' <<<"$OUT" | sort -u | wc -l)" "the DIGEST column's start in [$OUT]"

note "--wide and --json: every field; size is the image's (config + layers), manifest_size beside it"
manifest=$T/store/blobs/sha256/${app_digest#sha256:}
expect_eq "$(stat -c %s "$manifest")" "$(json_get .manifest_size <<<"$app")" "record --json manifest_size"
image_size=$(jq '.config.size + ([.layers[].size] | add)' "$manifest")
expect_eq "$image_size" "$(json_get .size <<<"$app")" "record --json size"
((image_size > 5000)) || fail "the image's size $image_size is not its content's"
expect_exit 0 "$AREC" records --json
expect_eq "demo/app $app_digest $image_size $(stat -c %s "$manifest") application/vnd.oci.image.manifest.v1+json linux/amd64 Release app_exe 0123456789abcdef0123456789abcdef01234567" \
  "$(json_get '.[0] | "\(.module)/\(.name) \(.digest) \(.size) \(.manifest_size) \(.mediaType) \(.platform) \(.config) \(.target) \(.revision)"' <<<"$OUT")" "records --json"
expect_eq "$tool_digest" "$(json_get '.[2].base' <<<"$OUT")" "records --json base"
expect_exit 0 "$AREC" records other --wide
expect_eq "REPOSITORY DIGEST RECORDED CONFIG TARGET REVISION SIZE MANIFEST_SIZE PLATFORM MEDIA_TYPE BASE SIGNED_BY BUILDER
other/x $(json_get '"\(.digest) \(.recorded)"' <<<"$other") - - - $(json_get '"\(.size) \(.manifest_size)"' <<<"$other") linux/amd64 application/vnd.oci.image.manifest.v1+json $tool_digest - -" \
  "$(tr -s ' ' <<<"$OUT")" "records --wide"
expect_exit 2 "$AREC" records --wide --json
expect_one_line_error "records: --json and --wide cannot be used together (see arec records --help)"
echo PASS
