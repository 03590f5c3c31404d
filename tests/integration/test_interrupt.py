"""Ctrl-C as a real process meets it: SIGINT to `punctual run` against a server that answers
nothing ends the run within ~1.5 s (the 1 s drain), exits 130 and still writes its reports:
the JSON marked interrupted, the .hlog, the text report on stdout, and no temporary file left.

What the interruption does to the run (the window, the counts, the drain outside the window's
rates) is checked exactly in the simulation (tests/sim/sim_interrupt_test.cpp), which calls what
the SIGINT handler calls; the signal, the exit code and the files are a real process's.

Usage: python3 test_interrupt.py PATH_TO_PUNCTUAL
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, check_eq  # noqa: E402

MAX_END_AFTER_SIGNAL_S = 1.5
SIGNAL_AFTER_S = 0.7


def interrupted_run(binary, serve):
    tmp = tempfile.mkdtemp(prefix="punctual-int-")
    try:
        json_path = os.path.join(tmp, "r.json")
        hlog_path = os.path.join(tmp, "r.hlog")
        cmd = [binary, "run", "-t2", "-c4", "-d10s", "-R400", "--json", json_path,
               "--hlog", hlog_path, serve.url("/")]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            time.sleep(SIGNAL_AFTER_S)
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
    print(f"     outcomes {report['outcomes']}, ended {took_s:.2f} s after SIGINT")
    check_eq(report["interrupted"], True, "interrupted")
    harness.assert_denominator(report)
    # An invalid run (e.g. generator timing on a busy machine) lists its reasons before the header.
    check("\nmodel: open" in "\n" + stdout, f"no text report on stdout: {stdout[:100]!r}")
    check("#[Histogram log format version" in hlog, "the .hlog has no version line")


def main():
    binary = harness.binary_from_argv()
    checks = harness.Checks("interrupt")
    # Nothing is answered: the drain waits its whole second, the longest an interruption takes.
    with harness.punctual_serve(binary, "--stall-at", "0s:600s") as stalling:
        checks.run("SIGINT: exit 130 within the drain, every report written",
                   interrupted_run, binary, stalling)
    checks.finish()


if __name__ == "__main__":
    main()
