"""Retries whose checks are counts alone: 503s and resets retried, the retry budget, and the
chains an interruption leaves pending. test_retries.py defines them and keeps the cases that
time something; these run beside other untimed tests.

Usage: python3 test_retry_counts.py PATH_TO_PUNCTUAL
"""

import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import test_retries as r  # noqa: E402


def main():
    binary = harness.binary_from_argv()
    checks = harness.Checks("retry_counts")
    tmp = tempfile.mkdtemp(prefix="punctual-retry-counts-")
    try:
        checks.run("503 retried: attempts, amplification, final failures", r.status_503, binary, tmp)
        checks.run("resets retried", r.reset, binary, tmp)
        checks.run("retry budget refuses retries", r.budget, binary, tmp)
        checks.run("interrupted: pending retries are unfinished", r.interrupted_chains, binary, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    checks.finish()


if __name__ == "__main__":
    main()
