#!/usr/bin/python3
"""Exit 0 when 127.0.0.1:PORT answers a GET / with HTTP/1.1 200 (over TLS when a second argument
is given and not empty), else 1: the benches' readiness probe for the servers they start."""
import socket
import ssl
import sys

s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=0.2)
if len(sys.argv) > 2 and sys.argv[2]:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    s = ctx.wrap_socket(s)
s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
sys.exit(0 if s.recv(64).startswith(b"HTTP/1.1 200") else 1)
