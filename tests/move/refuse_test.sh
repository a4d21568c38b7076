#!/usr/bin/env bash
# The registry's own catalog: a single-segment repository pushed there by hand is genesis-pinned, and
# a move is refused while it is there; --force moves anyway. Bad input is exit 2.
AREC=$1
source "$(dirname "$0")/lib.sh"
start_registry OLD old
start_registry NEW new
mesh_settings "${OLD##*:}" "${NEW##*:}"
program controlplane >/dev/null
expect_exit 0 "$AREC" push

note "--catalog finds a single-segment repository pushed with skopeo"
skopeo copy -q --dest-tls-verify=false "oci:$AREC_STORE:mesh/controlplane" "docker://$OLD/builder:genesis"
expect_exit 0 "$AREC" needs-rebuild
expect_exit 1 "$AREC" needs-rebuild --catalog --json
expect_eq "$OLD/builder:genesis genesis-pinned catalog" "$(jq -r '.[] | "\(.reference) \(.kind) \(.source)"' <<<"$OUT")"

note "a move is refused with the list; the settings stay"
cp "$T/nodes.json" "$T/nodes.before"
expect_exit 1 "$AREC" move --to n2 --apply
expect_contains "$OUT" "$OLD/builder:genesis"
expect_contains "$OUT" "refused: rebuild what is listed above"
cmp "$T/nodes.before" "$T/nodes.json" || fail "a refused move changed the settings"
expect_exit 0 "$AREC" move --to n2 --apply --force
expect_eq '"n2"' "$(jq .services.registry "$T/nodes.json")" "settings after a forced move"

note "bad input"
expect_exit 2 "$AREC" move --to n9
expect_one_line_error "--to \"n9\": no such node in node settings $T/nodes.json (nodes: n1, n2)"
expect_exit 2 "$AREC" move --to n1 --port 70000
expect_one_line_error "--port 70000: not a port (1-65535)"
expect_exit 2 "$AREC" move --to n2
expect_one_line_error "the registry is already at $NEW"
mkdir -p "$T/bad"
printf 'spec:\n  image: x\n  list: [1, 2\n' >"$T/bad/broken.yaml"
expect_exit 2 "$AREC" needs-rebuild "$T/bad"
expect_one_line_error "$T/bad/broken.yaml:"
expect_contains "$ERR" "malformed YAML"
expect_exit 2 "$AREC" needs-rebuild --ref "Not/A Ref"
expect_one_line_error "--ref: reference \"Not/A Ref\""
AREC_NODES= expect_exit 2 "$AREC" move --to local
expect_one_line_error "name the file with --nodes FILE"
echo PASS
