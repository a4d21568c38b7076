#!/usr/bin/env bash
# Files and directories the store creates take their mode from the umask, as any tool's files do:
# with 022 others may read the store, with 077 nobody but its owner can; never more than the umask allows.
AREC=$1
source "$(dirname "$0")/../lib.sh"
# with_umask MASK cmd...: runs cmd under MASK; each step is checked on its own (expect_exit).
with_umask() { (umask "$1" && shift && exec "$@"); }
echo app >"$T/app"
for mask in 022 077; do
  store=$T/store$mask
  expect_exit 0 with_umask "$mask" "$AREC" record --module sec --name app --file "$T/app" --store "$store"
  echo more >>"$T/app"
  expect_exit 0 with_umask "$mask" "$AREC" record --module sec --name app --file "$T/app" --store "$store"
  expect_exit 0 with_umask "$mask" "$AREC" gc --keep 1 --store "$store"
  expect_eq 1 "$("$AREC" records --history --json --store "$store" | jq length)" "records kept by gc --keep 1"
  file_mode=$(printf '%o' $((0666 & ~8#$mask)))
  dir_mode=$(printf '%o' $((0777 & ~8#$mask)))
  files=$(find "$store" -type f -printf '%m %P\n')
  dirs=$(find "$store" -type d -printf '%m %P\n')
  for kind in index.json oci-layout blobs/sha256/ arec/lock arec/layers/; do
    expect_contains "$files" " $kind" "files of the store"
  done
  wrong=$(grep -v "^$file_mode " <<<"$files" || true)
  expect_eq "" "$wrong" "files whose mode is not $file_mode under umask $mask"
  wrong=$(grep -v "^$dir_mode " <<<"$dirs" || true)
  expect_eq "" "$wrong" "directories whose mode is not $dir_mode under umask $mask"
  note "umask $mask: $(grep -c . <<<"$files") files $file_mode, $(grep -c . <<<"$dirs") directories $dir_mode"
done
echo PASS
