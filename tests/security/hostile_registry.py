#!/usr/bin/env python3
"""A hostile registry for the security tests: a small HTTP server on 127.0.0.1 that speaks just enough
of the distribution API to lead arec on, then misbehaves in the way its mode names.

    hostile_registry.py MODE PORT_FILE LOG_FILE [--lifetime SECONDS]

It listens on two free loopback ports (the registry, and a second "neighbour" server on the same host
that some modes name as a token realm), writes "PORT NEIGHBOUR_PORT" to PORT_FILE once it serves, and
appends one JSON line per request to LOG_FILE: {"port", "method", "path", "headers": {...}}.

Modes:
    catalog-loop     /v2/_catalog links to itself (rel="next") for ever
    catalog-endless  /v2/_catalog links to a new page for ever, 10,000 names a page
    huge-layer       an image whose manifest declares a 1 TB layer; the layer streams random bytes
    long-layer       an image whose layer is declared as 1 MiB, served with a Content-Length of 1 TB
    trickle          every manifest trickles out one byte each 0.5 s
    token-crlf       a Bearer challenge whose token service answers a token holding CR LF and a header
    realm-port       a Bearer challenge whose realm is the neighbour port, over plain HTTP
    terminal         answers carrying terminal escapes: an error body, a Docker-Content-Digest, catalog
                     names; the catalog and its tags are those of catalog.json beside PORT_FILE when the
                     test has written one ({"repository": ["tag", ...]}), read at each request

Bounded: every socket has a timeout, every stream stops after a few seconds, and the server exits when
the process that started it ends or after --lifetime seconds (default 120).
"""
import argparse
import hashlib
import http.server
import json
import os
import socket
import sys
import threading
import time

SOCKET_TIMEOUT = 10
STREAM_SECONDS = 20
ESC = "\x1b"
HOSTILE = ESC + "]0;pwned" + "\x07" + ESC + "[31mRED" + ESC + "[0m\nforged line"


def digest(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


CONFIG = b'{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}'


def manifest(layer_size, layer_digest="sha256:" + "ab" * 32):
    return json.dumps({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": digest(CONFIG),
                   "size": len(CONFIG)},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": layer_digest,
                    "size": layer_size}],
    }).encode()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = SOCKET_TIMEOUT

    def log_message(self, *args):
        pass

    def record(self):
        entry = {"port": self.server.server_port, "method": self.command, "path": self.path,
                 "headers": {k: v for k, v in self.headers.items()}}
        with self.server.lock, open(self.server.log_file, "a") as log:
            log.write(json.dumps(entry) + "\n")

    def send(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        if not any(name.lower() == "content-length" for name, _ in headers):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self):
        self.handle_any()

    def do_GET(self):
        self.handle_any()

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(min(length, 1 << 20))
        self.handle_any()

    def handle_any(self):
        self.record()
        mode = self.server.mode
        path = self.path
        neighbour = self.server.server_port == self.server.neighbour_port
        if neighbour:
            # The neighbour: a token service anyone could run on another port of the host.
            return self.send(200, b'{"token": "neighbour-token"}', [("Content-Type", "application/json")])
        if mode in ("token-crlf", "realm-port"):
            return self.bearer(path)
        if path == "/v2/":
            return self.send(200, b"{}", [("Content-Type", "application/json")])
        if path.startswith("/v2/_catalog"):
            return self.catalog(path)
        if mode == "terminal":
            return self.terminal(path)
        if "/manifests/" in path:
            return self.manifest(path)
        if "/blobs/" in path:
            return self.blob(path)
        return self.send(404, b'{"errors":[{"code":"NAME_UNKNOWN","message":"unknown"}]}')

    def bearer(self, path):
        auth = self.headers.get("Authorization", "")
        if path.startswith("/token"):
            token = "TOKEN\r\nX-Injected: yes"
            return self.send(200, json.dumps({"token": token}).encode(), [("Content-Type", "application/json")])
        if not auth.startswith("Bearer "):
            port = self.server.neighbour_port if self.server.mode == "realm-port" else self.server.server_port
            challenge = 'Bearer realm="http://127.0.0.1:%d/token",service="hostile"' % port
            return self.send(401, b'{"errors":[{"code":"UNAUTHORIZED","message":"authenticate"}]}',
                             [("WWW-Authenticate", challenge), ("Content-Type", "application/json")])
        return self.send(200, b"{}", [("Content-Type", "application/json")])

    def catalog(self, path):
        mode = self.server.mode
        if mode == "catalog-loop":
            body = json.dumps({"repositories": ["loop/a"]}).encode()
            return self.send(200, body, [("Content-Type", "application/json"),
                                         ("Link", '</v2/_catalog?last=loop/a&n=1>; rel="next"')])
        if mode == "catalog-endless":
            self.server.pages += 1
            page = self.server.pages
            names = ["endless/p%dn%d" % (page, i) for i in range(10000)]
            body = json.dumps({"repositories": names}).encode()
            return self.send(200, body, [("Content-Type", "application/json"),
                                         ("Link", '</v2/_catalog?last=%s&n=10000>; rel="next"' % names[-1])])
        if mode == "terminal":
            body = json.dumps({"repositories": list(self.listed())}).encode()
            return self.send(200, body, [("Content-Type", "application/json")])
        return self.send(200, b'{"repositories": []}', [("Content-Type", "application/json")])

    def listed(self):
        try:
            with open(os.path.join(os.path.dirname(self.server.port_file), "catalog.json")) as f:
                return json.load(f)
        except FileNotFoundError:
            return {"evil/" + HOSTILE: ["latest"]}

    def terminal(self, path):
        if "/tags/list" in path:
            repository = path[len("/v2/"):path.index("/tags/list")]
            tags = self.listed().get(repository, ["latest"])
            return self.send(200, json.dumps({"name": repository, "tags": tags}).encode(),
                             [("Content-Type", "application/json")])
        if "/manifests/" in path and "digest" in path:
            # HEAD or GET of .../manifests/digest: a Docker-Content-Digest holding escapes.
            body = manifest(1000)
            return self.send(200, body, [("Content-Type", "application/vnd.oci.image.manifest.v1+json"),
                                         ("Docker-Content-Digest", "sha256:" + HOSTILE)])
        body = json.dumps({"errors": [{"code": "DENIED", "message": HOSTILE}]}).encode()
        return self.send(403, body, [("Content-Type", "application/json")])

    def manifest(self, path):
        mode = self.server.mode
        if mode == "huge-layer":
            body = manifest(1 << 40)
        elif mode == "long-layer":
            body = manifest(1 << 20)
        elif mode == "trickle":
            body = manifest(1000)
            self.send_response(200)
            self.send_header("Content-Type", "application/vnd.oci.image.manifest.v1+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            deadline = time.time() + STREAM_SECONDS
            for byte in body:
                if time.time() > deadline:
                    break
                try:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                except OSError:
                    return
                time.sleep(0.5)
            return
        else:
            body = manifest(1000)
        return self.send(200, body, [("Content-Type", "application/vnd.oci.image.manifest.v1+json"),
                                     ("Docker-Content-Digest", digest(body))])

    def blob(self, path):
        if path.endswith(digest(CONFIG)):
            return self.send(200, CONFIG, [("Content-Type", "application/octet-stream")])
        mode = self.server.mode
        if mode in ("huge-layer", "long-layer"):
            announced = 1 << 40
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(announced))
            self.end_headers()
            if self.command == "HEAD":
                return
            chunk = os.urandom(1 << 16)
            deadline = time.time() + STREAM_SECONDS
            self.server.streamed = 0
            try:
                while time.time() < deadline:
                    self.wfile.write(chunk)
                    self.server.streamed += len(chunk)
            except OSError:
                pass
            self.close_connection = True
            return
        return self.send(404, b'{"errors":[{"code":"BLOB_UNKNOWN","message":"unknown"}]}')


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode")
    parser.add_argument("port_file")
    parser.add_argument("log_file")
    parser.add_argument("--lifetime", type=float, default=120)
    args = parser.parse_args()
    socket.setdefaulttimeout(SOCKET_TIMEOUT)
    servers = [Server(("127.0.0.1", 0), Handler) for _ in range(2)]
    lock = threading.Lock()
    for server in servers:
        server.mode = args.mode
        server.log_file = args.log_file
        server.port_file = args.port_file
        server.lock = lock
        server.pages = 0
        server.neighbour_port = servers[1].server_port
        threading.Thread(target=server.serve_forever, daemon=True).start()
    with open(args.port_file + ".tmp", "w") as out:
        out.write("%d %d\n" % (servers[0].server_port, servers[1].server_port))
    os.rename(args.port_file + ".tmp", args.port_file)
    parent = os.getppid()
    deadline = time.time() + args.lifetime
    while time.time() < deadline:
        if os.getppid() != parent:
            break
        time.sleep(0.2)
    sys.exit(0)


if __name__ == "__main__":
    main()
