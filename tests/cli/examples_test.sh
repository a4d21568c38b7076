#!/usr/bin/env bash
# Every example on the help pages works as written, run in a directory holding what they name.
#   examples_test.sh ARECBIN            the examples that need no registry
#   examples_test.sh ARECBIN registry   those of push, pull, verify, needs-rebuild --catalog and move,
#                                       against two fresh registries: their ports take the place of the
#                                       examples' 5000 (node n1) and 5001 (node n2)
AREC=$1
mode=${2:-local}
if [[ $mode == registry ]]; then
  source "$(dirname "$0")/../registry/lib.sh"
  start_registry OLD old
  start_registry NEW new
  n1_port=${OLD##*:} n2_port=${NEW##*:}
else
  source "$(dirname "$0")/../lib.sh"
  export AREC_STORE=$T/store
  n1_port=5000 n2_port=5001
fi
unset AREC_NODES AREC_SELF SOURCE_DATE_EPOCH
bin=$T/bin && mkdir -p "$bin" && ln -s "$(realpath "$AREC")" "$bin/arec"
export PATH=$bin:$PATH
work=$T/work && mkdir -p "$work/build" "$work/public" "$work/deploy" && cd "$work"
echo app >build/app && echo server >build/server && echo '<p>hi</p>' >public/index.html
printf 'image: arec://image/mesh/app\nregistry: arec://endpoint/registry\n' >deploy.yaml.in
cp deploy.yaml.in deploy/app.yaml.in
# A reference pinned to the registry's address, which needs-rebuild finds (and move would refuse).
[[ $mode == local ]] && printf 'image: 127.0.0.1:5000/builder:1\n' >deploy/values.yaml
cat >nodes.json <<JSON
{"self": "n1", "nodes": {"n1": {"address": "127.0.0.1", "ports": {"registry": $n1_port}},
                         "n2": {"address": "127.0.0.1", "ports": {"registry": $n2_port}}},
 "services": {"registry": "n1"}}
JSON
# registry-config's examples: the same settings, naming the registry.
jq '. + {registry_name: "registry.mesh"}' nodes.json >runtime.json
# The team's key pair: sign --sign-key's private key, and its public key.
(umask 077 && openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out team.key 2>/dev/null)
openssl pkey -in team.key -pubout -out team.pub
# Without --nodes the examples use the built-in settings, whose registry is 127.0.0.1:5000: here, n1's.
[[ $mode == registry ]] && export AREC_NODES=$work/nodes.json

needs_registry() { [[ $1 =~ ^arec\ (push|pull|verify)(\ |$) || $1 == *" push "* || $1 == *" move "* || $1 == *--catalog* ]]; }

# run_examples COMMAND...: runs the examples of each command's page that belong to this mode.
ran=0
run_examples() {
  local c line example rc
  for c in "$@"; do
    while IFS= read -r line; do
      [[ $line == "  "[!\ ]* ]] || continue
      example=${line#  }
      if [[ $mode == local ]] && needs_registry "$example"; then
        note "needs a registry, run by cli.registry_examples: $example"
        continue
      fi
      [[ $mode == registry ]] && ! needs_registry "$example" && [[ $c != record ]] && continue
      # Examples that write into a user's shell configuration write into the test's directory here.
      example=${example//'~/.config/fish/completions/arec.fish'/$T/arec.fish}
      example=${example//'"${fpath[1]}/_arec"'/$T/_arec}
      example=${example//127.0.0.1:5000/127.0.0.1:$n1_port}
      example=${example//--port 5001/--port $n2_port}
      note "$example"
      rc=0
      bash -c "$example" >"$T/.out" 2>"$T/.err" || rc=$?
      # needs-rebuild answers 1 when it finds something, which the local declarations are made to hold.
      local want=0
      [[ $c == needs-rebuild && $mode == local ]] && want=1
      # diff answers 1 when the records differ, as the examples' records do (a pipe answers as its last).
      [[ $c == diff && $example != *"|"* ]] && want=1
      expect_eq "$want" "$rc" "exit code of [$example]; stderr: $(cat "$T/.err")"
      ran=$((ran + 1))
    done < <(arec help "$c" | sed -n '/^Examples:/,/^$/p')
  done
}

# Every command arec lists, in its order, so that a new command's examples are run too.
mapfile -t commands < <(arec --help | sed -n '/^Subcommands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }')
((${#commands[@]} >= 16)) || fail "arec --help lists ${#commands[@]} commands"
if [[ $mode == local ]]; then
  run_examples "${commands[@]}"
  ((ran >= 20)) || fail "only $ran examples ran"
  expect_contains "$(cat deploy.yaml)" "image: 127.0.0.1:5000/mesh/app@sha256:"
  [[ -s app.spdx.json ]] || fail "arec sbom mesh/app > app.spdx.json wrote nothing"
else
  run_examples "${commands[@]}"
  ((ran >= 12)) || fail "only $ran examples ran"
  expect_eq "n2 $n2_port" "$(jq -r '"\(.services.registry) \(.nodes.n2.ports.registry)"' nodes.json)" "nodes.json after the move"
fi
echo PASS
