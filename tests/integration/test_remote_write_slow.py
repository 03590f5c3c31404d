"""--remote-write to an endpoint that answers after 30 s: the run ends within its bound, and its
send lag p99 stays far below what a push holding up the workers would cost (HELD_UP_MS).

Usage: python3 test_remote_write_slow.py PATH_TO_PUNCTUAL

It judges send lag, so it is a timing test and runs alone; the counting cases are in
test_remote_write.py.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import test_remote_write  # noqa: E402


def main():
    binary = harness.binary_from_argv()
    checks = harness.Checks("remote write, slow endpoint")
    checks.run("a run with a slow endpoint: schedule and end not held up",
               test_remote_write.case_endpoint_slow, binary)
    checks.finish()


if __name__ == "__main__":
    main()
