#!/usr/bin/env bash
# The registry's own catalog: a single-segment repository pushed there by hand is genesis-pinned, and
# a move is refused while it is there; --force moves anyway. Bad input is exit 2, a registry that
# does not answer exit 3.
AREC=$1
source "$(dirname "$0")/lib.sh"
# Two repositories a catalog page: what is found on later pages is found only by following the Link.
start_registry OLD old --catalog-page 2
start_registry NEW new
mesh_settings "${OLD##*:}" "${NEW##*:}"
program controlplane >/dev/null
expect_exit 0 "$AREC" push

note "--catalog finds single-segment repositories pushed with skopeo, on every page of the catalog"
for repository in builder worker; do
  skopeo copy -q --dest-tls-verify=false "oci:$AREC_STORE:mesh/controlplane" "docker://$OLD/$repository:genesis"
done
expect_eq "builder mesh/controlplane" "$(curl -fsS "http://$OLD/v2/_catalog" | jq -r '.repositories | join(" ")')" "first page"
expect_exit 0 "$AREC" needs-rebuild
expect_exit 1 "$AREC" needs-rebuild --catalog --json
expect_eq "$OLD/builder:genesis genesis-pinned catalog
$OLD/worker:genesis genesis-pinned catalog" "$(jq -r '.[] | "\(.reference) \(.kind) \(.source)"' <<<"$OUT")"

note "a move is refused with the list; the settings stay"
cp "$T/nodes.json" "$T/nodes.before"
expect_exit 1 "$AREC" move --to n2 --apply
expect_contains "$OUT" "$OLD/builder:genesis"
expect_eq "arec: error: move refused: 2 references would break (listed with the plan); rebuild them through arec first, or move anyway with --force" "$ERR"
cmp "$T/nodes.before" "$T/nodes.json" || fail "a refused move changed the settings"
expect_exit 0 "$AREC" move --to n2 --apply --force
expect_eq '"n2"' "$(jq .services.registry "$T/nodes.json")" "settings after a forced move"

note "bad input"
expect_exit 2 "$AREC" move --to n9
expect_one_line_error "--to \"n9\": no such node in node settings $T/nodes.json (nodes: n1, n2)"
expect_exit 2 "$AREC" move --to n1 --port 70000
expect_one_line_error "move: --port 70000: at most 65535"
expect_exit 0 "$AREC" move --to n2
expect_eq "nothing to move: node n2 holds the registry at $NEW already" "$OUT"
mkdir -p "$T/bad"
printf 'spec:\n  image: x\n  list: [1, 2\n' >"$T/bad/broken.yaml"
expect_exit 2 "$AREC" needs-rebuild "$T/bad"
expect_one_line_error "$T/bad/broken.yaml:3: malformed YAML: end of sequence flow not found"
expect_exit 2 "$AREC" needs-rebuild --ref "Not/A Ref"
expect_one_line_error "--ref: reference \"Not/A Ref\""
AREC_NODES= expect_exit 2 "$AREC" move --to local
expect_one_line_error "name the file with --nodes FILE"

note "a registry that does not answer cannot be read: exit 3"
"$ROOT/scripts/registry" stop "$T/registries/new"
AREC_RETRY_BUDGET=1 expect_exit 3 "$AREC" needs-rebuild --catalog -q
expect_one_line_error "arec: error: reading the catalog of $NEW: checking the registry (GET /v2/): Failed to connect"
echo PASS
