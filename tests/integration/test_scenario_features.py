"""A hybrid scenario's connection per user over real TLS, against `punctual serve`: each user
handshakes in full, and no user resumes another's session. What a scenario's users send and
how it is counted (expect_body_contains, csv rows and captures, cookies, a connection per user)
are simulation cases (tests/sim/sim_scenario_features_test.cpp).

Usage: python3 test_scenario_features.py PATH_TO_PUNCTUAL
"""

import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import tls_lib  # noqa: E402
from harness import check_eq  # noqa: E402


def run_scenario(binary, work, name, text, *args):
    """Writes the scenario `text` to WORK/NAME and runs it (with ARGS); the run must write its
    report and keep the denominator for every name and every scenario's sessions."""
    path = os.path.join(work, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    result = harness.run_punctual(binary, ["--scenario", path, *args])
    harness.assert_session_denominators(harness.require_report(result))
    return result


PER_USER_SCENARIO = """\
target: {url}
phases:
  - {{duration: 1s, arrival_rate: 20}}
scenarios:
  - name: u
    steps:
      - {{name: first, path: /, think: 10ms}}
      - {{name: second, path: /x}}
"""


def test_per_user_tls(binary):
    """Over TLS a new user is a new browser: each handshakes in full, even on the connection slot
    an earlier user left (or the check before the start used); nothing resumes."""
    with tempfile.TemporaryDirectory(prefix="punctual-hybrid-per-user-tls-") as work:
        with tls_lib.tls_serve(binary, "--tls-self-signed") as serve:
            report = run_scenario(binary, work, "per-user-tls.yaml", PER_USER_SCENARIO.format(url=serve.url("")),
                                  "--insecure", "-t1").report
        users = report["sessions"]["u"]["planned"]
        check_eq(report["by_name"]["u.second"]["outcomes"]["ok"], users, "second steps ok")
        tls = report["tls"]
        check_eq((tls["handshakes"], tls["resumed"]), (users + 1, 0),
                 "handshakes (one per user and the check's) and resumed ones")


def main():
    binary = harness.binary_from_argv()
    checks = harness.Checks("scenario features")
    checks.run("a connection per user over TLS: no user resumes another's session", test_per_user_tls, binary)
    checks.finish()


if __name__ == "__main__":
    main()
