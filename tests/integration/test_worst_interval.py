#!/usr/bin/python3
"""The worst second, by intended time, and its cause, against known truths.

- server: `punctual serve` stalls once for 300 ms; enough connections that nobody queues. From
  the schedule (--schedule-out) and the server's stall log we rebuild every request's true
  response time, group the requests by intended second, and rank the seconds as the report
  must. worst_interval names that second, its intended-time range is the schedule's, its
  planned count is the schedule's, and the cause is the server.
- queueing: two connections, a 20 ms service time and 150 req/s (1.5 times what they can carry):
  requests wait for a connection, and the cause is queueing.
- the generator: a one-thread run at the lowest priority, pinned to one CPU beside a busy loop
  at normal priority (the server on the other CPU): the generator gets to its requests late,
  the cause is the generator, and the validity check worst_second_send_lag fails with it.

Also: the denominator, and series.per_second against the totals.

Usage: test_worst_interval.py PATH_TO_PUNCTUAL
"""

import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import truth_lib as tl  # noqa: E402

MS = tl.MS
NS_PER_S = 1_000_000_000
WARMUP = "200ms"


def rank_key(values, second):
    values = sorted(values)
    return (tl.hdr_value_at_percentile(values, 99), values[-1], -second)


def true_worst_second(report, schedule_path, stalls):
    """The second the report must name: the schedule's measured requests grouped by intended
    second, each second ranked by its true p99, then max, then the earlier second. Returns
    (second, {second: key}, {second: planned})."""
    start = report["schedule"]["start_mono_ns"]
    measure_start = start + report["schedule"]["warmup_ns"]
    whole = report["schedule"]["window_ns"] // NS_PER_S
    by_second = {}
    for offset, phase in tl.read_schedule(schedule_path):
        if phase != "measured":
            continue
        intended = start + offset
        s = (intended - measure_start) // NS_PER_S
        if 0 <= s < whole:
            by_second.setdefault(s, []).append(tl.true_response_time(intended, stalls))
    keys = {s: rank_key(v, s) for s, v in by_second.items()}
    worst = max(keys, key=lambda s: keys[s])
    return worst, keys, {s: len(v) for s, v in by_second.items()}


def check_series(report):
    rows = report["series"]["per_second"]
    harness.check(len(rows) >= report["schedule"]["duration_ns"] // NS_PER_S,
                  f"{len(rows)} series rows for a {report['schedule']['duration_ns']} ns window")
    harness.check_eq([r["second"] for r in rows], list(range(len(rows))), "row indexes")
    planned = report["schedule"]["planned"]
    harness.check_eq(sum(r["planned"] for r in rows), planned, "series planned total")
    o = report["outcomes"]
    harness.check_eq(sum(r["ok"] for r in rows), o["ok"], "series ok total")
    harness.check_eq(sum(r["timeouts"] for r in rows), o["timeout"], "series timeouts total")
    harness.check_eq(sum(r["response_time"]["count"] for r in rows),
                     report["latency"]["response_time"]["count"], "series response-time samples")


def case_server(binary):
    with tempfile.TemporaryDirectory(prefix="punctual-worst-") as d:
        proc, port = tl.start_server(binary, d, "1900ms:300ms")
        try:
            report, schedule_path, _ = tl.run_load(binary, d, port, rate=500, arrival="constant",
                                                   threads=1, connections=200, duration="3s",
                                                   warmup=WARMUP)
        finally:
            tl.stop_server(proc)
        stalls = tl.read_stalls(os.path.join(d, "stall.jsonl"))
        harness.check_eq(len(stalls), 1, "stalls taken")
        harness.assert_denominator(report)
        check_series(report)
        worst, keys, planned = true_worst_second(report, schedule_path, stalls)
        w = report["worst_interval"]
        harness.check(w is not None, "no worst_interval")
        # A stall that straddles a second boundary almost evenly makes two seconds nearly equal;
        # then either is right, as long as it is one of them.
        close = [s for s in keys if keys[worst][0] - keys[s][0] <= 20 * MS]
        harness.check(w["second"] in close,
                      f"worst_interval.second {w['second']}, truth {worst} (p99 by second "
                      f"{ {s: k[0] // MS for s, k in sorted(keys.items())} } ms)")
        measure_start = report["schedule"]["start_mono_ns"] + report["schedule"]["warmup_ns"]
        harness.check_eq(w["intended_start_mono_ns"], measure_start + w["second"] * NS_PER_S,
                         "intended start")
        harness.check_eq(w["intended_end_mono_ns"] - w["intended_start_mono_ns"], NS_PER_S, "range")
        harness.check_eq(w["intended_start_unix_ns"] - w["intended_start_mono_ns"],
                         report["schedule"]["start_unix_ns"] - report["schedule"]["start_mono_ns"],
                         "wall clock of the range")
        harness.check_eq(w["planned"], planned[w["second"]], "planned in the worst second")
        truth_p99 = keys[w["second"]][0]
        harness.check(tl.within_tolerance(truth_p99, w["response_time"]["p99_ns"]),
                      f"worst p99 {w['response_time']['p99_ns']} vs truth {truth_p99}")
        harness.check_eq(w["cause"], "server", f"cause ({w['components_p99_ns']})")
        print(f"     worst second {w['second']}: p99 {w['response_time']['p99_ns'] / MS:.1f} ms "
              f"(truth {truth_p99 / MS:.1f} ms), cause {w['cause']}", flush=True)


def case_queueing(binary):
    with harness.punctual_serve(binary, "--service-time", "20ms", "--duration", "20s") as srv:
        result = harness.run_punctual(binary, ["-t1", "-c2", "-R150", "-d2s", "--timeout", "20s",
                                               srv.url()], timeout_s=60)
    report = result.report
    harness.check(report is not None, result.describe())
    harness.assert_denominator(report)
    check_series(report)
    w = report["worst_interval"]
    harness.check_eq(w["cause"], "queueing behind busy connections", f"cause ({w['components_p99_ns']})")
    harness.check(max(r["queue_depth_max"] for r in report["series"]["per_second"]) > 10,
                  "the queue never grew")


def case_generator(binary, run_binary):
    if os.cpu_count() < 2:
        raise AssertionError("needs two CPUs: one for the server, one for the starved generator")
    with harness.punctual_serve(binary, "--duration", "20s") as srv:
        hog = subprocess.Popen(["taskset", "-c", "0", "timeout", "15", "sh", "-c", "while :; do :; done"])
        try:
            subprocess.run(["taskset", "-p", "-c", "1", str(srv.proc.pid)], check=True,
                           capture_output=True, timeout=5)
            result = harness.run_punctual(run_binary, ["-t1", "-c100", "-R1000", "-d2s", srv.url()],
                                          timeout_s=60)
        finally:
            harness.stop_process(hog)
    report = result.report
    harness.check(report is not None, result.describe())
    harness.assert_denominator(report)
    w = report["worst_interval"]
    harness.check_eq(w["cause"], "the generator", f"cause ({w['components_p99_ns']})")
    checks = {c["name"]: c for c in report["validity"]["checks"]}
    harness.check(not checks["worst_second_send_lag"]["pass"], "worst_second_send_lag passed")
    print(f"     send lag p99 in the worst second: {w['components_p99_ns']['send_lag'] / MS:.1f} ms",
          flush=True)


def starved(binary):
    """Runs the generator case with the run itself at the lowest priority on CPU 0."""
    wrapper = os.path.join(tempfile.gettempdir(), f"punctual-starved-{os.getpid()}")
    with open(wrapper, "w") as f:
        f.write(f"#!/bin/sh\nexec taskset -c 0 nice -n 19 {binary} \"$@\"\n")
    os.chmod(wrapper, 0o755)
    try:
        case_generator(binary, wrapper)
    finally:
        os.unlink(wrapper)


def main():
    binary = harness.binary_from_argv()
    checks = harness.Checks("worst_interval")
    checks.run("stall inside one second: the truth's worst second, cause server", case_server, binary)
    checks.run("two busy connections: cause queueing", case_queueing, binary)
    checks.run("starved generator: cause the generator, and a validity warning", starved, binary)
    checks.finish()


if __name__ == "__main__":
    main()
