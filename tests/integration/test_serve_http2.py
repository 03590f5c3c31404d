"""`punctual serve --http2`: h2load gets every response over h2c and over TLS (h2 by ALPN),
the arrival log has a line per stream, a stall holds every stream's answer until its end, the
HTTP/1.1 faults are refused, the SETTINGS carry --max-streams, and an HTTP/1.1 client gets no
HTTP/1.1 answer (a GOAWAY, then the close) from a server that goes on serving. `punctual run
--http 2 --request-id-header` names each stream, and the log's id column
(--arrival-log-id-header) holds every index of its schedule once.

Usage: python3 test_serve_http2.py PATH_TO_PUNCTUAL
"""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from faults_lib import read_arrival_log  # noqa: E402
from harness import check, check_eq  # noqa: E402

H2LOAD = shutil.which("h2load") or "/usr/bin/h2load"
REQUESTS = 2000
STALL_START_S = 1.0
STALL_LENGTH_S = 0.5
SETTINGS = 0x4
GOAWAY = 0x7
PROTOCOL_ERROR = 0x1
MAX_CONCURRENT_STREAMS = 0x3
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
EMPTY_SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"


def h2load(url, *args, timeout_s=15):
    """Runs h2load against URL; returns its stdout, failing on a non-zero exit."""
    proc = subprocess.run([H2LOAD, *args, url], capture_output=True, text=True, timeout=timeout_s)
    check_eq(proc.returncode, 0, f"h2load exit status\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


def check_all_succeeded(output, n):
    """h2load's own count: N requests done, N succeeded, N answered 2xx."""
    m = re.search(r"requests: (\d+) total, \d+ started, (\d+) done, (\d+) succeeded", output)
    check(m is not None, f"no requests line in h2load's output:\n{output}")
    check_eq([int(g) for g in m.groups()], [n, n, n], "h2load requests total, done, succeeded")
    m = re.search(r"status codes: (\d+) 2xx", output)
    check(m is not None and int(m.group(1)) == n, f"expected {n} 2xx:\n{output}")


def serve_and_load(binary, tmp, serve_args, url_scheme, h2load_args):
    """Starts `serve --http2 SERVE_ARGS` with an arrival log, runs h2load against it and stops
    the server (which writes the log); returns (h2load's output, the arrival log, the server's
    exit status)."""
    log = os.path.join(tmp, "arrivals.log")
    with harness.punctual_serve(binary, "--http2", "--arrival-log", log, *serve_args) as serve:
        output = h2load(f"{url_scheme}://127.0.0.1:{serve.port}/", *h2load_args)
        check(serve.proc.poll() is None, "the server exited during the load")
    status = serve.proc.returncode
    return output, read_arrival_log(log), status


def check_arrivals(arrivals, n):
    check_eq(len(arrivals), n, "arrival-log lines (one per stream)")
    unanswered = [a for a in arrivals if a[1] == 0]
    check(not unanswered, f"{len(unanswered)} streams never answered, e.g. {unanswered[:3]}")
    early = [a for a in arrivals if a[1] < a[0]]
    check(not early, f"{len(early)} streams answered before they arrived, e.g. {early[:3]}")


def h2c_prior_knowledge(binary, tmp):
    output, arrivals, _ = serve_and_load(
        binary, tmp, [], "http", ["-n", str(REQUESTS), "-c", "2", "-m", "10"])
    check_all_succeeded(output, REQUESTS)
    check_arrivals(arrivals, REQUESTS)


def h2_over_tls(binary, tmp):
    n = 1000
    output, arrivals, _ = serve_and_load(
        binary, tmp, ["--tls-self-signed"], "https", ["-n", str(n), "-c", "2", "-m", "10"])
    check("Application protocol: h2" in output, f"h2 was not negotiated by ALPN:\n{output}")
    check_all_succeeded(output, n)
    check_arrivals(arrivals, n)


def stall_holds_streams(binary, tmp):
    """200 req/s for 2.5 s (h2load --rps is per client) across a 500 ms stall at 1 s."""
    stall_log = os.path.join(tmp, "stalls.jsonl")
    n = 500
    output, arrivals, _ = serve_and_load(
        binary, tmp,
        ["--stall-at", f"{STALL_START_S}s:{int(STALL_LENGTH_S * 1000)}ms", "--stall-log", stall_log],
        "http", ["-n", str(n), "-c", "2", "-m", "100", "--rps", "100"])
    check_all_succeeded(output, n)
    check_arrivals(arrivals, n)
    with open(stall_log, encoding="utf-8") as f:
        stalls = [json.loads(line) for line in f if line.strip()]
    check_eq(len(stalls), 1, f"stalls logged ({stalls})")
    start, end = stalls[0]["start_mono_ns"], stalls[0]["end_mono_ns"]
    length_s = (end - start) / 1e9
    check(abs(length_s - STALL_LENGTH_S) < 0.05, f"the stall lasted {length_s:.3f} s")
    inside = [a for a in arrivals if start <= a[1] < end]
    check(not inside, f"{len(inside)} streams answered inside the stall, e.g. {inside[:3]}")
    held = [a for a in arrivals if start <= a[0] < end]
    # 200 req/s over 500 ms: about 100 streams arrived while the server was stalled.
    check(len(held) >= 50, f"only {len(held)} streams arrived during the stall")
    check(all(a[1] >= end for a in held), "a stream that arrived in the stall was answered before its end")


def request_ids_join_the_schedule(binary, tmp):
    """100 requests over h2c from two workers: the log names each by its schedule index, once."""
    log = os.path.join(tmp, "arrivals.log")
    schedule = os.path.join(tmp, "schedule.txt")
    with harness.punctual_serve(binary, "--http2", "--arrival-log", log,
                                "--arrival-log-id-header", "x-request-id") as serve:
        result = harness.run_punctual(
            binary, ["--http", "2", "-R", "200", "-d", "500ms", "-t", "2", "-c", "2",
                     "--request-id-header", "X-Request-Id", "--schedule-out", schedule,
                     f"http://127.0.0.1:{serve.port}/"])
    # A run this short is too short for its verdicts (exit 4): the counts are what it shows.
    check(result.returncode in (0, 4) and result.report is not None, result.describe())
    planned = result.report["schedule"]["planned"]
    check_eq(result.report["outcomes"]["ok"], planned, "ok outcomes")
    with open(log, encoding="utf-8") as f:
        lines = [line for line in f.read().splitlines() if line.strip()]
    check_eq(lines[0], "# arrival_mono_ns answered_mono_ns x-request-id", "the log's first line")
    with open(schedule, encoding="utf-8") as f:
        indices = [int(line.split()[0]) for line in f if line.strip() and not line.startswith("#")]
    check_eq(len(indices), planned, "schedule entries")
    check_eq(sorted(line.split()[2] for line in lines[1:]), sorted("%012d" % i for i in indices),
             "the ids the server logged, against the schedule's indices")


def fault_refused(binary, tmp):
    proc = subprocess.run([binary, "serve", "--http2", "--port", "0", "--fault", "reset:0.1"],
                          capture_output=True, text=True, timeout=10)
    check_eq(proc.returncode, 2, f"exit status\n{proc.stdout}\n{proc.stderr}")
    lines = harness.stderr_lines(proc.stderr)
    check_eq(len(lines), 1, f"stderr lines ({proc.stderr!r})")
    check("--fault reset:0.1 is not available with --http2" in lines[0], f"the line: {lines[0]!r}")
    check("listening on" not in proc.stdout, "the server started anyway")


def read_until_close(port, request, timeout_s=3.0):
    """Sends REQUEST on a new connection, reads until the server closes it; the bytes read."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as s:
        s.sendall(request)
        deadline = time.monotonic() + timeout_s
        data = b""
        while time.monotonic() < deadline:
            try:
                chunk = s.recv(65536)
            except (ConnectionResetError, TimeoutError, socket.timeout):
                break
            if not chunk:
                return data
            data += chunk
        check(time.monotonic() < deadline, f"the server kept the connection open; read {data!r}")
        return data


def frames(data):
    """[(type, payload)] of the HTTP/2 frames in DATA (9-byte headers, 24-bit lengths)."""
    out = []
    while len(data) >= 9:
        length = int.from_bytes(data[0:3], "big")
        out.append((data[3], data[9:9 + length]))
        data = data[9 + length:]
    return out


def max_concurrent_streams(data):
    """SETTINGS_MAX_CONCURRENT_STREAMS of the first SETTINGS frame (not an ACK) in DATA."""
    for kind, payload in frames(data):
        if kind == SETTINGS and payload:
            values = {int.from_bytes(payload[i:i + 2], "big"): int.from_bytes(payload[i + 2:i + 6], "big")
                      for i in range(0, len(payload) - 5, 6)}
            return values.get(MAX_CONCURRENT_STREAMS)
    return None


def max_streams_setting(binary, tmp):
    """The server's SETTINGS say 100 streams by default, and what --max-streams says."""
    for args, expected in (([], 100), (["--max-streams", "7"], 7)):
        with harness.punctual_serve(binary, "--http2", "--idle-close", "200ms", *args) as serve:
            data = read_until_close(serve.port, PREFACE + EMPTY_SETTINGS)
        check_eq(max_concurrent_streams(data), expected, f"MAX_CONCURRENT_STREAMS with {args}")
    # A client may open more streams than that before it has read the SETTINGS; nghttp2 then
    # refuses the extra ones (REFUSED_STREAM), which h2load counts as failed: so -m 7 here.
    with harness.punctual_serve(binary, "--http2", "--max-streams", "7") as serve:
        check_all_succeeded(h2load(serve.url("/"), "-n", "200", "-m", "7"), 200)


def http11_client_refused(binary, tmp):
    with harness.punctual_serve(binary, "--http2") as serve:
        data = read_until_close(serve.port, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        check(not data.startswith(b"HTTP/"), f"an HTTP/1.x answer: {data[:80]!r}")
        goaways = [payload for kind, payload in frames(data) if kind == GOAWAY]
        check(goaways, f"no GOAWAY frame in {data!r}")
        check_eq(int.from_bytes(goaways[0][4:8], "big"), PROTOCOL_ERROR, "GOAWAY error code")
        check(serve.proc.poll() is None, "the server exited after the HTTP/1.1 client")
        check_all_succeeded(h2load(serve.url("/"), "-n", "10"), 10)


def main():
    binary = harness.binary_from_argv()
    checks = harness.Checks("serve_http2")
    check_h2load = os.path.exists(H2LOAD)
    for name, fn in (("h2c_prior_knowledge", h2c_prior_knowledge),
                     ("h2_over_tls", h2_over_tls),
                     ("stall_holds_streams", stall_holds_streams),
                     ("fault_refused", fault_refused),
                     ("request_ids_join_the_schedule", request_ids_join_the_schedule),
                     ("max_streams_setting", max_streams_setting),
                     ("http11_client_refused", http11_client_refused)):
        tmp = tempfile.mkdtemp(prefix="punctual-h2-")
        try:
            if not check_h2load and name not in ("fault_refused", "request_ids_join_the_schedule"):
                checks.run(name, check, False, f"{H2LOAD} is missing (nghttp2-client)")
            else:
                checks.run(name, fn, binary, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    checks.finish()


if __name__ == "__main__":
    main()
