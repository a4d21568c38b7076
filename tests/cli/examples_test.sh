#!/usr/bin/env bash
# Every example on the help pages works as written, run in a directory holding what they name. Those
# that need a registry (push, pull, verify, move, --catalog) are checked by the registry tests instead.
AREC=$1
source "$(dirname "$0")/../lib.sh"
unset AREC_NODES AREC_SELF SOURCE_DATE_EPOCH
export AREC_STORE=$T/store
bin=$T/bin && mkdir -p "$bin" && ln -s "$(realpath "$AREC")" "$bin/arec"
export PATH=$bin:$PATH
work=$T/work && mkdir -p "$work/build" "$work/public" "$work/deploy" && cd "$work"
echo app >build/app && echo server >build/server && echo '<p>hi</p>' >public/index.html
printf 'image: arec://image/mesh/app\nregistry: arec://endpoint/registry\n' >deploy.yaml.in
printf 'image: 127.0.0.1:5000/builder:1\n' >deploy/values.yaml
cat >nodes.json <<'JSON'
{"self": "n1", "nodes": {"n1": {"address": "127.0.0.1", "ports": {"registry": 5000}}, "n2": {"address": "127.0.0.1", "ports": {"registry": 5001}}},
 "services": {"registry": "n1"}}
JSON

ran=0
for c in record records sbom ref check gc resolve compose read-port needs-rebuild help completion push pull verify move; do
  page=$(arec help "$c")
  while IFS= read -r line; do
    [[ $line == "  "[!\ ]* ]] || continue
    example=${line#  }
    if [[ $example =~ (^|\ )(push|pull|verify|move)\  || $example == *--catalog* || $example =~ ^arec\ (push|pull|verify)$ ]]; then
      note "needs a registry, not run here: $example"
      continue
    fi
    # Examples that write into a user's home or shell configuration are run into a file here.
    example=${example//'~/.config/fish/completions/arec.fish'/$T/arec.fish}
    example=${example//'"${fpath[1]}/_arec"'/$T/_arec}
    note "$example"
    rc=0
    bash -c "$example" >"$T/.out" 2>"$T/.err" || rc=$?
    # needs-rebuild answers 1 when it finds something, which these declarations are made to hold.
    if [[ $c == needs-rebuild ]]; then
      expect_eq 1 "$rc" "exit code of [$example]; stderr: $(cat "$T/.err")"
    else
      expect_eq 0 "$rc" "exit code of [$example]; stderr: $(cat "$T/.err")"
    fi
    ran=$((ran + 1))
  done < <(sed -n '/^Examples:/,/^$/p' <<<"$page")
done
((ran >= 20)) || fail "only $ran examples ran"
expect_contains "$(cat deploy.yaml)" "image: 127.0.0.1:5000/mesh/app@sha256:"
[[ -s app.spdx.json ]] || fail "arec sbom mesh/app > app.spdx.json wrote nothing"
echo PASS
