"""punctual against a real server (nginx): keep-alive (with claims balancing per worker), chunked,
Connection: close, wrk2-style output, --hlog and --json -.

Usage: python3 test_nginx.py PATH_TO_PUNCTUAL
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, check_eq  # noqa: E402


def check_bytes(report, binary, nginx, path, extra_args=()):
    """bytes.sent and bytes.received match the exact request and response sizes.

    Every request is identical and nginx's responses to it have a constant
    length (its Date header has a fixed width), so both totals are exact
    multiples of numbers measured independently of punctual's counters.
    """
    ok = report["outcomes"]["ok"]
    request = harness.request_bytes(binary, path, extra_args, port_for=nginx.port)
    check(request.startswith(f"GET {path} HTTP/1.1\r\n".encode()), f"unexpected request line: {request[:60]!r}")
    check(f"\r\nHost: 127.0.0.1:{nginx.port}\r\n".encode().lower() in request.lower(),
          f"request has no Host header for the target: {request!r}")
    check_eq(report["bytes"]["sent"], ok * len(request), f"bytes.sent ({ok} requests of {len(request)} bytes)")
    response = harness.exchange(nginx.port, request)
    check(response.startswith(b"HTTP/1.1 200"), f"nginx answered {response[:80]!r}")
    check_eq(report["bytes"]["received"], ok * len(response),
             f"bytes.received ({ok} responses of {len(response)} bytes)")
    return request, response


def run_counting_accepts(binary, nginx, args):
    """Runs punctual; returns (result, connections nginx accepted from it)."""
    before = nginx.accepts()
    r = harness.run_punctual(binary, args)
    # The second stub_status probe is itself one accepted connection.
    return r, nginx.accepts() - before - 1


def test_keepalive(binary, nginx):
    r, accepted = run_counting_accepts(binary, nginx, ["-t2", "-c8", "-d2s", "-R2000", nginx.url("/")])
    report = harness.require_report(r)
    harness.assert_clean(report)
    check_eq(report["schedule"]["planned"], 4000, "planned for 2000 req/s over 2 s")
    check(report["bytes"]["received"] >= report["outcomes"]["ok"] * len(harness.HELLO_BODY), "too few bytes received")
    check_eq(report["latency"]["connect_time"]["count"], 0, "connects during a keep-alive run")
    check_eq(accepted, 8, "connections nginx accepted (all opened before the start, never re-opened)")
    # Claims on real sockets: what one worker sent for the other balances what the other had
    # claimed away (the simulation checks the same identity on every run, with its pauses).
    g = report["generator"]
    check_eq(g["sent_for_others"], g["claimed_away"], "requests claimed in and claimed away")
    for k, w in enumerate(g["workers"]):
        check_eq(w["planned"] + w["sent_for_others"] - w["claimed_away"], w["outcomes"],
                 f"worker {k}: planned + sent_for_others - claimed_away")
    _, response = check_bytes(report, binary, nginx, "/")
    check(b"content-length: 6" in response.lower(), f"nginx / is not the fixed body: {response!r}")


def test_chunked(binary, nginx):
    head, _ = harness.raw_get(nginx.port, "/chunked")
    check(b"transfer-encoding: chunked" in head.lower(), f"nginx /chunked is not chunked: {head!r}")
    r = harness.run_punctual(binary, ["-t2", "-c4", "-d2s", "-R500", nginx.url("/chunked")])
    report = harness.require_report(r)
    harness.assert_clean(report)
    check_eq(report["schedule"]["planned"], 1000, "planned for 500 req/s over 2 s")
    check(report["bytes"]["received"] >= report["outcomes"]["ok"] * len(harness.CHUNKED_BODY),
          f"bytes.received {report['bytes']['received']} < ok x chunked body length")
    _, response = check_bytes(report, binary, nginx, "/chunked")
    check(b"transfer-encoding: chunked" in response.lower(), "nginx did not answer punctual's request chunked")


def check_one_connection_per_request(report, accepted, connections):
    """Every request used its own connection: nginx accepted at least one per
    request, plus at most the pool's connections opened ahead of need."""
    ok = report["outcomes"]["ok"]
    check(ok <= accepted <= ok + connections,
          f"nginx accepted {accepted} connections for {ok} requests on {connections} connections")


def test_close_endpoint(binary, nginx):
    request = harness.request_bytes(binary, "/close", port_for=nginx.port)
    check(b"connection: close" in harness.exchange(nginx.port, request).lower(),
          "nginx /close does not answer Connection: close")
    r, accepted = run_counting_accepts(binary, nginx, ["-t2", "-c4", "-d2s", "-R200", nginx.url("/close")])
    report = harness.require_report(r)
    harness.assert_clean(report)
    check_eq(report["schedule"]["planned"], 400, "planned for 200 req/s over 2 s")
    check_one_connection_per_request(report, accepted, 4)
    check_bytes(report, binary, nginx, "/close")


def test_no_keepalive(binary, nginx):
    request = harness.request_bytes(binary, "/", ["--no-keepalive"], port_for=nginx.port)
    check(b"connection: close" in request.lower(), f"--no-keepalive request lacks Connection: close: {request!r}")
    r, accepted = run_counting_accepts(binary, nginx, ["-t2", "-c4", "-d2s", "-R200", "--no-keepalive", nginx.url("/")])
    report = harness.require_report(r)
    harness.assert_clean(report)
    check_eq(report["schedule"]["planned"], 400, "planned for 200 req/s over 2 s")
    check_one_connection_per_request(report, accepted, 4)
    check_bytes(report, binary, nginx, "/", ["--no-keepalive"])


SPECTRUM_LINE = re.compile(r"^\s*([0-9.]+)\s+([0-9.]+)\s+(\d+)(?:\s+([0-9.]+|inf))?\s*$")


def parse_spectra(text):
    """Returns {title: [(value, percentile, total_count)]} for each distribution block."""
    spectra = {}
    current = None
    for line in text.splitlines():
        m = re.match(r"^(.*) distribution \((\w+)\):\s*$", line)
        if m:
            current = spectra.setdefault(m.group(1).strip(), [])
            continue
        m = SPECTRUM_LINE.match(line)
        if m and current is not None:
            current.append((float(m.group(1)), float(m.group(2)), int(m.group(3))))
        elif line.startswith("#[Buckets"):
            current = None
    return spectra


def test_wrk2_style(binary, nginx):
    tmp = tempfile.mkdtemp(prefix="punctual-wrk2-")
    try:
        json_path = os.path.join(tmp, "r.json")
        cmd = [binary, "run", "-t2", "-c100", "-d2s", "-R2000", "-L", "-U", nginx.url("/"), "--json", json_path]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        report = harness.load_report(json_path)
        lateness = harness.host_lateness_only(harness.Result(cmd, proc.returncode, "", "", 0, report))
        check(proc.returncode == 0 or lateness, f"exit code {proc.returncode} (stderr {proc.stderr!r})")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    harness.assert_clean(report)
    parts = ("\n" + proc.stdout).split("\nmodel: open", 1)
    check(len(parts) == 2, f"no model header: {proc.stdout[:200]!r}")
    lines = ("model: open" + parts[1]).splitlines()
    check(any(line.startswith("correction:") for line in lines[:3]), "no correction: header line")
    check("2000 req/s" in lines[0] and "100 connections on 2 threads" in lines[0], f"header: {lines[0]}")
    spectra = parse_spectra(proc.stdout)
    check("response time" in spectra and "service time" in spectra, f"spectra found: {list(spectra)}")
    for name, rows in spectra.items():
        check(len(rows) > 10, f"{name}: only {len(rows)} spectrum rows")
        for a, b in zip(rows, rows[1:]):
            check(a[0] <= b[0] and a[1] <= b[1] and a[2] <= b[2], f"{name}: spectrum not monotonic at {a} -> {b}")
        check_eq(rows[-1][2], report["latency"]["response_time"]["count"], f"{name}: final TotalCount")
        check(rows[-1][1] == 1.0, f"{name}: spectrum does not reach percentile 1.0: {rows[-1]}")
    m = re.search(r"response time distribution.*?#\[Max\s*=\s*([0-9.]+),\s*Total count\s*=\s*(\d+)\]",
                  proc.stdout, re.S)
    check(m is not None, "no #[Max = ..., Total count = ...] footer for the response time")
    check_eq(int(m.group(2)), report["schedule"]["planned"], "Total count in the footer")
    max_ms = report["latency"]["response_time"]["max_ns"] / 1e6
    check(abs(float(m.group(1)) - max_ms) <= 0.0015 + max_ms * 0.001,
          f"text max {m.group(1)} ms vs JSON max {max_ms} ms")


def test_hlog(binary, nginx):
    tmp = tempfile.mkdtemp(prefix="punctual-hlog-")
    try:
        path = os.path.join(tmp, "run.hlog")
        r = harness.run_punctual(binary, ["-t2", "-c4", "-d2s", "-R500", "--hlog", path, nginx.url("/")])
        report = harness.require_report(r)
        harness.assert_clean(report)
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        leftovers = [n for n in os.listdir(tmp) if n.endswith(".tmp")]
        check(not leftovers, f"temporary files left: {leftovers}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    check(any(re.fullmatch(r"#\[Histogram log format version 1\.[0-9]+\]", line) for line in lines),
          f"no version line in {lines[:5]}")
    data = [line for line in lines if line and not line.startswith("#") and not line.startswith('"')]
    untagged = [line for line in data if not line.startswith("Tag=")]
    service = [line for line in data if line.startswith("Tag=service_time,")]
    check(untagged, "no untagged (response time) interval lines")
    check(service, "no Tag=service_time interval lines")
    for line in untagged:
        fields = line.split(",")
        check(len(fields) == 4 and fields[3].startswith("HISTF"), f"malformed interval line: {line[:80]}")
        float(fields[0]), float(fields[1]), float(fields[2])
    # A 2 s run at one interval per second has two or three intervals (the drain may add one).
    check(2 <= len(untagged) <= 4, f"{len(untagged)} untagged intervals for a 2 s run")
    check_eq(len(service), len(untagged), "service_time intervals vs response time intervals")


def test_json_stdout(binary, nginx):
    cmd = [binary, "run", "-t1", "-c2", "-d1s", "-R100", "--json", "-", nginx.url("/")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
    check(proc.returncode in (0, 4), f"exit code {proc.returncode} (stderr {proc.stderr[-500:]!r})")
    try:
        report = harness.parse_report(proc.stdout)
    except ValueError as exc:
        raise AssertionError(f"stdout is not one JSON document ({exc}): {proc.stdout[:200]!r}") from None
    check(proc.returncode == 0 or harness.too_few_samples_only(harness.Result(cmd, 4, "", "", 0, report)),
          f"exit {proc.returncode} for a reason other than a short run's p99")
    harness.assert_clean(report)
    check_eq(report["schedule"]["planned"], 100, "planned")
    check("\nmodel: open" in "\n" + proc.stderr, f"text report not on stderr: {proc.stderr[:100]!r}")
    check("correction:" in proc.stderr, "no correction line in the text report on stderr")


def main():
    binary = harness.binary_from_argv()
    checks = harness.Checks("nginx")
    with harness.nginx_server() as nginx:
        checks.run("keep-alive 2000 req/s -t2 -c8", test_keepalive, binary, nginx)
        checks.run("chunked body", test_chunked, binary, nginx)
        checks.run("Connection: close endpoint", test_close_endpoint, binary, nginx)
        checks.run("--no-keepalive", test_no_keepalive, binary, nginx)
        checks.run("wrk2-style -L -U", test_wrk2_style, binary, nginx)
        checks.run("--hlog", test_hlog, binary, nginx)
        checks.run("--json -", test_json_stdout, binary, nginx)
        log = nginx.error_log()
        if "[alert]" in log or "[emerg]" in log:
            print("nginx error log:\n" + log)
    checks.finish()


if __name__ == "__main__":
    main()
