"""`punctual run --http 2` against real servers over real TLS: what the simulation cannot show.

- nginx with `http2` over TLS: keep-alive GETs, a POST with a body, and a response larger than
  the initial flow-control window (so window updates flow), each with ok == planned, the
  protocol named h2 in the JSON, and the response bytes counted exactly as nginx logged them.
- --http auto takes what ALPN gives, --http 2 refuses a server that offers no h2 (exit 1, one
  line).

The truth over h2c through a stall, the closed model over h2 (with and without --max-streams)
and the options HTTP/2 refuses are simulation cases (tests/sim/sim_h2_test.cpp).

Usage: python3 test_http2.py PATH_TO_PUNCTUAL
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import tls_lib  # noqa: E402
from harness import check, check_eq  # noqa: E402


def nginx_h2(binary):
    with tls_lib.tls_material() as m, tls_lib.nginx_tls_server(m, http2=True) as nginx:
        # /big at a lower rate: 40 bodies of 200 KB each still need window updates, and 200 a
        # second (40 MB/s through TLS on both sides) made nginx slow enough, beside the other
        # untimed tests, for a run to be invalid for too few connections.
        cases = [("GET /", "/", "200", []),
                 ("POST / with a body", "/", "200", ["-m", "POST", "--body", "x" * 3000]),
                 ("GET /big", "/big", "40", [])]
        for what, path, rate, extra in cases:
            mark = nginx.log_mark()
            result = harness.run_punctual(binary, [
                "--http", "2", "--cacert", m.ca_cert, "-R", rate, "-d", "1s", "-c", "2",
                "-t", "1", "--timeout", "3s", *extra, nginx.url(path)])
            report = harness.require_report(result)
            harness.assert_denominator(report)
            planned = report["schedule"]["planned"]
            check_eq(report["outcomes"]["ok"], planned, what + ": ok == planned")
            check_eq(report["protocol"]["name"], "h2", what + ": protocol")
            check_eq(report["tls"]["alpn"], "h2", what + ": ALPN")
            logged = nginx.access_log()[mark:]
            check_eq(len(logged), planned, what + ": requests nginx logged")
            check(all(f["protocol"] in ("TLSv1.3", "TLSv1.2") for f in logged), what + ": over TLS")
            # nginx's $bytes_sent for an HTTP/2 request is its stream's frames, headers included,
            # which is what punctual counts per request.
            check_eq(report["bytes"]["received"], sum(int(f["bytes_sent"]) for f in logged),
                     what + ": bytes received")
            if path == "/big":
                check(report["bytes"]["received"] > planned * tls_lib.BIG_BODY_SIZE,
                      f"/big: {report['bytes']['received']} bytes for {planned} bodies")


def negotiation(binary):
    with tls_lib.tls_material() as m, tls_lib.nginx_tls_server(m) as h1_only:
        result = harness.run_punctual(binary, [
            "--http", "auto", "--cacert", m.ca_cert, "-R", "100", "-d", "500ms", "-c", "1",
            "-t", "1", "-H", "Keep-Alive: timeout=5", h1_only.url("/")])
        report = harness.require_report(result)
        check_eq(report["protocol"]["name"], "http/1.1", "--http auto against an HTTP/1.1 server")
        check_eq(report["outcomes"]["ok"], report["schedule"]["planned"], "--http auto: ok == planned")
        # With auto the protocol is known only per connection: the header is kept for HTTP/1.1
        # and left out over h2, and the user is told so once.
        notes = [line for line in harness.stderr_lines(result.stderr) if "note:" in line]
        check(len(notes) == 1 and "Keep-Alive" in notes[0] and "h2" in notes[0],
              f"--http auto with an HTTP/1.1-only header: one note naming it: {notes}")
        result = harness.run_punctual(binary, [
            "--http", "2", "--cacert", m.ca_cert, "-R", "100", "-d", "500ms", "-c", "1",
            "-t", "1", h1_only.url("/")], json_report=False)
        check_eq(result.returncode, 1, "--http 2 against a server without h2: exit status")
        lines = harness.stderr_lines(result.stderr)
        check(len(lines) == 1 and "h2" in lines[0] and "ALPN" in lines[0],
              f"one line naming h2 and ALPN: {lines}")


def main():
    binary = harness.binary_from_argv()
    cases = harness.Checks("test_http2")
    cases.run("nginx http2 over TLS", nginx_h2, binary)
    cases.run("negotiation by ALPN", negotiation, binary)
    return cases.finish()


if __name__ == "__main__":
    sys.exit(main())
