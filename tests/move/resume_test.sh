#!/usr/bin/env bash
# A move killed while it copies leaves the node settings as they were, and run again it finishes.
AREC=$1
source "$(dirname "$0")/lib.sh"
start_registry OLD old
mesh_settings "${OLD##*:}" 1
for i in 1 2 3 4 5 6; do program "p$i" 8000000 >/dev/null; done
expect_exit 0 "$AREC" push
shopt -s nullglob
files_of() { local f=("$1"/data/docker/registry/v2/blobs/sha256/*/*/data); echo ${#f[@]}; }
total=$(files_of "$T/registries/old")  # blobs and manifests, as the new registry will hold them

# The kill must land after the first file reaches the new registry and before the last. The new
# registry is frozen (SIGSTOP) as soon as one is there, so the move cannot finish meanwhile; when it
# finished between two looks all the same, start over on an empty registry, a bounded number of times.
mkfifo "$T/never"
exec {never}<>"$T/never"  # `read -t` on it waits without starting a process
for attempt in 1 2 3 4 5; do
  start_registry NEW "new$attempt"
  new_dir=$T/registries/new$attempt
  mesh_settings "${OLD##*:}" "${NEW##*:}"
  cp "$T/nodes.json" "$T/nodes.before"
  "$AREC" move --to n2 --apply --jobs 1 >"$T/move.out" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null && (($(files_of "$new_dir") == 0)); do read -rt 0.005 -u "$never" || true; done
  kill -STOP "$(cat "$new_dir/pid")"
  kill -9 "$pid" 2>/dev/null || true
  rc=0
  wait "$pid" || rc=$?
  copied=$(files_of "$new_dir")
  kill -CONT "$(cat "$new_dir/pid")"
  ((rc == 137 && copied > 0 && copied < total)) && break
  note "attempt $attempt: the move exited $rc with $copied of $total files at the new registry"
  ((attempt < 5)) || fail "the move could not be interrupted half-way in $attempt attempts: $(cat "$T/move.out")"
done
note "killed with $copied of $total files at the new registry"
cmp "$T/nodes.before" "$T/nodes.json" || fail "an interrupted move changed the node settings"

note "run again: it resumes, verifies everything, then rewrites the settings"
expect_exit 0 "$AREC" move --to n2 --apply
expect_contains "$OUT" "6 manifests verified"
[[ $OUT =~ ([0-9]+)\ blobs\ uploaded,\ ([0-9]+)\ mounted,\ ([0-9]+)\ already\ there ]] || fail "no copy summary: $OUT"
((BASH_REMATCH[3] > 0 && BASH_REMATCH[1] + BASH_REMATCH[2] < 12)) || fail "the rerun did not resume: $OUT"
expect_eq '"n2"' "$(jq .services.registry "$T/nodes.json")" "settings after the resumed move"
expect_eq "$total" "$(files_of "$new_dir")" "files at the new registry"
expect_exit 0 "$AREC" verify
echo PASS
