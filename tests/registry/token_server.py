#!/usr/bin/env python3
"""A Bearer token service for tests of registry authentication, and another origin for redirects.

Two listeners on free loopback ports, written to --ports-file as "TOKEN ELSEWHERE":
  token      GET /token?service=S&scope=...: checks the client's Basic credentials, grants the scopes
             asked for, answers {"token", "expires_in", "issued_at"} with a JWT signed RS256 (by
             `openssl dgst`: python has no RSA) and carrying the certificate in `x5c`, as
             distribution's token access controller wants.
  elsewhere  another origin a registry may redirect a blob GET to: logs whether an Authorization
             arrived (on any path); GET /v2/NAME/blobs/DIGEST serves the blob from the registry
             (--upstream-file) with a token of its own; GET /challenge/v2/... answers 401 with a
             Bearer challenge naming a realm here, which a client must not answer with credentials.

Every event is a JSON line in --log, with its time. Bounded: sockets time out and the process exits
after --max-seconds whatever happens.
"""
import argparse
import ssl
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
        der = subprocess.run(["openssl", "x509", "-in", args.cert, "-outform", "DER"],
                             capture_output=True, check=True, timeout=10).stdout
        header = {"typ": "JWT", "alg": "RS256", "x5c": [base64.b64encode(der).decode()]}
        self.jwt_header = b64url(json.dumps(header, separators=(",", ":")).encode())
        self.elsewhere_port = 0

    def upstream(self):
        with open(self.args.upstream_file) as f:
            return f.read().strip()

    def log(self, **event):
        event["time"] = time.time()
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


class ElsewhereHandler(Handler):
    def do_GET(self):
        self.state.log(event="elsewhere", request="GET " + self.path, auth=auth_scheme(self.headers))
        if self.path.startswith("/challenge/"):
            realm = "http://127.0.0.1:%d/token" % self.state.elsewhere_port
            self.reply(401, headers=[("WWW-Authenticate", 'Bearer realm="%s",service="elsewhere"' % realm)])
            return
        match = re.match(r"^/v2/(.+)/blobs/(sha256:[0-9a-f]{64})$", self.path)
        if not match:
            self.reply(404)
            return
        token = self.state.sign("elsewhere", [{"type": "repository", "name": match.group(1), "actions": ["pull"]}])
        upstream = http.client.HTTPConnection(self.state.upstream(), timeout=SOCKET_TIMEOUT)
        try:
            upstream.request("GET", self.path, headers={"Authorization": "Bearer " + token})
            self.relay(upstream.getresponse())
        finally:
            upstream.close()


def serve(handler, state, tls=None):
    handler.state = state
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    if tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*tls)
        server.socket = context.wrap_socket(server.socket, server_side=True)
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
    p.add_argument("--upstream-file", required=True, help="file holding HOST:PORT of the registry, read when needed (the "
                   "registry starts after this server, knowing its realm)")
    p.add_argument("--log", required=True)
    p.add_argument("--ports-file", required=True)
    p.add_argument("--max-seconds", type=float, default=120)
    p.add_argument("--tls-cert", help="PEM certificate the token service answers HTTPS with (else plain HTTP)")
    p.add_argument("--tls-key", help="its PEM private key")
    args = p.parse_args()
    state = State(args)
    state.elsewhere_port = serve(ElsewhereHandler, state)
    tls = (args.tls_cert, args.tls_key) if args.tls_cert else None
    ports = [serve(TokenHandler, state, tls), state.elsewhere_port]
    with open(args.ports_file + ".tmp", "w") as f:
        f.write(" ".join(map(str, ports)) + "\n")
    os.rename(args.ports_file + ".tmp", args.ports_file)
    time.sleep(args.max_seconds)
    os._exit(0)


if __name__ == "__main__":
    main()
