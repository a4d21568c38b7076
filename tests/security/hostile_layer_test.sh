#!/usr/bin/env bash
# A hostile image: its layer holds an absolute path, `..` entries, a symlink to a directory outside
# followed by a file through it, and a hard link to a file outside. `arec pull` and `record --base`
# keep layers as blobs named by their digest and never unpack them, so nothing is written outside the
# store, whatever the layer says; the pulled layer is the registry's bytes exactly. A layout whose
# index names a blob by something other than a digest is refused (exit 2), not followed.
AREC=$(realpath "$1")  # the test changes directory
source "$(dirname "$0")/../registry/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed (scripts/deps installs it)"
start_registry R own
use_registry "$R"
outside=$T/outside
mkdir -p "$outside" "$T/work/a/b"
echo keep >"$outside/target"

note "a hostile layer in an OCI layout, pushed to the registry with skopeo"
python3 - "$T/hostile" "$outside" <<'PY'
import gzip, hashlib, io, json, os, sys, tarfile
out, outside = sys.argv[1], sys.argv[2]
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
    def add(name, kind=tarfile.REGTYPE, link=""):
        info = tarfile.TarInfo(name)
        info.type, info.linkname, info.mode = kind, link, 0o755 if kind == tarfile.DIRTYPE else 0o644
        data = b"written by a hostile layer\n" if kind == tarfile.REGTYPE else b""
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    add(outside + "/absolute")
    add("../../dotdot")
    add("usr/../../../inner-dotdot")
    add("escape", tarfile.SYMTYPE, outside)
    add("escape/through-symlink")
    add("hardlink", tarfile.LNKTYPE, outside + "/target")
    add("hardlink-rel", tarfile.LNKTYPE, "../../../outside/target")
layer_tar = buf.getvalue()
blobs = os.path.join(out, "blobs", "sha256")
os.makedirs(blobs)
def put(data, media_type):
    digest = hashlib.sha256(data).hexdigest()
    with open(os.path.join(blobs, digest), "wb") as f:
        f.write(data)
    return {"mediaType": media_type, "digest": "sha256:" + digest, "size": len(data)}
layer = put(gzip.compress(layer_tar, mtime=0), "application/vnd.oci.image.layer.v1.tar+gzip")
config = put(json.dumps({"architecture": "amd64", "os": "linux", "config": {},
                         "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(layer_tar).hexdigest()]}}).encode(),
             "application/vnd.oci.image.config.v1+json")
manifest = put(json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                           "config": config, "layers": [layer]}).encode(), "application/vnd.oci.image.manifest.v1+json")
manifest["annotations"] = {"org.opencontainers.image.ref.name": "v1"}
with open(os.path.join(out, "index.json"), "w") as f:
    json.dump({"schemaVersion": 2, "manifests": [manifest]}, f)
with open(os.path.join(out, "oci-layout"), "w") as f:
    f.write('{"imageLayoutVersion":"1.0.0"}')
PY
image=$(jq -r '.manifests[0].digest' "$T/hostile/index.json")
layer=$(jq -r '.layers[0].digest' "$T/hostile/blobs/sha256/${image#sha256:}")
skopeo copy -q --dest-tls-verify=false "oci:$T/hostile:v1" "docker://$R/$M/hostile:v1" || fail "skopeo could not push the hostile image"
listing=$(tar -tvzf "$T/hostile/blobs/sha256/${layer#sha256:}" 2>/dev/null)
expect_contains "$listing" "escape -> $outside" "the hostile layer"

# Nothing but the store and what the test made may appear, and what is outside stays as it was.
before=$(tree_state "$T/outside")
escaped() {
  expect_eq "$before" "$(tree_state "$T/outside")" "the directory outside after $1"
  local found
  # Anywhere under the test's directory, and near it and the root, where `..` entries would lead.
  found=$( (find "$T" -not -path "$T/hostile/*" && find "$(dirname "$T")" / -maxdepth 2) 2>/dev/null |
    grep -E '/(dotdot|inner-dotdot|through-symlink|absolute)$' || true)
  expect_eq "" "$found" "files the hostile layer names, after $1"
}

note "pull: stored by digest, byte for byte, never unpacked"
cd "$T/work/a/b" || fail "cd $T/work/a/b"
expect_exit 0 "$AREC" pull "$M/hostile:v1"
expect_eq "$image" "$OUT" "pulled digest"
escaped "arec pull"
cmp -s "$T/hostile/blobs/sha256/${layer#sha256:}" "$AREC_STORE/blobs/sha256/${layer#sha256:}" ||
  fail "the pulled layer differs from the registry's"
expect_exit 0 "$AREC" check

note "record --base: the hostile layer is reused by digest, still never unpacked"
mkdir -p "$T/in/top" && echo top >"$T/in/top/file"
expect_exit 0 "$AREC" record --module "$M" --name top --dir "$T/in/top=/srv/top" --base "$R/$M/hostile:v1"
escaped "arec record --base"
expect_exit 0 "$AREC" check

note "a layout naming a blob by a path instead of a digest: refused, nothing read or written outside"
mkdir -p "$T/evil/blobs/sha256"
echo '{"imageLayoutVersion":"1.0.0"}' >"$T/evil/oci-layout"
jq -n '{schemaVersion: 2, manifests: [{mediaType: "application/vnd.oci.image.manifest.v1+json",
  digest: "sha256:../../../outside/target", size: 5, annotations: {"org.opencontainers.image.ref.name": "v1"}}]}' \
  >"$T/evil/index.json"
store_before=$(tree_state "$AREC_STORE")
expect_exit 2 "$AREC" record --module "$M" --name evil --dir "$T/in/top=/srv/top" --base "oci:$T/evil:v1"
expect_one_line_error "sha256:../../../outside/target"
expect_eq "$store_before" "$(tree_state "$AREC_STORE")" "the store after a refused layout"
escaped "a layout with a path for a digest"
echo PASS
