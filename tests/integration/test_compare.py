#!/usr/bin/python3
"""`punctual compare` on real runs, kept short: only a real server's timing needs real sockets;
the method itself (A/A false alarms, coverage, the A/B power, names and sessions, Holm) is tested
in the simulation (tests/sim/sim_compare_test.cpp), compare's refusals and run's and merge's
--junit in test_compare_outputs.py.

make test: a service that `punctual serve --service-time` makes answer in 100 ms against its base's
50 ms, each run at 200 req/s for 4 s (the fewest seconds compare judges): a regression, exit 3.
The difference dwarfs any noise of a loaded host, and service times that long make the send-lag
check allow 5 to 10 ms of the generator's lateness (10% of the response time) instead of 1 ms, so
a busy host seldom makes a run INVALID; when it does (its send lag or its schedule, the
generator's lateness and nothing else), exit 4 is the verdict instead, and the test asserts those
reasons, that no row was judged, and still the 50 ms at p50. An exit 3 must come from two runs
whose own reports say valid. The outputs of the comparison are checked too: --json against
docs/compare.schema.json, the --markdown's table (one row per JSON row, the same number of cells
in every line, ▲/▼ by the sign of the change, the verdict line), --junit against the JUnit XSD
Jenkins reads (tests/data/junit, with python3-lxml): one testcase per row, a regression a
<failure> with its values, interval and threshold, an inconclusive row <skipped>.

FULL=1 (make test-full) adds the issue's own pair: a server that spends 300 us per request against
one that spends 200 us, each run at 300 req/s for 5 s, is a regression (exit 3), and two runs of
the 200 us server are not (exit 0). The per-request cost is serve's --cpu-per-request when this
build has it, else its --service-time (a sleep, not CPU; the output says which).

Usage: test_compare.py PATH_TO_PUNCTUAL
"""

import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, check_eq  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
XSD = os.path.join(HERE, "..", "data", "junit", "jenkins-junit-4.xsd")
SCHEMA = os.path.join(HERE, "..", "..", "docs", "compare.schema.json")


def cost_option(binary):
    """serve's per-request cost option: --cpu-per-request when built in, else --service-time."""
    out = subprocess.run([binary, "serve", "--help"], capture_output=True, text=True).stdout
    return "--cpu-per-request" if "--cpu-per-request" in out else "--service-time"


@contextlib.contextmanager
def serve_on(binary, port, *args):
    """`punctual serve` on a given port: the base and the candidate must have one target (the
    target is part of the workload), as a service rebuilt and restarted in CI has."""
    proc = subprocess.Popen([binary, "serve", "--port", str(port), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        harness.read_listening_port(proc, 5.0)
        yield f"http://127.0.0.1:{port}/"
    finally:
        harness.stop_process(proc)


def run_against(binary, d, name, port, serve_args, rate="300", duration="5s", connections="8"):
    with serve_on(binary, port, *serve_args, "--duration", "30s") as url:
        paths = [os.path.join(d, name + ext) for ext in (".json", ".hlog")]
        cmd = [binary, "run", "-q", "-t1", "-c", connections, "-R", rate, "-d", duration, "--json", paths[0],
               "--hlog", paths[1], url]
        cp = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    check(cp.returncode in (0, 4), f"{name}: run exited {cp.returncode}: {cp.stderr[-800:]}")
    harness.load_report(paths[0])
    return paths[0]


def compare(binary, d, base, cand, *extra):
    outs = {k: os.path.join(d, "compare." + k) for k in ("json", "md", "xml", "html")}
    cmd = [binary, "compare", base, cand, "--json", outs["json"], "--markdown", outs["md"],
           "--junit", outs["xml"], "--html", outs["html"], *extra]
    cp = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    return cp, outs


def validate_compare_json(path):
    import jsonschema
    with open(SCHEMA, encoding="utf-8") as f:
        schema = json.load(f)
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    jsonschema.Draft202012Validator(schema).validate(doc)
    return doc


def validate_junit(path):
    """The file against the XSD; its <testsuites> root as an lxml element."""
    from lxml import etree
    schema = etree.XMLSchema(etree.parse(XSD))
    tree = etree.parse(path)
    # The XSD's root elements are testsuite and testsuites alike: validate each suite too, so
    # that what is inside the wrapper is held to the schema as well.
    check(schema.validate(tree), f"{path}: {schema.error_log.last_error}")
    for suite in tree.getroot().iter("testsuite"):
        check(schema.validate(etree.ElementTree(suite)), f"{path} suite: {schema.error_log.last_error}")
    return tree.getroot()


def check_markdown(path, doc):
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    table = [line for line in lines if line.startswith("|")]
    check(len(table) == len(doc["rows"]) + 2, f"markdown: {len(table)} table lines for {len(doc['rows'])} rows")
    cells = [len(re.split(r"(?<!\\)\|", line)) for line in table]
    check(len(set(cells)) == 1, f"markdown: rows with different numbers of cells: {cells}")
    check(re.fullmatch(r"\|(-+:?\|)+|\|([-:]+\|)+", table[1]), f"markdown: no separator line: {table[1]!r}")
    for line, row in zip(table[2:], doc["rows"]):
        change = re.split(r"(?<!\\)\|", line)[5]
        if row["difference"] > 0:
            check("▲" in change, f"markdown: no ▲ for a positive change: {line}")
        elif row["difference"] < 0:
            check("▼" in change, f"markdown: no ▼ for a negative change: {line}")
    check(any(line.startswith("**Verdict:**") and doc["verdict"]["line"] in line for line in lines),
          "markdown: no verdict line")


def check_compare_junit(path, doc):
    root = validate_junit(path)
    cases = [c for c in root.iter("testcase") if c.get("classname").startswith("compare")]
    check_eq(len(cases), len(doc["rows"]), "compare testcases (one per row)")
    for case, row in zip(cases, doc["rows"]):
        failure = case.find("failure")
        skipped = case.find("skipped")
        check_eq(failure is not None, row["verdict"] == "regression", f"{row['metric']}: <failure> iff regression")
        check_eq(skipped is not None, row["verdict"] in ("inconclusive", "not judged"),
                 f"{row['metric']}: <skipped> iff inconclusive")
        if failure is not None:
            message = failure.get("message")
            for needed in ("base", "candidate", "95% interval", "threshold"):
                check(needed in message, f"failure message lacks {needed!r}: {message}")


def check_regression(binary, cp, outs, what):
    """The comparison of a slower candidate: exit 3 with a REGRESSION line, or exit 4 when a run
    was INVALID for the host's lateness alone (asserted, as harness.invalid_for_lateness_alone
    describes); either way the formats are checked."""
    check(os.path.exists(outs["json"]), f"compare wrote no JSON: exit {cp.returncode}, {cp.stderr}")
    doc = validate_compare_json(outs["json"])
    if cp.returncode == 4:
        check_eq(doc["verdict"]["result"], "invalid", "exit 4's verdict")
        judged = [r["metric"] for r in doc["rows"] if r["verdict"] != "not judged"]
        check(not judged, f"{what}: rows judged beside an INVALID run: {judged}")
        for side in ("base", "candidate"):
            if doc[side]["valid"]:
                continue
            report = harness.load_report(doc[side]["file"])
            check(harness.invalid_for_lateness_alone(report) is not None,
                  f"{what}: the {side} run is INVALID for more than the host's lateness: "
                  f"{doc[side]['invalid_reasons']}")
        print(f"     (a run was INVALID for the host's lateness: "
              f"{doc['base']['invalid_reasons'] + doc['candidate']['invalid_reasons']}; exit 4 is its verdict)",
              flush=True)
    else:
        check_eq(cp.returncode, 3, f"{what}: exit code\n{cp.stdout}\n{cp.stderr}")
        check("REGRESSION" in cp.stdout, f"no REGRESSION line: {cp.stdout}")
        # A regression is never called from an invalid run: both runs' own reports say valid.
        for side in ("base", "candidate"):
            report = harness.load_report(doc[side]["file"])
            check(report["validity"]["valid"], f"{what}: exit 3 from an INVALID {side} run")
    check_markdown(outs["md"], doc)
    check_compare_junit(outs["xml"], doc)
    return doc


def case_50ms_slower(binary):
    with tempfile.TemporaryDirectory(prefix="punctual-compare-") as d:
        port = harness.free_port()
        runs = [run_against(binary, d, name, port, ("--service-time", service), rate="200", duration="4s",
                            connections="64")
                for name, service in (("base", "50ms"), ("slower", "100ms"))]
        cp, outs = compare(binary, d, *runs)
        doc = check_regression(binary, cp, outs, "50 ms vs 100 ms")
        p50 = next(r for r in doc["rows"] if r["name"] == "" and r["metric"] == "p50")
        check(p50["difference"] >= 45e6, f"p50 50 ms slower, compare says {p50['difference'] / 1e6:.2f} ms")
        if cp.returncode == 3:
            check_eq(p50["verdict"], "regression", "p50's verdict")


def case_regression_and_aa(binary):
    with tempfile.TemporaryDirectory(prefix="punctual-compare-") as d:
        print(f"     per-request cost by serve {cost_option(binary)}", flush=True)
        port = harness.free_port()
        fast1 = run_against(binary, d, "fast1", port, (cost_option(binary), "200us"))
        fast2 = run_against(binary, d, "fast2", port, (cost_option(binary), "200us"))
        slow = run_against(binary, d, "slow", port, (cost_option(binary), "300us"))
        cp, outs = compare(binary, d, fast1, slow)
        check_regression(binary, cp, outs, "200us vs 300us")
        cp, outs = compare(binary, d, fast1, fast2)
        doc = validate_compare_json(outs["json"])
        check(cp.returncode in (0, 4), f"A/A exit {cp.returncode}\n{cp.stdout}\n{cp.stderr}")
        check(doc["verdict"]["regressions"] == 0, f"A/A regressions: {doc['verdict']}")
        check_markdown(outs["md"], doc)
        check_compare_junit(outs["xml"], doc)


def main():
    binary = harness.binary_from_argv()
    checks = harness.Checks("compare")
    checks.run("a candidate 50 ms slower is a regression (exit 3); formats valid", case_50ms_slower, binary)
    if os.environ.get("FULL") == "1":
        checks.run("200us vs 300us per request is a regression (exit 3); A/A is not; formats valid",
                   case_regression_and_aa, binary)
    checks.finish()


if __name__ == "__main__":
    main()
