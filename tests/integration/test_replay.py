"""Trace replay (--schedule-in) end to end: a bursty trace (bursts of 50 requests within 1 ms,
with ties, over a steady part) runs against `punctual serve`, whose arrival log must show every
request reaching the server at its intended time. --schedule-out of the replay must give the
trace back exactly, and the report's counts must be the trace's entries in the window.

Usage: python3 test_replay.py PATH_TO_PUNCTUAL
"""

import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import truth_lib as tl  # noqa: E402
from harness import check, check_eq  # noqa: E402

MS = 1_000_000
US = 1_000
SECOND = 1000 * MS
WARMUP_NS = 200 * MS
# As the truth tests hold constant and Poisson schedules to it.
ARRIVAL_MEDIAN_LIMIT_NS = tl.ARRIVAL_MEDIAN_LIMIT_NS


def bursty_trace():
    """[(offset_ns, name or None)], sorted: 400 req/s from 50 ms to 2.45 s, and four bursts of
    50 requests within 1 ms whose requests come in pairs at the same instant."""
    entries = [(50 * MS + i * 2_500_000, "steady" if i % 2 else None) for i in range(960)]
    for start in (600 * MS, 1200 * MS, 1800 * MS, 2400 * MS):
        entries += [(start + 333 * US + (k // 2) * 40 * US, "burst") for k in range(50)]
    return sorted(entries, key=lambda e: e[0])


def write_trace(path, entries):
    with open(path, "w", encoding="utf-8") as f:
        f.write("# a bursty trace: offset_ns [name]\n\n")
        for offset, name in entries:
            f.write(f"{offset} {name}\n" if name else f"{offset}\n")


def read_schedule_out(path):
    """[(offset_ns, name or None)] of a --schedule-out file."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            fields = line.split()
            rows.append((int(fields[1]), fields[4] if len(fields) > 4 else None))
    return rows


def check_counts(report, entries, end_ns, duration_ns):
    """The report counts exactly the trace's entries in warm-up and in the window."""
    model = report["model"]
    check_eq(model["arrival"], "trace", "model.arrival")
    check_eq(model["rate_per_s"], None, "model.rate_per_s")
    in_run = [o for o, _ in entries if o < end_ns]
    check_eq(model["trace"]["entries"], len(entries), "model.trace.entries")
    check_eq(model["trace"]["requests"], len(in_run), "model.trace.requests")
    check(model["schedule"].startswith("trace replay of "), f"model.schedule: {model['schedule']!r}")
    check_eq(report["schedule"]["duration_ns"], duration_ns, "schedule.duration_ns")
    check_eq(report["schedule"]["planned"], sum(1 for o in in_run if o >= WARMUP_NS), "planned")
    check_eq(report["warmup"]["planned"], sum(1 for o in in_run if o < WARMUP_NS), "warmup.planned")
    harness.assert_denominator(report)
    check_eq(report["outcomes"]["ok"], report["schedule"]["planned"], "ok (every request answered)")


def replay_keeps_the_intended_times(binary):
    tmp = tempfile.mkdtemp(prefix="punctual-replay-")
    try:
        entries = bursty_trace()
        trace, schedule_out = os.path.join(tmp, "trace.txt"), os.path.join(tmp, "schedule.txt")
        arrival_log = os.path.join(tmp, "arrivals.txt")
        write_trace(trace, entries)
        with harness.punctual_serve(binary, "--arrival-log", arrival_log) as serve:
            # 32 connections per worker: a burst's 25 requests per worker never wait for one.
            r = harness.run_punctual(binary, ["--schedule-in", trace, "--schedule-out", schedule_out,
                                              "-t2", "-c64", "--warmup", "200ms", serve.url("/")],
                                     timeout_s=20)
        report = harness.require_report(r)
        check_eq(read_schedule_out(schedule_out), entries, "--schedule-out against the trace")
        # No -d: the time line runs to the next whole second after the last offset (2.45 s).
        check_counts(report, entries, 3 * SECOND, 3 * SECOND - WARMUP_NS)
        arrivals = tl.read_arrivals(arrival_log)
        check_eq(len(arrivals), len(entries), "arrivals at the server")
        start = report["schedule"]["start_mono_ns"]
        intended = sorted(start + o for o, _ in entries)
        lags = [abs(a - t) for t, (a, _) in zip(intended, arrivals)]
        lag = tl.median(lags)
        print(f"     median |arrival - intended| {tl.fmt_ns(lag)}, "
              f"p90 {tl.fmt_ns(sorted(lags)[len(lags) * 9 // 10])}, max {tl.fmt_ns(max(lags))}",
              flush=True)
        check(lag < ARRIVAL_MEDIAN_LIMIT_NS,
              f"median |arrival - intended| {tl.fmt_ns(lag)} >= {tl.fmt_ns(ARRIVAL_MEDIAN_LIMIT_NS)}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def duration_cuts_the_trace(binary):
    """-d 1s with --warmup 200ms: the time line is [0, 1.2 s) and later entries are not run."""
    tmp = tempfile.mkdtemp(prefix="punctual-replay-")
    try:
        entries = bursty_trace()
        trace, schedule_out = os.path.join(tmp, "trace.txt"), os.path.join(tmp, "schedule.txt")
        write_trace(trace, entries)
        with harness.punctual_serve(binary) as serve:
            r = harness.run_punctual(binary, ["--schedule-in", trace, "--schedule-out", schedule_out,
                                              "-t1", "-c32", "--warmup", "200ms", "-d", "1s",
                                              serve.url("/")], timeout_s=20)
        report = harness.require_report(r)
        end = 1200 * MS
        check_eq(read_schedule_out(schedule_out), [e for e in entries if e[0] < end],
                 "--schedule-out of a cut trace")
        check_counts(report, entries, end, 1 * SECOND)
        check(r.wall_s < 1.2 + 2.0, f"the cut run took {r.wall_s:.2f} s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    binary = harness.binary_from_argv()
    checks = harness.Checks("replay")
    checks.run("bursty trace: round trip, counts, arrivals at the intended times",
               replay_keeps_the_intended_times, binary)
    checks.run("-d cuts the trace", duration_cuts_the_trace, binary)
    checks.finish()


if __name__ == "__main__":
    main()
