#!/usr/bin/env python3
"""python3 attach.py HOST:PORT REPOSITORY SUBJECT_DIGEST BUNDLE_FILE: puts BUNDLE_FILE at the registry as a
referrer of the image SUBJECT_DIGEST (what a hostile pusher can do with curl): its blob, the empty config,
an artifact manifest whose subject is the image, listed in the referrers fallback tag sha256-<hex>.
Prints the manifest's digest. Talks only to the HOST:PORT given (the test's own registry on 127.0.0.1)."""
import hashlib, json, sys, urllib.error, urllib.request

registry, repo, subject, bundle_file = sys.argv[1:5]
base = f"http://{registry}/v2/{repo}"
BUNDLE = "application/vnd.dev.sigstore.bundle.v0.3+json"
MANIFEST = "application/vnd.oci.image.manifest.v1+json"
INDEX = "application/vnd.oci.image.index.v1+json"


def request(method, url, data=None, headers=None):
    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    try:
        return urllib.request.urlopen(req, timeout=10)
    except urllib.error.HTTPError as e:
        e.msg = f"{method} {url}: {e.msg}"
        raise


def put_blob(data):
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    with request("POST", f"{base}/blobs/uploads/") as r:
        location = r.headers["Location"]
    if location.startswith("/"):
        location = f"http://{registry}{location}"
    sep = "&" if "?" in location else "?"
    request("PUT", f"{location}{sep}digest={digest}", data, {"Content-Type": "application/octet-stream"}).close()
    return {"digest": digest, "size": len(data)}


with request("HEAD", f"{base}/manifests/{subject}", headers={"Accept": MANIFEST}) as r:
    subject_size = int(r.headers["Content-Length"])
bundle = open(bundle_file, "rb").read()
layer = dict(put_blob(bundle), mediaType=BUNDLE)
config = dict(put_blob(b"{}"), mediaType="application/vnd.oci.empty.v1+json")
manifest = {"schemaVersion": 2, "mediaType": MANIFEST, "artifactType": BUNDLE, "config": config, "layers": [layer],
            "subject": {"mediaType": MANIFEST, "digest": subject, "size": subject_size}}
body = json.dumps(manifest, separators=(",", ":"), sort_keys=True).encode()
digest = "sha256:" + hashlib.sha256(body).hexdigest()
request("PUT", f"{base}/manifests/{digest}", body, {"Content-Type": MANIFEST}).close()

tag = subject.replace(":", "-")
try:
    with request("GET", f"{base}/manifests/{tag}", headers={"Accept": INDEX}) as r:
        index = json.load(r)
except urllib.error.HTTPError as e:
    if e.code != 404:
        raise
    index = {"schemaVersion": 2, "mediaType": INDEX, "manifests": []}
index["manifests"].append({"mediaType": MANIFEST, "digest": digest, "size": len(body), "artifactType": BUNDLE})
request("PUT", f"{base}/manifests/{tag}", json.dumps(index).encode(), {"Content-Type": INDEX}).close()
print(digest)
