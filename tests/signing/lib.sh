# Shared by the trust tests, on top of tests/registry/lib.sh: no key from the environment, a registry of
# the test's own named by the node settings, and the team's key pair.
source "$(dirname "${BASH_SOURCE[0]}")/../registry/lib.sh"
SIGNING=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# trust_setup [oracle] TOOL...: skips without the tools (and with `oracle`, without the sigstore
# verifier); starts a registry of the test's own ($R) as the node settings' registry; writes
# $T/team.key (mode 600) and $T/team.pub; runs in $T.
trust_setup() {
  if [[ ${1:-} == oracle ]]; then
    shift
    [[ -d $SIGNING/oracle/node_modules/@sigstore/verify ]] || skip "$SIGNING/oracle/node_modules missing: run scripts/deps"
    set -- node "$@"
  fi
  local tool
  for tool in "$@"; do command -v "$tool" >/dev/null || skip "no $tool (scripts/deps installs it)"; done
  unset AREC_SIGNING_KEY AREC_TRUST_KEYS AREC_BUILDER_ID
  start_registry R own
  use_registry "$R"
  cd "$T"
  "$AREC" key generate --out team >/dev/null 2>&1 || fail "key generate"
  chmod 600 team.key
}
