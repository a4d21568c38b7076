#!/usr/bin/env bash
# The README's examples of compose and needs-rebuild, and the needs-rebuild output docs/moving.md shows,
# are what arec prints: each command is run as written there and its output compared with the page's.
AREC=$1
ROOT=$2
source "$(dirname "$0")/../lib.sh"
cd "$ROOT"
export AREC_STORE=$T/store

# The lines of PAGE after the line LINE, to the end of the fenced block LINE is in.
rest_of_block() { # page line
  awk -v line="$2" 'found && /^```/ { exit } found { print } $0 == line { found = 1 }' "$1"
}
# The Nth fenced block of PAGE opened with FENCE (```yaml), without its fences.
nth_block() { # page fence n
  awk -v fence="$2" -v n="$3" 'on && /^```$/ { exit } on { print } $0 == fence && ++seen == n { on = 1 }' "$1"
}

note "needs-rebuild over the genesis declarations: docs/moving.md's output, the README's first row and summary"
expect_exit 1 "$AREC" --nodes examples/mesh/nodes.json needs-rebuild examples/mesh/genesis
page=$(rest_of_block docs/moving.md '$ arec --nodes examples/mesh/nodes.json needs-rebuild examples/mesh/genesis')
expect_eq "$page" "$OUT" "docs/moving.md's needs-rebuild output"
readme=$(rest_of_block README.md '$ arec --nodes examples/mesh/nodes.json needs-rebuild examples/mesh/genesis')
expected=$(head -2 <<<"$OUT" && echo "…" && tail -1 <<<"$OUT")
expect_eq "$expected" "$readme" "the README's needs-rebuild output (its first row and the summary)"

note "compose: the README's template composes to the README's result, but for the digest"
printf 'int main() { return 0; }\n' >"$T/controlplane.c"
cc -static -O2 "$T/controlplane.c" -o "$T/controlplane" || skip "cc cannot link a static program (libc6-dev)"
expect_exit 0 "$AREC" record --module mesh --name controlplane --file "$T/controlplane"
digest=${OUT#*@}
nth_block README.md '```yaml' 1 >"$T/deploy.yaml.in"
grep -q 'arec://image/mesh/controlplane' "$T/deploy.yaml.in" || fail "the README's first yaml block asks for no image: $(cat "$T/deploy.yaml.in")"
(cd "$T" && expect_exit 0 "$AREC" --nodes "$ROOT/examples/mesh/nodes.json" compose deploy.yaml.in -o deploy.yaml)
expect_eq "$(nth_block README.md '```yaml' 2)" "$(sed "s/${digest#sha256:}/d4a0e63d6998…/" "$T/deploy.yaml")" \
  "the README's composed declaration (its second yaml block)"
echo PASS
