"""--metrics-listen against a real Prometheus (Debian's 2.42, tests/integration/prometheus_server.py).

Two runs at once against `punctual serve` with 503 faults, each scraped every second by one
Prometheus, each lingering after the run (until SIGTERM) so that a scrape sees the final values:
- one URL: the stored counters by outcome equal the JSON report's outcomes (http_error
  included), each histogram's _count equals the JSON's count of that view, and
  histogram_quantile() over the buckets is within the documented factor of the JSON's p99;
- a mix of 200 names, all of them failing some requests: every name's error series is stored
  and equals its by_name count;
- the one-URL run also remote-writes to the same Prometheus: the pushed series (labelled with
  the run_id, no job) agree with the scraped ones, counter by counter and bucket by bucket.
Also: bad --metrics-listen and --metrics-linger values are refused in one line with exit 2.

Usage: python3 test_metrics_scrape.py PATH_TO_PUNCTUAL
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, check_eq  # noqa: E402
from prometheus_server import prometheus_server  # noqa: E402

NAMES = 200
MAX_BOUND_RATIO = 1.28 * 1.001  # docs/design.md, "Live metrics": the quantile error
# Prometheus marks a series stale once its target is gone; last_over_time() reads past that.
LAST = "last_over_time({}[5m])"


def start_run(binary, tmp, tag, url, metrics_port, extra):
    """Starts a 2 s run that lingers (up to 60 s) serving its final metrics after its report."""
    json_path = os.path.join(tmp, f"{tag}.json")
    cmd = [binary, "run", "-t", "2", "-c", "8", "-d", "2s", "--warmup", "0s", "-q",
           "--metrics-listen", f"127.0.0.1:{metrics_port}", "--metrics-linger", "60s",
           "--json", json_path, *extra, url]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return proc, json_path


def wait_report(proc, json_path, timeout_s=30):
    """The JSON report, once written (atomically, before the linger begins)."""
    deadline = time.monotonic() + timeout_s
    while not os.path.exists(json_path):
        if proc.poll() is not None:
            raise AssertionError(f"run exited {proc.returncode}: {proc.stderr.read()}")
        check(time.monotonic() < deadline, "no report")
        time.sleep(0.05)
    return harness.load_report(json_path)


def end_linger(proc):
    """SIGTERM ends the linger; the run exits as it would have."""
    proc.terminate()
    _, err = proc.communicate(timeout=10)
    check(proc.returncode in (0, 4), f"run exited {proc.returncode}: {err}")


def values(server, expr, key):
    return {r["metric"].get(key, ""): float(r["value"][1]) for r in server.query(expr)}


def stored(server, expr, key, want, timeout_s=20):
    """{label value: stored value} of `expr`, polled until it equals `want` (a scrape after
    the final snapshot) or the time is up (then the last one read, for the check to name)."""
    deadline = time.monotonic() + timeout_s
    while True:
        got = values(server, expr, key)
        if got == want or time.monotonic() > deadline:
            return got
        time.sleep(0.2)


def check_one_url(server, report, port):
    instance = f'instance="127.0.0.1:{port}"'
    want = {k: float(v) for k, v in report["outcomes"].items()}
    by_outcome = stored(server, LAST.format(f"punctual_requests_total{{{instance}}}"), "outcome",
                        want)
    check_eq(by_outcome, want, "stored counts by outcome")
    check(report["outcomes"]["http_error"] > 0, "the faults made no http_error")
    codes = values(server, LAST.format(f"punctual_http_responses_total{{{instance}}}"), "code")
    check_eq(codes, {k: float(v) for k, v in report["status_counts"].items()},
             "stored responses by code")
    for view in ("response_time", "service_time", "send_lag", "queue_wait"):
        got = values(server, LAST.format(f"punctual_{view}_seconds_count{{{instance}}}"), "job")
        check_eq(got.get("punctual"), float(report["latency"][view]["count"]), f"{view} _count")
    exact = report["latency"]["response_time"]["percentiles_ns"]["99"] / 1e9
    buckets = LAST.format(f"punctual_response_time_seconds_bucket{{{instance}}}")
    estimate = float(server.query(f"histogram_quantile(0.99, {buckets})")[0]["value"][1])
    if exact >= 50e-6:
        factor = max(estimate / exact, exact / estimate)
        check(factor <= MAX_BOUND_RATIO,
              f"histogram_quantile p99 {estimate} vs exact {exact}: factor {factor}")
    info = server.query(LAST.format(f"punctual_info{{{instance}}}"))
    check_eq(info[0]["metric"].get("run_id"), report["run_id"], "punctual_info's run_id")


def check_pushed_agrees(server, report, port):
    """The remote-written series (no job label: not scraped) equal the scraped ones."""
    scraped = f'instance="127.0.0.1:{port}"'
    pushed = f'job="",run_id="{report["run_id"]}"'
    for metric, key in (("punctual_requests_total", "outcome"),
                        ("punctual_http_responses_total", "code"),
                        ("punctual_response_time_seconds_bucket", "le"),
                        ("punctual_send_lag_seconds_bucket", "le")):
        want = values(server, LAST.format(f"{metric}{{{scraped}}}"), key)
        check(len(want) > 1, f"no scraped {metric}")
        got = stored(server, LAST.format(f"{metric}{{{pushed}}}"), key, want)
        check_eq(got, want, f"{metric}: pushed against scraped")


def check_names(server, report, port):
    instance = f'instance="127.0.0.1:{port}"'
    check_eq(len(report["by_name"]), NAMES, "names in the report")
    want = {name: float(n["outcomes"]["http_error"]) for name, n in report["by_name"].items()}
    check(min(want.values()) > 0, "a name saw no error (raise the rate)")
    errors = stored(server, LAST.format(
        f'punctual_requests_total{{{instance},outcome="http_error"}}'), "name", want)
    check_eq(errors, want, "stored http_error counts by name")
    codes = values(server, LAST.format(
        f'punctual_http_responses_total{{{instance},code="503"}}'), "name")
    check_eq(len(codes), NAMES, "names with a stored 503 series")
    # docs/design.md's worked example: 200 names, codes 200 and 503 each, no socket error.
    check_eq(report["socket_errors"], {k: 0 for k in report["socket_errors"]}, "socket errors")
    samples = values(server, LAST.format(f"scrape_samples_scraped{{{instance}}}"), "job")
    check_eq(samples.get("punctual"), float(NAMES * (7 + 2) + NAMES * 2 * 65 + 2 * 65 + 13),
             "series in the last scrape")


def case_scraped_runs(binary):
    tmp = tempfile.mkdtemp(prefix="punctual-metrics-")
    mix = os.path.join(tmp, "mix.yaml")
    with open(mix, "w", encoding="utf-8") as f:
        f.write("requests:\n" + "".join(f"  - {{name: n{i:03d}, path: /p{i}}}\n" for i in range(NAMES)))
    one_port, names_port = harness.free_port(), harness.free_port()
    try:
        scrape_both(binary, mix, tmp, one_port, names_port)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def scrape_both(binary, mix, tmp, one_port, names_port):
    with harness.punctual_serve(binary, "--fault", "503:0.2") as s1, \
            harness.punctual_serve(binary, "--fault", "503:0.5") as s2, \
            prometheus_server([f"127.0.0.1:{one_port}", f"127.0.0.1:{names_port}"]) as prom:
        one = start_run(binary, tmp, "one", s1.url("/"), one_port,
                        ["-R", "500", "--remote-write", prom.url + "/api/v1/write"])
        named = start_run(binary, tmp, "names", s2.url("/"), names_port,
                          ["-R", "4000", "--requests", mix])
        try:
            one_report = wait_report(*one)
            names_report = wait_report(*named)
            harness.assert_denominator(one_report)
            harness.assert_denominator(names_report)
            check_one_url(prom, one_report, one_port)
            check_pushed_agrees(prom, one_report, one_port)
            check_names(prom, names_report, names_port)
        except BaseException:
            # The first failure is the one to report: stopping the runs may fail too (a run
            # stopped before its handler was installed exits -15), and must not hide it.
            for proc, _ in (one, named):
                proc.kill()
                proc.wait()
            raise
        end_linger(one[0])
        end_linger(named[0])


def case_bad_values(binary):
    for args, text in ((["--metrics-listen", "nohost"], "--metrics-listen"),
                       (["--metrics-listen", ":99999"], "--metrics-listen"),
                       (["--metrics-linger", "soon"], "--metrics-linger")):
        proc = subprocess.run([binary, "run", "-R", "10", "-d", "1s", *args,
                               f"http://127.0.0.1:{harness.closed_port()}/"],
                              capture_output=True, text=True, timeout=10)
        check_eq(proc.returncode, 2, f"exit code of {args}")
        lines = harness.stderr_lines(proc.stderr)
        check(len(lines) == 1 and text in lines[0], f"{args}: stderr {proc.stderr!r}")


def main():
    binary = harness.binary_from_argv()
    checks = harness.Checks("metrics_scrape")
    checks.run("scraped_counts_equal_the_json", case_scraped_runs, binary)
    checks.run("bad_values_exit_2", case_bad_values, binary)
    checks.finish()


if __name__ == "__main__":
    main()
