#!/usr/bin/env bash
# Rule 8 under SIGKILL: recorders killed at random moments, several at once, leave a store that
# `arec check` passes, holding every record that was reported as made.
AREC=$1
source "$(dirname "$0")/../lib.sh"
export AREC_STORE=$T/store
iterations=${CRASH_ITERATIONS:-60}
deadline=$((SECONDS + ${CRASH_SECONDS:-120}))

mkdir -p "$T/pool"
for i in 0 1 2; do head -c $((2000000 + i * 1500000)) /dev/urandom >"$T/pool/base$i"; done
: >"$T/reported"
killed=0 finished=0 ran=0
for ((iter = 1; iter <= iterations && SECONDS < deadline; iter++)); do
  pids=()
  for p in 0 1 2; do
    mkdir -p "$T/in/$p"
    cp "$T/pool/base$p" "$T/in/$p/app"
    echo "iteration $iter" >>"$T/in/$p/app"
    "$AREC" record --module crash --name "n$p" --file "$T/in/$p/app" >"$T/out.$p" 2>"$T/err.$p" &
    pids+=($!)
  done
  sleep "0.0$((RANDOM % 90 + 5))"
  for p in 0 1 2; do
    ((RANDOM % 3 == 0)) || kill -9 "${pids[$p]}" 2>/dev/null || true
  done
  for p in 0 1 2; do
    rc=0
    wait "${pids[$p]}" || rc=$?
    ran=$((ran + 1))
    if ((rc == 0)); then
      finished=$((finished + 1))
      cat "$T/out.$p" >>"$T/reported"
    elif ((rc == 137)); then
      killed=$((killed + 1))
    else
      fail "recorder exited $rc: $(cat "$T/err.$p")"
    fi
  done
done
note "$((iter - 1)) iterations, $ran recorders: $killed killed mid-run, $finished finished"
((iter - 1 >= 50)) || fail "only $((iter - 1)) iterations ran within the time bound"
((killed > 0)) || fail "no recorder was killed mid-run; the test proved nothing"

expect_exit 0 "$AREC" check
expect_contains "$OUT" "ok"
history=$("$AREC" records --history --json | jq -r '.[] | "\(.module)/\(.name)@\(.digest)"')
while read -r identity; do
  [[ -z $identity ]] && continue
  grep -qxF "$identity" <<<"$history" || fail "reported record $identity is missing"
done <"$T/reported"
for p in 0 1 2; do
  if grep -q "crash/n$p@" "$T/reported"; then
    skopeo inspect "oci:$T/store:crash/n$p" >/dev/null || fail "skopeo cannot read crash/n$p"
  fi
done
note "every one of $(grep -c . "$T/reported") reported records is present; arec check passes"
echo PASS
