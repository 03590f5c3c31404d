"""--remote-write against Debian's real prometheus (its remote-write receiver on).

Usage: python3 test_remote_write.py PATH_TO_PUNCTUAL

Runs:
- against `serve --fault 503:0.2`: the stored counters by outcome equal the JSON's outcomes,
  http_error included, and the text report says the final values were stored;
- three shards of one run_id: the sums over the shards equal `punctual merge`'s outcomes;
- the endpoint down for the whole run: the report is whole (exit 0, the denominator holds), the
  failures are counted, the run ends within the 2 s bound;
- the endpoint slow: in test_remote_write_slow.py, which times the schedule and so runs alone.
The remote-write half on its own (tests/tools/remote_write_probe pushes hand-built snapshots
through the same sink and transport): every sample stored in order, the run_id and shard labels,
punctual_info keeping its one run_id, PromQL's sums over three shards.
"""

import contextlib
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import prometheus_server  # noqa: E402
from harness import check, check_eq  # noqa: E402

FINAL_WAIT_S = 2.0  # metrics::remote_write_options::final_wait: the most the run's end waits


class _Slow(http.server.BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 - the stdlib's name
        time.sleep(30)

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def slow_endpoint():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Slow)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/api/v1/write"
    finally:
        server.shutdown()
        server.server_close()


def probe_path(binary):
    return os.path.join(os.path.dirname(binary), "tests", "remote_write_probe")


def remote_write_url(prom):
    return prom.url + "/api/v1/write"


def values(prom, expr):
    """[(labels, float value)] of an instant query."""
    return [(row["metric"], float(row["value"][1])) for row in prom.query(expr)]


def probe(binary, url, run_id, shard, snapshots=3):
    """Runs tests/tools/remote_write_probe: (its push counts, wall seconds)."""
    started = time.monotonic()
    cp = subprocess.run([probe_path(binary), url, run_id, str(shard), str(snapshots)],
                        capture_output=True, text=True, timeout=30)
    wall = time.monotonic() - started
    check_eq(cp.returncode, 0, f"remote_write_probe exit code ({cp.stderr[-400:]!r})")
    return json.loads(cp.stdout), wall


def case_probe_stored(binary, prom):
    counts, _ = probe(binary, remote_write_url(prom), "probe-one", 0)
    check(counts["final_pushed"] and counts["dropped"] == 0, f"counts: {counts}")
    stored = {labels["outcome"]: value for labels, value in
              values(prom, 'punctual_requests_total{run_id="probe-one", shard="0"}')}
    check_eq(stored, {"ok": 30.0, "http_error": 9.0}, "the final values stored")
    # Every sample was stored, none refused as out of order.
    points = values(prom, 'count_over_time(punctual_requests_total{run_id="probe-one"}[5m])')
    check_eq(sorted(v for _, v in points), [3.0, 3.0], "samples per series")
    info = values(prom, 'punctual_info{run_id="probe-one"}')
    check_eq(len(info), 1, "punctual_info keeps its one run_id label")


def case_probe_shards(binary, prom):
    import concurrent.futures
    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        done = list(pool.map(lambda i: probe(binary, remote_write_url(prom), "probe-3", i),
                             range(3)))
    check(all(c["final_pushed"] for c, _ in done), f"counts: {done}")
    rows = values(prom, 'sum by (outcome) (punctual_requests_total{run_id="probe-3"})')
    check_eq({labels["outcome"]: value for labels, value in rows},
             {"ok": 90.0, "http_error": 27.0}, "the sums over three shards")


def stored_outcomes(prom, run_id):
    """{outcome: value} of punctual_requests_total summed over names and shards."""
    rows = values(prom, f'sum by (outcome) (punctual_requests_total{{run_id="{run_id}"}})')
    return {labels["outcome"]: int(value) for labels, value in rows}


def check_outcomes(stored, expected, what):
    for outcome in harness.OUTCOMES:
        check_eq(stored.get(outcome, 0), expected[outcome], f"{what}: stored {outcome}")


def run(binary, args, timeout_s=60):
    result = harness.run_punctual(binary, args, timeout_s=timeout_s)
    check(result.report is not None, f"no report:\n{result.describe()}")
    return result


def case_faults(binary, prom):
    with harness.punctual_serve(binary, "--fault", "503:0.2") as serve:
        r = run(binary, ["-R", "300", "-d", "1500ms", "--run-id", "rw-faults", "-q",
                         "--remote-write", remote_write_url(prom),
                         "--remote-write-header", "X-Scope-OrgID: punctual-test",
                         serve.url()])
    report = r.report
    check(report["outcomes"]["http_error"] > 0, f"no 503s: {report['outcomes']}")
    rw = report["remote_write"]
    check(rw["final_pushed"], f"the final push did not land: {rw}")
    check_eq(rw["dropped"], 0, "snapshots dropped")
    check(rw["pushes"] >= 2, f"expected a push a second and the final one: {rw}")
    check_outcomes(stored_outcomes(prom, "rw-faults"), report["outcomes"], "one run")
    shards = values(prom, 'count(punctual_requests_total{run_id="rw-faults", shard="0"})')
    check(shards and shards[0][1] > 0, "the series carry shard=\"0\"")
    check("remote write:" in r.stdout and "final values stored" in r.stdout,
          f"the text report's remote-write line: {r.stdout[-800:]}")


def case_shards(binary, prom):
    with harness.punctual_serve(binary, "--fault", "503:0.2") as serve, \
            tempfile.TemporaryDirectory(prefix="punctual-rw-shards-") as work:
        start_at = f"{time.time() + 1.5:.3f}"
        procs = [subprocess.Popen(
            [binary, "run", "-R", "600", "-d", "1s", "-t", "1", "-c", "4", "-q",
             "--shard", f"{i}/3", "--start-at", start_at, "--run-id", "rw-shards",
             "--out-dir", work, "--remote-write", remote_write_url(prom), serve.url()],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(3)]
        for p in procs:
            out, err = p.communicate(timeout=60)
            check(p.returncode in (0, 4), f"a shard exited {p.returncode}: {err[-600:]}")
        merged = os.path.join(work, "merged.json")
        m = subprocess.run([binary, "merge", *[os.path.join(work, f"shard-{i}-of-3.json")
                                               for i in range(3)], "-o", merged],
                           capture_output=True, text=True, timeout=60)
        check(m.returncode in (0, 4), f"merge exited {m.returncode}: {m.stderr[-600:]}")
        with open(merged, encoding="utf-8") as f:
            merged_report = json.load(f)
        for i in range(3):
            with open(os.path.join(work, f"shard-{i}-of-3.json"), encoding="utf-8") as f:
                rw = json.load(f)["remote_write"]
            check(rw["final_pushed"], f"shard {i}: final push {rw}")
    check_outcomes(stored_outcomes(prom, "rw-shards"), merged_report["outcomes"], "3 shards")
    per_shard = values(prom, 'count by (shard) (punctual_requests_total{run_id="rw-shards"})')
    check_eq(sorted(labels["shard"] for labels, _ in per_shard), ["0", "1", "2"], "shard labels")


def case_endpoint_down(binary):
    down = f"http://127.0.0.1:{harness.closed_port()}/api/v1/write"
    with harness.punctual_serve(binary) as serve:
        r = run(binary, ["-R", "200", "-d", "1s", "-q", "--remote-write", down, serve.url()])
    harness.require_report(r)  # exit 0, as without remote write (or the host's lateness alone)
    harness.assert_denominator(r.report)
    rw = r.report["remote_write"]
    check(rw["failed_attempts"] > 0 and not rw["final_pushed"] and rw["pushes"] == 0,
          f"a dead endpoint's counts: {rw}")
    check_eq(rw["dropped"], rw["snapshots"], "every snapshot dropped")
    check("refused" in (rw["last_error"] or ""), f"last_error: {rw['last_error']}")
    check(r.wall_s < 1.0 + FINAL_WAIT_S + 1.5, f"the run took {r.wall_s:.2f} s")
    check("final values NOT stored" in r.stdout, f"text report: {r.stdout[-600:]}")


def send_lag_p99_ms(report):
    return report["latency"]["send_lag"]["percentiles_ns"]["99"] / 1e6


# A push that held up the workers would hold them for a push's wait (50 ms slices, backoffs of
# 250 ms and more, the final wait of 2 s); the host's own pauses, seen here in soaks, reached
# 27 ms. So the bound between them is a fixed one, with no baseline run and no retry: how the
# lag compares with a run without remote write is a benchmark's question, not this test's.
HELD_UP_MS = 100.0


def case_endpoint_slow(binary):
    args = ["-R", "1000", "-d", "1500ms", "-q"]
    with harness.punctual_serve(binary) as serve, slow_endpoint() as slow:
        r = run(binary, [*args, "--remote-write", slow, serve.url()])
    rw = r.report["remote_write"]
    check(rw["pushes"] == 0 and rw["failed_attempts"] >= 1, f"a slow endpoint's counts: {rw}")
    check(r.wall_s < 1.5 + FINAL_WAIT_S + 1.0, f"the run took {r.wall_s:.2f} s")
    lag = send_lag_p99_ms(r.report)
    print(f"     send lag p99 {lag:.3f} ms with a slow endpoint", flush=True)
    check(lag < HELD_UP_MS, f"send lag p99 {lag:.3f} ms: the schedule was held up")
    harness.assert_denominator(r.report)


def main():
    binary = harness.binary_from_argv()
    checks = harness.Checks("remote write")
    # The dead endpoint's run times nothing finer than its end, so it goes beside Prometheus's
    # start and the cases that count. The slow endpoint's, which compares send lag, is a timing
    # test of its own (test_remote_write_slow.py).
    down = threading.Thread(target=checks.run, args=(
        "a run with its endpoint down: counted, never fatal, on time", case_endpoint_down, binary))
    down.start()
    with prometheus_server.prometheus_server([]) as prom:
        checks.run("probe: prometheus stores the values, in order, labelled", case_probe_stored,
                   binary, prom)
        checks.run("probe: three shards sum in PromQL", case_probe_shards, binary, prom)
        checks.run("serve --fault 503:0.2: stored outcomes equal the JSON's", case_faults,
                   binary, prom)
        down.join()
        checks.run("three shards: stored sums equal merge's outcomes", case_shards, binary, prom)
    checks.finish()

if __name__ == "__main__":
    main()
