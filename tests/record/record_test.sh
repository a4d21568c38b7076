#!/usr/bin/env bash
# arec record and arec records, as a user runs them.
AREC=$1
source "$(dirname "$0")/../lib.sh"
export AREC_STORE=$T/store

mkdir -p "$T/out/share/doc"
printf '#!/bin/sh\necho controlplane\n' >"$T/out/controlplane"
chmod 755 "$T/out/controlplane"
echo "docs" >"$T/out/share/doc/README"

note "record prints module/name@digest"
expect_exit 0 "$AREC" record --module mesh --name controlplane --file "$T/out/controlplane" \
  --dir "$T/out/share=/usr/share/cp" --entrypoint /usr/local/bin/controlplane --env MODE=mesh
[[ $OUT =~ ^mesh/controlplane@sha256:[0-9a-f]{64}$ ]] || fail "identity: $OUT"
first=${OUT#*@}

note "recording the same inputs again changes nothing"
index_before=$(sha256sum "$T/store/index.json")
expect_exit 0 "$AREC" record --module mesh --name controlplane --file "$T/out/controlplane" \
  --dir "$T/out/share=/usr/share/cp" --entrypoint /usr/local/bin/controlplane --env MODE=mesh --json
expect_eq "$first" "$(json_get .digest <<<"$OUT")" "digest"
expect_eq false "$(json_get .changed <<<"$OUT")" "changed"
expect_eq "$index_before" "$(sha256sum "$T/store/index.json")" "index.json"

note "global options after the command name, and --json record fields"
echo "v2" >>"$T/out/controlplane"
expect_exit 0 "$AREC" record --module mesh --name controlplane --file "$T/out/controlplane" --json \
  --target controlplane --config Release --revision 0123456789abcdef0123456789abcdef01234567 --store "$T/store" -q
second=$(json_get .digest <<<"$OUT")
expect_ne "$first" "$second" "digest after a change"
expect_eq "mesh controlplane controlplane Release 0123456789abcdef0123456789abcdef01234567 true" \
  "$(json_get '"\(.module) \(.name) \(.target) \(.config) \(.revision) \(.changed)"' <<<"$OUT")" "record fields"
[[ $(json_get .recorded <<<"$OUT") =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$ ]] || fail "recorded: $OUT"

note "another artifact, then records lists the latest of each"
expect_exit 0 "$AREC" record --module mesh --name builder --file "$T/out/controlplane=/usr/local/bin/builder"
expect_exit 0 "$AREC" records --json
expect_eq 2 "$(json_get length <<<"$OUT")" "records"
expect_eq "mesh/builder mesh/controlplane" "$(json_get '[.[] | "\(.module)/\(.name)"] | sort | join(" ")' <<<"$OUT")"
expect_eq "$second" "$(json_get '.[] | select(.name == "controlplane") | .digest' <<<"$OUT")"

note "history keeps every recording, oldest first"
expect_exit 0 "$AREC" records mesh/controlplane --history --json
expect_eq "$first $second" "$(json_get '[.[].digest] | join(" ")' <<<"$OUT")" "history"

note "the table names each record"
expect_exit 0 "$AREC" records mesh
expect_contains "$OUT" "mesh/controlplane"
expect_contains "$OUT" "$second"
expect_exit 0 "$AREC" records nothing/here
expect_eq "" "$OUT"
expect_contains "$ERR" "no records for nothing/here"

note "a record from inside a git work tree carries its revision"
git -C "$T" init -q repo
git -C "$T/repo" -c user.email=t@t -c user.name=t commit -q --allow-empty -m init
head=$(git -C "$T/repo" rev-parse HEAD)
(cd "$T/repo" && "$AREC" record --module mesh --name rev --file "$T/out/controlplane" --json) >"$T/rev.json"
expect_eq "$head" "$(json_get .revision <"$T/rev.json")" "revision"

note "without AREC_STORE the store is \${XDG_DATA_HOME:-\$HOME/.local/share}/arec/store"
latest() { AREC_STORE=$1 "$AREC" records --json | json_get '.[].digest'; }
expect_exit 0 env -u AREC_STORE XDG_DATA_HOME="$T/xdg" HOME="$T/home" \
  "$AREC" record --module mesh --name xdg --file "$T/out/controlplane"
expect_eq "mesh/xdg@$(latest "$T/xdg/arec/store")" "$OUT" "record in \$XDG_DATA_HOME/arec/store"
[[ ! -e $T/home ]] || fail "with XDG_DATA_HOME set, the store went under \$HOME"
expect_exit 0 env -u AREC_STORE -u XDG_DATA_HOME HOME="$T/home" \
  "$AREC" record --module mesh --name home --file "$T/out/controlplane"
expect_eq "mesh/home@$(latest "$T/home/.local/share/arec/store")" "$OUT" "record in ~/.local/share/arec/store"

note "--help explains the command"
expect_exit 0 "$AREC" record --help
expect_contains "$OUT" "--module"
expect_contains "$OUT" "SOURCE_DATE_EPOCH"
expect_exit 2 "$AREC" record --name x --file "$T/out/controlplane"
expect_contains "$ERR" "--module is required"
expect_exit 2 "$AREC" frobnicate
echo PASS
