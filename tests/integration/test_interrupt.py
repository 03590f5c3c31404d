"""Ctrl-C: a run interrupted at a random moment exits 130 within ~1.5 s and
still writes complete, consistent reports.

Usage: python3 test_interrupt.py PATH_TO_PUNCTUAL
Env: SEED=N to vary the moments (6 interruptions each run, 20 with FULL=1).
"""

import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, check_eq  # noqa: E402

RATE = 400
MAX_END_AFTER_SIGNAL_S = 1.5
# Between the signal and the moment punctual reads the clock in its handler.
SIGNAL_MARGIN_NS = 20_000_000


def interrupt_once(binary, serve, delay_s, stalling):
    tmp = tempfile.mkdtemp(prefix="punctual-int-")
    try:
        json_path = os.path.join(tmp, "r.json")
        hlog_path = os.path.join(tmp, "r.hlog")
        cmd = [binary, "run", "-t2", "-c4", "-d10s", f"-R{RATE}", "--json", json_path,
               "--hlog", hlog_path, serve.url("/")]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            time.sleep(delay_s)
            signalled_ns = time.monotonic_ns()
            proc.send_signal(signal.SIGINT)
            stdout, stderr = proc.communicate(timeout=10)
            ended_ns = time.monotonic_ns()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate(timeout=5)
        took_s = (ended_ns - signalled_ns) / 1e9
        check_eq(proc.returncode, 130, f"exit code (stderr {stderr[-300:]!r})")
        check(took_s <= MAX_END_AFTER_SIGNAL_S, f"ended {took_s:.2f} s after SIGINT")
        leftovers = [n for n in os.listdir(tmp) if n.endswith(".tmp")]
        check(not leftovers, f"temporary files left: {leftovers}")
        report = harness.load_report(json_path)
        with open(hlog_path, encoding="utf-8") as f:
            hlog = f.read()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    check_eq(report["interrupted"], True, "interrupted")
    harness.assert_denominator(report)
    # An invalid run (e.g. generator timing on a busy machine) lists its reasons before the header.
    check("\nmodel: open" in "\n" + stdout, f"no text report on stdout: {stdout[:100]!r}")
    check("#[Histogram log format version" in hlog, "the .hlog has no version line")
    # The window is [start, interruption), and the interruption comes just after our signal
    # (not at the end of the drain); punctual's and our clocks are both CLOCK_MONOTONIC.
    start_ns = report["schedule"]["start_mono_ns"]
    low = max(0, (signalled_ns - start_ns) * RATE // 1_000_000_000 - 1)
    high = (signalled_ns + SIGNAL_MARGIN_NS - start_ns) * RATE // 1_000_000_000 + 1
    planned = report["schedule"]["planned"]
    check(low <= planned <= high, f"planned {planned} outside [{low}, {high}] for an interruption "
                                  f"{(signalled_ns - start_ns) / 1e9:.3f} s into the run")
    o = report["outcomes"]
    rt = report["latency"]["response_time"]
    print(f"     planned {planned}, outcomes {o}, ended {took_s:.2f} s after SIGINT")
    check_eq(rt["censored"], o["timeout"] + o["unfinished"], "censored vs timeout + unfinished")
    if stalling:
        # Nothing is ever answered: every planned request is unfinished after the 1 s drain.
        check_eq(o["unfinished"], planned, f"outcomes against a server that never answers: {o}")
        check(planned > 0, "nothing planned before the interruption")
        # An unfinished request is recorded at interruption - intended; the first
        # one was intended at the start.
        lo, hi = signalled_ns - start_ns, (ended_ns - start_ns) * 1.001
        check(lo <= rt["max_ns"] <= hi, f"response_time max {rt['max_ns']} ns outside [{lo}, {hi:.0f}]")
    else:
        check_eq(o["ok"] + o["unfinished"], planned, f"outcomes against a healthy server: {o}")


def drain_is_outside_the_window(binary):
    """A 50 ms server behind 4 connections: requests queue, and the drain after SIGINT goes on
    sending and completing them. Those sends and completions are after the window and must not
    count in rates_per_s; the server's arrival log says what really happened inside it."""
    tmp = tempfile.mkdtemp(prefix="punctual-int-")
    try:
        log = os.path.join(tmp, "arrivals.txt")
        json_path = os.path.join(tmp, "r.json")
        with harness.punctual_serve(binary, "--service-time", "50ms", "--arrival-log", log) as serve:
            proc = subprocess.Popen([binary, "run", "-t1", "-c4", "-d10s", f"-R{RATE}", "--timeout", "3s",
                                     "--json", json_path, serve.url("/")],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                time.sleep(1.0)
                proc.send_signal(signal.SIGINT)
                proc.communicate(timeout=10)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.communicate(timeout=5)
        report = harness.load_report(json_path)
        arrivals = []
        with open(log, encoding="utf-8") as f:
            for line in f:
                if line.strip() and not line.startswith("#"):
                    fields = line.split()
                    arrivals.append((int(fields[0]), int(fields[1])))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    check_eq(proc.returncode, 130, "exit code")
    harness.assert_denominator(report)
    sched = report["schedule"]
    window_end = sched["start_mono_ns"] + sched.get("warmup_ns", 0) + sched["window_ns"]
    window_s = sched["window_ns"] / 1e9
    sent = round(report["rates_per_s"]["sent"] * window_s)
    completed = round(report["rates_per_s"]["completed"] * window_s)
    arrived_inside = sum(1 for a, _ in arrivals if a < window_end)
    answered_inside = sum(1 for _, b in arrivals if 0 < b < window_end)  # 0: never answered
    check(len(arrivals) > arrived_inside + 10,
          f"the drain sent too little to tell ({len(arrivals)} arrivals, {arrived_inside} in the window)")
    # A send or an answer within a few microseconds of the interruption may fall either side.
    check(abs(sent - arrived_inside) <= 2,
          f"rates_per_s.sent counts {sent} sends in the window; the server saw {arrived_inside} "
          f"arrive in it and {len(arrivals)} in all")
    check(abs(completed - answered_inside) <= 2,
          f"rates_per_s.completed counts {completed} completions in the window; the server answered "
          f"{answered_inside} in it")


def main():
    binary = harness.binary_from_argv()
    # Interruptions at seeded random points (SEED varies them); FULL=1 (make test-full) runs
    # twenty.
    rounds = 20 if os.environ.get("FULL") == "1" else 6
    seed = int(os.environ.get("SEED", "20261129"))
    rng = random.Random(seed)
    print(f"seed {seed}, {rounds} interruptions")
    checks = harness.Checks("interrupt")
    checks.run("the drain after SIGINT is not counted in the window's rates",
               drain_is_outside_the_window, binary)
    with harness.punctual_serve(binary, "--service-time", "2ms") as healthy, \
            harness.punctual_serve(binary, "--stall-at", "0s:600s") as stalling:
        for i in range(rounds):
            delay_s = rng.uniform(0.3, 2.5)
            is_stalling = i % 2 == 1
            serve = stalling if is_stalling else healthy
            kind = "stalling" if is_stalling else "healthy"
            checks.run(f"SIGINT #{i + 1} after {delay_s:.3f} s ({kind} server)",
                       interrupt_once, binary, serve, delay_s, is_stalling)
    checks.finish()


if __name__ == "__main__":
    main()
