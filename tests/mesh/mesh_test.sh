#!/usr/bin/env bash
# mesh.move: the incident replayed across hosts. Three nodes, each a network namespace of this test with
# its own address on a bridge of its own (10.213.0.0/24, no route out), each running its own containerd.
# The registry starts on node 1; genesis declarations pin images there by address, and needs-rebuild
# finds them; two services are recorded through arec, pushed, and composed by the registry's name
# (registry_name); every node writes its runtime configuration (registry-config containerd; node 3 also
# podman's drop-in) and pulls and runs both services. The registry moves to node 2, another address
# and port (move --apply); the old one stops; every node writes its configuration again, and pulls and
# runs again: no declaration changed by one byte, and needs-rebuild finds nothing. Last, a one-line
# rebuild of one service, pulled by every node. Requests and bytes at the registry are counted from
# its access log for each step (the figures docs/mesh.md uses; AREC_MESH_FIGURES=FILE keeps them).
AREC=$1
source "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

[[ $(id -u) -eq 0 ]] || skip "network namespaces, containerd and runc need root"
for tool in ip nsenter containerd ctr runc docker-registry skopeo cc jq curl; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/deps)"
done
[[ -f /usr/lib/x86_64-linux-gnu/libc.a || -f /usr/lib/aarch64-linux-gnu/libc.a ]] || skip "no static libc (libc6-dev)"

export AREC_STORE=$T/store AREC_NODES=$T/nodes.json AREC_RETRY_BUDGET=${AREC_RETRY_BUDGET:-10}
export DOCKER_CONFIG=$T/docker XDG_RUNTIME_DIR=$T/runtime HOME=$T/home  # no credentials, no registries.conf of the machine's
unset REGISTRY_AUTH_FILE AREC_CA_FILE AREC_CHUNK_SIZE AREC_SELF
mkdir -p "$DOCKER_CONFIG" "$XDG_RUNTIME_DIR" "$HOME"
started=$(date +%s%N)

# The network: namespaces named for this run, so runs side by side never meet; the bridge lives in a
# namespace of its own, so nothing of it is in the machine's. Deleting the namespaces deletes the veths
# and the bridge; the daemons in them are stopped first.
net=arec-mesh-$$
nodes=(1 2 3)
mesh_down() {
  local i
  for i in "${nodes[@]}"; do "$ROOT/scripts/containerd" stop "$T/n$i/containerd" || true; done
  for r in old new; do "$ROOT/scripts/registry" stop "$T/registries/$r" || true; done
  for i in sw "${nodes[@]}"; do ip netns del "$net-$i" 2>/dev/null || true; done
}
on_exit mesh_down
ip netns add "$net-sw" || fail "ip netns add $net-sw"
ip -n "$net-sw" link add br0 type bridge && ip -n "$net-sw" link set br0 up || fail "the bridge"
for i in "${nodes[@]}"; do
  ip netns add "$net-$i" || fail "ip netns add $net-$i"
  ip -n "$net-sw" link add "p$i" type veth peer name eth0 netns "$net-$i" || fail "the veth of node $i"
  ip -n "$net-sw" link set "p$i" master br0 up &&
    ip -n "$net-$i" addr add "10.213.0.$i/24" dev eth0 &&
    ip -n "$net-$i" link set eth0 up && ip -n "$net-$i" link set lo up || fail "addressing node $i"
  mkdir -p "$T/n$i"
done
# on NODE CMD...: CMD in that node's network namespace, and only that: `ip netns exec` would also give
# it a mount namespace with a /sys of its own, without the cgroup mount runc needs.
on() { local i=$1; shift; nsenter --net="/run/netns/$net-$i" "$@"; }
# No way out: only the bridge's range is routed.
on 3 ip route get 192.0.2.1 >/dev/null 2>&1 && fail "node 3 has a route out of the mesh"
for i in "${nodes[@]}"; do
  for _ in $(seq 50); do [[ $(ip -n "$net-$i" -j link show eth0 | jq -r '.[0].operstate') == UP ]] && break; sleep 0.1; done
done

# Each node's containerd, started in its namespace (pulls happen in ctr, which runs there too).
declare -A sock
for i in "${nodes[@]}"; do
  sock[$i]=$(on "$i" "$ROOT/scripts/containerd" start "$T/n$i/containerd") || fail "containerd of node $i did not start"
done
node_ctr() { local i=$1; shift; on "$i" timeout 120 ctr --address "${sock[$i]}" "$@"; }

# The registry's access log, counted: `mark LOG` is where a step starts; `traffic LOG MARK [ADDRESS]`
# prints the requests and the bytes answered since, from ADDRESS (else from anyone).
mark() { sleep 0.2; grep -c '' "$1" || true; }
traffic() {
  sleep 0.2  # the registry logs a request when it has answered it
  tail -n +"$(($2 + 1))" "$1" | awk -v from="${3:-}" '$2 == "-" && $1 ~ /^[0-9.]+$/ && (from == "" || $1 == from) {
    n++; b += ($10 == "-" ? 0 : $10) } END { printf "%d %d\n", n, b }'
}
# Bytes a node's interface received (what was sent to it over the bridge, TCP/IP headers included).
received() { ip -n "$net-$1" -j -s link show eth0 | jq '.[0].stats64.rx.bytes'; }
figures=$T/figures.tsv
printf 'step\tfrom\trequests\tbytes\tbytes-counted-as\n' >"$figures"
# figure STEP FROM REQUESTS BYTES [HOW]: HOW the bytes were counted, by default the bodies the registry
# answered (its access log).
figure() { printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "${5:-answered}" >>"$figures"; }
# counted STEP FROM LOG MARK [ADDRESS]: the figure of STEP from the access log LOG since MARK.
counted() {
  local requests bytes
  read -r requests bytes <<<"$(traffic "$3" "$4" "${5:-}")"
  figure "$1" "$2" "$requests" "$bytes"
}

note "the registry starts on node 1"
OLD=$(on 1 "$ROOT/scripts/registry" start "$T/registries/old" --listen 10.213.0.1 --access-log) || fail "the registry on node 1"
old_log=$T/registries/old/log
cat >"$T/nodes.json" <<JSON
{
  "self": "n1",
  "registry_name": "registry.mesh",
  "nodes": {
    "n1": {"address": "10.213.0.1", "insecure_registry": true, "ports": {"registry": ${OLD##*:}}},
    "n2": {"address": "10.213.0.2", "insecure_registry": true},
    "n3": {"address": "10.213.0.3", "insecure_registry": true}
  },
  "services": {"registry": "n1"}
}
JSON

note "genesis: declarations pin images at the registry's address; needs-rebuild finds them, move refuses"
mkdir -p "$T/deploy" "$T/out"
printf 'kind: ControlPlane\nspec:\n  image: %s/controlplane:genesis\n' "$OLD" >"$T/deploy/controlplane.yaml"
printf '{"kind": "Builder", "spec": {"image": "%s/builder:genesis"}}\n' "$OLD" >"$T/deploy/builder.json"
expect_exit 1 on 1 "$AREC" needs-rebuild "$T/deploy" --json
expect_eq "$OLD/builder:genesis genesis-pinned $T/deploy/builder.json:1
$OLD/controlplane:genesis genesis-pinned $T/deploy/controlplane.yaml:3" \
  "$(jq -r '.[] | "\(.reference) \(.kind) \(.source)"' <<<"$OUT")" "needs-rebuild at genesis"
expect_exit 1 on 1 "$AREC" move "$T/deploy" --to n2 --port 5000 --apply
expect_contains "$ERR" "move refused: 2 references would break" "move at genesis"

note "the services rebuilt through arec on node 1: a static controlplane, a dynamically linked builder"
mkdir -p "$T/src" "$T/bin"
cp "$(dirname "$0")/service.c" "$T/src/service.c"
build() { cc -O1 "${@:2}" -DROLE="\"$1\"" -o "$T/bin/$1" "$T/src/service.c" || fail "compiling $1"; }
build controlplane -static
build builder
for s in controlplane builder; do
  expect_exit 0 on 1 "$AREC" record --module mesh --name "$s" --file "$T/bin/$s" --entrypoint "/usr/local/bin/$s"
done
m=$(mark "$old_log")
expect_exit 0 on 1 "$AREC" push --json
figure push 10.213.0.1 "$(traffic "$old_log" "$m" | cut -d' ' -f1)" "$(jq '.bytes + .referrers.bytes + .records.bytes + .manifests.bytes' <<<"$OUT")" sent-by-push
rm "$T/deploy/controlplane.yaml" "$T/deploy/builder.json"
printf 'controlplane:\n  image: arec://image/mesh/controlplane\nbuilder:\n  image: arec://image/mesh/builder\n' >"$T/deploy/mesh.yaml.in"
expect_exit 0 on 1 "$AREC" needs-rebuild "$T/deploy"
expect_exit 0 on 1 "$AREC" compose "$T/deploy/mesh.yaml.in" -o "$T/out/mesh.yaml"
image() { sed -n "/^$1:/{n;s/^  image: //p}" "$T/out/mesh.yaml"; }
for s in controlplane builder; do
  [[ $(image $s) == registry.mesh/mesh/$s@sha256:* ]] || fail "$s composed to [$(image $s)]"
done
declarations_before=$(cd "$T" && sha256sum deploy/* out/*)
controlplane_ref=$(image controlplane) builder_ref=$(image builder)

# configure NODE: the node's copy of the node settings (as a deploy carries it), and its containerd's
# hosts written from it; node 3 also writes podman's drop-in.
configure() {
  local i=$1
  cp "$T/nodes.json" "$T/n$i/nodes.json"
  expect_exit 0 on "$i" "$AREC" --nodes "$T/n$i/nodes.json" --self "n$i" registry-config containerd --out "$T/n$i/certs.d" "${@:2}"
  expect_contains "$OUT" "wrote $T/n$i/certs.d/registry.mesh/hosts.toml: registry.mesh -> $REGISTRY (plain HTTP)" "registry-config on node $i"
  if ((i == 3)); then
    expect_exit 0 on 3 "$AREC" --nodes "$T/n3/nodes.json" --self n3 registry-config podman --out "$T/n3/50-arec.conf"
    expect_eq "wrote $T/n3/50-arec.conf: registry.mesh -> $REGISTRY (plain HTTP)" "$OUT" "registry-config podman on node 3"
  fi
}
# pull_and_run NODE STEP SERVICE...: each service by its composed reference, fetched afresh (nothing of
# it kept), run once; counted at the registry as STEP.
pull_and_run() {
  local i=$1 step=$2 s ref
  shift 2
  for s in "$@"; do node_ctr "$i" images rm --sync "$(image "$s")" >/dev/null 2>&1 || true; done
  local m
  m=$(mark "$LOG")
  for s in "$@"; do
    ref=$(image "$s")
    node_ctr "$i" images pull --hosts-dir "$T/n$i/certs.d" "$ref" >"$T/pull.log" 2>&1 ||
      fail "node $i: ctr images pull $ref: $(tail -3 "$T/pull.log")"
  done
  counted "$step" "10.213.0.$i" "$LOG" "$m" "10.213.0.$i"
  for s in "$@"; do
    ref=$(image "$s")
    expect_eq "$s $VERSION: ready" "$(node_ctr "$i" run --rm "$ref" "mesh-$$-n$i-$s-$step" 2>&1)" "$s run on node $i ($step)"
  done
}
# skopeo_pull STEP: node 3 copies both services by their composed references through podman's drop-in,
# as podman, CRI-O and buildah would, and finds the digests composed.
skopeo_pull() {
  local s ref m
  m=$(mark "$LOG")
  for s in controlplane builder; do
    ref=$(image "$s")
    rm -rf "$T/n3/oci"
    on 3 timeout 120 skopeo --registries-conf "$T/n3/50-arec.conf" --insecure-policy copy --quiet "docker://$ref" "oci:$T/n3/oci:$s" \
      2>"$T/skopeo.err" || fail "node 3: skopeo copy $ref: $(cat "$T/skopeo.err")"
    expect_eq "${ref#*@}" "$(jq -r '.manifests[0].digest' "$T/n3/oci/index.json")" "the digest skopeo pulled for $s on node 3"
  done
  counted "$1" 10.213.0.3 "$LOG" "$m" 10.213.0.3
}

note "every node writes its runtime configuration, pulls and runs both services from node 1 ($OLD)"
REGISTRY=$OLD LOG=$old_log VERSION=1
for i in "${nodes[@]}"; do
  configure "$i"
  pull_and_run "$i" pull-before controlplane builder
done
skopeo_pull skopeo-before

note "the registry moves to node 2, another address and port"
NEW=$(on 2 "$ROOT/scripts/registry" start "$T/registries/new" --listen 10.213.0.2 --access-log) || fail "the registry on node 2"
new_log=$T/registries/new/log
[[ ${NEW##*:} != "${OLD##*:}" ]] || fail "both registries on port ${NEW##*:}: run again"
m_old=$(mark "$old_log") m_new=$(mark "$new_log") rx=$(received 2)
expect_exit 0 on 1 "$AREC" move "$T/deploy" --to n2 --port "${NEW##*:}" --apply
counted move-at-old 10.213.0.1 "$old_log" "$m_old"
figure move-at-new 10.213.0.1 "$(traffic "$new_log" "$m_new" | cut -d' ' -f1)" $(($(received 2) - rx)) wire-into-node-2
expect_contains "$OUT" "from node n1 ($OLD) to node n2 ($NEW)" "move's output"
expect_contains "$OUT" "2 manifests verified" "move's output"
for i in "${nodes[@]}"; do
  expect_contains "$OUT" "arec --nodes $T/nodes.json --self n$i registry-config containerd --bridge $OLD" "move's output"
done
expect_eq "\"n2\" ${NEW##*:}" "$(jq -r '"\(.services.registry | tojson) \(.nodes.n2.ports.registry)"' "$T/nodes.json")" "the settings moved"
"$ROOT/scripts/registry" stop "$T/registries/old"
on 3 curl -s --max-time 2 "http://$OLD/v2/" >/dev/null && fail "the old registry still answers"
# The hosts written before the move name the stopped registry.
node_ctr 3 images pull --hosts-dir "$T/n3/certs.d" "$(image builder)" >/dev/null 2>&1 && fail "node 3 pulled from the stopped registry"

note "recomposed, nothing changed by one byte; needs-rebuild finds nothing"
expect_exit 0 on 1 "$AREC" compose "$T/deploy/mesh.yaml.in" -o "$T/out/mesh.yaml"
expect_eq "$declarations_before" "$(cd "$T" && sha256sum deploy/* out/*)" "the declarations' checksums after the move"
expect_exit 0 on 1 "$AREC" needs-rebuild "$T/deploy"

note "every node writes its configuration again (as move printed it), pulls and runs from node 2 ($NEW)"
REGISTRY=$NEW LOG=$new_log
for i in "${nodes[@]}"; do
  # A node that kept its images only resolves them again.
  configure "$i" --bridge "$OLD"
  m=$(mark "$LOG")
  for s in controlplane builder; do
    node_ctr "$i" images pull --hosts-dir "$T/n$i/certs.d" "$(image $s)" >/dev/null 2>&1 || fail "node $i: pulling $s again"
  done
  counted pull-kept "10.213.0.$i" "$LOG" "$m" "10.213.0.$i"
  pull_and_run "$i" pull-after controlplane builder
done
skopeo_pull skopeo-after

note "a one-line rebuild of the builder, pushed from node 1, pulled by every node that holds the old one"
sed -i 's/^#define VERSION "1"$/#define VERSION "2"/' "$T/src/service.c"
grep -q '^#define VERSION "2"$' "$T/src/service.c" || fail "the one-line change"
build builder
expect_exit 0 on 1 "$AREC" record --module mesh --name builder --file "$T/bin/builder" --entrypoint /usr/local/bin/builder
m=$(mark "$LOG") rx=$(received 2)
expect_exit 0 on 1 "$AREC" push --json
requests=$(traffic "$LOG" "$m" | cut -d' ' -f1)
figure rebuild-push 10.213.0.1 "$requests" "$(jq '.bytes + .referrers.bytes + .records.bytes + .manifests.bytes' <<<"$OUT")" sent-by-push
figure rebuild-push 10.213.0.1 "$requests" $(($(received 2) - rx)) wire-into-node-2
expect_exit 0 on 1 "$AREC" compose "$T/deploy/mesh.yaml.in" -o "$T/out/mesh.yaml"
expect_eq "$controlplane_ref" "$(image controlplane)" "controlplane, composed after the rebuild of the builder"
expect_ne "$builder_ref" "$(image builder)" "the builder, composed after its rebuild"
VERSION=2
for i in "${nodes[@]}"; do
  m=$(mark "$LOG")
  node_ctr "$i" images pull --hosts-dir "$T/n$i/certs.d" "$(image builder)" >"$T/pull.log" 2>&1 || fail "node $i: pulling the rebuilt builder"
  counted rebuild-pull "10.213.0.$i" "$LOG" "$m" "10.213.0.$i"
  expect_eq "builder 2: ready" "$(node_ctr "$i" run --rm "$(image builder)" "mesh-$$-n$i-builder-rebuilt" 2>&1)" "the rebuilt builder on node $i"
done

column -t -s $'\t' "$figures" >&2
# What the figures must show: the move costs each node its own pull and no more; a node that kept its
# images only resolves them (one request an image); the one-line rebuild sends each node the changed
# layer and its manifest and config, not the image.
row() { awk -F'\t' -v s="$1" -v f="$2" '$1 == s && $2 == f { print $3, $4; exit }' "$figures"; }
for i in "${nodes[@]}"; do
  expect_eq "$(row pull-before "10.213.0.$i")" "$(row pull-after "10.213.0.$i")" "node $i's pull before and after the move (requests, bytes)"
  read -r requests bytes <<<"$(row pull-kept "10.213.0.$i")"
  ((requests <= 2)) || fail "node $i made $requests requests to resolve the two images it kept"
  read -r requests bytes <<<"$(row rebuild-pull "10.213.0.$i")"
  ((bytes * 100 < $(row pull-after "10.213.0.$i" | cut -d' ' -f2))) || fail "node $i fetched $bytes bytes for the one-line rebuild"
done
[[ -n ${AREC_MESH_FIGURES:-} ]] && cp "$figures" "$AREC_MESH_FIGURES"
note "took $((($(date +%s%N) - started) / 1000000)) ms"
echo PASS
