#!/usr/bin/env bash
# tests/cmake/projects/runtime: a dynamically linked program (libstdc++, libcrypto, zlib and a library
# of its own through $ORIGIN/../lib) recorded by arec_record() with no keyword runs from its image in a
# chroot and prints what it printed on the host; with RUNTIME none the image holds only the program and
# the build warns. The project built in a second tree, elsewhere, gives the same digest; a RUNPATH that
# names a directory of this machine is recorded with a warning. On a base: one whose libstdc++ is too old
# is refused before anything is written, one new enough provides libstdc++ and nothing is added for it.
# A library that is gone is refused, naming the program and the library. The same inputs give one
# digest, with 1 thread or 2.
source "$(dirname "$0")/lib.sh"

src=$work/runtime
cp -r "$AREC_TEST_PROJECTS/runtime" "$src"
store=$work/store
configure "$work/configure.log" "$src" "$work/build" -DCMAKE_PREFIX_PATH="$AREC_TEST_PREFIX" \
  -DCMAKE_BUILD_TYPE=Release -DAREC_STORE="$store"
build "$work/build.log" "$work/build"
expect_eq 2 "$(recordings_in "$work/build.log")" "recordings in the build"
app=$work/build/bin/app
host_output=$("$app")
expect_contains "$host_output" "hello, image" "the program's output on the host"

# The same project in a second build tree, at another path, gives the same digest: arec_record() made the
# build RUNPATH $ORIGIN/../lib, so no path of the build tree is in the program.
expect_eq '$ORIGIN/../lib' "$(readelf -d "$app" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')" "RUNPATH of the built app"
configure "$work/configure2.log" "$src" "$work/elsewhere/deeper/build" -DCMAKE_PREFIX_PATH="$AREC_TEST_PREFIX" \
  -DCMAKE_BUILD_TYPE=Release -DAREC_STORE="$work/store2"
build "$work/build2.log" "$work/elsewhere/deeper/build" --target arec_record_app
expect_not_contains "$(cat "$work/build.log" "$work/build2.log")" "RUNPATH" "the builds' output"
expect_eq "$(digest_of "$store" runtime/app)" "$(digest_of "$work/store2" runtime/app)" \
  "the digest of runtime/app built in two build trees"

# RUNTIME none: the program alone, and a warning that the image cannot run it.
expect_contains "$(cat "$work/build.log")" \
  "arec: warning: /usr/local/bin/bare is dynamically linked and recorded with --runtime none and no --base" \
  "the build's output"
expect_eq "./usr/local/bin/bare" "$(image_files "$store" runtime/bare)" "files of runtime/bare"

# The default: the loader, every library at the path the loader looks at, and the SONAME links.
files=$(image_files "$store" runtime/app)
for f in ./usr/local/bin/app ./usr/local/lib/libgreet.so.1.2.0 ./usr/lib/x86_64-linux-gnu/libcrypto.so.3 \
  ./usr/lib/x86_64-linux-gnu/libc.so.6 ./usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2; do
  expect_contains " $files " " $f " "files of runtime/app"
done
[[ " $files " =~ \ ./usr/lib/x86_64-linux-gnu/libstdc\+\+\.so\.6\.0\.[0-9]+\  ]] || fail "no libstdc++ in [$files]"
[[ " $files " =~ \ ./usr/lib/x86_64-linux-gnu/libz\.so\.1\.[0-9.]+\  ]] || fail "no libz in [$files]"
rootfs=$(unpack_image "$store" runtime/app)/rootfs
expect_eq libgreet.so.1.2.0 "$(readlink "$rootfs/usr/local/lib/libgreet.so.1")" "the SONAME link of libgreet"
expect_eq usr/lib "$(readlink "$rootfs/lib")" "/lib in the image, as on this merged-/usr machine"
check_store "$store"

# Reproducible: the same program gives one digest, recorded twice, with 1 thread or 2.
record_app() {  # STORE [arec record arguments...]
  "$AREC_TEST_AREC" --store "$1" record --module runtime --name cli --file "$app" "${@:2}"
}
one=$(AREC_THREADS=1 record_app "$work/r1")
again=$(AREC_THREADS=1 record_app "$work/r1" --revision 0000000000000000000000000000000000000000)
two=$(record_app "$work/r2" --threads 2)
expect_eq "$one" "$again" "the digest recorded twice"
expect_eq "$one" "$two" "the digest with 1 and 2 threads"

# The build's trees recorded with --dir: the loader finds libgreet through $ORIGIN/../lib among the
# recorded files, so it is not added again; the system's libraries are.
"$AREC_TEST_AREC" --store "$store" record --module runtime --name trees --dir "$work/build/bin=/opt/app/bin" \
  --dir "$work/build/lib=/opt/app/lib" >/dev/null
files=$(image_files "$store" runtime/trees)
for f in ./opt/app/lib/libgreet.so.1.2.0 ./usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 ./usr/lib/x86_64-linux-gnu/libc.so.6; do
  expect_contains " $files " " $f " "files of runtime/trees"
done
expect_not_contains "$files" "/usr/local/lib" "files of runtime/trees"

# A RUNPATH naming a directory of this machine that the image does not hold: recorded, with a warning
# naming the file and the entry.
mkdir -p "$work/abs/lib"
printf 'int kept() { return 0; }\n' >"$work/abs/kept.cpp"
printf 'int kept();\nint main() { return kept(); }\n' >"$work/abs/main.cpp"
"$AREC_TEST_CXX" -shared -fPIC -o "$work/abs/lib/libkept.so" "$work/abs/kept.cpp"
"$AREC_TEST_CXX" -o "$work/abs/prog" "$work/abs/main.cpp" -L"$work/abs/lib" -lkept -Wl,-rpath,"$work/abs/lib"
"$AREC_TEST_AREC" --store "$work/r1" record --module runtime --name abs --file "$work/abs/prog" >/dev/null 2>"$work/abs.err" ||
  fail "recording a program with an absolute RUNPATH failed: $(cat "$work/abs.err")"
expect_eq "arec: warning: /usr/local/bin/prog ($work/abs/prog) has RUNPATH $work/abs/lib, a directory the image does not hold: the loader looks there in vain, and the digest changes with where it was built; link with \$ORIGIN-relative paths (CMake: BUILD_RPATH_USE_ORIGIN)" \
  "$(cat "$work/abs.err")" "the record's warning"
# The same entry held by the image (the tree recorded at that path): no warning.
"$AREC_TEST_AREC" --store "$work/r1" record --module runtime --name abs-held --file "$work/abs/prog" \
  --dir "$work/abs/lib=$work/abs/lib" >/dev/null 2>"$work/abs.err"
expect_eq "" "$(cat "$work/abs.err")" "the record's output when the image holds the RUNPATH directory"

# A base whose libstdc++.so.6 defines versions up to GLIBCXX_3.4.20 only.
make_base() {  # NAME ROOTFS
  "$AREC_TEST_AREC" --store "$work/bases" record --module base --name "$1" --dir "$2=/" --runtime none >/dev/null
}
old=$work/old-root
mkdir -p "$old/usr/lib/x86_64-linux-gnu"
ln -s usr/lib "$old/lib"
# Every version node up to GLIBCXX_3.4.20 and CXXABI_1.3.13, each with a function of its own.
: >"$work/old.cpp"
: >"$work/old.map"
node() {  # VERSION PARENT
  local symbol=arec_${1//./_}
  echo "extern \"C\" int $symbol() { return 0; }" >>"$work/old.cpp"
  echo "$1 { global: $symbol; }${2:+ $2};" >>"$work/old.map"
}
node GLIBCXX_3.4 ""
for i in $(seq 1 20); do node "GLIBCXX_3.4.$i" "GLIBCXX_3.4$( ((i > 1)) && echo ".$((i - 1))")"; done
node CXXABI_1.3 ""
for i in $(seq 1 13); do node "CXXABI_1.3.$i" "CXXABI_1.3$( ((i > 1)) && echo ".$((i - 1))")"; done
"$AREC_TEST_CXX" -shared -fPIC -o "$old/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.20" "$work/old.cpp" \
  -Wl,-soname,libstdc++.so.6 -Wl,--version-script="$work/old.map"
ln -s libstdc++.so.6.0.20 "$old/usr/lib/x86_64-linux-gnu/libstdc++.so.6"
make_base old "$old"
before=$(tree_state "$store")
expect_exit 2 "$AREC_TEST_AREC" --store "$store" record --module runtime --name app --file "$app" \
  --base "oci:$work/bases:base/old"
expect_one_line_error "; the base's libstdc++.so.6 (/lib/x86_64-linux-gnu/libstdc++.so.6) defines up to GLIBCXX_3.4.20"
[[ $ERR =~ arec:\ error:\ app\ needs\ GLIBCXX_3\.4\.(2[1-9]|3[0-9])\ from\ libstdc\+\+\.so\.6\; ]] ||
  fail "the refusal does not name the program and the version it needs: $ERR"
expect_eq "$before" "$(tree_state "$store")" "the store after the refusal"
refusal=$ERR

# A base with this machine's libstdc++: it is not added again, everything else is.
new=$work/new-root
mkdir -p "$new/usr/lib/x86_64-linux-gnu"
ln -s usr/lib "$new/lib"
libstdcxx=$(readlink -f /lib/x86_64-linux-gnu/libstdc++.so.6)
cp "$libstdcxx" "$new/usr/lib/x86_64-linux-gnu/"
ln -s "$(basename "$libstdcxx")" "$new/usr/lib/x86_64-linux-gnu/libstdc++.so.6"
make_base new "$new"
"$AREC_TEST_AREC" --store "$store" record --module runtime --name on-base --file "$app" \
  --entrypoint /usr/local/bin/app --base "oci:$work/bases:base/new" >/dev/null
manifest=$(jq -r '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == "runtime/on-base") | .digest' \
  "$store/index.json")
# The layers the record added to the base's one (by origin: a package's, then the program's).
layer=$(jq -r '.layers[1:][].digest' "$store/blobs/sha256/${manifest#sha256:}" | while read -r added; do
  tar -tzf "$store/blobs/sha256/${added#sha256:}"
done | sort -u | paste -sd' ')
expect_not_contains "$layer" "libstdc++" "the layer recorded on a base holding libstdc++"
expect_contains " $layer " " usr/lib/x86_64-linux-gnu/libcrypto.so.3 " "the layer recorded on the base"
expect_not_contains " $layer " " lib " "the layer recorded on a base that has /lib"

# A library deleted after linking: refused, naming the program and the library.
mkdir -p "$work/gone"
printf 'int gone() { return 0; }\n' >"$work/gone/gone.cpp"
printf 'int gone();\nint main() { return gone(); }\n' >"$work/gone/main.cpp"
"$AREC_TEST_CXX" -shared -fPIC -o "$work/gone/libgone.so" "$work/gone/gone.cpp"
"$AREC_TEST_CXX" -o "$work/gone/prog" "$work/gone/main.cpp" -L"$work/gone" -lgone -Wl,-rpath,"$work/gone"
rm "$work/gone/libgone.so"
before=$(tree_state "$store")
expect_exit 2 "$AREC_TEST_AREC" --store "$store" record --module runtime --name gone --file "$work/gone/prog"
expect_one_line_error "/usr/local/bin/prog ($work/gone/prog) needs libgone.so, which was not found; looked in $work/gone (RUNPATH"
expect_eq "$before" "$(tree_state "$store")" "the store after the refusal"

# The images run in a chroot of their root file system, as the program ran here. /proc is mounted in it,
# as every container runtime does: the loader finds the program's $ORIGIN through /proc/self/exe.
[[ $(id -u) == 0 ]] || skip "chroot needs root: the images were checked, not run (CI runs this as root)"
run_chroot() {  # STORE MODULE/NAME
  local bundle
  bundle=$(unpack_image "$1" "$2")
  mkdir -p "$bundle/rootfs/proc"
  mapfile -t entry < <(jq -r '.process.args[]' "$bundle/config.json")
  env -i unshare --mount --pid --fork --mount-proc="$bundle/rootfs/proc" \
    "$(PATH=$PATH:/usr/sbin:/sbin command -v chroot)" "$bundle/rootfs" "${entry[@]}" 2>&1
}
app_output=$(run_chroot "$store" runtime/app) || fail "runtime/app does not run from its image: $app_output"
expect_eq "$host_output" "$app_output" "runtime/app run from its image"
output=$(run_chroot "$store" runtime/on-base) || fail "runtime/on-base does not run from its image: $output"
expect_eq "$host_output" "$output" "runtime/on-base run from its image"
output=$(run_chroot "$store" runtime/bare) && fail "runtime/bare ran from an image without its loader: $output"
note "runtime/app in a chroot of its image:"
printf '%s\n' "$app_output" >&2
note "on a base too old: $refusal"
