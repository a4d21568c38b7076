#!/usr/bin/env bash
# registry_config.podman: the registries.conf drop-in `registry-config podman` writes lets skopeo (as
# podman, CRI-O and buildah would) read the image by the registry's name, before and after a move, and
# by the old address through --bridge. The errors: no registry_name, a bad --bridge, an unwritable file.
AREC=$1
source "$(dirname "$0")/lib.sh"
export HOME=$T/home  # no registries.conf of the user's
mkdir -p "$HOME"

digest=$(hello)
expect_exit 0 "$AREC" compose "$T/deploy/app.yaml.in"
expect_eq "image: registry.mesh/$M/hello@$digest" "$OUT" "the declaration, composed"
ref=registry.mesh/$M/hello@$digest old_ref=$OLD/$M/hello@$digest
inspect() { skopeo --registries-conf "$1" inspect --no-tags "docker://$2" 2>"$T/skopeo.err" | jq -r .Digest; }

note "the drop-in maps registry.mesh to $OLD"
expect_exit 0 "$AREC" registry-config podman --out "$T/50-arec.conf"
expect_eq "wrote $T/50-arec.conf: registry.mesh -> $OLD (plain HTTP)" "$OUT" "registry-config's output"
expect_eq "[[registry]]
prefix = \"registry.mesh\"
location = \"$OLD\"
insecure = true" "$(grep -v '^#' "$T/50-arec.conf")" "the drop-in"
expect_eq "$digest" "$(inspect "$T/50-arec.conf" "$ref")" "digest skopeo reads by the name; $(cat "$T/skopeo.err")"
: >"$T/empty.conf"
[[ $(inspect "$T/empty.conf" "$ref") == "$digest" ]] && fail "skopeo read registry.mesh without the drop-in"

note "the plan says what each node runs after the move, with the bridge for the old address"
expect_exit 0 "$AREC" move --to n2 "$T/deploy"
expect_contains "$OUT" "node settings change:" "the plan"
expect_contains "$OUT" "then on each node, map the registry's name to its new address, bridging the old one (podman, CRI-O: registry-config podman):
  arec --nodes $T/nodes.json --self n1 registry-config containerd --bridge $OLD
  arec --nodes $T/nodes.json --self n2 registry-config containerd --bridge $OLD" "the plan"
expect_exit 0 "$AREC" move --to n2 "$T/deploy" --json
expect_eq "arec --nodes $T/nodes.json --self n2 registry-config containerd --bridge $OLD" "$(jq -r '.registry_config[1]' <<<"$OUT")" "the plan's registry_config"
expect_exit 0 "$AREC" --nodes "$T/nodes-before-the-name.json" move --to n2 "$T/deploy" --json
expect_eq "null" "$(jq -r '.registry_config' <<<"$OUT")" "registry_config of a plan without registry_name"

note "after the move and with the old registry stopped, the name and the bridged old address read the same image"
expect_exit 0 "$AREC" move --to n2 --apply "$T/deploy"
"$ROOT/scripts/registry" stop "$T/registries/old"
expect_exit 0 "$AREC" registry-config podman --out "$T/50-arec.conf" --bridge "$OLD"
expect_eq "wrote $T/50-arec.conf: registry.mesh -> $NEW (plain HTTP), $OLD -> $NEW (plain HTTP)" "$OUT" "registry-config's output"
expect_eq "$digest" "$(inspect "$T/50-arec.conf" "$ref")" "digest by the name after the move; $(cat "$T/skopeo.err")"
expect_eq "$digest" "$(inspect "$T/50-arec.conf" "$old_ref")" "digest by the old address, bridged; $(cat "$T/skopeo.err")"
# arec is no runtime: a reference naming registry.mesh means the registry the settings place now.
expect_exit 0 "$AREC" --store "$T/other" pull "$ref"
expect_contains "$OUT" "$digest" "arec pull $ref after the move"
expect_exit 0 "$AREC" registry-config podman --out "$T/unbridged.conf"
[[ $(inspect "$T/unbridged.conf" "$old_ref") == "$digest" ]] && fail "skopeo read $old_ref without the bridge"

note "errors"
expect_exit 2 "$AREC" --nodes "$T/nodes-before-the-name.json" registry-config podman --out "$T/x.conf"
expect_one_line_error "node settings $T/nodes-before-the-name.json give no registry_name: add \"registry_name\": \"registry.mesh\""
[[ -e $T/x.conf ]] && fail "a drop-in was written without registry_name"
expect_exit 2 "$AREC" registry-config containerd --out "$T/certs" --bridge 10.20.0.11
expect_one_line_error '--bridge "10.20.0.11": not HOST:PORT (an old address of the registry, e.g. 10.20.0.11:5000)'
[[ -e $T/certs ]] && fail "hosts were written with a bad --bridge"
echo file >"$T/a-file"
expect_exit 2 "$AREC" registry-config podman --out "$T/a-file/50-arec.conf"
expect_one_line_error "writing $T/a-file/50-arec.conf: creating directory $T/a-file"
expect_exit 2 "$AREC" registry-config containerd --out "$T/a-file"
expect_one_line_error "writing $T/a-file/registry.mesh/hosts.toml"
settings "$T/bad.json" registry
expect_exit 2 "$AREC" --nodes "$T/bad.json" registry-config containerd --out "$T/certs"
expect_one_line_error "node settings $T/bad.json: .registry_name: \"registry\" is not a registry name"

note "containerd's hosts: a run replaces the files it names and leaves the other hosts as they are"
mkdir -p "$T/certs/other.example"
echo 'server = "https://other.example"' >"$T/certs/other.example/hosts.toml"
mkdir -p "$T/certs/registry.mesh" && echo stale >"$T/certs/registry.mesh/hosts.toml"
expect_exit 0 "$AREC" registry-config containerd --out "$T/certs"
expect_eq 'server = "https://other.example"' "$(cat "$T/certs/other.example/hosts.toml")" "another host's file"
expect_eq "server = \"http://$NEW\"" "$(grep '^server' "$T/certs/registry.mesh/hosts.toml")" "registry.mesh's file, replaced"
expect_eq "other.example registry.mesh" "$(ls "$T/certs" | paste -sd' ')" "hosts under the directory"
echo PASS
