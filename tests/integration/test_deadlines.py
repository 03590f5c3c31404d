"""A refused target over real sockets: the kernel's ECONNREFUSED ends the run at once, exit 1,
with one line on stderr naming the target's port.

The deadline rule itself (timeouts recorded at the deadline, stalls across deadlines, service
time against the timeout in each precision mode) is checked exactly in the simulation:
tests/sim/sim_deadline_test.cpp and tests/sim/sim_late_read_test.cpp.

Usage: python3 test_deadlines.py PATH_TO_PUNCTUAL
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, check_eq  # noqa: E402


def connect_refused(binary):
    port = harness.closed_port()
    r = harness.run_punctual(binary, ["-t1", "-c2", "-d1s", "-R100", f"http://127.0.0.1:{port}/"], timeout_s=20)
    check_eq(r.returncode, 1, f"exit code for a refused target (stderr {r.stderr!r})")
    lines = harness.stderr_lines(r.stderr)
    check_eq(len(lines), 1, f"stderr lines ({r.stderr!r})")
    check(str(port) in lines[0], f"error does not name the target's port {port}: {lines[0]!r}")
    check(r.wall_s < 5.0, f"giving up on a refused target took {r.wall_s:.2f} s")


def main():
    binary = harness.binary_from_argv()
    checks = harness.Checks("deadlines")
    checks.run("connect refused -> exit 1", connect_refused, binary)
    checks.finish()


if __name__ == "__main__":
    main()
