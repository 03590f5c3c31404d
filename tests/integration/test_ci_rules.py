"""The rules CI keeps, whoever calls it.

- `.ci/run` sets CI=true itself before it calls make (`make test`, then `make
  test-sanitizers`), so a test that cannot do its work on a machine (network namespaces without
  root, for one) fails there instead of printing SKIP and passing. Checked by running `.ci/run`
  with a `make` of this test's own first on PATH, which records the environment it was called
  with and the targets.
- test_shard_netns turns its SKIP into a failure under CI=true, and only then.

Usage: python3 test_ci_rules.py PATH_TO_PUNCTUAL
"""

import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, check_eq  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAKE_MAKE = """#!/bin/sh
echo "CI=${CI:-unset} $*" >> "$PUNCTUAL_FAKE_MAKE_LOG"
"""


def ci_run_sets_ci(_binary):
    with tempfile.TemporaryDirectory(prefix="punctual-ci-rules-") as work:
        with open(os.path.join(work, "make"), "w") as f:
            f.write(FAKE_MAKE)
        os.chmod(os.path.join(work, "make"), 0o755)
        log = os.path.join(work, "calls.txt")
        env = dict(os.environ, PATH=work + os.pathsep + os.environ["PATH"], PUNCTUAL_FAKE_MAKE_LOG=log)
        env.pop("CI", None)
        r = subprocess.run(["bash", os.path.join(ROOT, ".ci", "run")], env=env, capture_output=True,
                           text=True, timeout=30)
        check_eq(r.returncode, 0, f".ci/run with a make that succeeds (stderr {r.stderr!r})")
        with open(log) as f:
            calls = f.read().split("\n")[:-1]
    check("CI=true test" in calls, f"make test was not called with CI=true: {calls}")
    # The sanitizer suite is not part of make test; CI is where it runs.
    check("CI=true test-sanitizers" in calls, f"make test-sanitizers was not called: {calls}")
    check(all(c.startswith("CI=true ") for c in calls), f"a make call without CI=true: {calls}")


def netns(binary, ci):
    env = dict(os.environ, PUNCTUAL_NETNS_PRETEND_UNAVAILABLE="no namespaces here (pretended)")
    env.pop("CI", None)
    if ci:
        env["CI"] = "true"
    script = os.path.join(ROOT, "tests", "integration", "test_shard_netns.py")
    return subprocess.run([sys.executable, script, binary], env=env, capture_output=True, text=True,
                          timeout=30)


def netns_skip_fails_under_ci(binary):
    r = netns(binary, ci=True)
    check_eq(r.returncode, 1, f"exit with CI=true (stdout {r.stdout!r})")
    check("SKIP is a failure" in r.stdout, f"stdout {r.stdout!r}")


def netns_skip_passes_elsewhere(binary):
    r = netns(binary, ci=False)
    check_eq(r.returncode, 0, f"exit without CI (stdout {r.stdout!r})")
    check("SKIP: no namespaces here" in r.stdout, f"stdout {r.stdout!r}")


def main():
    binary = harness.binary_from_argv()
    checks = harness.Checks("ci rules")
    checks.run(".ci/run calls make with CI=true", ci_run_sets_ci, binary)
    checks.run("test_shard_netns: a skip fails under CI=true", netns_skip_fails_under_ci, binary)
    checks.run("test_shard_netns: a skip passes without CI", netns_skip_passes_elsewhere, binary)
    checks.finish()


if __name__ == "__main__":
    main()
