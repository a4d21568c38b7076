#!/usr/bin/env bash
# Layers by origin: a program with its runtime closure is one layer per Debian package, then the
# program's own. Two programs on different libraries of the same packages share those layers; a one-line
# change gives one new layer, the program's; the budget merges the same way on any store and thread
# count; --layers 1 is one layer; the image runs in a chroot with /proc mounted, as a runtime runs it.
AREC=$1
source "$(dirname "$0")/../lib.sh"
unset SOURCE_DATE_EPOCH AREC_THREADS
command -v g++ >/dev/null || skip "no g++"
command -v umoci >/dev/null || skip "umoci is not installed (scripts/deps installs it)"
[[ -e /usr/include/openssl/ssl.h ]] || skip "no OpenSSL headers (libssl-dev; scripts/deps installs it)"
libssl=$(dpkg -S /usr/lib/x86_64-linux-gnu/libssl.so.3 2>/dev/null | cut -d: -f1) || skip "no libssl3 on this machine"
libcrypto=$(dpkg -S /usr/lib/x86_64-linux-gnu/libcrypto.so.3 2>/dev/null | cut -d: -f1)
expect_eq "$libssl" "$libcrypto" "the package of libssl.so.3 and libcrypto.so.3"
export AREC_STORE=$T/store

# tls links libssl (and so libcrypto); hash links libcrypto alone. Both come from one package.
mkdir -p "$T/src"
cat >"$T/src/tls.cpp" <<'EOF'
#include <openssl/ssl.h>
#include <iostream>
int main() {
  SSL_CTX* ctx = SSL_CTX_new(TLS_method());
  std::cout << (ctx ? "tls ready" : "no tls") << std::endl;
  SSL_CTX_free(ctx);
}
EOF
cat >"$T/src/hash.cpp" <<'EOF'
#include <openssl/evp.h>
#include <iostream>
int main() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned size = 0;
  EVP_Digest("abc", 3, md, &size, EVP_sha256(), nullptr);
  std::cout << "hash " << size << " bytes" << std::endl;
}
EOF
mkdir -p "$T/build/tls" "$T/build/hash"
g++ -O1 -o "$T/build/tls/tls" "$T/src/tls.cpp" -lssl -lcrypto || fail "g++ cannot build tls"
g++ -O1 -o "$T/build/hash/hash" "$T/src/hash.cpp" -lcrypto || fail "g++ cannot build hash"

manifest_of() { # IDENTITY [STORE]: the manifest JSON
  local digest=${1#*@}
  cat "${2:-$AREC_STORE}/blobs/sha256/${digest#sha256:}"
}
layers_of() { # IDENTITY [STORE]: "ORIGIN DIGEST" per layer
  manifest_of "$@" | jq -r '.layers[] | "\(.annotations["dev.arec.layer.origin"] // "-") \(.digest)"'
}
record() { # NAME PROGRAM [ARGS...]
  expect_exit 0 "$AREC" record --module layers --name "$1" --file "$2" --entrypoint "/usr/local/bin/$(basename "$2")" "${@:3}"
  echo "$OUT"
}

note "each package of the closure is a layer of its own, in name order, then the program's"
tls=$(record tls "$T/build/tls/tls")
hash=$(record hash "$T/build/hash/hash")
layers_of "$tls" >"$T/tls.layers"
layers_of "$hash" >"$T/hash.layers"
note "tls: $(tr '\n' ' ' <"$T/tls.layers")"
origins=$(cut -d' ' -f1 <"$T/tls.layers" | paste -sd' ')
ssl_version=$(dpkg-query -W -f='${Version}' "$libssl:amd64")
expect_contains "$origins" "deb:$libssl=$ssl_version:amd64" "the origins of tls's layers"
expect_contains "$origins" "deb:libc6=" "the origins of tls's layers"
expect_contains "$origins" "deb:libstdc++6=" "the origins of tls's layers"
expect_eq files "$(tail -1 "$T/tls.layers" | cut -d' ' -f1)" "the last layer of tls"
packages=$(grep '^deb:' "$T/tls.layers" | cut -d' ' -f1 | sed 's/^deb:\([^=]*\)=.*/\1/')
expect_eq "$(sort <<<"$packages")" "$packages" "the package layers' order"
expect_eq "$(wc -l <"$T/tls.layers")" "$(jq '.rootfs.diff_ids | length' <"$AREC_STORE/blobs/sha256/$(manifest_of "$tls" | jq -r .config.digest | cut -d: -f2)")" \
  "diff_ids in tls's config"

note "hash needs only libcrypto of $libssl: the same $libssl layer (the whole package's libraries) as tls"
ssl_layer() { grep "^deb:$libssl=" "$1" | cut -d' ' -f2; }
[[ -n $(ssl_layer "$T/tls.layers") ]] || fail "no $libssl layer in tls"
expect_eq "$(ssl_layer "$T/tls.layers")" "$(ssl_layer "$T/hash.layers")" "the $libssl layer of tls and hash"
for p in libc6 libstdc++6 libgcc-s1; do
  expect_eq "$(grep "^deb:$p=" "$T/tls.layers")" "$(grep "^deb:$p=" "$T/hash.layers")" "the $p layer of tls and hash"
done
expect_ne "$(tail -1 "$T/tls.layers")" "$(tail -1 "$T/hash.layers")" "the program layers of tls and hash"
# libssl.so.3 is in hash's image although hash does not need it: it is part of the package's layer.
unpack() { # IDENTITY DIR [STORE]
  umoci unpack --rootless --image "${3:-$AREC_STORE}:${1%@*}" "$2" >/dev/null 2>"$T/umoci.err" || fail "umoci unpack ${1%@*}: $(cat "$T/umoci.err")"
}
unpack "$hash" "$T/hash-bundle"
[[ -f $T/hash-bundle/rootfs/usr/lib/x86_64-linux-gnu/libssl.so.3 ]] || fail "libssl.so.3 is not in hash's image"
[[ -f $T/hash-bundle/rootfs/usr/lib/x86_64-linux-gnu/ossl-modules/legacy.so ]] || fail "OpenSSL's legacy provider is not in hash's image"
[[ -L $T/hash-bundle/rootfs/lib64 ]] || fail "/lib64 is not the link merged /usr makes"

note "a one-line change to tls: exactly one new layer, the program's"
sed -i 's/tls ready/tls is ready/' "$T/src/tls.cpp"
g++ -O1 -o "$T/build/tls/tls" "$T/src/tls.cpp" -lssl -lcrypto || fail "g++ cannot build tls again"
tls2=$(record tls "$T/build/tls/tls")
expect_ne "$tls" "$tls2" "the record after the change"
layers_of "$tls2" >"$T/tls2.layers"
new=$(comm -13 <(cut -d' ' -f2 "$T/tls.layers" | sort) <(cut -d' ' -f2 "$T/tls2.layers" | sort))
expect_eq 1 "$(grep -c . <<<"$new")" "new layer digests after a one-line change ($new)"
expect_eq "$(tail -1 "$T/tls2.layers" | cut -d' ' -f2)" "$new" "the new layer"

note "recorded again unchanged: the same record, and nothing written"
blobs_before=$(ls "$AREC_STORE/blobs/sha256" | sort)
expect_eq "$tls2" "$(record tls "$T/build/tls/tls")" "tls recorded again"
expect_eq "$blobs_before" "$(ls "$AREC_STORE/blobs/sha256" | sort)" "the store's blobs after recording tls again"

note "gc keeps what finds a package's layer without reading its files while the layer is kept"
shortcuts=$(ls "$AREC_STORE/arec/layers" | grep -c '^files-.*\.diffid$')
((shortcuts > 0)) || fail "no files-*.diffid shortcut in arec/layers: $(ls "$AREC_STORE/arec/layers")"
expect_exit 0 "$AREC" gc
expect_eq "$shortcuts" "$(ls "$AREC_STORE/arec/layers" | grep -c '^files-.*\.diffid$')" "files-*.diffid shortcuts after gc"

note "the image runs: unpacked, in a chroot with /proc mounted"
if [[ $(id -u) -eq 0 ]] && chroot=$(command -v chroot); then
  unpack "$tls2" "$T/tls-bundle"
  rootfs=$T/tls-bundle/rootfs
  mkdir -p "$rootfs/proc"
  mount -t proc proc "$rootfs/proc" || fail "cannot mount /proc in the rootfs"
  on_exit "mountpoint -q '$rootfs/proc' && umount '$rootfs/proc'"
  ran=$(env -i "$chroot" "$rootfs" /usr/local/bin/tls 2>&1) || fail "tls in its image: $ran"
  umount "$rootfs/proc"
  expect_eq "tls is ready" "$ran" "tls in a chroot of its image"
  ran=$(env -i "$chroot" "$T/hash-bundle/rootfs" /usr/local/bin/hash 2>&1) || fail "hash in its image: $ran"
  expect_eq "hash 32 bytes" "$ran" "hash in a chroot of its image"
else
  note "not root: the chroot is left out"
fi

note "--layers 3 merges the same way whatever the store and the thread count"
for run in a-1 b-2 c-1; do
  AREC_THREADS=${run#*-} AREC_STORE=$T/budget-$run expect_exit 0 "$AREC" record --module layers --name tls --layers 3 --file "$T/build/tls/tls"
  layers_of "$OUT" "$T/budget-$run" >"$T/budget-$run.layers"
  echo "${OUT#*@}" >"$T/budget-$run.digest"
done
expect_eq 3 "$(wc -l <"$T/budget-a-1.layers")" "layers with --layers 3"
expect_eq "deb:merged files" "$(cut -d' ' -f1 "$T/budget-a-1.layers" | grep -v '^deb:[^m]' | paste -sd' ')" "origins with --layers 3"
for run in b-2 c-1; do
  cmp -s "$T/budget-a-1.layers" "$T/budget-$run.layers" || fail "--layers 3 in $run: $(cat "$T/budget-$run.layers") vs $(cat "$T/budget-a-1.layers")"
  cmp -s "$T/budget-a-1.digest" "$T/budget-$run.digest" || fail "--layers 3 in $run: another manifest"
done
# The default, from a second store, gives the same layers too.
AREC_STORE=$T/second expect_exit 0 "$AREC" record --module layers --name tls --file "$T/build/tls/tls" --entrypoint /usr/local/bin/tls
expect_eq "$tls2" "$OUT" "tls recorded in a second store"

note "--layers 1: one layer, no origin"
expect_exit 0 "$AREC" record --module layers --name one --layers 1 --file "$T/build/tls/tls"
expect_eq 1 "$(layers_of "$OUT" | wc -l)" "layers with --layers 1"
expect_eq "-" "$(layers_of "$OUT" | cut -d' ' -f1)" "the origin of the one layer"
unpack "$OUT" "$T/one-bundle"
[[ -f $T/one-bundle/rootfs/usr/lib/x86_64-linux-gnu/libssl.so.3 && ! -e $T/one-bundle/rootfs/usr/lib/x86_64-linux-gnu/ossl-modules ]] ||
  fail "--layers 1 is not the closure alone"

note "a bad budget is refused"
for bad in 0 101 many; do
  expect_exit 2 "$AREC" record --module layers --name bad --layers "$bad" --file "$T/build/tls/tls"
done
expect_contains "$ERR" "--layers many: not a count (a whole number from 1 to 100)"
echo PASS
