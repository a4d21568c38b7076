#!/usr/bin/env bash
# 32 arec record processes into one store at once lose nothing (rule 8).
AREC=$1
source "$(dirname "$0")/../lib.sh"
export AREC_STORE=$T/store
mkdir -p "$T/in"
for i in $(seq 32); do
  printf 'artifact %s\n' "$i" >"$T/in/a$i"
  head -c 200000 /dev/urandom >>"$T/in/a$i"
done

note "16 distinct names and 16 recordings of one name, all at once"
pids=()
for i in $(seq 32); do
  if ((i <= 16)); then
    "$AREC" record --module load --name "n$i" --file "$T/in/a$i" >"$T/out$i" 2>"$T/err$i" &
  else
    "$AREC" record --module load --name shared --file "$T/in/a$i=/usr/local/bin/a" >"$T/out$i" 2>"$T/err$i" &
  fi
  pids+=($!)
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || fail "record $((i + 1)) failed: $(cat "$T/err$((i + 1))")"
done

expect_exit 0 "$AREC" records --json
expect_eq 17 "$(json_get length <<<"$OUT")" "latest records"
for i in $(seq 16); do
  expect_eq "$(cut -d@ -f2 "$T/out$i")" "$(json_get ".[] | select(.name == \"n$i\") | .digest" <<<"$OUT")" "n$i"
done
expect_exit 0 "$AREC" records load/shared --history --json
expect_eq 16 "$(json_get length <<<"$OUT")" "history of load/shared"
history=$(json_get '[.[].digest] | sort | join(" ")' <<<"$OUT")
printed=$(for i in $(seq 17 32); do cut -d@ -f2 "$T/out$i"; done | sort | paste -sd' ')
expect_eq "$printed" "$history" "every printed digest is in the history"

note "the store is a valid layout: every record readable by skopeo, no temporaries left"
for i in 1 8 16; do
  skopeo inspect "oci:$T/store:load/n$i" >/dev/null || fail "skopeo cannot read load/n$i"
done
expect_eq "" "$(ls -A "$T/store/arec/tmp")" "temporaries"
echo PASS
