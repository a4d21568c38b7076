#!/usr/bin/env bash
# arec diff on real builds: the same program built in two directories without -ffile-prefix-map (the
# debug info names the directory: .debug_* and the build-path hint), a one-line change (only the
# program's layer, and in its one file only code and data sections), a base whose libc version changed
# (the base layer's package versions), an entrypoint change (the config), exit codes as diff(1)'s,
# the --json schema of docs/diff.md, and Debug against Release (the flags and configuration hints).
AREC=$1
source "$(dirname "$0")/../lib.sh"
unset SOURCE_DATE_EPOCH
command -v g++ >/dev/null || skip "no g++"
export AREC_STORE=$T/store

mkdir -p "$T/one" "$T/two"
cat >"$T/one/hello.cpp" <<'CPP'
#include <cstdio>
int main() { std::puts("hello from one"); return 0; }
CPP
cp "$T/one/hello.cpp" "$T/two/hello.cpp"
(cd "$T/one" && g++ -g -O1 -o hello hello.cpp) || fail "g++ cannot build"
(cd "$T/two" && g++ -g -O1 -o hello hello.cpp) || fail "g++ cannot build"
record() { # FILE [ARGS...]: the identity recorded
  expect_exit 0 "$AREC" record --module t --name hello --file "$1" --entrypoint /usr/local/bin/hello "${@:2}"
  echo "$OUT"
}
one=$(record "$T/one/hello")
two=$(record "$T/two/hello")
expect_ne "$one" "$two" "the records of one program built in two directories"

note "two build directories: the debug info differs, named with the hint"
expect_exit 1 "$AREC" diff t/hello
expect_contains "$OUT" "--- $one" "the side before"
expect_contains "$OUT" "+++ $two" "the side after"
expect_contains "$OUT" "changed  files" "the program's layer"
expect_contains "$OUT" "~ /usr/local/bin/hello" "the changed file"
expect_contains "$OUT" ".debug_line_str" "the sections that differ"
expect_contains "$OUT" "- \"$T/one\"" "the build path before"
expect_contains "$OUT" "+ \"$T/two\"" "the build path after"
expect_contains "$OUT" "-ffile-prefix-map" "the hint"
expect_not_contains "$OUT" ".text" "the sections that differ (the code is the same)"
expect_exit 1 "$AREC" diff "$one" "$two" --json
expect_eq '["build-path"]' "$(jq -c '[.hints[].cause] | unique' <<<"$OUT")" "the hints' causes"
# The hint names both build paths, the one before and the one after, where it found them.
expect_contains "$(jq -r '.hints[] | select(.cause == "build-path") | .text' <<<"$OUT")" \
  ": \"$T/one\" before, \"$T/two\" after): compile with -ffile-prefix-map=DIR=." "the build-path hint's paths"
sections=$(jq -c '[.layers[] | select(.status=="changed") | .files[] | .elf.sections[].name] | sort' <<<"$OUT")
expect_contains "$sections" '".debug_line_str"' "the sections that differ"
expect_eq '[]' "$(jq -c '[.layers[] | select(.status=="changed") | .files[] | .elf.sections[].name | select(startswith(".debug_") or . == ".note.gnu.build-id" | not)]' <<<"$OUT")" \
  "sections other than debug info and build-id"

note "with -ffile-prefix-map the two directories build the same record: exit 0"
(cd "$T/one" && g++ -g -O1 -ffile-prefix-map="$T/one"=. -o hello hello.cpp)
(cd "$T/two" && g++ -g -O1 -ffile-prefix-map="$T/two"=. -o hello hello.cpp)
mapped_one=$(record "$T/one/hello")
mapped_two=$(record "$T/two/hello")
expect_eq "$mapped_one" "$mapped_two" "the records of the mapped builds"
expect_exit 0 "$AREC" diff "$mapped_one" "$mapped_two"
expect_contains "$OUT" "same: ${mapped_one#*@}" "the report of one image against itself"

note "a one-line change: only the program's layer, and in it .text/.rodata of one file"
sed -i 's/hello from one/hello from the other one/' "$T/one/hello.cpp"
(cd "$T/one" && g++ -g -O1 -ffile-prefix-map="$T/one"=. -o hello hello.cpp)
changed=$(record "$T/one/hello")
expect_exit 1 "$AREC" diff t/hello --json
expect_eq "$mapped_one" "$(jq -r .before.name <<<"$OUT")" "one argument: the record before"
expect_eq "$changed" "$(jq -r .after.name <<<"$OUT")" "one argument: the latest"
expect_eq '["files"]' "$(jq -c '[.layers[] | select(.status!="same") | .key]' <<<"$OUT")" "the layers that changed"
expect_eq '["/usr/local/bin/hello"]' "$(jq -c '[.layers[].files[].path]' <<<"$OUT")" "the files that changed"
code=$(jq -c '[.layers[].files[].elf.sections[].name | select(. == ".text" or . == ".rodata")]' <<<"$OUT")
expect_contains "$code" '".rodata"' "the sections that differ"
expect_eq '[]' "$(jq -c '[.layers[].files[].elf.sections[].name | select(startswith(".debug_") or . == ".text" or . == ".rodata" or . == ".note.gnu.build-id" or startswith(".eh_frame") or . == ".symtab" | not)]' <<<"$OUT")" \
  "sections other than code, data, their unwind tables, symbols, debug info and build-id"
expect_eq '["hello from one"]' "$(jq -c '[.layers[].files[].elf.strings[] | select(.section==".rodata") | .before[]]' <<<"$OUT")" \
  "the string of .rodata before"
expect_eq '["hello from the other one"]' "$(jq -c '[.layers[].files[].elf.strings[] | select(.section==".rodata") | .after[]]' <<<"$OUT")" \
  "the string of .rodata after"
expect_eq '[]' "$(jq -c .hints <<<"$OUT")" "the hints of a source change"

note "--stat and --files-only"
expect_exit 1 "$AREC" diff t/hello --stat
expect_contains "$OUT" "0 added, 0 removed, 1 changed" "the counts of the program's layer"
expect_not_contains "$OUT" "rodata" "--stat"
expect_exit 1 "$AREC" diff t/hello --files-only
expect_contains "$OUT" "~ /usr/local/bin/hello: content" "--files-only"
expect_not_contains "$OUT" "sections" "--files-only"

note "an entrypoint change: the config"
entry=$(record "$T/one/hello" --entrypoint=--verbose)
expect_exit 1 "$AREC" diff "$changed" "$entry"
expect_contains "$OUT" 'Entrypoint: ["/usr/local/bin/hello"] -> ["/usr/local/bin/hello","--verbose"]' "the config"
expect_not_contains "$OUT" "changed  files" "the layers"
expect_exit 1 "$AREC" diff t/hello~1 t/hello --json
expect_eq '["Entrypoint"]' "$(jq -c '[.config[].field]' <<<"$OUT")" "the config fields that differ"

note "a text file: a unified diff, and a time written into it gives the timestamp hint"
echo "built 2026-12-01 10:00:00" >"$T/stamp.txt"
first=$(record "$T/one/hello" --file "$T/stamp.txt=/etc/stamp.txt")
echo "built 2026-12-04 17:38:33" >"$T/stamp.txt"
second=$(record "$T/one/hello" --file "$T/stamp.txt=/etc/stamp.txt")
expect_exit 1 "$AREC" diff "$first" "$second"
expect_contains "$OUT" "-built 2026-12-01 10:00:00" "the text diff"
expect_contains "$OUT" "+built 2026-12-04 17:38:33" "the text diff"
expect_contains "$OUT" "timestamp (/etc/stamp.txt)" "the hint"
expect_contains "$OUT" "SOURCE_DATE_EPOCH" "the hint"

note "a package upgrade: bases whose libc version differs"
make_base() { # DIR VERSION: an OCI layout of one layer holding libc.so.6 and dpkg's status
  local dir=$1 version=$2 root=$T/root-$2
  mkdir -p "$root/usr/lib/x86_64-linux-gnu" "$root/var/lib/dpkg" "$dir/blobs/sha256"
  printf 'GNU C Library (Debian GLIBC %s) stable release version %s.\n' "$version" "${version%%-*}" \
    >"$root/usr/lib/x86_64-linux-gnu/libc.so.6"
  printf 'Package: libc6\nStatus: install ok installed\nArchitecture: amd64\nVersion: %s\n\nPackage: base-files\nStatus: install ok installed\nArchitecture: amd64\nVersion: 12.4\n' \
    "$version" >"$root/var/lib/dpkg/status"
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$root" -cf "$T/layer.tar" usr var
  local diff_id size
  diff_id=$(sha256sum "$T/layer.tar" | cut -d' ' -f1)
  gzip -n -c "$T/layer.tar" >"$T/layer.tar.gz"
  local layer=$(sha256sum "$T/layer.tar.gz" | cut -d' ' -f1)
  size=$(stat -c %s "$T/layer.tar.gz")
  mv "$T/layer.tar.gz" "$dir/blobs/sha256/$layer"
  printf '{"architecture":"amd64","os":"linux","config":{},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' "$diff_id" >"$T/config.json"
  local config=$(sha256sum "$T/config.json" | cut -d' ' -f1)
  cp "$T/config.json" "$dir/blobs/sha256/$config"
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%d},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:%s","size":%d}]}' \
    "$config" "$(stat -c %s "$T/config.json")" "$layer" "$size" >"$T/manifest.json"
  local manifest=$(sha256sum "$T/manifest.json" | cut -d' ' -f1)
  cp "$T/manifest.json" "$dir/blobs/sha256/$manifest"
  echo '{"imageLayoutVersion":"1.0.0"}' >"$dir/oci-layout"
  printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%d,"annotations":{"org.opencontainers.image.ref.name":"base"}}]}' \
    "$manifest" "$(stat -c %s "$T/manifest.json")" >"$dir/index.json"
}
make_base "$T/base-old" 2.36-9
make_base "$T/base-new" 2.37-1
old=$(record "$T/one/hello" --base "oci:$T/base-old:base" --runtime none)
new=$(record "$T/one/hello" --base "oci:$T/base-new:base" --runtime none)
expect_exit 1 "$AREC" diff "$old" "$new"
expect_contains "$OUT" "package libc6:amd64: 2.36-9 -> 2.37-1" "the base layer's packages"
expect_contains "$OUT" "~ /usr/lib/x86_64-linux-gnu/libc.so.6" "the base layer's changed file"
expect_contains "$OUT" "+GNU C Library (Debian GLIBC 2.37-1)" "the text diff of the changed file"
expect_not_contains "$OUT" "base-files" "the packages that did not change"
expect_exit 1 "$AREC" diff "$old" "$new" --json
expect_eq '["base"]' "$(jq -c '[.record[].field]' <<<"$OUT")" "the record fields that differ"
expect_eq '[{"after":"2.37-1","before":"2.36-9","name":"libc6:amd64"}]' "$(jq -c '[.layers[].packages[]]' <<<"$OUT")" "the packages"
note "an image of a layout is a side too"
expect_exit 1 "$AREC" diff "oci:$T/base-old:base" "oci:$T/base-new:base" --stat
expect_contains "$OUT" "changed  layer 1" "the layouts' one layer"
expect_exit 0 "$AREC" diff "oci:$T/base-old:base" "oci:$T/base-old"

note "the --json schema (docs/diff.md): every field, of every layer and file"
expect_exit 1 "$AREC" diff "$old" "$new" --json
jq -e '.schemaVersion == 1 and (.same | type) == "boolean" and (.before | keys) == ["manifest","name","record"]
  and (.record | type) == "array" and (.config | type) == "array" and (.hints | type) == "array"
  and all(.layers[]; (keys) == ["after","before","files","filesLeftOut","key","note","originAfter","originBefore","packages","stat","status"]
    and (.status | IN("same","changed","added","removed")))
  and all(.layers[].files[]; (keys) == ["after","before","changes","elf","note","path","status","textDiff","textDiffTruncated"])
  and all(.layers[].files[].elf | select(. != null); (keys) == ["fields","note","sections","sectionsLeftOut","strings"])
  and all(.hints[]; (keys) == ["cause","path","text"]
    and (.cause | IN("build-path","rpath","timestamp","compiler","flags","configuration")))' \
  <<<"$OUT" >/dev/null || fail "the JSON does not follow the schema: $OUT"

note "two configurations: --config once per side"
expect_exit 0 "$AREC" record --module t --name cfg --file "$T/one/hello" --config Release
expect_exit 0 "$AREC" record --module t --name cfg --file "$T/two/hello" --config Debug
expect_exit 1 "$AREC" diff t/cfg --config Release --config Debug --json
expect_eq '{"after":"Debug","before":"Release","field":"config"}' "$(jq -c '.record[] | select(.field=="config")' <<<"$OUT")" \
  "the configurations compared"
expect_exit 0 "$AREC" diff t/cfg t/cfg --config Debug

note "Debug against Release: the flags that differ, from the debug info, and the configurations"
(cd "$T/one" && g++ -g -O0 -o hello-debug hello.cpp && g++ -O3 -DNDEBUG -o hello-release hello.cpp) || fail "g++"
expect_exit 0 "$AREC" record --module t --name rel --file "$T/one/hello-release=/usr/local/bin/hello" --config Release
expect_exit 0 "$AREC" record --module t --name rel --file "$T/one/hello-debug=/usr/local/bin/hello" --config Debug
expect_exit 1 "$AREC" diff t/rel --config Release --config Debug
expect_contains "$OUT" "configuration: built in another configuration: Release (CMake's default: -O3 -DNDEBUG) before, Debug (CMake's default: -g) after"
expect_contains "$OUT" "flags (/usr/local/bin/hello): compiled with other flags: only the file after has debug info, compiled with "
expect_contains "$(grep '^  flags' <<<"$OUT")" " -g " "the flags hint names -g"
expect_contains "$(grep '^  flags' <<<"$OUT")" " -O0 " "the flags hint names -O0"
# .debug_str is only after: listed as an added section, its strings not line by line.
expect_not_contains "$OUT" "strings of .debug_str" "the report of Debug against Release"
((${#OUT} < 8000)) || fail "the report of Debug against Release is ${#OUT} bytes: $OUT"

note "bad input: exit 2, one line naming it"
expect_exit 2 "$AREC" diff t/nothing
expect_one_line_error "t/nothing"
expect_exit 2 "$AREC" diff t/hello~99 t/hello
expect_one_line_error "no ~99"
expect_exit 2 "$AREC" diff t/hello~x t/hello
expect_one_line_error "t/hello~x"
expect_exit 2 "$AREC" diff "oci:$T/missing:base" t/hello
expect_one_line_error "$T/missing"
expect_exit 2 "$AREC" diff t/hello@sha256:0000000000000000000000000000000000000000000000000000000000000000 t/hello
expect_one_line_error "no such record"
expect_exit 2 "$AREC" diff a b c
