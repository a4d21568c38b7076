#!/usr/bin/env python3
"""A TLS server for tests/runtime: serves CERT and KEY on 127.0.0.1 at a port of its own, printed on
the first line, completing each handshake it can and writing one line; runs until killed."""
import socket
import ssl
import sys

context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(sys.argv[1], sys.argv[2])
with socket.create_server(("127.0.0.1", 0)) as server:
    print(server.getsockname()[1], flush=True)
    while True:
        connection, _ = server.accept()
        try:
            with context.wrap_socket(connection, server_side=True) as tls:
                tls.sendall(b"hello\n")
        except (ssl.SSLError, OSError):
            pass  # a client that refused the certificate: the test expects some
