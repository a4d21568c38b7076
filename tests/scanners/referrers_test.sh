#!/usr/bin/env bash
# The CycloneDX SBOM is a referrer like the SPDX one, and goes wherever a record goes: push lists both
# under the image (artifactType application/vnd.cyclonedx+json beside application/spdx+json), pull,
# export/import and move bring both byte for byte, verify wants both listed, gc keeps both while their
# image is kept and drops both with it, check accepts both. A signed record's signature statement names
# both documents' digests. `arec sbom --format` prints each; one a record lacks is refused saying which
# it has.
AREC=$1
source "$(dirname "$0")/../move/lib.sh"
for tool in jq curl openssl; do command -v $tool >/dev/null || skip "no $tool (scripts/deps installs it)"; done
start_registry OLD old
start_registry NEW new
mesh_settings "${OLD##*:}" 1
OCI_INDEX=application/vnd.oci.image.index.v1+json
CDX=application/vnd.cyclonedx+json
SPDX=application/spdx+json
sboms_of() { # STORE DIGEST: "ARTIFACT_TYPE DIGEST" of each SBOM the store lists for the image
  jq -r --arg d "$2" '.manifests[] | select(.annotations["dev.arec.subject"] == $d and .artifactType != "application/vnd.dev.sigstore.bundle.v0.3+json") | "\(.artifactType) \(.digest)"' \
    "$1/index.json" | sort
}
same_documents() { # STORE WHAT: both SBOMs of mesh/app in STORE are the recorded ones, byte for byte
  for format in spdx cyclonedx; do
    AREC_STORE=$1 expect_exit 0 "$AREC" sbom --format "$format" mesh/app
    printf '%s' "$OUT" | cmp -s - "$T/app.$format" || fail "$2: mesh/app's $format SBOM differs from the recorded one"
  done
}

(umask 077 && openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$T/team.key" 2>/dev/null)
mkdir -p "$T/bin"
printf '#!/bin/sh\necho app %s\n' "$T" >"$T/bin/app"
expect_exit 0 "$AREC" record --module mesh --name app --file "$T/bin/app" --sbom spdx,cyclonedx --sign-key "$T/team.key"
app=${OUT#*@}
for format in spdx cyclonedx; do "$AREC" sbom --format "$format" mesh/app >"$T/app.$format"; done
expect_eq "bomFormat CycloneDX 1.6" "$(jq -r '"bomFormat \(.bomFormat) \(.specVersion)"' "$T/app.cyclonedx")" "arec sbom --format cyclonedx"
expect_eq "SPDX-2.3" "$(jq -r .spdxVersion "$T/app.spdx")" "arec sbom (spdx, the default)"
expect_eq 2 "$(sboms_of "$AREC_STORE" "$app" | grep -c .)" "SBOMs in the store"
expect_exit 0 "$AREC" check --json
expect_eq true "$(jq -r .ok <<<"$OUT")" "check with both SBOMs"

note "the signature statement names the image, the record and both SBOM documents"
statement=$(for b in $(jq -r --arg d "$app" '.manifests[] | select(.annotations["dev.arec.subject"] == $d and .artifactType == "application/vnd.dev.sigstore.bundle.v0.3+json") | .digest' "$AREC_STORE/index.json"); do
  layer=$(jq -r '.layers[0].digest' "$AREC_STORE/blobs/sha256/${b#sha256:}")
  jq -r '.dsseEnvelope.payload' "$AREC_STORE/blobs/sha256/${layer#sha256:}" | base64 -d
done | jq -s -c '.[] | select(.predicateType == "https://sigstore.dev/cosign/sign/v1")')
expect_eq "mesh/app.cdx.json $(sha256sum <"$T/app.cyclonedx" | cut -d' ' -f1)" \
  "$(jq -r '.subject[] | select(.name == "mesh/app.cdx.json") | "\(.name) \(.digest.sha256)"' <<<"$statement")" "the CycloneDX subject"
expect_eq "mesh/app.spdx.json $(sha256sum <"$T/app.spdx" | cut -d' ' -f1)" \
  "$(jq -r '.subject[] | select(.name == "mesh/app.spdx.json") | "\(.name) \(.digest.sha256)"' <<<"$statement")" "the SPDX subject"
expect_eq 4 "$(jq '.subject | length' <<<"$statement")" "subjects: image, record, two SBOMs"

note "push lists both under the image; verify wants both"
expect_exit 0 "$AREC" push
listed=$(curl -fsS -H "Accept: $OCI_INDEX" "http://$OLD/v2/mesh/app/manifests/sha256-${app#sha256:}" |
  jq -r '.manifests[] | "\(.artifactType) \(.digest)"' | grep -e "$CDX" -e "$SPDX" | sort)
expect_eq "$(sboms_of "$AREC_STORE" "$app")" "$listed" "the SBOMs the registry lists for mesh/app"
expect_exit 0 "$AREC" verify mesh/app --json
expect_eq present "$(jq -r '.[0].state' <<<"$OUT")" "verify"

note "pull brings both, byte for byte"
# From the node settings' registry (no host): the records come too.
expect_exit 0 env AREC_STORE="$T/pulled" "$AREC" pull "mesh/app@$app"
expect_eq "$(sboms_of "$AREC_STORE" "$app")" "$(sboms_of "$T/pulled" "$app")" "the pulled store's SBOMs"
same_documents "$T/pulled" "pulled"

note "export and import carry both"
expect_exit 0 "$AREC" export mesh/app -o "$T/app.tar"
expect_exit 0 env AREC_STORE="$T/imported" "$AREC" import "$T/app.tar"
expect_eq "$(sboms_of "$AREC_STORE" "$app")" "$(sboms_of "$T/imported" "$app")" "the imported store's SBOMs"
same_documents "$T/imported" "imported"

note "move copies both to the new registry"
expect_exit 0 "$AREC" move --to n2 --port "${NEW##*:}" --apply
listed=$(curl -fsS -H "Accept: $OCI_INDEX" "http://$NEW/v2/mesh/app/manifests/sha256-${app#sha256:}" |
  jq -r '.manifests[] | "\(.artifactType) \(.digest)"' | grep -e "$CDX" -e "$SPDX" | sort)
expect_eq "$(sboms_of "$AREC_STORE" "$app")" "$listed" "the SBOMs the new registry lists for mesh/app"

note "gc keeps both while the image is kept, and drops both with it"
cdx_blob=$(jq -r '.layers[0].digest' "$AREC_STORE/blobs/sha256/$(sboms_of "$AREC_STORE" "$app" | awk -v t="$CDX" '$1 == t { sub("sha256:", "", $2); print $2 }')")
expect_exit 0 "$AREC" gc
[[ -f $AREC_STORE/blobs/sha256/${cdx_blob#sha256:} ]] || fail "gc removed the CycloneDX document of the latest record"
printf '#!/bin/sh\necho app two %s\n' "$T" >"$T/bin/app"
expect_exit 0 "$AREC" record --module mesh --name app --file "$T/bin/app" --sbom spdx,cyclonedx
expect_exit 0 "$AREC" gc --keep 1
[[ ! -e $AREC_STORE/blobs/sha256/${cdx_blob#sha256:} ]] || fail "gc --keep 1 kept the CycloneDX document of a record it dropped"
expect_exit 0 "$AREC" check --json
expect_eq true "$(jq -r .ok <<<"$OUT")" "check after gc"

note "arec sbom: a format the record was not given is refused, naming the ones it has"
printf '#!/bin/sh\necho spdx only %s\n' "$T" >"$T/bin/spdx-only"
expect_exit 0 "$AREC" record --module mesh --name spdx-only --file "$T/bin/spdx-only"
expect_exit 2 "$AREC" sbom --format cyclonedx mesh/spdx-only
expect_one_line_error "no cyclonedx SBOM was recorded for it (it has spdx; record again with --sbom cyclonedx to add one)"
expect_exit 0 "$AREC" record --module mesh --name spdx-only --file "$T/bin/spdx-only" --sbom cyclonedx
expect_exit 0 "$AREC" sbom --format cyclonedx mesh/spdx-only
expect_eq CycloneDX "$(jq -r .bomFormat <<<"$OUT")" "the CycloneDX SBOM added to a record made without one"
expect_exit 2 "$AREC" sbom --format xml mesh/spdx-only
expect_one_line_error '--format "xml": expected spdx or cyclonedx'
echo PASS
