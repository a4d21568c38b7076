#!/usr/bin/env bash
# A blob larger than the chunk size goes up in PATCH chunks and arrives intact.
AREC=$1
source "$(dirname "$0")/lib.sh"
use_registry "$REG"
app=$(record app 1100000)

expect_exit 0 "$AREC" -v push --chunk-size 256k --json
expect_eq 2 "$(jq .uploaded <<<"$OUT")" "blobs uploaded"
patches=$(grep -c "PATCH http://$REG/v2/$M/app/blobs/uploads/" <<<"$ERR" || true)
((patches >= 5)) || fail "expected at least 5 PATCH chunks of 256 KiB for a 1.1 MB layer, saw $patches: $ERR"
expect_exit 0 "$AREC" verify
skopeo copy -q --src-tls-verify=false "docker://$REG/$M/app@$app" "oci:$T/back:app"
expect_eq 3 "$(same_blobs "$T/back" "$AREC_STORE")" "blobs identical to the store's"

note "AREC_CHUNK_SIZE sets the default; a bad size is bad input"
record other 300000 >/dev/null
AREC_CHUNK_SIZE=100k expect_exit 0 "$AREC" -v push "$M/other"
expect_contains "$ERR" "PATCH http://$REG/v2/$M/other/blobs/uploads/"
note "--chunk-size takes the place of AREC_CHUNK_SIZE"
record third 300000 >/dev/null
AREC_CHUNK_SIZE=100k expect_exit 0 "$AREC" -v push --chunk-size 64M "$M/third"
expect_contains "$ERR" "POST http://$REG/v2/$M/third/blobs/uploads/"
expect_not_contains "$ERR" "PATCH http://$REG/v2/$M/third/blobs/uploads/"
expect_exit 2 "$AREC" push --chunk-size 12X
expect_contains "$ERR" "--chunk-size 12X: not a size"
echo PASS
