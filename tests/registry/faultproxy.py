#!/usr/bin/env python3
"""A fault-injecting HTTP proxy for the tests: it stands between arec and a real registry on
127.0.0.1 and breaks chosen requests the way real networks and registries do.

    faultproxy.py UPSTREAM_PORT PORT_FILE [--rate BYTES_PER_SECOND] [--lifetime SECONDS]

It listens on a free loopback port, written to PORT_FILE once it serves. Its own control requests:

    PUT /__faults   a JSON list of rules, replacing the plan: a new case begins
    GET /__faults/received   the bytes of request bodies received so far, in all (cheap to poll)
    GET /__faults   {"injected": N, "log": ["fault METHOD PATH", ...], "requests": [ANSWERED, ...],
                     "received": BYTES, "case": {"rules": [{"rule": RULE, "fired": N}, ...], "log": [...],
                     "requests": [...], "received": BYTES}}

where each request is {"request": "METHOD PATH", "auth": the scheme of its Authorization, lowercased, or
"none", "status": N (0 for one reset, or dropped since its body ended early), "time": seconds since the
epoch}, in the order they came, and "received"
counts the bytes of request bodies that reached the proxy. The top-level counts cover every case;
"case" covers what happened since the last PUT: each rule of the plan with how often it fired, the
faults injected, the requests answered and the bytes received.

Like nginx with its default request buffering, the proxy reads a request's whole body before it asks
the registry, and a request whose body ends early (the client killed or cut off) never reaches it.
With --rate it reads each body no faster than that, as from a client across a network, and its
sockets buffer little (128 KiB), as a network holds a window's worth in flight rather than megabytes.

A rule {"method": "PUT", "path": REGEX, "fault": F, "times": N, "skip": K, ...} lets the first K
requests whose method is METHOD and whose path (with query) REGEX matches (re.search) through, then
breaks the next N; the first rule that matches and has times left wins. Faults:

    status    answer `status` (with `retry_after`, seconds, when given) without asking the registry
    reset     read `fraction` of the request body, then reset the connection (RST)
    stall     read `fraction` of the request body, then wait `delay` seconds before reading the rest
              (a test kills the client meanwhile); with "forward_partial": true, what arrived is then
              passed on as the whole body, as a registry reached directly gets a request cut short
    truncate  ask the registry, then send the answer's headers and half its body, and close (with
              "drop_length": true, without a Content-Length that would tell)
    slow      wait `delay` seconds, then trickle the answer out in `piece`-byte pieces, `gap` apart
    digest    ask the registry, then report a wrong Docker-Content-Digest
    hold      wait `delay` seconds, then ask the registry: what the request carries (a token) may
              have expired by the time it arrives
    redirect  answer 307 to `to` followed by the request's path, without asking the registry
    corrupt   ask the registry, then flip one byte in the middle of the answer's body
    headers   ask the registry, then answer with the headers of `set` (a JSON object: name to value)
              in place of the registry's of those names, as a registry answering nonsense would
    flip      ask the registry for the request's path with what `path` matched replaced by `to`
              (re.sub), and answer with that: a tag that names one image on one read and another on
              the next, as a registry (or a co-builder moving the tag) may

A rule with "every": N fires only on every Nth request it matches (after its skip), so that reads
alternate between what the registry holds and the fault.

Any fault but status and reset drops the answer's Docker-Content-Digest when the rule has
"drop_digest": true.

Bounded: every socket has a timeout, every sleep is capped, and the proxy exits when the process that
started it ends, or after --lifetime seconds (default 300).
"""
import argparse
import hashlib
import http.client
import http.server
import json
import os
import re
import socket
import struct
import sys
import threading
import time

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection"}
SOCKET_TIMEOUT = 30
MAX_SLEEP = 5.0
MAX_BODY = 1 << 30


class BodyEnded(Exception):
    """A chunked request body that ended before its last chunk: the client is gone."""


class Plan:
    def __init__(self):
        self.lock = threading.Lock()
        self.rules = []
        self.log = []
        self.answered = []
        self.received = 0
        self.case_start = (0, 0, 0)

    def replace(self, rules):
        with self.lock:
            self.rules = [{"rule": dict(r), "left": r.get("times", 1), "skip": r.get("skip", 0), "fired": 0,
                           "seen": 0} for r in rules]
            self.case_start = (len(self.log), len(self.answered), self.received)

    def count(self, n):
        with self.lock:
            self.received += n

    def take(self, method, path):
        with self.lock:
            for entry in self.rules:
                rule = entry["rule"]
                if entry["left"] <= 0 or rule.get("method", method) != method:
                    continue
                if not re.search(rule.get("path", ""), path):
                    continue
                if entry["skip"] > 0:
                    entry["skip"] -= 1
                    return None
                entry["seen"] += 1
                if entry["seen"] % max(int(rule.get("every", 1)), 1) != 0:
                    return None
                entry["left"] -= 1
                entry["fired"] += 1
                self.log.append(f"{rule['fault']} {method} {path}")
                return rule
        return None

    def note(self, method, path, auth, status):
        with self.lock:
            self.answered.append({"request": f"{method} {path}", "auth": auth, "status": status, "time": time.time()})

    def report(self):
        with self.lock:
            case = {"rules": [{"rule": e["rule"], "fired": e["fired"]} for e in self.rules],
                    "log": self.log[self.case_start[0]:], "requests": self.answered[self.case_start[1]:],
                    "received": self.received - self.case_start[2]}
            return {"injected": len(self.log), "log": list(self.log), "requests": list(self.answered),
                    "received": self.received, "case": case}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = SOCKET_TIMEOUT
    upstream_port = 0
    rate = 0  # bytes a second of request bodies; 0: as fast as they come
    plan = Plan()

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.serve()

    do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    # ---- the request body ----------------------------------------------------------------------

    def body_length(self):
        return int(self.headers.get("Content-Length") or 0)

    def read_body(self, limit=None):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            return self.read_chunked()
        length = min(self.body_length(), MAX_BODY)
        if limit is not None:
            length = min(length, limit)
        return self.read_exactly(length)

    def read_exactly(self, length):
        """Up to `length` bytes, fewer only when the client is gone; counted as they arrive, and taken
        no faster than --rate allows."""
        pieces = []
        start, done = time.monotonic(), 0
        while length > 0:
            if self.rate:
                ahead = done / self.rate - (time.monotonic() - start)
                if ahead > 0:
                    time.sleep(min(ahead, MAX_SLEEP))
            try:
                piece = self.rfile.read1(min(length, 1 << 16))
            except OSError:
                piece = b""
            if not piece:
                break
            self.plan.count(len(piece))
            pieces.append(piece)
            length -= len(piece)
            done += len(piece)
        return b"".join(pieces)

    def read_chunked(self):
        pieces, length = [], 0
        for _ in range(1 << 20):
            line = self.rfile.readline(100)
            if not line:
                raise BodyEnded()
            size = int(line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                # Trailers end with an empty line.
                for _ in range(100):
                    if self.rfile.readline(1000) in (b"\r\n", b"\n", b""):
                        break
                return b"".join(pieces)
            piece = self.read_exactly(size)
            if len(piece) < size:
                raise BodyEnded()
            pieces.append(piece)
            length += size
            self.rfile.readline(10)
            if length > MAX_BODY:
                break
        raise ValueError("chunked request body too long")

    # ---- answers -------------------------------------------------------------------------------

    def auth_scheme(self):
        return self.headers.get("Authorization", "").split(" ", 1)[0].lower() or "none"

    def send(self, status, headers, body, rule=None):
        fault = rule["fault"] if rule else None
        if not self.path.startswith("/__faults"):
            self.plan.note(self.command, self.path, self.auth_scheme(), status)
        if fault == "slow":
            time.sleep(min(float(rule.get("delay", 1)), MAX_SLEEP))
        self.send_response_only(status)
        for name, value in headers:
            if name.lower() in HOP_BY_HOP or name.lower() == "content-length":
                continue
            if rule and rule.get("drop_digest") and name.lower() == "docker-content-digest":
                continue
            if fault == "digest" and name.lower() == "docker-content-digest":
                value = "sha256:" + hashlib.sha256(value.encode() + b"wrong").hexdigest()
            if fault == "headers" and name.lower() in (k.lower() for k in rule.get("set", {})):
                continue
            self.send_header(name, value)
        if fault == "headers":
            for name, value in rule.get("set", {}).items():
                self.send_header(name, value)
        if self.command == "HEAD":
            # A HEAD answer tells the length of what a GET would send, and sends nothing.
            self.send_header("Content-Length", dict((k.lower(), v) for k, v in headers).get("content-length", "0"))
            self.end_headers()
            return
        if fault == "corrupt" and body:
            middle = len(body) // 2
            body = body[:middle] + bytes([body[middle] ^ 0xFF]) + body[middle + 1:]
        if fault == "truncate":
            # With "drop_length", the answer ends where the connection does, and only its size tells.
            if rule.get("drop_length"):
                self.send_header("Connection", "close")
            else:
                self.send_header("Content-Length", str(len(body) + 64))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if fault == "slow":
            piece = max(int(rule.get("piece", 1024)), 1)
            gap = min(float(rule.get("gap", 0.01)), 0.5)
            for start in range(0, len(body), piece):
                self.wfile.write(body[start:start + piece])
                self.wfile.flush()
                time.sleep(gap)
            return
        self.wfile.write(body)

    def reset(self):
        self.plan.note(self.command, self.path, self.auth_scheme(), 0)
        # SO_LINGER with a zero timeout makes close() send RST instead of FIN.
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        self.connection.close()

    def forward(self, body, path=None):
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
        # The Host header stays the proxy's, so the registry's Location headers lead back through it.
        headers["Content-Length"] = str(len(body))
        conn = http.client.HTTPConnection("127.0.0.1", self.upstream_port, timeout=SOCKET_TIMEOUT)
        try:
            conn.request(self.command, path or self.path,
                         body=body if self.command not in ("GET", "HEAD") or body else None, headers=headers)
            response = conn.getresponse()
            data = response.read() if self.command != "HEAD" else b""
            return response.status, response.getheaders(), data
        finally:
            conn.close()

    # ---- one request ---------------------------------------------------------------------------

    def serve(self):
        if self.path.startswith("/__faults"):
            return self.control()
        rule = self.plan.take(self.command, self.path)
        fault = rule["fault"] if rule else None
        if fault == "reset":
            self.read_body(limit=int(self.body_length() * float(rule.get("fraction", 0.5))))
            return self.reset()
        if fault == "stall":
            body = self.read_body(limit=int(self.body_length() * float(rule.get("fraction", 0.5))))
            time.sleep(min(float(rule.get("delay", 1)), MAX_SLEEP))
            body += self.read_exactly(min(self.body_length(), MAX_BODY) - len(body))
            if len(body) < self.body_length() and rule.get("forward_partial"):
                try:
                    self.forward(body)
                except OSError:
                    pass
        else:
            try:
                body = self.read_body()
            except BodyEnded:
                body = None
        if body is None or len(body) < self.body_length():
            # The client is gone before its body ended: nothing of it reaches the registry.
            self.plan.note(self.command, self.path, self.auth_scheme(), 0)
            self.close_connection = True
            return
        if fault == "status":
            status = int(rule.get("status", 500))
            headers = [("Content-Type", "application/json")]
            if "retry_after" in rule:
                headers.append(("Retry-After", str(rule["retry_after"])))
            error = {"errors": [{"code": rule.get("code", "UNKNOWN"), "message": "injected by the test proxy"}]}
            return self.send(status, headers, json.dumps(error).encode())
        if fault == "redirect":
            return self.send(307, [("Location", rule["to"] + self.path)], b"")
        if fault == "hold":
            time.sleep(min(float(rule.get("delay", 1)), MAX_SLEEP))
        path = re.sub(rule["path"], rule["to"], self.path, count=1) if fault == "flip" else None
        try:
            status, headers, data = self.forward(body, path)
        except OSError as e:
            return self.send(502, [("Content-Type", "text/plain")], f"proxy: registry unreachable: {e}".encode())
        self.send(status, headers, data, rule)

    def control(self):
        if self.path == "/__faults/received":
            self.read_body()
            return self.send(200, [("Content-Type", "text/plain")], str(self.plan.received).encode())
        if self.command == "PUT":
            self.plan.replace(json.loads(self.read_body() or b"[]"))
            return self.send(204, [], b"")
        self.read_body()
        self.send(200, [("Content-Type", "application/json")], json.dumps(self.plan.report()).encode())


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A client that gave up on a slow or broken answer is what the faults are for: no traceback.
        pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("upstream_port", type=int)
    parser.add_argument("port_file")
    parser.add_argument("--lifetime", type=float, default=300)
    parser.add_argument("--rate", type=float, default=0, help="bytes a second each request body is read at")
    args = parser.parse_args()

    Handler.upstream_port = args.upstream_port
    Handler.rate = args.rate
    server = Server(("127.0.0.1", 0), Handler, bind_and_activate=False)
    if args.rate:
        # Set before listening, so that every connection accepted has it (and no autotuning).
        server.socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 128 << 10)
    server.server_bind()
    server.server_activate()
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True).start()
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(args.port_file + ".tmp", args.port_file)

    parent = os.getppid()
    deadline = time.monotonic() + args.lifetime
    # When the test that started it is gone, the proxy is reparented: time to go too.
    while time.monotonic() < deadline and os.getppid() == parent:
        time.sleep(0.2)
    server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
