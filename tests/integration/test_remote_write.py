"""--remote-write against Debian's real prometheus (its remote-write receiver on).

Usage: python3 test_remote_write.py PATH_TO_PUNCTUAL

The remote-write half on its own: tests/tools/remote_write_probe pushes hand-built snapshots
through the same sink, pusher and HTTP transport a run uses.
- prometheus stores the final values, every sample (none refused as out of order), with the
  run_id and shard labels, and punctual_info keeps its one run_id;
- three shards of one run_id: PromQL's sums over them;
- the endpoint down: every snapshot dropped and counted, the end waits at most the bound;
- the endpoint slow (a server that answers after 30 s): the end waits at most the bound.
"""

import contextlib
import http.server
import json
import os
import subprocess
import sys
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


def case_probe_down(binary):
    counts, wall = probe(binary, f"http://127.0.0.1:{harness.closed_port()}/api/v1/write",
                         "probe-down", 0)
    check(not counts["final_pushed"] and counts["pushes"] == 0, f"counts: {counts}")
    check(counts["failed_attempts"] > 0, f"counts: {counts}")
    check_eq(counts["dropped"], counts["snapshots"], "every snapshot dropped")
    check(wall < FINAL_WAIT_S + 1.0, f"the probe's end waited {wall:.2f} s")


def case_probe_slow(binary):
    with slow_endpoint() as slow:
        counts, wall = probe(binary, slow, "probe-slow", 0)
    check(not counts["final_pushed"] and counts["failed_attempts"] >= 1, f"counts: {counts}")
    check(wall < FINAL_WAIT_S + 1.0, f"the probe's end waited {wall:.2f} s for a slow endpoint")


def main():
    binary = harness.binary_from_argv()
    checks = harness.Checks("remote write")
    checks.run("probe: an endpoint that is down is counted and bounded", case_probe_down, binary)
    checks.run("probe: a slow endpoint holds up the end at most the bound", case_probe_slow,
               binary)
    with prometheus_server.prometheus_server([]) as prom:
        checks.run("probe: prometheus stores the values, in order, labelled", case_probe_stored,
                   binary, prom)
        checks.run("probe: three shards sum in PromQL", case_probe_shards, binary, prom)
    checks.finish()

if __name__ == "__main__":
    main()
