#!/usr/bin/env python3
"""A Bearer token service for tests of registry authentication, and a logging front for the registry.

Three listeners on free loopback ports, written to --ports-file as "TOKEN FRONT ELSEWHERE":
  token      GET /token?service=S&scope=...: checks the client's Basic credentials, grants the scopes
             asked for, answers {"token", "expires_in", "issued_at"} with a JWT signed RS256 (by
             `openssl dgst`: python has no RSA) and carrying the certificate in `x5c`, as
             distribution's token access controller wants.
  front      forwards every request to the registry (--upstream-file), logging the scheme of the
             Authorization each one carried and the answer's status. Switched by files in --control-dir, read on each request:
             `stall` holds a REGEX: the first request whose "METHOD PATH" matches it is held until its
             token has expired; `redirect-blobs` not empty: blob GETs are redirected to `elsewhere`, which answers 401 with a
             challenge of its own when the file says "challenge".
  elsewhere  another origin: logs whether an Authorization arrived (on any path), then serves the
             blob from the registry with a token of its own.

Every event is a JSON line in --log. Bounded: sockets time out and the process exits after
--max-seconds whatever happens.
"""
import argparse
import base64
import http.client
import http.server
import json
import os
import re
import subprocess
import threading
import time
import urllib.parse

# distribution accepts a token this long after its `exp` (clock skew leeway): `exp` is set back by it
# so that the registry really refuses a token once expires_in has passed.
REGISTRY_LEEWAY = 60
SOCKET_TIMEOUT = 10
COPY_CHUNK = 256 * 1024
HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "te", "upgrade", "date", "server"}


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.stalled = set()  # the stall patterns already used
        der = subprocess.run(["openssl", "x509", "-in", args.cert, "-outform", "DER"],
                             capture_output=True, check=True, timeout=10).stdout
        header = {"typ": "JWT", "alg": "RS256", "x5c": [base64.b64encode(der).decode()]}
        self.jwt_header = b64url(json.dumps(header, separators=(",", ":")).encode())
        self.elsewhere_port = 0

    def upstream(self):
        with open(self.args.upstream_file) as f:
            return f.read().strip()

    def log(self, **event):
        with self.lock, open(self.args.log, "a") as f:
            f.write(json.dumps(event) + "\n")

    def sign(self, subject, access):
        now = int(time.time())
        claims = {"iss": self.args.issuer, "sub": subject, "aud": self.args.service, "iat": now, "nbf": now - 1,
                  "exp": now + self.args.expires_in - REGISTRY_LEEWAY, "jti": os.urandom(8).hex(), "access": access}
        signing_input = self.jwt_header + "." + b64url(json.dumps(claims, separators=(",", ":")).encode())
        signature = subprocess.run(["openssl", "dgst", "-sha256", "-sign", self.args.key], input=signing_input.encode(),
                                   capture_output=True, check=True, timeout=10).stdout
        return signing_input + "." + b64url(signature)


def read_control(directory, name):
    try:
        with open(os.path.join(directory, name)) as f:
            return f.read().strip()
    except FileNotFoundError:
        return ""


def parse_scope(scope):
    # type:name:actions, where only the name may hold further colons
    kind, _, rest = scope.partition(":")
    name, _, actions = rest.rpartition(":")
    return {"type": kind, "name": name, "actions": [a for a in actions.split(",") if a]}


def auth_scheme(headers):
    value = headers.get("Authorization")
    return value.split(" ", 1)[0].lower() if value else "none"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = SOCKET_TIMEOUT
    state = None

    def log_message(self, *args):
        pass

    def reply(self, status, body=b"", headers=()):
        self.send_response_only(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def copy(self, source, length):
        while length > 0:
            chunk = source.read(min(COPY_CHUNK, length))
            if not chunk:
                raise OSError("the body ended early")
            self.wfile.write(chunk)
            length -= len(chunk)

    def relay(self, response):
        # The registry's answer, body streamed; a body without a length is read whole (only small ones are).
        body = None
        length = response.getheader("Content-Length")
        if length is None and self.command != "HEAD":
            body = response.read()
            length = str(len(body))
        self.send_response_only(response.status)
        for name, value in response.getheaders():
            if name.lower() not in HOP_HEADERS and name.lower() != "content-length":
                self.send_header(name, value)
        self.send_header("Content-Length", length or "0")
        self.end_headers()
        if self.command == "HEAD":
            return
        if body is not None:
            self.wfile.write(body)
        else:
            self.copy(response, int(length))


class TokenHandler(Handler):
    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        scopes = query.get("scope", [])
        args = self.state.args
        credentials = None
        value = self.headers.get("Authorization", "")
        if value.lower().startswith("basic "):
            try:
                credentials = base64.b64decode(value[6:].strip(), validate=True).decode()
            except ValueError:
                credentials = ""
        if url.path != "/token":
            self.reply(404)
            return
        if credentials != args.user + ":" + args.password:
            verdict = "none" if credentials is None else "refused"
            self.state.log(event="token", auth=verdict, scopes=scopes, service=query.get("service", [""])[0])
            self.reply(401, json.dumps({"details": "invalid credentials"}).encode(), [("Content-Type", "application/json")])
            return
        token = self.state.sign(args.user, [parse_scope(s) for s in scopes])
        self.state.log(event="token", auth="ok", scopes=scopes, service=query.get("service", [""])[0], token=token)
        issued = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        body = json.dumps({"token": token, "expires_in": args.expires_in, "issued_at": issued}).encode()
        self.reply(200, body, [("Content-Type", "application/json")])


class FrontHandler(Handler):
    def forward(self):
        # Logged once answered, with the status: a request held by a stall shows the registry's verdict.
        request = self.command + " " + self.path
        status = "error"
        try:
            status = self.answer(request)
        finally:
            self.state.log(event="front", request=request, auth=auth_scheme(self.headers), status=status)

    def answer(self, request):
        args = self.state.args
        if "chunked" in self.headers.get("Transfer-Encoding", ""):
            self.reply(501)
            return 501
        if read_control(args.control_dir, "redirect-blobs") != "" and self.command == "GET" and \
                re.match(r"^/v2/.+/blobs/sha256:[0-9a-f]{64}$", self.path):
            self.reply(307, headers=[("Location", "http://127.0.0.1:%d%s" % (self.state.elsewhere_port, self.path))])
            return 307
        stall = read_control(args.control_dir, "stall")
        if stall and re.search(stall, request):
            with self.state.lock:
                first = stall not in self.state.stalled
                self.state.stalled.add(stall)
            if first:
                self.state.log(event="stall", request=request)
                time.sleep(args.expires_in + 1)
        upstream = http.client.HTTPConnection(self.state.upstream(), timeout=SOCKET_TIMEOUT)
        try:
            upstream.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
            for name, value in self.headers.items():
                if name.lower() not in HOP_HEADERS:
                    upstream.putheader(name, value)
            upstream.endheaders()
            length = int(self.headers.get("Content-Length") or 0)
            while length > 0:
                chunk = self.rfile.read(min(COPY_CHUNK, length))
                if not chunk:
                    raise OSError("the request body ended early")
                upstream.send(chunk)
                length -= len(chunk)
            response = upstream.getresponse()
            self.relay(response)
            return response.status
        finally:
            upstream.close()

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = forward


class ElsewhereHandler(Handler):
    def do_GET(self):
        self.state.log(event="elsewhere", request="GET " + self.path, auth=auth_scheme(self.headers))
        match = re.match(r"^/v2/(.+)/blobs/(sha256:[0-9a-f]{64})$", self.path)
        if not match:
            self.reply(404)
            return
        if read_control(self.state.args.control_dir, "redirect-blobs") == "challenge":
            # A challenge of its own, naming a realm here: a client must not answer it with the
            # registry's credentials.
            realm = "http://127.0.0.1:%d/token" % self.state.elsewhere_port
            self.reply(401, headers=[("WWW-Authenticate", 'Bearer realm="%s",service="elsewhere"' % realm)])
            return
        token = self.state.sign("elsewhere", [{"type": "repository", "name": match.group(1), "actions": ["pull"]}])
        upstream = http.client.HTTPConnection(self.state.upstream(), timeout=SOCKET_TIMEOUT)
        try:
            upstream.request("GET", self.path, headers={"Authorization": "Bearer " + token})
            self.relay(upstream.getresponse())
        finally:
            upstream.close()


def serve(handler, state):
    handler.state = state
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--key", required=True, help="PEM RSA private key that signs tokens")
    p.add_argument("--cert", required=True, help="PEM certificate of that key (the registry's rootcertbundle)")
    p.add_argument("--service", required=True)
    p.add_argument("--issuer", required=True)
    p.add_argument("--user", required=True)
    p.add_argument("--password", required=True)
    p.add_argument("--expires-in", type=int, default=60, help="token life in seconds")
    p.add_argument("--upstream-file", default="", help="file holding HOST:PORT of the registry the front forwards to, read "
                   "when needed (the registry starts after this server, knowing its realm)")
    p.add_argument("--control-dir", required=True, help="files switching the front's behaviour (see above)")
    p.add_argument("--log", required=True)
    p.add_argument("--ports-file", required=True)
    p.add_argument("--max-seconds", type=float, default=120)
    args = p.parse_args()
    state = State(args)
    ports = [serve(TokenHandler, state), serve(FrontHandler, state)]
    state.elsewhere_port = serve(ElsewhereHandler, state)
    ports.append(state.elsewhere_port)
    with open(args.ports_file + ".tmp", "w") as f:
        f.write(" ".join(map(str, ports)) + "\n")
    os.rename(args.ports_file + ".tmp", args.ports_file)
    time.sleep(args.max_seconds)
    os._exit(0)


if __name__ == "__main__":
    main()
