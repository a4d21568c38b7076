#!/usr/bin/env bash
# `arec compose -` reads the template from standard input; -o (or --depfile) naming the template itself,
# by any path or symlink, is refused and the template is left as it was.
AREC=$1
source "$(dirname "$0")/../lib.sh"
export AREC_STORE=$T/store
unset AREC_SELF
cat >"$T/nodes.json" <<'JSON'
{"self": "n1", "nodes": {"n1": {"address": "10.20.0.11", "ports": {"bus": 5679, "store": 6852}}},
 "services": {"bus": "n1", "store": "n1"}}
JSON
export AREC_NODES=$T/nodes.json
printf 'bus: amqp://arec://endpoint/bus/vhost\nport: arec://port/store\n' >"$T/t.yaml"

note "- reads standard input, as the same file would be read"
expect_exit 0 "$AREC" compose "$T/t.yaml"
from_file=$OUT
expect_eq "bus: amqp://10.20.0.11:5679/vhost
port: 6852" "$from_file" "composed from the file"
expect_exit 0 "$AREC" compose - <"$T/t.yaml"
expect_eq "$from_file" "$OUT" "composed from stdin"
expect_exit 0 "$AREC" compose - -o "$T/out.yaml" --depfile "$T/out.d" <"$T/t.yaml"
expect_eq "$from_file" "$(cat "$T/out.yaml")" "composed from stdin into -o"
expect_eq "$T/out.yaml: $T/nodes.json" "$(cat "$T/out.d")" "depfile of stdin: no template file to name"
expect_exit 0 "$AREC" compose - --format json <<<'{"port": "arec://port/store"}'
expect_eq '{"port":6852}' "$(jq -c . <<<"$OUT")" "JSON from stdin"
expect_exit 2 "$AREC" compose - --strict <<<'x: arec://kind-of-tomorrow/x'
expect_eq "arec: error: <stdin>:1: arec://kind-of-tomorrow/x: unknown request kind \"kind-of-tomorrow\" (--strict)" "$ERR"

note "-o naming the template itself is refused, the template untouched"
before=$(sha256sum "$T/t.yaml")
expect_exit 2 "$AREC" compose "$T/t.yaml" -o "$T/t.yaml"
expect_eq "arec: error: -o $T/t.yaml: is the template $T/t.yaml itself; write to another file" "$ERR"
expect_eq "" "$OUT" "stdout of a refused compose"
mkdir "$T/sub"
ln -s "$T/t.yaml" "$T/link.yaml"
expect_exit 2 "$AREC" compose "$T/t.yaml" -o "$T/sub/../t.yaml"
expect_eq "arec: error: -o $T/sub/../t.yaml: is the template $T/t.yaml itself; write to another file" "$ERR"
expect_exit 2 "$AREC" compose "$T/link.yaml" --output "$T/t.yaml"
expect_eq "arec: error: -o $T/t.yaml: is the template $T/link.yaml itself; write to another file" "$ERR"
cd "$T"
expect_exit 2 "$AREC" compose t.yaml -o ./t.yaml
cd - >/dev/null
expect_eq "arec: error: -o ./t.yaml: is the template t.yaml itself; write to another file" "$ERR"
ln "$T/t.yaml" "$T/hardlink.yaml"
expect_exit 2 "$AREC" compose "$T/hardlink.yaml" -o "$T/t.yaml"
expect_eq "arec: error: -o $T/t.yaml: is the template $T/hardlink.yaml itself; write to another file" "$ERR"
expect_exit 2 "$AREC" compose "$T/t.yaml" -o "$T/out.yaml" --depfile "$T/link.yaml"
expect_eq "arec: error: --depfile $T/link.yaml: is the template $T/t.yaml itself; write to another file" "$ERR"
expect_eq "$before" "$(sha256sum "$T/t.yaml")" "the template after refused composes"
[[ -L $T/link.yaml ]] || fail "the symlink to the template was replaced"

note "a copy of the template is another file: composed over"
cp "$T/t.yaml" "$T/copy.yaml"
expect_exit 0 "$AREC" compose "$T/copy.yaml" -o "$T/t2.yaml"
expect_exit 0 "$AREC" compose "$T/t.yaml" -o "$T/copy.yaml"
expect_eq "$from_file" "$(cat "$T/copy.yaml")" "composed over a copy"
echo PASS
