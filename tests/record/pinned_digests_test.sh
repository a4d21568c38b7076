#!/usr/bin/env bash
# The same inputs give the same digest on any machine, for the same arec and the same compressor
# libraries: a fixed tree (text files, an empty directory and a symlink, written here with fixed
# contents and modes) has the digests pinned below, uncompressed, gzip and zstd, recorded with one
# thread and with every core. They were pinned with Debian 12's libarchive 3.6.2 (the tar), libdeflate
# 1.14 (gzip) and libzstd 1.5.4 (zstd); another version of one of those may write other bytes, and the
# failure says which versions this machine has.
AREC=$1
source "$(dirname "$0")/../lib.sh"
unset SOURCE_DATE_EPOCH AREC_THREADS

# Layer digests, and manifest digests (the config names the architecture: pinned for amd64).
declare -A layer=(
  [none]=sha256:fe65b1f5ef0ba2c532857a93d1f05773b6e78688868f9b9e9bfc63712acd993e
  [gzip]=sha256:71df34c71497f4ad74e36dfa7555c9122e2d7fa7571911fbf60c22bfefe64d01
  [zstd]=sha256:0d372ce2b36cbf6377b1a026a814e2e39a0ad2c4b0452abaff822416ad8d2c01
)
declare -A manifest=(
  [none]=sha256:5c5fa54299582db7ba8043da4ce21208f78c4ea58a4022fb6e88ceb9d1ab40e9
  [gzip]=sha256:a7f9aadafa6b8407869a3bbc704c915befc3e6e56c2440f85c7f1420f7091717
  [zstd]=sha256:3c620c35502c21532f3cfd86298cb2efe6b8ed32f99521a5f5b97070427d26f3
)
pinned_with="libarchive 3.6.2, libdeflate 1.14, libzstd 1.5.4"
versions() {
  dpkg-query -W -f='${Package} ${Version}\n' libarchive13 libdeflate0 libzstd1 2>/dev/null | tr '\n' ';' || echo unknown
}

umask 022
mkdir -p "$T/in/etc/app" "$T/in/bin" "$T/in/share/doc/app" "$T/in/var/empty"
printf 'mode = mesh\nport = 5000\n' >"$T/in/etc/app/app.conf"
printf '#!/bin/sh\nexec /usr/bin/env echo "app runs"\n' >"$T/in/bin/run"
printf 'The app.\n\nNothing more to say.\n' >"$T/in/share/doc/app/README"
ln -s run "$T/in/bin/start"
chmod 0755 "$T/in/bin/run"
chmod 0644 "$T/in/etc/app/app.conf" "$T/in/share/doc/app/README"

for run in none-1 gzip-1 zstd-1 none gzip zstd; do
  compression=${run%-1} threads=()
  [[ $run == *-1 ]] && threads=(--threads 1)
  AREC_STORE=$T/store-$run expect_exit 0 "$AREC" record --module pinned --name tree --compression "$compression" \
    "${threads[@]}" --revision 0123456789abcdef0123456789abcdef01234567 --dir "$T/in=/opt/app"
  got_manifest=${OUT#*@}
  got_layer=$(jq -r '.layers[0].digest' "$T/store-$run/blobs/sha256/${got_manifest#sha256:}")
  note "$run: layer $got_layer, manifest $got_manifest"
  [[ $got_layer == "${layer[$compression]}" ]] ||
    fail "$compression layer: pinned ${layer[$compression]} with $pinned_with, got $got_layer with $(versions)"
  if [[ $(uname -m) == x86_64 ]]; then
    [[ $got_manifest == "${manifest[$compression]}" ]] ||
      fail "$compression manifest: pinned ${manifest[$compression]} with $pinned_with, got $got_manifest with $(versions)"
  fi
done
echo PASS
