#!/usr/bin/env python3
"""What receive stamp the kernel gives the read that ends a close-delimited response.

A server on 127.0.0.1 writes a body, then closes its side (FIN) some milliseconds later; the
client, with SO_TIMESTAMPNS on as punctual's sockets have it, reads only after both came. It
prints, relative to the body's write, when the FIN was sent and the stamp of each read. On
Linux the read that returns the body is stamped with the FIN's arrival (docs/design.md, "How the
times are taken"). About a second; not part of make test.
"""

import socket
import struct
import time

SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)


def stamp_of(ancillary):
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
            seconds, nanos = struct.unpack("qq", data[:16])
            return seconds * 10**9 + nanos
    return None


def connected_pair():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    client = socket.create_connection(listener.getsockname())
    client.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    server, _ = listener.accept()
    listener.close()
    return client, server


def ms(ns):
    return "none" if ns is None else f"{ns / 1e6:8.3f} ms"


def trial(name, fin_after_s, writes=1, size=51, read_between=False):
    client, server = connected_pair()
    reads = []
    for _ in range(writes):
        server.sendall(b"x" * (size // writes))
        if writes > 1:
            time.sleep(0.002)
    body = time.time_ns()
    if read_between:
        time.sleep(fin_after_s / 2)
        data, ancillary, _, _ = client.recvmsg(65536, 1024)
        reads.append((len(data), stamp_of(ancillary)))
        time.sleep(fin_after_s / 2)
    else:
        time.sleep(fin_after_s)
    server.shutdown(socket.SHUT_WR)
    fin = time.time_ns()
    time.sleep(0.05)
    while True:
        data, ancillary, _, _ = client.recvmsg(65536, 1024)
        reads.append((len(data), stamp_of(ancillary)))
        if not data:
            break
    client.close()
    server.close()
    print(f"{name}: FIN sent {ms(fin - body)} after the body")
    for n, stamp in reads:
        print(f"    read {n:6d} bytes, stamp {ms(None if stamp is None else stamp - body)}")


def main():
    for fin_after in (0, 0.0002, 0.001, 0.005, 0.020, 0.070):
        trial(f"51 B body, FIN {fin_after * 1e3:g} ms later, read late", fin_after)
    trial("30 kB body in 5 writes 2 ms apart, FIN 20 ms later, read late", 0.020, 5, 30000)
    trial("51 B body read before the FIN, FIN 40 ms after the body", 0.040, read_between=True)


if __name__ == "__main__":
    main()
