# Helpers for the registry-config tests: two registries of their own (the registry moves from OLD to
# NEW), node settings naming the registry registry.mesh, and a dynamically linked C++ program recorded.
source "$(dirname "${BASH_SOURCE[0]}")/../registry/lib.sh"

start_registry OLD old
start_registry NEW new
old_port=${OLD##*:} new_port=${NEW##*:}

# settings FILE [REGISTRY_NAME]: n1 (no address: this node, loopback by rule 4) holds the registry on
# OLD's port; n2 was given NEW's port.
settings() {
  local name=""
  [[ -n ${2:-} ]] && name="\"registry_name\": \"$2\","
  cat >"$1" <<JSON
{"self": "n1", $name
 "nodes": {"n1": {"ports": {"registry": $old_port}},
           "n2": {"address": "127.0.0.1", "ports": {"registry": $new_port}}},
 "services": {"registry": "n1"}}
JSON
}
settings "$T/nodes.json" registry.mesh
settings "$T/nodes-before-the-name.json"
export AREC_NODES=$T/nodes.json

# hello: a C++ program linked to libstdc++ dynamically, printing a line unique to this test; recorded
# as $M/hello with its loader and libraries, pushed. Prints its digest.
hello() {
  mkdir -p "$T/src"
  printf '#include <iostream>\nint main() { std::cout << "hello from %s" << std::endl; }\n' "$M" >"$T/src/hello.cpp"
  "${AREC_TEST_CXX:-c++}" -O1 -o "$T/src/hello" "$T/src/hello.cpp" || fail "compiling hello.cpp"
  # Read whole first: grep -q stopping early would end ldd with SIGPIPE, which pipefail reports.
  local libraries
  libraries=$(ldd "$T/src/hello") || fail "ldd $T/src/hello"
  [[ $libraries == *libstdc++* ]] || fail "hello is not linked to libstdc++ dynamically: $libraries"
  local identity
  identity=$("$AREC" record --module "$M" --name hello --file "$T/src/hello" --entrypoint /usr/local/bin/hello) || fail "recording hello"
  "$AREC" push "$M/hello" >/dev/null 2>&1 || fail "pushing $M/hello to $OLD"
  echo "${identity#*@}"
}

# The declaration: the template, and what it composes to.
mkdir -p "$T/deploy"
printf 'image: arec://image/%s/hello\n' "$M" >"$T/deploy/app.yaml.in"
