"""The verdicts and exit codes that no timing can change, end to end.

Each run here is invalid or fails its SLO for a reason the generator's own timing cannot move:
a queue that overflows against a stalled server, one connection for a 5 ms server at
1000 req/s, a service time that fails the SLO before any generator delay, a closed-model gate.
So these cases run beside other untimed tests; test_verdicts.py, which defines them, keeps the
ones that need a healthy run.

Usage: python3 test_exit_codes.py PATH_TO_PUNCTUAL
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import test_verdicts as v  # noqa: E402


def main():
    binary = harness.binary_from_argv()
    checks = harness.Checks("exit_codes")
    checks.run("bad SLO expressions exit 2 with one line", v.bad_expressions, binary)
    checks.run("drops fail against a stalled server", v.drops_fail, binary)
    checks.run("connection cap fails and names the -c", v.connection_cap_fails, binary)
    checks.run("exit 3 over 4: service time alone fails", v.exit_3_over_4_service_time_alone, binary)
    checks.run("exit 4: invalid run, response time fails only", v.exit_4_response_time_only, binary)
    checks.run("closed model gates on reconstructed data", v.closed_gates, binary,
               ["--expected-interval", "10ms"], "reconstructed")
    checks.run("closed model gates uncorrected when allowed", v.closed_gates, binary,
               ["--allow-uncorrected"], "uncorrected")
    checks.finish()


if __name__ == "__main__":
    main()
