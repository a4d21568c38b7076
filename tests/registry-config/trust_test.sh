#!/usr/bin/env bash
# registry_config.trust: `registry-config podman --trust-key` also writes a containers-policy.json that
# runs images of the registry (and of each bridged old address) only when signed by the trusted keys, and
# the registries.d entry that makes podman and CRI-O read their sigstore attachments; an existing policy
# keeps its other entries. The errors: a missing key, a file that is no PEM public key, a policy that is
# no JSON object, --trust-key for containerd; each writes nothing.
AREC=$1
source "$(dirname "$0")/../lib.sh"
cat >"$T/nodes.json" <<'JSON'
{"self": "n1", "registry_name": "registry.mesh",
 "nodes": {"n1": {"ports": {"registry": 5000}}}, "services": {"registry": "n1"}}
JSON
export AREC_NODES=$T/nodes.json
cd "$T"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out team.key 2>/dev/null
openssl pkey -in team.key -pubout -out team.pub
openssl genpkey -algorithm ED25519 -out release.key 2>/dev/null
openssl pkey -in release.key -pubout -out release.pub
# policy FILE: what podman would apply to registry.mesh (and the bridge), one line of JSON per scope.
policy() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps(d["default"])); [print(k, json.dumps(v)) for k, v in d["transports"]["docker"].items()]' "$1"; }

note "one key: keyPath, the key's absolute path, for the name and the bridge"
expect_exit 0 "$AREC" registry-config podman --out conf/50-arec.conf --trust-key team.pub --bridge 10.0.0.1:5000 \
  --policy conf/policy.json --registries-d conf/registries.d/50-arec.yaml
expect_contains "$OUT" "wrote conf/policy.json: registry.mesh runs only images signed by 1 key" "registry-config's output"
expect_eq '[{"type": "insecureAcceptAnything"}]
registry.mesh [{"type": "sigstoreSigned", "keyPath": "'"$T"'/team.pub", "signedIdentity": {"type": "matchRepository"}}]
10.0.0.1:5000 [{"type": "sigstoreSigned", "keyPath": "'"$T"'/team.pub", "signedIdentity": {"type": "matchRepository"}}]' \
  "$(policy conf/policy.json)" "the policy"
expect_eq '{"docker": {"registry.mesh": {"use-sigstore-attachments": true}, "10.0.0.1:5000": {"use-sigstore-attachments": true}}}' \
  "$(python3 -c 'import json,sys,yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))' conf/registries.d/50-arec.yaml)" \
  "the registries.d entry"
[[ -f conf/50-arec.conf ]] || fail "no registries.conf drop-in"

note "two keys: keyPaths; an existing policy keeps its other entries"
cat >conf/policy.json <<'JSON'
{"default": [{"type": "reject"}], "transports": {"docker": {"docker.io": [{"type": "insecureAcceptAnything"}],
 "registry.mesh": [{"type": "reject"}]}, "docker-daemon": {"": [{"type": "insecureAcceptAnything"}]}}}
JSON
expect_exit 0 "$AREC" registry-config podman --out conf/50-arec.conf --trust-key team.pub --trust-key release.pub \
  --trust-key ./team.pub --policy conf/policy.json --registries-d conf/registries.d/50-arec.yaml
expect_eq '[{"type": "reject"}]
docker.io [{"type": "insecureAcceptAnything"}]
registry.mesh [{"type": "sigstoreSigned", "keyPaths": ["'"$T"'/team.pub", "'"$T"'/release.pub"], "signedIdentity": {"type": "matchRepository"}}]' \
  "$(policy conf/policy.json)" "the policy, updated"
expect_eq '{"":[{"type":"insecureAcceptAnything"}]}' "$(jq -c '.transports["docker-daemon"]' conf/policy.json)" "another transport, kept"

note "errors write nothing"
before=$(tree_state conf)
expect_exit 2 "$AREC" registry-config podman --out conf/50-arec.conf --trust-key missing.pub --policy conf/policy.json
expect_one_line_error "--trust-key missing.pub"
expect_exit 2 "$AREC" registry-config podman --out conf/50-arec.conf --trust-key team.key --policy conf/policy.json
expect_one_line_error "--trust-key team.key: not a PEM public key"
[[ $ERR == *PRIVATE* || $ERR == *MI* ]] && fail "the error shows the key: $ERR"
echo '[1]' >bad-policy.json
expect_exit 2 "$AREC" registry-config podman --out conf/50-arec.conf --trust-key team.pub --policy bad-policy.json \
  --registries-d conf/registries.d/50-arec.yaml
expect_one_line_error "bad-policy.json: not a containers-policy.json"
expect_exit 2 "$AREC" registry-config containerd --out conf/certs --trust-key team.pub
expect_one_line_error "containerd reads no signature policy"
expect_eq "$before" "$(tree_state conf)" "conf/ after the errors"
echo PASS
