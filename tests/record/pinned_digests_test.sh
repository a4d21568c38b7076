#!/usr/bin/env bash
# The same inputs give the same digest on any machine, for the same arec and the same compressor
# libraries: a fixed tree (text files, an empty directory and a symlink, written here with fixed
# contents and modes) has the digests pinned below, uncompressed, gzip and zstd. They were pinned with
# Debian 12's libarchive 3.6.2 (the tar), libdeflate 1.14 (gzip) and libzstd 1.5.4 (zstd); another
# version of one of those may compress differently, and the failure says which versions this machine has.
AREC=$1
source "$(dirname "$0")/../lib.sh"
export AREC_STORE=$T/store
unset SOURCE_DATE_EPOCH AREC_THREADS

# Layer digests, and manifest digests (the config names the architecture: pinned for amd64).
declare -A layer=(
  [none]=sha256:PIN
  [gzip]=sha256:PIN
  [zstd]=sha256:PIN
)
declare -A manifest=(
  [none]=sha256:PIN
  [gzip]=sha256:PIN
  [zstd]=sha256:PIN
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

for compression in none gzip zstd; do
  expect_exit 0 "$AREC" record --module pinned --name "tree-$compression" --compression "$compression" \
    --revision 0123456789abcdef0123456789abcdef01234567 --dir "$T/in=/opt/app"
  got_manifest=${OUT#*@}
  got_layer=$(jq -r '.layers[0].digest' "$AREC_STORE/blobs/sha256/${got_manifest#sha256:}")
  note "$compression: layer $got_layer, manifest $got_manifest"
  [[ $got_layer == "${layer[$compression]}" ]] ||
    fail "$compression layer: pinned ${layer[$compression]} with $pinned_with, got $got_layer with $(versions)"
  if [[ $(uname -m) == x86_64 ]]; then
    [[ $got_manifest == "${manifest[$compression]}" ]] ||
      fail "$compression manifest: pinned ${manifest[$compression]} with $pinned_with, got $got_manifest with $(versions)"
  fi
done
echo PASS
