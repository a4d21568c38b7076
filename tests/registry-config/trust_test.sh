#!/usr/bin/env bash
# registry_config.trust: `registry-config podman|containerd --trust-key` is refused, saying why and what
# to do, and writes nothing: no runtime it configures verifies the Sigstore bundles arec signs with, so a
# node policy requiring signatures would refuse the team's own signed images. Held against real tools:
# skopeo (as podman and CRI-O would) reads the team's signed image through the mapping registry-config
# writes; under a policy requiring the team's sigstore signature it refuses that very image (why the
# refusal); and arec on the node, which the refusal points to, pulls it because the team's key signed it
# and refuses an unsigned one.
AREC=$1
source "$(dirname "$0")/lib.sh"
export HOME=$T/home  # no registries.conf or policy of the user's
mkdir -p "$HOME" "$T/conf"
cd "$T"
"$AREC" key generate --out team >/dev/null || fail "arec key generate"
digest=$(AREC_SIGNING_KEY=$T/team.key hello)
ref=registry.mesh/$M/hello@$digest

note "--trust-key is refused for either runtime, saying why and what to do; nothing is written"
before=$(tree_state conf)
expect_exit 2 "$AREC" registry-config podman --out conf/50-arec.conf --trust-key team.pub
expect_one_line_error "registry-config podman --trust-key: podman verifies no signature arec writes: arec signs with Sigstore bundles attached as OCI referrers"
expect_contains "$ERR" "check signatures with arec pull --trust-key on the node" "the refusal"
expect_exit 2 "$AREC" registry-config containerd --out conf/certs --trust-key team.pub
expect_one_line_error "registry-config containerd --trust-key: containerd verifies no signature arec writes"
expect_eq "$before" "$(tree_state conf)" "conf/ after the refusals"

note "the mapping alone: skopeo reads the team's signed image by the registry's name"
expect_exit 0 "$AREC" registry-config podman --out conf/50-arec.conf
skopeo --registries-conf conf/50-arec.conf copy -q "docker://$ref" "oci:$T/copy:hello" 2>"$T/skopeo.err" ||
  fail "skopeo cannot copy the team's image through the drop-in: $(cat "$T/skopeo.err")"

note "why: a policy requiring the team's sigstore signature makes skopeo refuse the team's own signed image"
mkdir -p registries.d
cat >policy.json <<JSON
{"default": [{"type": "insecureAcceptAnything"}],
 "transports": {"docker": {"registry.mesh": [{"type": "sigstoreSigned", "keyPath": "$T/team.pub",
                                              "signedIdentity": {"type": "matchRepository"}}]}}}
JSON
printf 'docker:\n  registry.mesh:\n    use-sigstore-attachments: true\n' >registries.d/50-arec.yaml
if skopeo --policy policy.json --registries.d registries.d --registries-conf conf/50-arec.conf \
  copy -q "docker://$ref" "oci:$T/refused:hello" 2>"$T/refused.err"; then
  fail "skopeo verified arec's signature under a sigstoreSigned policy: registry-config may write one again"
fi
expect_contains "$(cat "$T/refused.err")" "signature" "skopeo's refusal"
note "skopeo says: $(tail -n1 "$T/refused.err")"

note "what the refusal points to holds: arec pulls the team's image because the team's key signed it"
expect_exit 0 "$AREC" --store "$T/node" pull "$ref" --trust-key team.pub
expect_contains "$OUT" "$digest" "the trusted pull"
env -u AREC_SIGNING_KEY "$AREC" record --module "$M" --name plain --file "$T/src/hello" --env PLAIN=1 >/dev/null ||
  fail "recording $M/plain"
"$AREC" push "$M/plain" >/dev/null 2>&1 || fail "pushing $M/plain"
if "$AREC" --store "$T/node" pull "registry.mesh/$M/plain" --trust-key team.pub >/dev/null 2>"$T/plain.err"; then
  fail "arec pulled an unsigned image under the team's key"
fi
expect_contains "$(cat "$T/plain.err")" "unsigned" "the refused pull"
echo PASS
