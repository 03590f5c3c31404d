"""Ctrl-C: a run interrupted at a random moment exits 130 within ~1.5 s and
still writes complete, consistent reports.

Usage: python3 test_interrupt.py PATH_TO_PUNCTUAL
Env: SEED=N to vary the moments (20 interruptions each run).
"""

import json
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
        with open(json_path, encoding="utf-8") as f:
            report = json.load(f)
        with open(hlog_path, encoding="utf-8") as f:
            hlog = f.read()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    check_eq(report["interrupted"], True, "interrupted")
    harness.assert_denominator(report)
    # An invalid run (e.g. generator timing on a busy machine) lists its reasons before the header.
    check("\nmodel: open" in "\n" + stdout, f"no text report on stdout: {stdout[:100]!r}")
    check("#[Histogram log format version" in hlog, "the .hlog has no version line")
    # The window is [start, interruption), and the interruption lies between our
    # signal and the exit; punctual's and our clocks are both CLOCK_MONOTONIC.
    start_ns = report["schedule"]["start_mono_ns"]
    low = max(0, (signalled_ns - start_ns) * RATE // 1_000_000_000 - 1)
    high = (ended_ns - start_ns) * RATE // 1_000_000_000 + 1
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


def main():
    binary = harness.binary_from_argv()
    rounds = 20  # issue 5: twenty interruptions at random points, in every run of the suite
    seed = int(os.environ.get("SEED", "20261129"))
    rng = random.Random(seed)
    print(f"seed {seed}, {rounds} interruptions")
    checks = harness.Checks("interrupt")
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
