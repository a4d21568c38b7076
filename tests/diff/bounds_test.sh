#!/usr/bin/env bash
# arec diff stays bounded whatever the images hold (hostile.py writes them): four ELF files of 500,000
# section headers each, 200,000 empty entries of other names on each side, 200,000 more of names of
# 250 bytes (more than it holds of a layer: compared by digest), a file name holding a newline and a
# forged report line. Measured with /usr/bin/time: under 128 MiB of memory for the full report,
# --stat and --json; the report is capped, says what it left out and how to see it, and prints every
# name escaped, so no line of it comes from the image.
AREC=$1
source "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || skip "no python3"
[[ -x /usr/bin/time ]] || skip "no /usr/bin/time (Debian's time package)"
python3 "$(dirname "$0")/hostile.py" "$T" a || fail "writing the hostile layout a"
python3 "$(dirname "$0")/hostile.py" "$T" b || fail "writing the hostile layout b"
note "the layouts on disk: $(du -sh "$T/a" | cut -f1) and $(du -sh "$T/b" | cut -f1)"

limit_kib=$((128 * 1024))
# run NAME ARGS...: arec diff ARGS under /usr/bin/time; its output in $T/NAME.out, its peak memory (KiB) in $KIB.
run() {
  local name=$1
  shift
  local rc=0
  /usr/bin/time -f %M -o "$T/$name.time" "$AREC" diff "oci:$T/a:img" "oci:$T/b:img" "$@" >"$T/$name.out" 2>"$T/$name.err" ||
    rc=$?
  [[ $rc == 1 ]] || fail "arec diff $* exited $rc: $(head -c 2000 "$T/$name.err")"
  KIB=$(tail -n1 "$T/$name.time")
  note "arec diff $*: $KIB KiB at most, $(wc -c <"$T/$name.out") bytes of output"
  ((KIB < limit_kib)) || fail "arec diff $* took $KIB KiB, more than 128 MiB"
}

note "the full report"
run full
out=$(<"$T/full.out")
((${#out} < 1000000)) || fail "the report is ${#out} bytes"
expect_contains "$out" "500000 section headers, more than the 4096 arec reads of a file: compared by digest" \
  "the ELF files' note"
expect_contains "$out" "more lines left out: --stat gives each layer's counts, --files-only the files alone, --path GLOB" \
  "the lines left out, said, with how to see them"
((${#out} > 0)) && (($(wc -l <"$T/full.out") <= 2030)) || fail "the report has $(wc -l <"$T/full.out") lines"
# Every line is arec's: the name holding a newline is escaped wherever it is printed.
expect_eq 0 "$(grep -cE '^\s*\+\+\+ forged' "$T/full.out")" "lines starting as the forged name"
expect_eq 1 "$(grep -c '^+++ ' "$T/full.out")" "lines starting with +++ (the report's own only)"
expect_contains "$out" '~ /etc/evil\n+++ forged line: content' "the changed file, escaped"
expect_contains "$out" '--- a/etc/evil\n+++ forged line' "the text diff's --- line, escaped"
expect_contains "$out" '+++ b/etc/evil\n+++ forged line' "the text diff's +++ line, escaped"

note "--stat: the counts of every entry"
run stat --stat
expect_contains "$(<"$T/stat.out")" "200000 added, 200000 removed, 0 changed, 0 same" "the counts of the layer of entries"
expect_contains "$(<"$T/stat.out")" \
  "its entries are more than arec diff holds in memory (48 MiB a side): compared by digest; --path GLOB" \
  "the note of the layer of long names"

note "--json: bounded too, the files left out counted"
run json --json
# 400,005 changed files: the text file, four ELF files, 400,000 entries; 2000 listed.
expect_eq "398005 2000" "$(jq '"\([.layers[].filesLeftOut] | add) \([.layers[].files | length] | add)"' -r "$T/json.out")" \
  "files left out of the JSON, and listed"

note "--path: the files it matches, listed"
run path --path '/srv/a/e00000*'
expect_contains "$(<"$T/path.out")" "- /srv/a/e000009" "a file the glob matches"
expect_not_contains "$(<"$T/path.out")" "/srv/b/" "a file it does not match"
echo PASS
