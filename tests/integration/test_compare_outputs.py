#!/usr/bin/python3
"""`punctual compare`'s refusals and `--junit` of run and merge, on short runs whose timing does
not matter: runs with different --timeout values are refused (exit 2, one line naming the
field); a missing file is exit 1, a report without its .hlog exit 1, a bad --max-regression or
--inconclusive exit 2, each one line; run --junit and merge --junit write one testcase per SLO
and per gating validity check, valid against the JUnit XSD (tests/data/junit), a failed SLO a
<failure> carrying its measured value and threshold.

Usage: test_compare_outputs.py PATH_TO_PUNCTUAL
"""

import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, check_eq  # noqa: E402
from test_compare import validate_junit  # noqa: E402


def case_different_timeouts_refused(binary):
    with tempfile.TemporaryDirectory(prefix="punctual-compare-") as d:
        with harness.punctual_serve(binary, "--duration", "20s") as srv:
            paths = []
            for name, timeout in (("a", "10s"), ("b", "2s")):
                p = os.path.join(d, name + ".json")
                cp = subprocess.run([binary, "run", "-q", "-t1", "-c2", "-R100", "-d1s", "--timeout", timeout,
                                     "--json", p, "--hlog", os.path.join(d, name + ".hlog"), srv.url()],
                                    capture_output=True, text=True, timeout=30)
                check(cp.returncode in (0, 4), f"run {name}: {cp.stderr}")
                paths.append(p)
        cp = subprocess.run([binary, "compare", *paths], capture_output=True, text=True, timeout=30)
        check_eq(cp.returncode, 2, f"different timeouts: exit code ({cp.stderr})")
        lines = cp.stderr.strip().splitlines()
        check(len(lines) == 1 and "timeout" in lines[0], f"expected one line naming timeout: {cp.stderr!r}")
        # Bad input, each one line.
        for args, code, what in (([paths[0], os.path.join(d, "missing.json")], 1, "missing file"),
                                 ([paths[0], paths[0], "--max-regression", "p97:+5%"], 2, "bad threshold"),
                                 ([paths[0], paths[0], "--inconclusive", "maybe"], 2, "bad --inconclusive")):
            cp = subprocess.run([binary, "compare", *args], capture_output=True, text=True, timeout=30)
            check_eq(cp.returncode, code, f"{what}: exit code ({cp.stderr})")
            check_eq(len(cp.stderr.strip().splitlines()), 1, f"{what}: lines of stderr ({cp.stderr!r})")
        os.remove(os.path.join(d, "b.hlog"))
        cp = subprocess.run([binary, "compare", paths[0], paths[1], "--allow-different"], capture_output=True,
                            text=True, timeout=30)
        check_eq(cp.returncode, 1, f"report without its .hlog: exit code ({cp.stderr})")


def case_run_and_merge_junit(binary):
    with tempfile.TemporaryDirectory(prefix="punctual-junit-") as d:
        with harness.punctual_serve(binary, "--service-time", "2ms", "--duration", "20s") as srv:
            run_xml = os.path.join(d, "run.xml")
            report = os.path.join(d, "run.json")
            cp = subprocess.run([binary, "run", "-q", "-t1", "-c4", "-R200", "-d2s", "--slo", "p50<=1ms",
                                 "--slo", "errors<=1%", "--json", report, "--hlog", os.path.join(d, "run.hlog"),
                                 "--junit", run_xml, srv.url()], capture_output=True, text=True, timeout=30)
        check(cp.returncode in (3, 4), f"run with a failing SLO exited {cp.returncode}: {cp.stderr}")
        doc = harness.load_report(report)
        root = validate_junit(run_xml)
        slo_cases = {c.get("name"): c for c in root.iter("testcase") if c.get("classname") == "slo"}
        check_eq(sorted(slo_cases), ["errors<=1%", "p50<=1ms"], "one testcase per SLO")
        failure = slo_cases["p50<=1ms"].find("failure")
        check(failure is not None, "the failed SLO has no <failure>")
        check("measured" in failure.get("message") and "threshold 1ms" in failure.get("message"),
              f"failure message: {failure.get('message')}")
        check(slo_cases["errors<=1%"].find("failure") is None, "a passing SLO failed")
        gating = [c["name"] for c in doc["validity"]["checks"] if c["level"] == "gating"]
        validity = [c.get("name") for c in root.iter("testcase") if c.get("classname") == "validity"]
        check_eq(validity, gating, "one testcase per gating validity check")
        merge_xml = os.path.join(d, "merge.xml")
        cp = subprocess.run([binary, "merge", report, "-o", os.path.join(d, "merged.json"), "--slo", "p50<=1ms",
                             "--junit", merge_xml], capture_output=True, text=True, timeout=30)
        check(cp.returncode in (3, 4), f"merge exited {cp.returncode}: {cp.stderr}")
        root = validate_junit(merge_xml)
        check_eq(root.find("testsuite").get("name"), "punctual merge", "merge suite name")
        check(any(c.get("name") == "p50<=1ms" and c.find("failure") is not None for c in root.iter("testcase")),
              "merge: the failed SLO is a failure")


def main():
    binary = harness.binary_from_argv()
    checks = harness.Checks("compare_outputs")
    checks.run("different timeouts are refused (exit 2, one line); bad input", case_different_timeouts_refused,
               binary)
    checks.run("--junit for run and merge: one testcase per SLO and gating check, valid XSD",
               case_run_and_merge_junit, binary)
    checks.finish()


if __name__ == "__main__":
    main()
