#!/usr/bin/env bash
# Composed outputs beside their templates (and one named by a compose depfile in a build tree) hold the
# registry's address by design: needs-rebuild lists what compose filled into them as "composed" ("compose
# again after the move"), never as a reference that breaks, and a move of a directory of templates and
# their outputs plans with exit 0, ending with the compose commands to run. An output edited by hand is not
# taken for composed; --exclude leaves out what else is generated; after the move, the commands the plan
# listed compose the new address.
AREC=$1
source "$(dirname "$0")/lib.sh"
start_registry OLD old
start_registry NEW new
mesh_settings "${OLD##*:}" "${NEW##*:}"
app=$(program app | cut -d@ -f2)
expect_exit 0 "$AREC" push -q

D=$T/deploy
mkdir -p "$D/generated" "$T/build"
printf 'image: arec://image/mesh/app\nregistry: arec://endpoint/registry\nstore-port: arec://port/store\n' >"$D/app.yaml.in"
printf '{"image": "arec://image/mesh/app", "registry": "arec://endpoint/registry", "port": "arec://port/registry"}\n' \
  >"$D/config.json.in"
printf 'containers:\n  - image: arec://image/mesh/app # the service\n' >"$D/svc.yaml.in"
"$AREC" compose "$D/app.yaml.in" -o "$D/app.yaml" || fail "composing app.yaml"
"$AREC" compose "$D/config.json.in" -o "$D/config.json" || fail "composing config.json"
# Composed into a build tree, as arec_compose does: the depfile says what it was composed from.
"$AREC" compose "$D/svc.yaml.in" -o "$T/build/svc.yaml" --depfile "$T/build/svc.yaml.d" || fail "composing svc.yaml"
# A file a tool wrote with the address in it: no template, so it counts unless excluded.
echo "pinned: $OLD/mesh/app" >"$D/generated/lock.txt"

note "needs-rebuild: what compose filled is composed, never counted; the rest counts"
expect_exit 0 "$AREC" needs-rebuild "$D" "$T/build" --exclude generated --json
# Rows sorted by file: build/ before deploy/.
expect_eq "svc.yaml:2 composed $OLD/mesh/app@$app
app.yaml:1 composed $OLD/mesh/app@$app
app.yaml:2 composed $OLD
config.json:2 composed $OLD/mesh/app@$app
config.json:3 composed $OLD" \
  "$(jq -r '.[] | "\(.file | split("/") | last):\(.line) \(.kind) \(.reference)"' <<<"$OUT")" "rows"
expect_eq "compose again after the move: arec compose $D/svc.yaml.in -o $T/build/svc.yaml" \
  "$(jq -r '.[0].action' <<<"$OUT")" "the action of the output a depfile names"
expect_eq "compose again after the move: arec compose $D/app.yaml.in -o $D/app.yaml" \
  "$(jq -r '.[1].action' <<<"$OUT")" "the action of an output beside its template"
expect_exit 0 "$AREC" needs-rebuild "$D" "$T/build" --exclude generated
expect_contains "$OUT" "0 references in 0 places would break on a registry move (read 7 files, excluded 1)"
expect_exit 1 "$AREC" needs-rebuild "$D"
expect_contains "$OUT" "$D/generated/lock.txt:1 "
expect_contains "$OUT" "hard-coded-address"
expect_exit 0 "$AREC" needs-rebuild "$D" --exclude '*.txt'
expect_exit 0 "$AREC" needs-rebuild "$D" --exclude 'deploy/generated/*'

note "move plans with exit 0 and ends with the compose commands to run"
expect_exit 0 "$AREC" move --to n2 "$D" "$T/build" --exclude generated
expect_contains "$OUT" "nothing would break when the registry moves; composed outputs are composed again after it"
expect_eq "after the move, compose again what was composed from the node settings:
  arec --nodes $T/nodes.json compose $D/app.yaml.in -o $D/app.yaml
  arec --nodes $T/nodes.json compose $D/config.json.in -o $D/config.json
  arec --nodes $T/nodes.json compose $D/svc.yaml.in -o $T/build/svc.yaml

this is the plan; run again with --apply to carry it out" "$(tail -n 6 <<<"$OUT")" "the end of the plan"
expect_exit 1 "$AREC" move --to n2 "$D"
expect_contains "$ERR" "move refused: 1 reference would break"

note "an output edited since it was composed is what someone wrote: its references count"
cp "$D/app.yaml" "$T/app.yaml.composed"
echo "extra: 1" >>"$D/app.yaml"
expect_exit 1 "$AREC" needs-rebuild "$D/app.yaml" --json
expect_eq "hard-coded-address hard-coded-address" "$(jq -r '[.[].kind] | join(" ")' <<<"$OUT")" "kinds in the edited output"
cp "$T/app.yaml.composed" "$D/app.yaml"
# Given alone, the output's template is read too: what it asks for is checked.
expect_exit 0 "$AREC" needs-rebuild "$D/app.yaml"
expect_contains "$OUT" "(read 2 files)"

note "--apply, then the commands it lists compose the new address"
expect_exit 0 "$AREC" move --to n2 "$D" "$T/build" --exclude generated --apply --json
expect_eq "true 3" "$(jq -r '"\(.applied) \(.compose | length)"' <<<"$OUT")" "applied, compose commands"
expect_eq "$D/svc.yaml.in $T/build/svc.yaml" "$(jq -r '.compose[2] | "\(.template) \(.output)"' <<<"$OUT")" "a compose entry"
while read -r command; do
  eval "\"\$AREC\" ${command#arec }" || fail "$command"
done < <(jq -r '.compose[].command' <<<"$OUT")
expect_eq "image: $NEW/mesh/app@$app" "$(head -n1 "$D/app.yaml")" "app.yaml composed after the move"
expect_eq "$NEW/mesh/app@$app" "$(jq -r .image "$D/config.json")" "config.json composed after the move"
echo PASS
