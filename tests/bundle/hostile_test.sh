#!/usr/bin/env bash
# A bundle is refused whole, with the store unchanged (exit 2, one line naming the entry), when an
# entry has an absolute path, climbs out with "..", is a link (pointing out or not), is a blob that is
# not a regular file, or a blob whose bytes are not its digest.
AREC=$1
source "$(dirname "$0")/lib.sh"
command -v skopeo >/dev/null || skip "skopeo is not installed (scripts/deps installs it)"
make_history
"$AREC" export mesh --history -o "$T/good.tar" >/dev/null
other=$T/other
"$AREC" --store "$other" import "$T/good.tar" >/dev/null
"$AREC" record --module mesh --name extra --file /usr/bin/true >/dev/null
"$AREC" export mesh/extra -o "$T/extra.tar" >/dev/null
blob=$(tar -tf "$T/good.tar" | grep '^blobs/sha256/.' | head -1)

# hostile OUT KIND NAME [TARGET]: the good bundle with one entry added (KIND file, symlink, hardlink,
# fifo) or taken out (drop).
hostile() {
  python3 - "$T/extra.tar" "$@" <<'PY'
import io, sys, tarfile
source, out, kind, name = sys.argv[1:5]
target = sys.argv[5] if len(sys.argv) > 5 else ""
with tarfile.open(source) as src, tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as dst:
    for member in src.getmembers():
        if member.name == name:
            continue
        dst.addfile(member, src.extractfile(member) if member.isfile() else None)
    if kind == "drop":
        sys.exit(0)
    info = tarfile.TarInfo(name)
    data = None
    if kind == "file":
        data = target.encode()
        info.size = len(data)
    elif kind == "symlink":
        info.type, info.linkname = tarfile.SYMTYPE, target
    elif kind == "hardlink":
        info.type, info.linkname = tarfile.LNKTYPE, target
    elif kind == "fifo":
        info.type = tarfile.FIFOTYPE
    dst.addfile(info, io.BytesIO(data) if data is not None else None)
PY
}

check_refused() { # bundle needle
  local before
  before=$(tree_state "$other")
  expect_exit 2 "$AREC" --store "$other" import "$1"
  expect_one_line_error "$2"
  expect_eq "$before" "$(tree_state "$other")" "the store after refusing $(basename "$1")"
  expect_exit 2 "$AREC" --store "$T/fresh" import "$1"
  [[ ! -e $T/fresh ]] || fail "refusing $(basename "$1") created the store $T/fresh"
}

note "absolute path"
hostile "$T/absolute.tar" file /etc/evil pwned
check_refused "$T/absolute.tar" 'entry "/etc/evil": an absolute path'

note '".."'
hostile "$T/dotdot.tar" file blobs/../../evil pwned
check_refused "$T/dotdot.tar" 'entry "blobs/../../evil": climbs out of the bundle ("..")'

note "a symbolic link pointing out"
hostile "$T/symlink-out.tar" symlink evil ../../etc/passwd
check_refused "$T/symlink-out.tar" 'entry "evil": a symbolic link pointing out of the bundle (to "../../etc/passwd")'
hostile "$T/symlink-abs.tar" symlink "$blob" /etc/passwd
check_refused "$T/symlink-abs.tar" "entry \"$blob\": a symbolic link pointing out of the bundle (to \"/etc/passwd\")"

note "a hard link pointing out"
hostile "$T/hardlink-out.tar" hardlink evil ../outside
check_refused "$T/hardlink-out.tar" 'entry "evil": a hard link pointing out of the bundle (to "../outside")'

note "a blob that is a link inside the bundle, or not a regular file"
hostile "$T/symlink-in.tar" symlink "$blob" ../../oci-layout
check_refused "$T/symlink-in.tar" "entry \"$blob\": a symbolic link (to \"../../oci-layout\"), not a regular file"
hostile "$T/fifo.tar" fifo "$blob"
check_refused "$T/fifo.tar" "entry \"$blob\": not a regular file or directory"

note "a blob whose bytes are not its digest, a blob name that is no digest"
hostile "$T/forged.tar" file "$blob" forged
check_refused "$T/forged.tar" "entry \"$blob\": content does not match its digest"
hostile "$T/badname.tar" file blobs/sha256/xyz x
check_refused "$T/badname.tar" 'entry "blobs/sha256/xyz": not a blob name'

note "a docker archive, a file that is no tar"
"$AREC" export mesh/extra --format docker -o "$T/docker.tar" >/dev/null
check_refused "$T/docker.tar" "a docker archive; arec import reads OCI bundles (arec export --format oci)"
head -c 5000 /dev/urandom >"$T/noise.tar"
check_refused "$T/noise.tar" "bundle $T/noise.tar"

note "an incomplete bundle: a manifest or a layer missing"
extra_manifest=$(tar -xOf "$T/extra.tar" index.json | jq -r '.manifests[] | select(.annotations["dev.arec.name"] == "extra") | .digest')
extra_layer=$(tar -xOf "$T/extra.tar" "blobs/sha256/${extra_manifest#sha256:}" | jq -r '.layers[0].digest')
hostile "$T/no-manifest.tar" drop "blobs/sha256/${extra_manifest#sha256:}"
check_refused "$T/no-manifest.tar" "index.json lists $extra_manifest, which the bundle does not hold"
hostile "$T/no-layer.tar" drop "blobs/sha256/${extra_layer#sha256:}"
check_refused "$T/no-layer.tar" "manifest $extra_manifest needs the layer $extra_layer, which the bundle does not hold"

note "an OCI archive without records"
skopeo copy -q "oci:$T/store:mesh/extra" "oci-archive:$T/foreign.tar:extra"
check_refused "$T/foreign.tar" "index.json lists no records (arec import reads what arec export writes)"

note "the good bundle still imports"
expect_exit 0 "$AREC" --store "$other" import "$T/extra.tar" --json
expect_eq 1 "$(jq .records_added <<<"$OUT")" "records added"
echo PASS
