"""`punctual run --http 2`: HTTP/2 measured as honestly as HTTP/1.1.

- Truth over h2c: against `serve --http2` with one logged stall, over 2 connections x 100
  streams, the response-time percentiles match the truth rebuilt from the server's stall log,
  with the tolerance the HTTP/1.1 truth tests use, and every scheduled request arrives once.
  Over 1 connection x 10 streams the stall fills the streams and the requests behind them wait
  in the generator's queue: the truth still holds, and queue wait is where the waiting shows.
  The same at 5000 req/s over 2 x 100.
- nginx with `http2` over TLS: keep-alive GETs, a POST with a body, and a response larger than
  the initial flow-control window (so window updates flow), each with ok == planned, the
  protocol named h2 in the JSON, and the response bytes counted exactly as nginx logged them.
- The closed model over h2: one request in flight per connection, every one answered; with
  --max-streams M, M users on each connection (h2load's -m), which `serve --http2` with a fixed
  service time sees as exactly connections x M requests at once.
- --http auto takes what ALPN gives, --http 2 refuses a server that offers no h2 (exit 1, one
  line), and the options HTTP/2 cannot honour are refused with exit 2 and one line.

Usage: python3 test_http2.py PATH_TO_PUNCTUAL
"""

import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import tls_lib  # noqa: E402
import truth_lib as tl  # noqa: E402
from harness import check, check_eq  # noqa: E402

MS = tl.MS
STALL_AT = "1500ms:800ms"  # from the server's start; the run starts ~50 ms after it
WARMUP = "250ms"
DURATION = "3s"
OUTCOMES = ("ok", "http_error", "socket_error", "timeout", "dropped", "unfinished")


def truth_attempt(binary, rate, connections, streams):
    """One run against `serve --http2` with a stall: the report, the truth and the server's own
    answer times (answered - intended) at each percentile, and the median arrival lag."""
    with tempfile.TemporaryDirectory(prefix="punctual-h2-truth-") as work:
        server, port = tl.start_server(binary, work, STALL_AT, extra_args=["--http2"])
        try:
            report, schedule_path, _ = tl.run_load(
                binary, work, port, rate, "constant", 1, connections, DURATION, WARMUP,
                extra_args=["--http", "2", "--max-streams", str(streams)])
        finally:
            tl.stop_server(server)
        sched = report["schedule"]
        start = int(sched["start_mono_ns"])
        entries = tl.read_schedule(schedule_path)
        intended_all = [start + off for off, _ in entries]
        measured = [start + off for off, phase in entries if phase == "measured"]
        stalls = tl.read_stalls(os.path.join(work, "stall.jsonl"))
        arrivals = tl.read_arrivals(os.path.join(work, "arrivals.txt"))
    name = f"R{rate} c{connections} x{streams} streams"
    planned = int(sched["planned"])
    check_eq(sum(report["outcomes"][k] for k in OUTCOMES), planned, name + ": planned == sum(outcomes)")
    check_eq(report["outcomes"]["ok"], planned, name + ": every request ok")
    check_eq(report["protocol"]["name"], "h2", name + ": protocol")
    check_eq(report["protocol"]["connections"]["h2"], connections, name + ": h2 connections set up")
    check_eq(len(stalls), 1, name + ": one stall taken")
    check_eq(len(arrivals), len(intended_all), name + ": every scheduled request arrived once")
    truth = tl.truth_percentiles(measured, stalls)
    seen = tl.server_observed_percentiles(measured, intended_all, arrivals)
    lag = tl.median(tl.arrival_lags(intended_all, arrivals, stalls))
    return name, report, truth, seen, lag


def truth_run(binary, rate, connections, streams):
    """Runs against `serve --http2` with a stall and checks the report against the truth;
    returns the report. As in test_truth.py, a run whose only misses are against the truth,
    while its requests reached the server on schedule and its figures match the server's own
    answer times, is taken again (3 runs at most): the host held the server back, and the truth
    (which has the server answer at once outside its stall) does not contain that."""
    for attempt in range(1, 4):
        name, report, truth, seen, lag = truth_attempt(binary, rate, connections, streams)
        got = {p: int(report["latency"]["response_time"]["percentiles_ns"][p]) for p in tl.PERCENTILES}
        misses = [p for p in tl.PERCENTILES if not tl.within_tolerance(truth[p], got[p])]
        host_only = (lag is not None and lag < tl.ARRIVAL_MEDIAN_LIMIT_NS and
                     all(tl.within_tolerance(seen[p], got[p]) for p in tl.PERCENTILES))
        if not misses or not host_only or attempt == 3:
            break
        print(f"{name}: p{', p'.join(misses)} missed the truth while the arrivals kept the schedule "
              "and the server's own answer times agree: the server answered late, run again",
              flush=True)
    for p in tl.PERCENTILES:
        check(tl.within_tolerance(truth[p], got[p]),
              f"{name}: p{p} truth {tl.fmt_ns(truth[p])}, measured {tl.fmt_ns(got[p])} "
              f"(the server saw {tl.fmt_ns(seen[p])}; median arrival lag {tl.fmt_ns(lag)})")
    return report


def truth_many_streams(binary):
    truth_run(binary, 1000, 2, 100)


def truth_few_streams(binary):
    report = truth_run(binary, 1000, 1, 10)
    # 10 streams fill in the first 10 ms of the 800 ms stall; the rest wait for a stream.
    queue = report["latency"]["queue_wait"]["percentiles_ns"]
    check(int(queue["99"]) > 500 * MS, f"queue wait p99 {tl.fmt_ns(int(queue['99']))} shows the stall")
    service_p99 = int(report["latency"]["service_time"]["percentiles_ns"]["99"])
    check(service_p99 < 100 * MS, f"service time p99 {tl.fmt_ns(service_p99)}: the waiting is not service")


def truth_5000(binary):
    truth_run(binary, 5000, 2, 100)


def nginx_h2(binary):
    with tls_lib.tls_material() as m, tls_lib.nginx_tls_server(m, http2=True) as nginx:
        cases = [("GET /", "/", []),
                 ("POST / with a body", "/", ["-m", "POST", "--body", "x" * 3000]),
                 ("GET /big", "/big", [])]
        for what, path, extra in cases:
            mark = nginx.log_mark()
            result = harness.run_punctual(binary, [
                "--http", "2", "--cacert", m.ca_cert, "-R", "200", "-d", "1s", "-c", "2",
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


def closed_model(binary):
    """The closed model over h2 keeps one request in flight per connection, as over HTTP/1.1."""
    with tls_lib.tls_material() as m, tls_lib.nginx_tls_server(m, http2=True) as nginx:
        mark = nginx.log_mark()
        result = harness.run_punctual(binary, [
            "--http", "2", "--model", "closed", "--cacert", m.ca_cert, "-d", "1s", "-c", "2",
            "-t", "1", nginx.url("/")])
        report = harness.require_report(result)
        harness.assert_denominator(report)
        planned = report["schedule"]["planned"]
        check(planned > 100, f"closed model over h2: {planned} requests in 1 s")
        check_eq(report["outcomes"]["ok"], planned, "closed model over h2: ok == planned")
        check_eq(report["protocol"]["name"], "h2", "closed model over h2: protocol")
        check_eq(report["protocol"]["connections"]["h2"], 2, "closed model over h2: connections")
        check_eq(len(nginx.access_log()[mark:]), planned, "closed model over h2: requests nginx logged")


def most_at_once(arrivals):
    """The most requests a `serve --arrival-log` shows between arrival and answer at once."""
    events = sorted([(a, 1) for a, _ in arrivals] + [(d, -1) for _, d in arrivals])
    most = now = 0
    for _, step in events:  # at one instant an answer (-1) sorts before an arrival
        now += step
        most = max(most, now)
    return most


def closed_model_streams(binary):
    """--max-streams 4 over 2 connections: 8 closed-model users, each with one request at a time."""
    with tempfile.TemporaryDirectory(prefix="punctual-h2-closed-") as work:
        log = os.path.join(work, "arrivals.txt")
        with harness.punctual_serve(binary, "--http2", "--service-time", "20ms", "--arrival-log", log,
                                    "--duration", "30s") as server:
            result = harness.run_punctual(binary, [
                "--http", "2", "--model", "closed", "-c", "2", "--max-streams", "4", "-d", "1s",
                "-t", "1", server.url("/")])
            single = harness.run_punctual(binary, [
                "--http", "2", "--model", "closed", "-c", "2", "-d", "1s", "-t", "1", server.url("/")])
        arrivals = tl.read_arrivals(log)
    report = harness.require_report(result)
    harness.assert_denominator(report)
    planned = report["schedule"]["planned"]
    check_eq(report["outcomes"]["ok"], planned, "2 x 4 users: ok == planned")
    check_eq(report["protocol"]["connections"]["h2"], 2, "2 x 4 users: connections")
    check_eq(report["model"]["users"], 8, "2 x 4 users: the JSON's model.users")
    # Each user waits 20 ms per request: 8 of them send about 400 in 1 s, 2 about 100.
    check(planned >= 250, f"2 x 4 users sent {planned} requests in 1 s (8 users: ~400)")
    one = harness.require_report(single)
    harness.assert_denominator(one)
    check(one["schedule"]["planned"] <= 130, f"2 x 1 users sent {one['schedule']['planned']} (~100)")
    check_eq(one["model"]["users"], 2, "2 x 1 users: the JSON's model.users")
    check_eq(len(arrivals), planned + one["schedule"]["planned"], "every request arrived once")
    check_eq(most_at_once(arrivals), 8, "the most requests at the server at once")
    check("model: closed, 8 users (4 on each of 2 connections)" in result.stdout,
          "the header names the users: " + result.stdout.splitlines()[0])


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


def refusals(binary):
    url = f"http://127.0.0.1:{harness.closed_port()}/"
    cases = [
        (["--http", "3"], "--http"),
        (["--http", "2", "--no-keepalive"], "--no-keepalive"),
        (["--http", "2", "-H", "Connection: close"], "Connection"),
        (["--http", "2", "-H", "Transfer-Encoding: chunked"], "Transfer-Encoding"),
        (["--http", "2", "-H", "Upgrade: h2c"], "Upgrade"),
        (["--max-streams", "10"], "--max-streams"),
        (["--http", "2", "--max-streams", "0"], "--max-streams"),
    ]
    for args, named in cases:
        proc = subprocess.run([binary, "run", "-R", "10", "-d", "1s", *args, url],
                              capture_output=True, text=True, timeout=10)
        check_eq(proc.returncode, 2, f"{args}: exit status")
        lines = harness.stderr_lines(proc.stderr)
        check(len(lines) == 1 and named in lines[0], f"{args}: one line naming {named}: {lines}")


def main():
    binary = harness.binary_from_argv()
    cases = harness.Checks("test_http2")
    cases.run("truth over 2 connections x 100 streams", truth_many_streams, binary)
    cases.run("truth over 1 connection x 10 streams: the wait is queue wait", truth_few_streams, binary)
    cases.run("truth at 5000 req/s", truth_5000, binary)
    cases.run("nginx http2 over TLS", nginx_h2, binary)
    cases.run("the closed model over h2", closed_model, binary)
    cases.run("the closed model with --max-streams", closed_model_streams, binary)
    cases.run("negotiation by ALPN", negotiation, binary)
    cases.run("refusals", refusals, binary)
    return cases.finish()


if __name__ == "__main__":
    sys.exit(main())
