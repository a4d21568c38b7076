#!/usr/bin/env python3
"""python3 bundles.py STORE DIGEST OUTDIR: writes each Sigstore bundle the store keeps for the image
DIGEST (sha256:HEX) to OUTDIR/<predicate>.N.json and prints one line per bundle: FILE PREDICATETYPE."""
import json, os, sys

store, digest, out = sys.argv[1:4]
index = json.load(open(os.path.join(store, "index.json")))
os.makedirs(out, exist_ok=True)
n = 0
for m in index["manifests"]:
    if m.get("artifactType") != "application/vnd.dev.sigstore.bundle.v0.3+json":
        continue
    if m.get("annotations", {}).get("dev.arec.subject") != digest:
        continue
    manifest = json.load(open(os.path.join(store, "blobs", "sha256", m["digest"][7:])))
    blob = open(os.path.join(store, "blobs", "sha256", manifest["layers"][0]["digest"][7:]), "rb").read()
    kind = "provenance" if "slsa" in manifest["annotations"]["dev.sigstore.bundle.predicateType"] else "sign"
    path = os.path.join(out, f"{kind}.{n}.json")
    open(path, "wb").write(blob)
    print(path, manifest["annotations"]["dev.sigstore.bundle.predicateType"])
    n += 1
