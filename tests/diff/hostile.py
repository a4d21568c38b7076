#!/usr/bin/env python3
"""Writes the hostile OCI image layouts of bounds_test.sh: each is small on disk and asks much of a reader.

usage: hostile.py DIR SIDE     (SIDE: a or b; the two differ in every file)

DIR/SIDE is an OCI layout of one image, tagged "img", of three layers:
  1. a text file whose name holds a newline and a forged report line;
  2. four ELF files of 500,000 section headers each (extended numbering: e_shnum 0, the count in the
     first header's sh_size), a few hundred KB compressed;
  3. 200,000 empty files, of names of their own on each side;
  4. 200,000 more, of names of 250 bytes: more than arec diff holds of one layer.
"""
import gzip
import hashlib
import io
import json
import os
import struct
import sys
import tarfile

SECTIONS = 500_000
ENTRIES = 200_000
# Names of 250 bytes: 200,000 of them hold more than arec diff keeps of a layer's entries (48 MiB).
LONG_DIRECTORY = "d" * 140
LONG_NAME = "n" * 93


def elf(marker):
    header = bytearray(64)
    header[0:4] = b"\x7fELF"
    header[4], header[5], header[6] = 2, 1, 1  # ELFCLASS64, little-endian, version 1
    struct.pack_into("<HHIQQQIHHHHHH", header, 16, 2, 62, 1, 0, 0, 64, 0, 64, 56, 0, 64, 0, 0)
    first = bytearray(64)
    struct.pack_into("<Q", first, 32, SECTIONS)  # sh_size of section 0: the number of sections
    return bytes(header) + bytes(first) + bytes(64 * (SECTIONS - 1)) + marker


def layer(entries):
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in entries:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), compresslevel=1, mtime=0)


def empty_files(names):
    """A layer of empty regular files, its ustar headers written here: tarfile takes ten times as long.
    A name longer than 100 bytes is split at a '/' into ustar's prefix (155 bytes) and name."""
    template = bytearray(512)
    template[100:108] = b"0000644\0"
    template[108:116] = b"0000000\0"
    template[116:124] = b"0000000\0"
    template[124:136] = b"00000000000\0"
    template[136:148] = b"00000000000\0"
    template[156:157] = b"0"
    template[257:265] = b"ustar\x0000"
    out = bytearray()
    for name in names:
        header = bytearray(template)
        prefix, name = (name.rsplit("/", 1) if len(name) > 100 else ("", name))
        header[0:len(name)] = name.encode()
        header[345:345 + len(prefix)] = prefix.encode()
        header[148:156] = b"        "
        header[148:156] = b"%06o\0 " % sum(header)
        out += header
    out += bytes(1024)
    return gzip.compress(bytes(out), compresslevel=1, mtime=0)


def main():
    root, side = sys.argv[1], sys.argv[2]
    out = os.path.join(root, side)
    blobs = os.path.join(out, "blobs", "sha256")
    os.makedirs(blobs, exist_ok=True)

    def put(data):
        digest = hashlib.sha256(data).hexdigest()
        with open(os.path.join(blobs, digest), "wb") as f:
            f.write(data)
        return {"digest": "sha256:" + digest, "size": len(data)}

    marker = side.encode()
    layers = [
        layer([("etc/evil\n+++ forged line", b"side " + marker + b"\n")]),
        layer([(f"usr/lib/big{i}.so", elf(marker)) for i in range(4)]),
        empty_files(f"srv/{side}/e{i:06d}" for i in range(ENTRIES)),
        empty_files(f"var/{side}/{LONG_DIRECTORY}/e{i:06d}{LONG_NAME}" for i in range(ENTRIES)),
    ]
    diff_ids = ["sha256:" + hashlib.sha256(gzip.decompress(l)).hexdigest() for l in layers]
    config = json.dumps({"architecture": "amd64", "os": "linux",
                         "rootfs": {"type": "layers", "diff_ids": diff_ids}}).encode()
    manifest = json.dumps({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", **put(config)},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", **put(l)} for l in layers],
    }).encode()
    index = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
             "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json", **put(manifest),
                            "annotations": {"org.opencontainers.image.ref.name": "img"}}]}
    with open(os.path.join(out, "index.json"), "w") as f:
        json.dump(index, f)
    with open(os.path.join(out, "oci-layout"), "w") as f:
        json.dump({"imageLayoutVersion": "1.0.0"}, f)


main()
