#!/usr/bin/env bash
# A warning that fires for many files of one record is said once, with the count and the first three
# files, in text and in --json alike; -v names each file. Five programs built with an absolute RUNPATH of
# this machine, recorded as a directory with --runtime none: two kinds of warning (RUNPATH, unrunnable).
AREC=$1
source "$(dirname "$0")/../lib.sh"
command -v g++ >/dev/null || skip "g++ is not installed (scripts/deps installs it)"
command -v jq >/dev/null || skip "jq is not installed (scripts/deps installs it)"
export AREC_STORE=$T/store
export AREC_NODES=$T/no-such-nodes.json
cd "$T"

printf 'int main() { return 0; }\n' >p.cpp
g++ -o p p.cpp "-Wl,-rpath,$T/build/lib" -Wl,--enable-new-dtags
mkdir bin
for n in a b c d e; do cp p "bin/$n"; done
runpath_summary="arec: warning: 5 files (/usr/bin/a, /usr/bin/b, /usr/bin/c, and 2 more) have an RPATH or RUNPATH entry naming a directory the image does not hold: the loader looks there in vain, and the digest changes with where it was built; link with \$ORIGIN-relative paths (CMake: BUILD_RPATH_USE_ORIGIN); -v names each"
unrunnable_summary="arec: warning: 5 programs (/usr/bin/a, /usr/bin/b, /usr/bin/c, and 2 more) are dynamically linked and recorded with --runtime none and no --base: the image holds neither their loader nor their libraries, so it cannot run them; -v names each"

note "five files with a RUNPATH of this machine: one line per kind of warning, the files counted"
expect_exit 0 "$AREC" record --module w --name bin --dir bin=/usr/bin --runtime none
expect_eq "$unrunnable_summary"$'\n'"$runpath_summary" "$(grep warning <<<"$ERR")" "the warnings of five files"

note "--json: the same lines, with the kind, the count and the files named"
expect_exit 0 "$AREC" record --module w --name bin --dir bin=/usr/bin --runtime none --json
expect_eq 2 "$(grep -c warning <<<"$ERR")" "warning lines with --json"
expect_eq "unrunnable 5 /usr/bin/a,/usr/bin/b,/usr/bin/c" \
  "$(jq -r '.warnings[0] | "\(.kind) \(.count) \(.files | join(","))"' <<<"$OUT")" "the first warning in --json"
expect_eq "search-path 5 /usr/bin/a,/usr/bin/b,/usr/bin/c" \
  "$(jq -r '.warnings[1] | "\(.kind) \(.count) \(.files | join(","))"' <<<"$OUT")" "the second warning in --json"
expect_eq "${runpath_summary#arec: warning: }" "$(jq -r '.warnings[1].messages | join("\n")' <<<"$OUT")" \
  "the RUNPATH warning's line in --json"

note "-v names each file, in text and --json"
expect_exit 0 "$AREC" -v record --module w --name bin --dir bin=/usr/bin --runtime none --json
runpath_lines=$(grep "warning: .* has RUNPATH $T/build/lib, a directory the image does not hold" <<<"$ERR" || true)
expect_eq 5 "$(grep -c . <<<"$runpath_lines")" "RUNPATH warnings with -v in [$ERR]"
for n in a b c d e; do expect_contains "$runpath_lines" "warning: /usr/bin/$n (bin/$n) has RUNPATH" "-v"; done
expect_eq 5 "$(grep -c "is dynamically linked and recorded with --runtime none" <<<"$ERR")" "unrunnable warnings with -v"
expect_not_contains "$ERR" "names each" "-v"
expect_eq "5 5 5" "$(jq -r '.warnings[1] | "\(.count) \(.files | length) \(.messages | length)"' <<<"$OUT")" \
  "the RUNPATH warning in --json with -v"

note "up to three files are each named, as before"
rm bin/d bin/e
expect_exit 0 "$AREC" record --module w --name three --dir bin=/usr/bin
expect_eq 3 "$(grep -c "has RUNPATH $T/build/lib" <<<"$ERR")" "RUNPATH warnings of three files"
expect_not_contains "$ERR" "names each" "three files"

note "no warning: an empty list in --json"
expect_exit 0 "$AREC" record --module w --name none --file p.cpp=/p.cpp --json
expect_eq "[]" "$(jq -c .warnings <<<"$OUT")" "warnings of a record without any"
