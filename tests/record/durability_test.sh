#!/usr/bin/env bash
# What a killed recorder or a power loss leaves behind: with AREC_SYNC=on every file is synced before it
# is renamed into place (and its directory after), seen in the system calls arec makes (strace); without
# it, nothing is synced. The next writer sweeps what a killed one left in arec/tmp/, and nothing a live
# writer still holds.
AREC=$1
source "$(dirname "$0")/../lib.sh"
command -v strace >/dev/null || skip "strace is not installed (scripts/deps installs it)"
export AREC_STORE=$T/store
unset AREC_SYNC
mkdir -p "$T/in/bin"
echo app >"$T/in/bin/app"

# traced FILE cmd...: runs cmd under strace, every fsync and rename with the paths of descriptors.
traced() {
  local out=$1
  shift
  strace -f -qq -y -e trace=fsync,fdatasync,rename,renameat,renameat2 -o "$out" "$@" >/dev/null ||
    fail "$* failed under strace: $(tail -5 "$out")"
}

note "without AREC_SYNC, writeback is left to the kernel: no fsync"
traced "$T/plain.trace" "$AREC" record --module m --name app --dir "$T/in=/opt"
expect_eq 0 "$(grep -cE 'fsync|fdatasync' "$T/plain.trace" || true)" "fsync calls without AREC_SYNC"
(($(grep -c rename "$T/plain.trace") >= 4)) || fail "fewer renames than files written: $(cat "$T/plain.trace")"

note "AREC_SYNC=on: each file synced before its rename, and the directory after"
echo more >>"$T/in/bin/app"
AREC_SYNC=on traced "$T/sync.trace" "$AREC" record --module m --name app --dir "$T/in=/opt"
renames=0
while IFS= read -r line; do
  # rename("/…/arec/tmp/X", "/…/blobs/sha256/Y") or renameat(AT_FDCWD, "…", AT_FDCWD, "…")
  from=$(sed -nE 's/.*rename[a-z0-9]*\((AT_FDCWD[^,]*, )?"([^"]+)".*/\2/p' <<<"$line")
  to=$(sed -nE 's/.*rename[a-z0-9]*\(.*, "([^"]+)"(, [^,)]*)?\) = 0$/\1/p' <<<"$line")
  [[ -n $from && -n $to ]] || continue
  renames=$((renames + 1))
  before=$(grep -m1 -nF "$line" "$T/sync.trace" | cut -d: -f1)
  # grep reads a process substitution: under pipefail, `head | grep -q` fails when grep stops early.
  grep -qE "fsync\([0-9]+<$from>\) = 0" <(head -n "$before" "$T/sync.trace") ||
    fail "$from was renamed to $to without an fsync before it"
  grep -qE "fsync\([0-9]+<$(dirname "$to")>\) = 0" <(tail -n "+$before" "$T/sync.trace") ||
    fail "the directory of $to was not synced after the rename"
done < <(grep -E 'rename[a-z0-9]*\(' "$T/sync.trace")
((renames >= 4)) || fail "only $renames renames seen: $(cat "$T/sync.trace")"
note "$renames files synced before their rename"
expect_exit 0 "$AREC" check

note "the next writer sweeps arec/tmp/: what no writer holds goes, what a live writer holds stays"
# Temporaries are named .tmp-*, as AtomicFile names them; the sweep touches nothing else.
tmp=$AREC_STORE/arec/tmp
head -c 5000 /dev/urandom >"$tmp/.tmp-abandoned"
head -c 5000 /dev/urandom >"$tmp/.tmp-held"
touch -d '1 hour ago' "$tmp/.tmp-abandoned" "$tmp/.tmp-held"
# A live writer locks its temporary; this shell plays one for "held".
exec 9<"$tmp/.tmp-held"
flock -x -n 9 || fail "could not lock $tmp/.tmp-held"
echo again >>"$T/in/bin/app"
expect_exit 0 "$AREC" record --module m --name app --dir "$T/in=/opt"
[[ ! -e $tmp/.tmp-abandoned ]] || fail "the next writer left the abandoned $tmp/.tmp-abandoned"
[[ -e $tmp/.tmp-held ]] || fail "the next writer removed $tmp/.tmp-held, which a live writer holds"
exec 9<&-
echo once more >>"$T/in/bin/app"
expect_exit 0 "$AREC" record --module m --name app --dir "$T/in=/opt"
[[ ! -e $tmp/held ]] || fail "once released, $tmp/held was not swept by the next writer"
expect_exit 0 "$AREC" check
echo PASS
