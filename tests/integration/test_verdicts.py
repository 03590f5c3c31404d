"""Run validity, confidence intervals and the SLO gate, end to end.

Every gating validity check is made to fail for a real reason (a real overload, a
real stall, a real short run), never by a mock; a healthy run passes them all. The
SLO cases pin the exit-code precedence of docs/design.md: 3 when service time alone
fails, else 4 for an invalid run, else 3 for a failing SLO, else 0.

The cases whose verdict no timing can change (bad expressions, drops, the connection cap, the
service-time and closed-model gates) run from test_exit_codes.py, beside other untimed tests;
this file keeps the ones that need a healthy, valid run or measure the generator's timing.

Usage: python3 test_verdicts.py PATH_TO_PUNCTUAL
"""

import math
import operator
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, check_eq  # noqa: E402

# Always gating in an open run: any drop, the schedule kept second by second, enough connections.
GATING = ("dropped", "schedule_kept", "connection_cap")
CHECK_FIELDS = ("name", "figure", "relation", "threshold", "unit", "level", "pass", "note")
SLO_FIELDS = ("expression", "figure", "bound", "threshold", "pass", "service_time_fails",
              "service_figure")
RELATIONS = {"<=": operator.le, ">=": operator.ge, "<": operator.lt, ">": operator.gt,
             "==": operator.eq}


# ---------------------------------------------------------------------------
# running

class Run(harness.Result):
    def __init__(self, cmd, returncode, stdout, stderr, wall_s, report, hgrm):
        super().__init__(cmd, returncode, stdout, stderr, wall_s, report)
        self.hgrm = hgrm


def run(binary, args, url, timeout_s=30.0, hgrm=False, prefix=()):
    """`punctual run --json F [--hgrm G] ARGS URL`.

    The URL goes last on purpose: a repeatable option (--slo, -H) swallows a
    positional that is followed by another option, so harness.run_punctual, which
    appends --json after the URL, cannot be used with --slo.
    """
    tmp = tempfile.mkdtemp(prefix="punctual-verdicts-")
    try:
        json_path = os.path.join(tmp, "report.json")
        hgrm_path = os.path.join(tmp, "report.hgrm")
        cmd = [*prefix, binary, "run", "--json", json_path]
        if hgrm:
            cmd += ["--hgrm", hgrm_path]
        cmd += [*args, url]
        started = time.monotonic()
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
        wall_s = time.monotonic() - started
        report = None
        if os.path.exists(json_path):
            report = harness.load_report(json_path)
        hgrm_text = None
        if hgrm and os.path.exists(hgrm_path):
            with open(hgrm_path, encoding="utf-8") as f:
                hgrm_text = f.read()
        return Run(cmd, proc.returncode, proc.stdout, proc.stderr, wall_s, report, hgrm_text)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run_on_serve(binary, serve_args, args, **kwargs):
    """A fresh `punctual serve SERVE_ARGS` per run, so seeded service times and
    stall windows (timed from server start) replay the same way every time."""
    with harness.punctual_serve(binary, *serve_args) as serve:
        return run(binary, args, serve.url("/"), **kwargs)


def expect_exit(result, code):
    if result.returncode != code:
        raise AssertionError(f"expected exit {code}\n{result.describe()}\n{summary(result.report)}")
    if result.report is None:
        raise AssertionError(f"no JSON report written\n{result.describe()}")
    return result.report


def summary(report):
    """Failed checks and SLO verdicts, to make a failure message self-explanatory."""
    if not report:
        return ""
    failed = [(c["name"], c["figure"], c["relation"], c["threshold"], c["level"])
              for c in report.get("validity", {}).get("checks", []) if not c.get("pass")]
    return f"failed checks: {failed}\nslo: {report.get('slo')}"


# ---------------------------------------------------------------------------
# report helpers

def checks_of(report):
    checks = report["validity"]["checks"]
    by_name = {}
    for c in checks:
        check(c["name"] not in by_name, f"check {c['name']} listed twice")
        by_name[c["name"]] = c
    return by_name


def gated_percentiles(report):
    """The percentile keys a run is judged on: those its --slo expressions name, else p99."""
    named = set()
    for r in (report.get("slo") or {}).get("results", []):
        m = re.match(r"p([\d.]+)|max", r["expression"])
        if m:
            named.add("max" if m.group(0) == "max" or float(m.group(1)) >= 100 else f"p{m.group(1)}")
    return named or {"p99"}


def assert_validity_consistent(report):
    """Every check is well formed, its verdict follows from its own figures, the send-lag and
    samples checks gate exactly at the gated percentiles, and `valid` is exactly 'every gating
    check passed'."""
    checks = checks_of(report)
    for name in GATING:
        check(name in checks, f"gating check {name} missing: {sorted(checks)}")
        check_eq(checks[name]["level"], "gating", f"{name}.level")
    gated = gated_percentiles(report)
    for name, c in checks.items():
        if name.startswith("send_lag_"):
            expected = "gating" if name[len("send_lag_"):] in gated else "warning"
            check_eq(c["level"], expected, f"{name}.level (gated: {sorted(gated)})")
    for p in gated:
        check(f"send_lag_{p}" in checks, f"no send-lag check at the gated {p}: {sorted(checks)}")
    for c in checks.values():
        for field in CHECK_FIELDS:
            check(field in c, f"check {c.get('name')} lacks {field}: {c}")
        check(c["level"] in ("gating", "warning"), f"level of {c['name']}: {c['level']}")
        check(c["relation"] in RELATIONS, f"relation of {c['name']}: {c['relation']}")
        verdict = RELATIONS[c["relation"]](c["figure"], c["threshold"])
        check_eq(c["pass"], verdict, f"{c['name']}: pass vs {c['figure']} {c['relation']} {c['threshold']}")
        if not c["pass"]:
            check(c["note"], f"failed check {c['name']} has no note")
    valid = all(c["pass"] for c in checks.values() if c["level"] == "gating")
    check_eq(report["validity"]["valid"], valid, "validity.valid vs the gating checks")


def assert_invalid_because(result, names, code=4):
    """Exit CODE, validity false, each of NAMES a failed gating check, and the
    reasons printed first, before the rest of the text report."""
    report = expect_exit(result, code)
    assert_validity_consistent(report)
    check_eq(report["validity"]["valid"], False, "validity.valid")
    checks = checks_of(report)
    for name in names:
        check(name in checks, f"check {name} missing: {sorted(checks)}")
        c = checks[name]
        check(c["level"] == "gating" and not c["pass"], f"{name} should be a failed gating check: {c}")
    lines = result.stdout.splitlines()
    check(lines and lines[0].startswith("INVALID RUN"),
          f"stdout does not start with the invalid-run reasons: {result.stdout[:300]!r}")
    head = ("\n" + result.stdout).split("\nmodel:", 1)[0]
    for name in names:
        check(f"- {name}:" in head, f"reason {name} not printed before the report: {head!r}")
    return report, checks


def slo_result(report, expression):
    slo = report.get("slo")
    check(slo is not None, "JSON has no slo section")
    for r in slo["results"]:
        for field in SLO_FIELDS:
            check(field in r, f"slo result lacks {field}: {r}")
    matches = [r for r in slo["results"] if r["expression"] == expression]
    check(len(matches) == 1, f"expected one slo result for {expression!r}: {slo}")
    return slo, matches[0]


def percentile_ci(report, key):
    rt = report["latency"]["response_time"]
    return rt["percentiles_ns"][key], rt["percentiles_ci_ns"][key], rt["percentiles_ci_method"][key]


# ---------------------------------------------------------------------------
# healthy run against nginx, and the warnings

def steal_ticks(cpu):
    """CPU `cpu`'s steal time so far, in the kernel's 10 ms ticks: time the host did not run it."""
    with open("/proc/stat") as f:
        for line in f:
            fields = line.split()
            if fields[0] == f"cpu{cpu}":
                return int(fields[8]) if len(fields) > 8 else 0
    return 0


def healthy_run(binary, nginx, state):
    """-R600 for 2 s, once: 1,200 samples, so p99 has 12 beyond it but p99.9 only 1.2.

    A 130 us nginx leaves the send-lag allowance at its 1 ms floor. In `--precision spin` the
    worker never idles, so the host's slow wake-ups of an idle vCPU (a sleeping fine-mode run
    here sees p99 of 0.05-1.3 ms, so that 1 run in ~20 fails p99 for the host's sake alone)
    stay out of its p99 (measured: 0-40 us). The millisecond-long pauses the host still causes
    now and then reach only p99.9 and the maximum, which warn. A failed run is taken again only
    on evidence that the host stopped running the vCPU (below), since a verdict that needed
    retries otherwise would be a flaky rule. bench/soak.sh measures the default fine mode.

    The spinning worker gets CPU 1 and nginx CPU 0, as in bench/: unpinned, the kernel now and
    then ran nginx on the spinner's CPU, preempting it for a time slice (one clean-clone run:
    17 sends over 1 ms late, p99 1.29 ms).
    """
    for worker in subprocess.run(["pgrep", "-P", str(nginx.proc.pid)], capture_output=True,
                                 text=True, timeout=5).stdout.split():
        subprocess.run(["taskset", "-p", "-c", "0", worker], capture_output=True, timeout=5)
    subprocess.run(["taskset", "-p", "-c", "0", str(nginx.proc.pid)], capture_output=True, timeout=5)
    # The host can still take CPU 1 away from the vCPU itself: its steal time (10 ms ticks) is
    # the evidence. Measured here: runs with 150-180 ms of steal had the worker at 91-92% of
    # its CPU and p99 of 0.8-2 ms; runs with 0-10 ms had p99 under 50 us. A run that fails
    # with steal time on its CPU is taken again after a pause, up to 5 in all; a failure with
    # none fails at once.
    stolen = []
    for attempt in range(5):
        if attempt:
            time.sleep(3)
        before = steal_ticks(1)
        result = run(binary, ["-t1", "-c4", "-R600", "-d2s", "--precision", "spin"], nginx.url("/"),
                     prefix=("taskset", "-c", "1"))
        ticks = steal_ticks(1) - before
        if result.returncode == 0 or ticks == 0:
            break
        stolen.append(ticks * 10)
    if stolen:
        print(f"     (taken again after runs the host stole {stolen} ms of CPU 1 from)", flush=True)
    check(len(stolen) < 5, f"5 runs failed while the host stole CPU 1 ({stolen} ms)\n{result.describe()}")
    state["healthy"] = result
    report = expect_exit(result, 0)
    assert_validity_consistent(report)
    harness.assert_clean(report)
    checks = checks_of(report)
    for name in (*GATING, "send_lag_p99", "samples_beyond_p99"):
        check(checks[name]["pass"], f"{name} failed on a healthy run: {checks[name]}")
    check(checks["connection_cap"]["figure"] == 4, f"connection_cap figure: {checks['connection_cap']}")
    check(any(n.startswith("worker_cpu_") for n in checks), f"no worker_cpu check: {sorted(checks)}")
    check("validity: valid" in result.stdout, "text report does not say 'validity: valid'")


def healthy(state):
    result = state.get("healthy")
    check(result is not None and result.report is not None, "the healthy run did not produce a report")
    return result, result.report


def thin_percentile_warns(state):
    result, report = healthy(state)
    # A warning never invalidates: the exit code follows the gating checks alone.
    check_eq(result.returncode, 0 if report["validity"]["valid"] else 4, "exit code")
    head = ("\n" + result.stdout).split("\nmodel:", 1)[0]
    check("samples_beyond_p99.9" not in head, f"a warning is printed as a reason: {head!r}")
    c = checks_of(report).get("samples_beyond_p99.9")
    check(c is not None, "no samples_beyond_p99.9 check")
    check_eq(c["level"], "warning", "samples_beyond_p99.9 level (not named in an --slo)")
    check_eq(c["pass"], False, "samples_beyond_p99.9 pass (1,200 samples leave 1.2 beyond p99.9)")
    check(c["figure"] < 10, f"samples beyond p99.9: {c['figure']}")
    m = re.search(r"a run of ([\d.]+)(ms|s|m|h)\b", c["note"])
    check(m, f"the note does not give the duration that would resolve it: {c['note']!r}")
    seconds = float(m.group(1)) * {"ms": 1e-3, "s": 1, "m": 60, "h": 3600}[m.group(2)]
    check(10 <= seconds <= 30, f"p99.9 at 600 req/s needs 16.7 s, the note says {m.group(0)!r}")
    check(re.search(r"warn\s+samples_beyond_p99\.9", result.stdout),
          "the text report does not show the p99.9 warning")


def enough_samples_no_warnings(state):
    _, report = healthy(state)
    checks = checks_of(report)
    for p in ("50", "75", "90", "99"):
        c = checks.get(f"samples_beyond_p{p}")
        check(c is not None, f"no samples_beyond_p{p} check")
        check(c["pass"], f"p{p} warns on a 1,200-sample run: {c}")
    # The healthy run spins (--precision spin), which costs its worker a whole core: the CPU
    # warning must say so, and must stay a warning.
    cpu = [c for n, c in checks.items() if n.startswith("worker_cpu_")]
    check(cpu and all(not c["pass"] and c["level"] == "warning" for c in cpu),
          f"spinning worker does not warn about its CPU: {cpu}")


def healthy_intervals_binomial(state):
    _, report = healthy(state)
    rt = report["latency"]["response_time"]
    methods = rt["percentiles_ci_method"]
    for key, point in rt["percentiles_ns"].items():
        check(key in rt["percentiles_ci_ns"], f"no interval for p{key}")
        lo, hi = rt["percentiles_ci_ns"][key]
        check(lo <= point <= hi, f"p{key} interval [{lo}, {hi}] misses its point {point}")
    for key in ("50", "90", "99"):
        check_eq(methods.get(key), "binomial", f"method of p{key} on a short healthy run")
    lo, hi = rt["percentiles_ci_ns"]["50"]
    check(hi > lo, f"p50 interval is degenerate: [{lo}, {hi}]")


# ---------------------------------------------------------------------------
# each gating check failing for a real reason

def starved_by_cpu_hog(binary, nginx):
    """A busy loop pinned for the length of the window to the CPU of a one-thread punctual that
    runs at the lowest priority: the generator gets a sliver of that CPU, far too little for
    20,000 req/s, so it falls far behind. The run must exit 4 and name the gating checks that
    caught it: send lag at p99, and usually the schedule not kept. (The deadline is short so that
    the backlog times out quickly once the hog is gone; the connects get their own.)"""
    # Its own session, so the whole group (timeout and the shell under it) is killed at the end
    # even if the run ends early; `timeout` bounds it if this script itself dies.
    hog = subprocess.Popen(["timeout", "3.3", "taskset", "-c", "1", "/bin/sh", "-c", "while :; do :; done"],
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        result = run(binary, ["-t1", "-c20", "-R20000", "-d3s", "--timeout", "200ms",
                              "--connect-timeout", "5s"], nginx.url("/"),
                     prefix=["nice", "-n", "19", "taskset", "-c", "1"])
    finally:
        try:
            os.killpg(hog.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        hog.wait()
    report = expect_exit(result, 4)
    failed = [c["name"] for c in report["validity"]["checks"] if c["level"] == "gating" and not c["pass"]]
    # It falls ~275 ms behind: always past send lag's allowance, and usually past the schedule's
    # 10 ms grace for more than 1% of some second (how many depends on how the hog's slices fall).
    check("send_lag_p99" in failed and set(failed) <= {"send_lag_p99", "schedule_kept"},
          f"a starved generator failed {failed}, not send_lag_p99 (and schedule_kept)\n{summary(report)}")
    _, checks = assert_invalid_because(result, failed)
    check("behind its schedule" in checks["send_lag_p99"]["note"], f"send_lag_p99: {checks['send_lag_p99']}")
    if "schedule_kept" in failed:
        check("did not keep its schedule" in checks["schedule_kept"]["note"],
              f"schedule_kept note: {checks['schedule_kept']['note']!r}")


def stopped_generator_misses_its_schedule(binary, nginx):
    """The generator is stopped (SIGSTOP) for 600 ms inside its first second: the requests due in
    that time are sent only after the second has ended, far more than 1% of it. schedule_kept
    must fail and say which second."""
    tmp = tempfile.mkdtemp(prefix="punctual-verdicts-")
    try:
        json_path = os.path.join(tmp, "report.json")
        cmd = [binary, "run", "--json", json_path, "-t1", "-c4", "-R1000", "-d2s", nginx.url("/")]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            time.sleep(0.6)
            proc.send_signal(signal.SIGSTOP)
            time.sleep(0.6)
            proc.send_signal(signal.SIGCONT)
            stdout, stderr = proc.communicate(timeout=20)
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGCONT)
                proc.kill()
                proc.communicate(timeout=5)
        report = harness.load_report(json_path) if os.path.exists(json_path) else None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    result = Run(cmd, proc.returncode, stdout, stderr, 0, report, None)
    _, checks = assert_invalid_because(result, ["schedule_kept"])
    c = checks["schedule_kept"]
    check(c["figure"] >= 1, f"schedule_kept: {c}")
    check("second 0 of the window" in c["note"], f"the note does not name the stopped second: {c['note']!r}")


def drops_fail(binary):
    result = run_on_serve(binary, ["--stall-at", "0s:5s"],
                          ["-t1", "-c4", "-R200", "-d1s", "--max-queue", "10", "--timeout", "500ms"])
    report, checks = assert_invalid_because(result, ["dropped"])
    harness.assert_denominator(report)
    dropped = report["outcomes"]["dropped"]
    check(dropped > 0, f"nothing dropped against a stalled server: {report['outcomes']}")
    check_eq(checks["dropped"]["figure"], dropped, "dropped check figure vs outcomes.dropped")


CONN_CAP_SERVE = ["--service-time", "5ms"]
CONN_CAP_RUN = ["-t1", "-c1", "-R1000", "-d1500ms", "--timeout", "500ms"]


def connection_cap_fails(binary):
    result = run_on_serve(binary, CONN_CAP_SERVE, CONN_CAP_RUN)
    _, checks = assert_invalid_because(result, ["connection_cap"])
    c = checks["connection_cap"]
    check_eq(c["figure"], 1, "connection_cap figure (-c)")
    m = re.search(r"-c (\d+) would have sufficed", c["note"])
    check(m, f"the note does not name the -c that would have sufficed: {c['note']!r}")
    needed = int(m.group(1))
    # 1.5 x 1000/s x 5 ms = 7.5, rounded up
    check(needed >= 8, f"recommended -c {needed} < 8")
    check(needed <= 20, f"recommended -c {needed} is far above 1.5 x 1000/s x 5 ms")
    check_eq(needed, math.ceil(c["threshold"]), "recommended -c vs the check's threshold")
    check(f"-c {needed}" in result.stdout, "the recommended -c is not printed in the text report")


def samples_fail(binary, nginx, state):
    """p99.99 named in an --slo needs 10 samples beyond it: 100,000 samples, not 600."""
    result = run(binary, ["-t1", "-c4", "-R200", "-d3s", "--slo", "p99.99<1s"], nginx.url("/"))
    state["samples"] = result
    report, checks = assert_invalid_because(result, ["samples_beyond_p99.99"])
    check(checks["samples_beyond_p99.99"]["figure"] < 1, f"{checks['samples_beyond_p99.99']}")
    check_eq(checks["samples_beyond_p99.9"]["level"], "warning", "p99.9 (not named in an --slo) level")


# ---------------------------------------------------------------------------
# SLO exit codes

def exit_4_slo_passes_on_invalid_run(state):
    result = state.get("samples")
    check(result is not None and result.report is not None, "the samples run produced no report")
    report = expect_exit(result, 4)
    _, r = slo_result(report, "p99.99<1s")
    check_eq(r["pass"], True, "p99.99<1s against nginx")
    check_eq(r["service_time_fails"], False, "service_time_fails")


def exit_3_over_4_service_time_alone(binary):
    """-c 1 makes the run invalid; the 5 ms server fails p50<=1ms before any generator delay."""
    result = run_on_serve(binary, CONN_CAP_SERVE, [*CONN_CAP_RUN, "--slo", "p50<=1ms"])
    report = expect_exit(result, 3)
    assert_validity_consistent(report)
    check_eq(report["validity"]["valid"], False, "validity.valid (-c 1 at 1000 req/s of 5 ms)")
    _, r = slo_result(report, "p50<=1ms")
    check_eq(r["pass"], False, "p50<=1ms pass")
    check_eq(r["service_time_fails"], True, "service_time_fails")
    check(r["service_figure"] > 1_000_000, f"service figure {r['service_figure']} should exceed 1 ms")


def exit_4_response_time_only(binary):
    """Invalid run; p99<=50ms fails on response time (queueing at -c 1) but a 5 ms
    server passes it on service time: no verdict can be given, exit 4."""
    result = run_on_serve(binary, CONN_CAP_SERVE, [*CONN_CAP_RUN, "--slo", "p99<=50ms"])
    report = expect_exit(result, 4)
    check_eq(report["validity"]["valid"], False, "validity.valid")
    _, r = slo_result(report, "p99<=50ms")
    check_eq(r["pass"], False, "p99<=50ms pass")
    check_eq(r["service_time_fails"], False, "service_time_fails")
    check(r["figure"] > 50_000_000, f"response-time figure {r['figure']}")


def exit_3_valid_run_service_fails_too(binary):
    result = run_on_serve(binary, ["--service-time", "exp:10ms", "--seed", "7"],
                          ["-t1", "-c32", "-R200", "-d1s", "--slo", "p50<=1us"])
    report = expect_exit(result, 3)
    assert_validity_consistent(report)
    check_eq(report["validity"]["valid"], True, "validity.valid")
    _, r = slo_result(report, "p50<=1us")
    check_eq(r["pass"], False, "p50<=1us pass")
    check_eq(r["service_time_fails"], True, "service_time_fails")


STALL_SERVE = ["--stall-at", "3s:1s"]
# -c 4: the stall queues requests in the generator, so response time sees the whole
# second but only 4 requests' service time do.
STALL_RUN = ["-t1", "-c4", "-R200", "-d7s", "--slo", "p99<=100ms"]


def stall_run(binary, state):
    state["stall"] = run_on_serve(binary, STALL_SERVE, STALL_RUN, hgrm=True)


def stall(state):
    result = state.get("stall")
    check(result is not None and result.report is not None,
          f"the stall run produced no report\n{result.describe() if result else ''}")
    return result, result.report


def exit_3_response_time_on_valid_run(state):
    result, _ = stall(state)
    report = expect_exit(result, 3)
    assert_validity_consistent(report)
    check_eq(report["validity"]["valid"], True, f"validity.valid\n{summary(report)}")
    slo, r = slo_result(report, "p99<=100ms")
    check_eq(slo["refused"], False, "slo.refused")
    check_eq(r["bound"], "point", "default bound")
    check_eq(r["pass"], False, "p99<=100ms across a 1 s stall")
    check(r["figure"] > 100_000_000, f"figure {r['figure']}")
    check_eq(r["service_time_fails"], False, "service_time_fails (4 connections stalled of 1,400)")
    check(r["service_figure"] <= 100_000_000, f"service figure {r['service_figure']}")


def stall_keeps_connection_cap(state):
    _, report = stall(state)
    c = checks_of(report)["connection_cap"]
    check(c["pass"], f"a server stall failed connection_cap: {c}")


def hgrm_rows(text):
    rows = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 3 and not line.lstrip().startswith("#"):
            try:
                rows.append((float(parts[0]) * 1e6, int(parts[2])))  # ms -> ns, cumulative count
            except ValueError:
                continue
    return rows


def binomial_width_bound(rows, n, q):
    """An upper bound on the binomial order-statistic interval's width, read from the
    .hgrm: ranks per src/analysis/confidence.hpp; a row (v, c) says c samples are <= v."""
    s = math.sqrt(n * q * (1 - q))
    lo_rank = max(1, min(n, math.floor(n * q - 1.96 * s) + 1))
    hi_rank = max(1, min(n, math.floor(n * q + 1.96 * s) + 1))
    below = [v for v, c in rows if c < lo_rank]
    above = [v for v, c in rows if c >= hi_rank]
    check(above, f"no .hgrm row reaches rank {hi_rank}")
    return min(above) - (max(below) if below else 0)


def stall_interval_is_batch_means(state):
    result, report = stall(state)
    check(result.hgrm, "no .hgrm written")
    rows = hgrm_rows(result.hgrm)
    n = report["latency"]["response_time"]["count"]
    batch = []
    for key in ("90", "99"):
        point, (lo, hi), method = percentile_ci(report, key)
        check(lo <= point <= hi, f"p{key} interval [{lo}, {hi}] misses its point {point}")
        check(hi > lo, f"p{key} interval is degenerate: [{lo}, {hi}]")
        if method == "batch-means":
            bound = binomial_width_bound(rows, n, float(key) / 100)
            check(hi - lo > bound, f"p{key} batch-means width {hi - lo} ns is not wider than the "
                                   f"binomial one (at most {bound:.0f} ns)")
            batch.append(key)
    check(batch, f"neither p90 nor p99 uses batch means across a 1 s stall: "
                 f"{report['latency']['response_time']['percentiles_ci_method']}")
    check("(batch" in result.stdout, "the text report does not name the batch-means method")


# ---------------------------------------------------------------------------
# bound modes: a threshold between the point estimate and its upper bound

BOUND_SERVE = ["--service-time", "exp:10ms", "--seed", "7"]
BOUND_RUN = ["-t1", "-c32", "-R500", "-d3s"]


def on_serve_unless_late(binary, serve_args, args, attempts=3):
    """run_on_serve, taken again after a pause (ATTEMPTS runs in all) while the run is judged
    invalid for the generator's lateness alone (harness.invalid_for_lateness_alone). For a case that
    needs a valid run to judge an SLO on: under make test a 3 s run beside the ASan build once
    fell 4.69 ms behind at p99 against the 4.68 ms allowed. Lateness itself is judged by the
    healthy run above, by the starved and stopped generators, and by test_truth."""
    for attempt in range(attempts):
        if attempt:
            time.sleep(2)
        result = run_on_serve(binary, serve_args, args)
        worst = harness.invalid_for_lateness_alone(result.report)
        if worst is None:
            return result
        print(f"     (taken again: invalid for the generator's lateness alone, at most "
              f"{worst / 1e6:.1f} ms)", flush=True)
    return result


def bound_modes(binary):
    first = on_serve_unless_late(binary, BOUND_SERVE, [*BOUND_RUN, "--slo", "p99<=1s"])
    report = expect_exit(first, 0)  # exit 0: a passing SLO on a valid run
    check_eq(report["validity"]["valid"], True, "validity.valid")
    _, r = slo_result(report, "p99<=1s")
    check(r["pass"] and r["bound"] == "point", f"p99<=1s: {r}")
    point, (_, upper), _ = percentile_ci(report, "99")
    check(upper - point >= 1_000_000, f"p99 {point} and its upper bound {upper} are too close to split")
    threshold_us = (point + upper) // 2 // 1000
    expression = f"p99<={threshold_us}us"

    strict = on_serve_unless_late(binary, BOUND_SERVE,
                                  [*BOUND_RUN, "--slo-bound", "upper", "--slo", expression])
    report = expect_exit(strict, 3)
    check_eq(report["validity"]["valid"], True, "validity.valid (upper)")
    _, r = slo_result(report, expression)
    _, (_, upper2), _ = percentile_ci(report, "99")
    check_eq(r["bound"], "upper", "bound")
    check_eq(r["figure"], upper2, "figure gated on with --slo-bound upper")
    check_eq(r["pass"], False, f"{expression} on the upper bound")

    lenient = on_serve_unless_late(binary, BOUND_SERVE,
                                   [*BOUND_RUN, "--slo-bound", "point", "--slo", expression])
    report = expect_exit(lenient, 0)
    _, r = slo_result(report, expression)
    point3, _, _ = percentile_ci(report, "99")
    check_eq(r["bound"], "point", "bound")
    check_eq(r["figure"], point3, "figure gated on with --slo-bound point")
    check_eq(r["pass"], True, f"{expression} on the point estimate")


# ---------------------------------------------------------------------------
# closed model

CLOSED_SERVE = ["--service-time", "1ms"]
CLOSED_RUN = ["-t1", "-c2", "-d1s", "--model", "closed", "--slo", "p99<1us"]


def closed_refuses(binary):
    """A failing SLO on a closed run: refused, so it cannot fail the run."""
    result = run_on_serve(binary, CLOSED_SERVE, CLOSED_RUN)
    report = expect_exit(result, 0)
    slo = report["slo"]
    check_eq(slo["refused"], True, "slo.refused")
    check(slo.get("refusal"), f"no refusal reason: {slo}")
    check_eq(slo["results"], [], "slo.results of a refused gate")
    check_eq(slo["basis"], "none", "slo.basis of a refused gate")
    check(slo["refusal"] in result.stdout, "the refusal reason is not printed")


def closed_gates(binary, extra, basis):
    result = run_on_serve(binary, CLOSED_SERVE, [*CLOSED_RUN, *extra])
    report = expect_exit(result, 3)
    slo, r = slo_result(report, "p99<1us")
    check_eq(slo["refused"], False, "slo.refused")
    check_eq(slo["basis"], basis, "slo.basis")
    check_eq(r["pass"], False, "p99<1us")
    check(f"on {basis}" in result.stdout, f"the text does not say the SLO was gated on {basis}")


# ---------------------------------------------------------------------------
# bad expressions

BAD_EXPRESSIONS = ("p99<=", "p101<1s", "latency<1s", "p99<=200xs", "errors<=abc", "p99~1s",
                   "rate>=150%", "p0<1s")


def bad_expressions(binary):
    url = f"http://127.0.0.1:{harness.closed_port()}/"
    for expression in BAD_EXPRESSIONS:
        result = run(binary, ["-d1s", "-R10", "--slo", expression], url, timeout_s=10)
        # 2, not 1: caught before any connect to the (closed) port is tried
        check_eq(result.returncode, 2, f"exit code for --slo {expression!r}")
        lines = harness.stderr_lines(result.stderr)
        check(len(lines) == 1, f"--slo {expression!r}: expected one line, got {lines}")
        check(expression in lines[0], f"the error does not name {expression!r}: {lines[0]!r}")
        check(result.report is None, f"--slo {expression!r} still wrote a report")
    result = run(binary, ["-d1s", "-R10", "--slo-bound", "sideways", "--slo", "p99<1s"], url, timeout_s=10)
    check_eq(result.returncode, 2, "exit code for --slo-bound sideways")


# ---------------------------------------------------------------------------

def poisson_fit(binary, args, code=None):
    """A Poisson run against serve; returns (result, the poisson_send_gaps check or None).
    The server gets CPU 0 and the generator CPU 1, as in bench/: sharing a CPU with its server,
    the generator's wake-ups wait behind the server's, which bunches its sends."""
    with harness.punctual_serve(binary) as serve:
        subprocess.run(["taskset", "-a", "-p", "-c", "0", str(serve.proc.pid)], capture_output=True,
                       timeout=5)
        result = run(binary, ["--arrival", "poisson", "--seed", "4", "-c8", *args], serve.url("/"),
                     prefix=("taskset", "-c", "1"))
    check(result.report is not None, f"no JSON report\n{result.describe()}")
    check(result.returncode in (0, 4), f"unexpected exit\n{result.describe()}")
    return result, checks_of(result.report).get("poisson_send_gaps")


def poisson_gaps_warn(binary):
    """1 ms ticks at 5000 req/s send ~5 requests at once: the gaps are nothing like Poisson's."""
    result, c = poisson_fit(binary, ["-t1", "-R5000", "-d2s", "--precision", "coarse"])
    check(c is not None, f"no poisson_send_gaps check: {sorted(checks_of(result.report))}")
    check_eq(c["level"], "warning", "poisson_send_gaps level")
    check(not c["pass"] and c["figure"] > 0.03, f"coarse ticks pass the Poisson fit: {c}")
    check(re.search(r"warn\s+poisson_send_gaps", result.stdout), "the text report does not show the warning")


def poisson_gaps_silent(binary):
    """Fine timers at 1000 req/s on one thread keep the gaps Poisson, in one run: the warning
    fires only when the distance exceeds what 6,000 gaps' own noise explains by 0.02 (measured
    here: D 0.015-0.030 on healthy runs, against a threshold of 0.041; before fine mode learnt
    its wake-up lateness per sleep length D was 0.030-0.067, and coarse ticks give ~0.6)."""
    # The claim is about a healthy generator. On this shared host a minute of noise makes the
    # generator itself late (send lag p99 of 1.5-7 ms measured), and those runs' gaps fail the
    # fit whatever the code does (D 0.043-0.13): such a run is taken again after a pause (noise
    # comes in spells of tens of seconds), up to 5 in all. A late run whose fit passes anyway
    # shows the silence as well (one spell gave p99 1.02 and 1.04 ms with D 0.031 and 0.035,
    # then 1.4-2.5 ms with D 0.038-0.086). A run with send lag p99 within 1 ms that warns fails
    # at once, and so do 5 late runs that all warn.
    late = []
    for attempt in range(5):
        if attempt:
            time.sleep(3)
        result, c = poisson_fit(binary, ["-t1", "-R1000", "-d6s"])
        check(c is not None, "no poisson_send_gaps check on a 6,000-request Poisson run")
        lag_p99 = int(result.report["latency"]["send_lag"]["percentiles_ns"]["99"])
        if lag_p99 <= 1_000_000 or c["pass"]:
            break
        late.append((lag_p99, round(c["figure"], 4)))
    check(lag_p99 <= 1_000_000 or c["pass"],
          f"5 late Poisson runs that all warn (send lag p99 ns, D): {late}")
    check(c["pass"] and c["figure"] <= c["threshold"],
          f"a healthy Poisson run warns (send lag p99 {lag_p99} ns; late runs before it: {late}): {c}")
    check(0.035 < c["threshold"] < 0.05, f"the threshold for ~6,000 gaps: {c}")
    # The same run sleeps between sends (fine), so its CPU warning stays silent too.
    cpu = [c for n, c in checks_of(result.report).items() if n.startswith("worker_cpu_")]
    check(len(cpu) == 1 and all(c["pass"] for c in cpu), f"a sleeping generator warns about CPU: {cpu}")
    constant_run = run_on_serve(binary, [], ["-t1", "-c8", "-R5000", "-d1s", "--precision", "coarse"])
    check(constant_run.report is not None, "no JSON report for the constant run")
    check("poisson_send_gaps" not in checks_of(constant_run.report),
          "a constant-arrival run is fitted to Poisson")


def main():
    binary = harness.binary_from_argv()
    checks = harness.Checks("verdicts")
    state = {}
    started = time.monotonic()

    with harness.nginx_server() as nginx:
        checks.run("healthy nginx run passes every gating check", healthy_run, binary, nginx, state)
        checks.run("thin p99.9 only warns, with the duration that resolves it",
                   thin_percentile_warns, state)
        checks.run("enough samples: no warnings for p50..p99", enough_samples_no_warnings, state)
        checks.run("short healthy run: binomial intervals", healthy_intervals_binomial, state)
        checks.run("a generator starved by a CPU hog is invalid", starved_by_cpu_hog, binary, nginx)
        checks.run("a generator stopped for 600 ms misses its schedule", stopped_generator_misses_its_schedule,
                   binary, nginx)
        checks.run("samples beyond an SLO percentile fail (gating)", samples_fail, binary, nginx, state)
    checks.run("exit 4: passing SLO on an invalid run", exit_4_slo_passes_on_invalid_run, state)
    checks.run("exit 3: valid run, service time fails too", exit_3_valid_run_service_fails_too, binary)
    checks.run("stall run (7 s)", stall_run, binary, state)
    checks.run("exit 3: valid run, response time fails, service time passes",
               exit_3_response_time_on_valid_run, state)
    checks.run("a server stall does not fail connection_cap", stall_keeps_connection_cap, state)
    checks.run("stall: batch-means interval, wider than binomial", stall_interval_is_batch_means, state)
    checks.run("bound modes: upper fails where point passes (and exit 0)", bound_modes, binary)
    checks.run("Poisson send gaps: coarse ticks warn", poisson_gaps_warn, binary)
    checks.run("Poisson send gaps and CPU: a healthy run stays silent", poisson_gaps_silent, binary)
    checks.run("closed model refuses to gate", closed_refuses, binary)
    print(f"total {time.monotonic() - started:.1f} s", flush=True)
    checks.finish()


if __name__ == "__main__":
    main()
