"""`punctual serve --arrival-log` dates a request by when it reached the socket.

Over plain TCP (HTTP/1.1 and h2c read the same way) the arrival is the kernel's receive stamp of
the read that completed the request, not when the server's thread woke to read it. The server
is stopped (SIGSTOP) while a request is sent and resumed 300 ms later: its arrival must be the
send's instant, within 50 ms, and its answer at least 250 ms after it. Dated at the read, the
arrival would be 300 ms late. The bounds are tenths of a second, so the test times nothing finer.

Usage: python3 test_serve_arrivals.py PATH_TO_PUNCTUAL
"""

import os
import signal
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

REQUEST = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
MS = 1_000_000


def read_response(sock):
    """One whole response with a Content-Length (serve always sends one)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        check(chunk, "serve closed the connection")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int([line.split(b":")[1] for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:")][0])
    while len(body) < length:
        body += sock.recv(4096)


def stop_and_wait(proc):
    """SIGSTOP, then wait until the kernel shows the process stopped: the signal is delivered
    asynchronously, and a request sent at once could still be read and answered (seen under
    ctest -j2: answered 0 ms after arrival)."""
    proc.send_signal(signal.SIGSTOP)
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        states = []
        for task in os.listdir(f"/proc/{proc.pid}/task"):  # every thread of it, its workers too
            with open(f"/proc/{proc.pid}/task/{task}/stat") as f:
                states.append(f.read().rpartition(")")[2].split()[0])
        if all(state in ("T", "t") for state in states):
            return
        time.sleep(0.001)
    check(False, "serve did not stop within 2 s of SIGSTOP")


def stamped_while_stopped(binary):
    with tempfile.TemporaryDirectory(prefix="punctual-arrivals-") as tmp:
        log = os.path.join(tmp, "arrivals.txt")
        with harness.punctual_serve(binary, "--arrival-log", log, "--duration", "20s") as serve:
            with socket.create_connection(("127.0.0.1", serve.port), timeout=5) as sock:
                sock.sendall(REQUEST)  # the connection is accepted and served first
                read_response(sock)
                stop_and_wait(serve.proc)
                try:
                    sent = time.monotonic_ns()  # CLOCK_MONOTONIC, as the log's
                    sock.sendall(REQUEST)
                    time.sleep(0.3)
                finally:
                    serve.proc.send_signal(signal.SIGCONT)
                read_response(sock)
        entries = [tuple(int(x) for x in line.split()) for line in open(log)
                   if line.strip() and not line.startswith("#")]
    check(len(entries) == 2, f"two requests, two arrival lines: {entries}")
    arrival, answered = entries[1]
    check(abs(arrival - sent) < 50 * MS,
          f"arrival {(arrival - sent) / MS:.1f} ms after the send: dated at the read, not at the socket")
    check(answered - arrival >= 250 * MS,
          f"answered {(answered - arrival) / MS:.1f} ms after arrival; the server was stopped 300 ms")


def main():
    binary = harness.binary_from_argv()
    checks = harness.Checks("serve_arrivals")
    checks.run("a request sent while serve is stopped arrives when it was sent", stamped_while_stopped,
               binary)
    checks.finish()


if __name__ == "__main__":
    main()
