#!/usr/bin/env bash
# registry_config.containerd: a real containerd (its own, started here) pulls a recorded C++ program by
# the registry's name through the hosts directory `registry-config containerd` writes, and runs it with
# runc. The registry moves to another port and the old one stops: the declaration composes byte for
# byte the same, the same reference pulls and runs through the hosts written after the move, and a
# reference composed to the old address (before registry_name was set) pulls through --bridge.
AREC=$1
source "$(dirname "$0")/lib.sh"
start_containerd
# pull_and_run HOSTS_DIR REF ID: the image, fetched afresh (nothing of it kept from before), run once.
# IDs are this test's own: runc keeps its state under /run/containerd/runc whichever containerd runs it.
pull_and_run() {
  ctr images rm --sync "$2" >/dev/null 2>&1 || true
  ctr images pull --hosts-dir "$1" "$2" >"$T/pull.log" 2>&1 || fail "ctr images pull --hosts-dir $1 $2: $(tail -3 "$T/pull.log")"
  ctr run --rm "$2" "$3" 2>&1 || fail "ctr run $2 failed"
  ctr images rm --sync "$2" >/dev/null 2>&1 || true
}

digest=$(hello)
expect_exit 0 "$AREC" compose "$T/deploy/app.yaml.in" -o "$T/app.yaml"
expect_eq "image: registry.mesh/$M/hello@$digest" "$(cat "$T/app.yaml")" "the declaration, composed"
ref=registry.mesh/$M/hello@$digest
# The same template composed before registry_name was given: the registry's address at the time.
expect_exit 0 "$AREC" --nodes "$T/nodes-before-the-name.json" compose "$T/deploy/app.yaml.in" -o "$T/old-app.yaml"
old_ref=$OLD/$M/hello@$digest
expect_eq "image: $old_ref" "$(cat "$T/old-app.yaml")" "the declaration composed without registry_name"

note "the hosts directory maps registry.mesh to $OLD; containerd pulls by the name and runc runs it"
expect_exit 0 "$AREC" registry-config containerd --out "$T/certs.d"
expect_eq "wrote $T/certs.d/registry.mesh/hosts.toml: registry.mesh -> $OLD (plain HTTP)" "$OUT" "registry-config's output"
expect_eq "server = \"http://$OLD\"" "$(grep '^server' "$T/certs.d/registry.mesh/hosts.toml")" "server in hosts.toml"
expect_eq "registry.mesh" "$(ls "$T/certs.d")" "hosts written"
expect_eq "hello from $M" "$(pull_and_run "$T/certs.d" "$ref" "$M-before")" "the program's output in its container"
# Without the hosts directory, registry.mesh is a name nobody answers to.
ctr images pull --hosts-dir "$T/empty" "$ref" >/dev/null 2>&1 && fail "registry.mesh pulled without the hosts directory"

note "the registry moves to port $new_port; the old one stops"
expect_exit 0 "$AREC" move --to n2 --apply "$T/deploy"
bridge_line="arec --nodes $T/nodes.json --self n1 registry-config containerd --bridge $OLD"
expect_contains "$OUT" "then on each node, map the registry's name to its new address, bridging the old one" "move's output"
expect_contains "$OUT" "  $bridge_line"$'\n'"  arec --nodes $T/nodes.json --self n2 registry-config containerd --bridge $OLD" "move's output"
"$ROOT/scripts/registry" stop "$T/registries/old"
expect_exit 0 "$AREC" compose "$T/deploy/app.yaml.in" -o "$T/app-after.yaml"
cmp "$T/app.yaml" "$T/app-after.yaml" || fail "the declaration composed after the move differs: $(cat "$T/app-after.yaml")"
# The hosts written before the move name the stopped registry.
ctr images pull --hosts-dir "$T/certs.d" "$ref" >/dev/null 2>&1 && fail "pulled $ref from the stopped registry"

note "the command move printed, for this node: the name and the old address both go to $NEW"
# shellcheck disable=SC2086 # the command as move printed it, word by word
expect_exit 0 "$AREC" ${bridge_line#arec } --out "$T/certs.d"
expect_eq "wrote $T/certs.d/registry.mesh/hosts.toml: registry.mesh -> $NEW (plain HTTP)
wrote $T/certs.d/$OLD/hosts.toml: $OLD -> $NEW (plain HTTP)" "$OUT" "registry-config's output after the move"
expect_eq "hello from $M" "$(pull_and_run "$T/certs.d" "$ref" "$M-after")" "the same reference after the move"
expect_eq "hello from $M" "$(pull_and_run "$T/certs.d" "$old_ref" "$M-bridged")" "the old address's reference, bridged"
rm -r "${T:?}/certs.d/$OLD"
ctr images pull --hosts-dir "$T/certs.d" "$old_ref" >/dev/null 2>&1 && fail "pulled $old_ref without the bridge"

note "needs-rebuild: the old address still breaks, the name never does"
printf 'a: %s\nb: %s\n' "$ref" "$old_ref" >"$T/composed.yaml"
expect_exit 1 "$AREC" needs-rebuild "$T/composed.yaml"
expect_contains "$OUT" "$OLD/$M/hello@$digest  $T/composed.yaml:2  hard-coded-address" "needs-rebuild"
expect_not_contains "$OUT" "registry.mesh" "needs-rebuild"
echo PASS
