"""Bad input: every bad invocation exits 2 with exactly one line on stderr that
names the offending value, before anything is sent.

Usage: python3 test_bad_input.py PATH_TO_PUNCTUAL

The target of every `run` case is a closed loopback port: a bad invocation
that is wrongly accepted then fails fast on connect (exit 1) instead of
sending load, and the exit-code precedence (2 before 1) is checked too.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, check_eq  # noqa: E402

CASE_TIMEOUT_S = 5.0
STACK_TRACE = re.compile(r"Traceback|terminate called|what\(\)|Aborted|core dumped|Segmentation|"
                         r"AddressSanitizer|^\s*#\d+\s+0x", re.M)


# --schedule-in files, by name: each is bad in one way (or good, for the conflicts).
TRACES = {
    "good": "0\n1000000\n",
    "unsorted": "# offsets\n100\n1500\n1200\n",
    "negative": "0\n-5\n",
    "malformed": "1\n\n1.5e3\n",
    "bad-name": "1 get/item\n",
    "overflow": "99999999999999999999\n",
    "empty": "# only a comment\n\n",
    "late": "5000000000\n",
}


def write_traces(directory):
    paths = {}
    for name, text in TRACES.items():
        paths[name] = os.path.join(directory, name + ".txt")
        with open(paths[name], "w", encoding="utf-8") as f:
            f.write(text)
    return paths


def trace_cases(url, t):
    """--schedule-in: the error names the file and, for a bad line, the line number."""
    return [
        ("trace unsorted", ["run", "--schedule-in", t["unsorted"], url],
         f"--schedule-in {t['unsorted']}:4: offsets must not decrease (1200 after 1500)"),
        ("trace negative", ["run", "--schedule-in", t["negative"], url],
         f"--schedule-in {t['negative']}:2: offsets must not be negative (-5)"),
        ("trace malformed", ["run", "--schedule-in", t["malformed"], url],
         f"--schedule-in {t['malformed']}:3: offset '1.5e3' is not a whole number"),
        ("trace bad name", ["run", "--schedule-in", t["bad-name"], url],
         f"--schedule-in {t['bad-name']}:1: request name 'get/item'"),
        ("trace overflow", ["run", "--schedule-in", t["overflow"], url],
         f"--schedule-in {t['overflow']}:1: offset 99999999999999999999 is beyond"),
        ("trace empty", ["run", "--schedule-in", t["empty"], url], f"--schedule-in {t['empty']}: no offsets"),
        ("trace missing", ["run", "--schedule-in", "/nonexistent/punctual-trace.txt", url],
         "--schedule-in /nonexistent/punctual-trace.txt: cannot read it"),
        ("trace after the window", ["run", "--schedule-in", t["late"], "-d", "1s", url],
         "no request would be sent"),
        ("trace inside the warm-up", ["run", "--schedule-in", t["good"], "--warmup", "2s", url],
         "nothing would be measured"),
        ("trace with a rate", ["run", "--schedule-in", t["good"], "-R", "100", url], "-R/--rate"),
        ("trace with stages", ["run", "--schedule-in", t["good"], "--stages", "1s:10", url], "--stages"),
        ("trace with poisson", ["run", "--schedule-in", t["good"], "--arrival", "poisson", url], "--arrival"),
        ("trace in the closed model", ["run", "--schedule-in", t["good"], "--model", "closed", url],
         "closed model"),
    ]


def cases(url, traces):
    """(name, argv after the binary, text the error line must contain)."""
    ok = ["-R", "100", "-d", "1s"]  # valid options, so that only the bad one is wrong
    return trace_cases(url, traces) + [
        # flags and arity
        ("unknown flag", ["run", *ok, "--bogus", url], "--bogus"),
        ("slo with a trailing comma", ["run", *ok, "--slo", "p99<=50ms,", url],
         "nothing after its last comma"),
        ("slo list with a bad one", ["run", *ok, "--slo", "p99<=50ms,errors<lots", url], "lots"),
        ("mistyped flag", ["run", *ok, "--conections", "10", url],
         "unknown option '--conections' (did you mean --connections?)"),
        ("unknown subcommand", ["bogus"], "bogus"),
        ("extra positional", ["run", *ok, url, "extra"], "extra"),
        ("missing url", ["run", *ok], "url"),
        ("flag without value", ["run", "-R", "100", url, "-d"], "duration"),
        # targets
        ("no scheme", ["run", *ok, "notaurl"], "notaurl"),
        ("ftp", ["run", *ok, "ftp://127.0.0.1/"], "ftp"),
        ("empty host", ["run", *ok, "http://"], "http://"),
        ("port too large", ["run", *ok, "http://127.0.0.1:99999/"], "99999"),
        ("port not a number", ["run", *ok, "http://127.0.0.1:abc/"], "abc"),
        ("port zero", ["run", *ok, "http://127.0.0.1:0/"], "http://127.0.0.1:0/"),
        ("space in path", ["run", *ok, "http://127.0.0.1:9/a b"], "a b"),
        ("unterminated IPv6", ["run", *ok, "http://[::1/"], "[::1"),
        ("user info", ["run", *ok, "http://user@127.0.0.1:9/"], "user@"),
        # the run's id
        ("run id with a space", ["run", *ok, "--run-id", "a run", url], "--run-id 'a run'"),
        ("run id too long", ["run", *ok, "--run-id", "x" * 65, url], "1 to 64"),
        # remote write
        ("remote write no scheme", ["run", *ok, "--remote-write", "prom:9090", url],
         "--remote-write 'prom:9090'"),
        ("remote write https", ["run", *ok, "--remote-write", "https://127.0.0.1:9/api/v1/write",
                                url], "https is not supported"),
        ("remote write header alone", ["run", *ok, "--remote-write-header", "A: b", url],
         "needs --remote-write"),
        ("remote write header malformed", ["run", *ok, "--remote-write", "http://127.0.0.1:9/w",
                                           "--remote-write-header", "nocolon", url], "nocolon"),
        ("remote write header of its own", ["run", *ok, "--remote-write", "http://127.0.0.1:9/w",
                                            "--remote-write-header", "Content-Encoding: gzip", url],
         "set by remote write itself"),
        # durations
        ("zero duration", ["run", "-R", "100", "-d", "0s", url], "duration"),
        ("negative duration", ["run", "-R", "100", "-d", "-5s", url], "-5s"),
        ("unknown unit", ["run", "-R", "100", "-d", "10parsecs", url], "10parsecs"),
        ("duration not a number", ["run", "-R", "100", "-d", "abc", url], "abc"),
        ("duration two dots", ["run", "-R", "100", "-d", "1.5.5s", url], "1.5.5s"),
        ("duration too long", ["run", "-R", "100", "-d", "99999999999h", url], "99999999999h"),
        ("zero timeout", ["run", *ok, "--timeout", "0s", url], "timeout"),
        ("timeout not a duration", ["run", *ok, "--timeout", "soon", url], "soon"),
        ("timeout without a unit", ["run", *ok, "--timeout", "500", url], "give one, e.g. 500ms"),
        ("connect timeout without a unit", ["run", *ok, "--connect-timeout", "2", url],
         "--connect-timeout: '2' has no unit"),
        ("think without a unit", ["run", "--model", "closed", "-d", "1s", "--think", "10", url],
         "--think: '10' has no unit"),
        ("negative connect timeout", ["run", *ok, "--connect-timeout", "-1s", url], "-1s"),
        ("warmup not a duration", ["run", *ok, "--warmup", "abc", url], "abc"),
        ("negative warmup", ["run", *ok, "--warmup", "-1s", url], "-1s"),
        # rates
        ("zero rate", ["run", "-d", "1s", "-R", "0", url], "'0'"),
        ("negative rate", ["run", "-d", "1s", "-R", "-5", url], "-5"),
        ("rate not a number", ["run", "-d", "1s", "-R", "abc", url], "abc"),
        ("rate bad suffix", ["run", "-d", "1s", "-R", "1x", url], "1x"),
        ("rate junk after suffix", ["run", "-d", "1s", "-R", "2k2", url], "2k2"),
        ("rate inf", ["run", "-d", "1s", "-R", "inf", url], "inf"),
        ("rate nan", ["run", "-d", "1s", "-R", "nan", url], "nan"),
        ("rate huge", ["run", "-d", "1s", "-R", "1e99", url], "1e99"),
        ("open model without rate", ["run", "-d", "1s", url], "-R"),
        # threads and connections
        ("-c < -t", ["run", *ok, "-t", "4", "-c", "2", url], "-c 2"),
        ("zero threads", ["run", *ok, "-t", "0", url], "threads"),
        ("--pin with more threads than CPUs to pin them to",
         ["run", *ok, "-t", str(len(os.sched_getaffinity(0)) + 1), "-c", "16", "--pin", url], "--pin"),
        ("zero connections", ["run", *ok, "-c", "0", url], "connections"),
        ("threads not a number", ["run", *ok, "-t", "abc", url], "abc"),
        ("negative connections", ["run", *ok, "-c", "-3", url], "-3"),
        ("connections beyond the fd limit", ["run", *ok, "-t", "1", "-c", "1000000", url], "1000000"),
        ("negative max-queue", ["run", *ok, "--max-queue", "-1", url], "-1"),
        ("max-queue not a number", ["run", *ok, "--max-queue", "abc", url], "abc"),
        ("negative seed", ["run", *ok, "--seed", "-1", url], "-1"),
        # statuses, headers, bodies, methods
        ("status below 100", ["run", *ok, "--expect-status", "99", url], "99"),
        ("status above 599", ["run", *ok, "--expect-status", "600", url], "600"),
        ("status range reversed", ["run", *ok, "--expect-status", "300-200", url], "300-200"),
        ("status not a number", ["run", *ok, "--expect-status", "abc", url], "abc"),
        ("status empty", ["run", *ok, "--expect-status", "", url], "expect-status"),
        ("header without colon", ["run", *ok, "-H", "nocolon", url], "nocolon"),
        ("header empty name", ["run", *ok, "-H", ": value", url], ": value"),
        ("header space in name", ["run", *ok, "-H", "Bad Name: x", url], "Bad Name"),
        ("header CRLF injection", ["run", *ok, "-H", "X: a\r\nEvil: b", url], "Evil"),
        ("header bare LF", ["run", *ok, "-H", "X: a\nb", url], "X: a"),
        ("missing body file", ["run", *ok, "--body-file", "/nonexistent/punctual-body", url],
         "/nonexistent/punctual-body"),
        ("body and body file", ["run", *ok, "--body", "x", "--body-file", "/etc/hostname", url], "--body-file"),
        ("method with space", ["run", *ok, "-m", "GE T", url], "GE T"),
        # modes
        ("bad precision", ["run", *ok, "--precision", "ultra", url], "ultra"),
        ("empty precision", ["run", *ok, "--precision", "", url], "precision"),
        ("bad model", ["run", *ok, "--model", "half-open", url], "half-open"),
        ("bad arrival", ["run", *ok, "--arrival", "uniform", url], "uniform"),
        ("closed model with rate", ["run", "-d", "1s", "--model", "closed", "-R", "100", url], "-R"),
        ("closed model with stages", ["run", "-d", "1s", "--model", "closed", "--stages", "1s:10", url],
         "--stages"),
        ("closed model with arrival", ["run", "-d", "1s", "--model", "closed", "--arrival", "poisson", url],
         "--arrival"),
        ("think in the open model", ["run", *ok, "--think", "1ms", url], "--think"),
        # retries
        ("retry-on without retries", ["run", *ok, "--retry-on", "5xx", url], "--retries"),
        ("retry-on unknown cause", ["run", *ok, "--retries", "2", "--retry-on", "5xx,404", url], "5xx,404"),
        ("retry-on repeated", ["run", *ok, "--retries", "2", "--retry-on", "5xx,5xx", url], "--retry-on"),
        ("retries negative", ["run", *ok, "--retries", "-1", url], "-1"),
        ("retries too many", ["run", *ok, "--retries", "1000", url], "1000"),
        ("backoff reversed", ["run", *ok, "--retries", "1", "--retry-backoff", "exp:2s..1s", url], "exp:2s..1s"),
        ("backoff no kind", ["run", *ok, "--retries", "1", "--retry-backoff", "50ms..2s", url], "--retry-backoff"),
        ("budget without %", ["run", *ok, "--retries", "1", "--retry-budget", "10", url], "--retry-budget"),
        ("budget zero", ["run", *ok, "--retries", "1", "--retry-budget", "0%", url], "0%"),
        ("retry on timeout without attempt timeout",
         ["run", *ok, "--retries", "1", "--retry-on", "timeout", url], "--attempt-timeout"),
        ("attempt timeout not shorter",
         ["run", *ok, "--retries", "1", "--attempt-timeout", "20s", url], "--attempt-timeout"),
        ("retries in the closed model", ["run", "-d", "1s", "--model", "closed", "--retries", "1", url], "closed"),
        ("max-queue in the closed model", ["run", "-d", "1s", "--model", "closed", "--max-queue", "10", url],
         "--max-queue"),
        ("think not a duration", ["run", "-d", "1s", "--model", "closed", "--think", "abc", url], "abc"),
        ("zero expected interval", ["run", "-d", "1s", "--model", "closed", "--expected-interval", "0s", url],
         "expected-interval"),
        ("expected interval in the open model", ["run", *ok, "--expected-interval", "1ms", url],
         "--expected-interval"),
        # stages
        ("stage without rate", ["run", "-d", "1s", "--stages", "10s", url], "10s"),
        ("stage bad rate", ["run", "-d", "1s", "--stages", "10s:abc", url], "abc"),
        ("stage bad duration", ["run", "-d", "1s", "--stages", "xs:100", url], "xs"),
        ("stage negative duration", ["run", "-d", "1s", "--stages", "-5s:100", url], "-5s"),
        ("stage trailing comma", ["run", "-d", "1s", "--stages", "10s:100,", url], "stage 2"),
        ("stages against a longer -d", ["run", "-d", "5s", "--stages", "2s:100", url],
         "--stages 2s:100 lasts 2s, but -d 5s ask for 5s"),
        # outputs that cannot be written (found before anything is sent)
        ("hlog in a missing dir", ["run", *ok, "--hlog", "/nonexistent/dir/x.hlog", url], "/nonexistent/dir/x.hlog"),
        ("json in a missing dir", ["run", *ok, "--json", "/nonexistent/dir/x.json", url], "/nonexistent/dir/x.json"),
        ("html in a missing dir", ["run", *ok, "--html", "/nonexistent/dir/x.html", url],
         "--html: cannot write '/nonexistent/dir/x.html'"),
        ("timeline in a missing dir", ["run", *ok, "--timeline", "/nonexistent/dir/t.csv", url],
         "--timeline: cannot write '/nonexistent/dir/t.csv'"),
        ("hlog where nothing can be created", ["run", *ok, "--hlog", "/proc/punctual.hlog", url],
         "--hlog: cannot write '/proc/punctual.hlog'"),
        ("schedule-out in a missing dir", ["run", *ok, "--schedule-out", "/nonexistent/dir/s.txt", url],
         "/nonexistent/dir/s.txt"),
        ("empty json path", ["run", *ok, "--json", "", url], "--json"),
        # the test server
        ("serve port too large", ["serve", "--port", "70000"], "70000"),
        ("serve bad service time", ["serve", "--service-time", "abc"], "abc"),
        ("serve stall longer than period", ["serve", "--stall", "5s/2s"], "5s/2s"),
        ("serve bad stall-at", ["serve", "--stall-at", "abc"], "abc"),
        ("serve id header without a log", ["serve", "--arrival-log-id-header", "x-id"],
         "needs --arrival-log"),
        ("serve id header not a name", ["serve", "--arrival-log", "/tmp/punctual-never-written",
                                         "--arrival-log-id-header", "x id"], "'x id'"),
    ]


MIX_FILES = {
    "good.yaml": "requests:\n  - {name: a, path: /a}\n",
    "unknown-key.yaml": "requests:\n  - name: a\n    path: /a\n    colour: red\n",
    "zero-weights.yaml": "requests:\n  - {name: a, path: /a, weight: 0}\n",
    "bad-name.yaml": "requests:\n  - name: my step\n    path: /a\n",
    "bad-type.yaml": "requests:\n  - name: a\n    path: /a\n    weight: [1]\n",
    "alias.yaml": "requests:\n  - &x {name: a, path: /a}\n  - *x\n",
    "other-origin.yaml": "requests:\n  - {name: a, url: 'http://example.com/a'}\n",
    "not-yaml.yaml": "requests: [\n",
    "named.trace": "0 a\n1000000 b\n",
    "scenario.yaml": ("target: http://127.0.0.1:9\nphases:\n  - {duration: 1s, arrival_rate: 5}\n"
                      "scenarios:\n  - name: s\n    steps:\n      - {name: a, path: /}\n"),
    "scenario-unknown.yaml": ("target: http://127.0.0.1:9\nphases:\n  - {duration: 1s, arrival_rate: 5}\n"
                              "scenarios:\n  - name: s\n    colour: red\n    steps:\n      - {name: a, path: /}\n"),
    "scenario-per-user.yaml": ("target: http://127.0.0.1:9\nconnection: per_user\nphases:\n"
                               "  - {duration: 1s, arrival_rate: 5}\n"
                               "scenarios:\n  - name: s\n    steps:\n      - {name: a, path: /}\n"),
    "scenario-undefined.yaml": ("target: http://127.0.0.1:9\nphases:\n  - {duration: 1s, arrival_rate: 5}\n"
                                "scenarios:\n  - name: s\n    steps:\n      - {name: a, path: '/x?u={{nobody}}'}\n"),
    "scenario-other-origin.yaml": ("target: http://127.0.0.1:9\nphases:\n  - {duration: 1s, arrival_rate: 5}\n"
                                   "scenarios:\n  - name: s\n    steps:\n"
                                   "      - {name: a, url: 'http://127.0.0.2:9/'}\n"),
}


def mix_cases(url, folder):
    """--requests FILE.yaml: each refusal names the file, the line and the key."""
    ok = ["-R", "100", "-d", "1s"]
    for name, text in MIX_FILES.items():
        with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
            f.write(text)
    with open(os.path.join(folder, "huge.yaml"), "w", encoding="utf-8") as f:
        f.write("requests:\n  - {name: a, path: /a, body: '" + "x" * (1 << 20) + "'}\n")

    def mix(name):
        return os.path.join(folder, name)

    return [
        ("mix unknown key", ["run", *ok, "--requests", mix("unknown-key.yaml"), url],
         "unknown-key.yaml:4: colour: unknown key"),
        ("mix zero total weight", ["run", *ok, "--requests", mix("zero-weights.yaml"), url],
         "zero-weights.yaml:2: weight: the weights add up to 0"),
        ("mix name with a space", ["run", *ok, "--requests", mix("bad-name.yaml"), url],
         "bad-name.yaml:2: name: 'my step'"),
        ("mix wrong type", ["run", *ok, "--requests", mix("bad-type.yaml"), url],
         "bad-type.yaml:4: weight: expected a text value"),
        ("mix alias", ["run", *ok, "--requests", mix("alias.yaml"), url],
         "alias.yaml:2: yaml: anchors and aliases are not supported"),
        ("mix other origin", ["run", *ok, "--requests", mix("other-origin.yaml"), url],
         "other-origin.yaml:2: url: 'http://example.com/a' is not on the run's origin"),
        ("mix not yaml", ["run", *ok, "--requests", mix("not-yaml.yaml"), url], "not-yaml.yaml:2: yaml:"),
        ("mix over 1 MiB", ["run", *ok, "--requests", mix("huge.yaml"), url],
         "huge.yaml:1: file: larger than 1 MiB"),
        ("mix missing file", ["run", *ok, "--requests", mix("missing.yaml"), url],
         "missing.yaml: file: cannot be read"),
        ("mix with the closed model", ["run", "-d", "1s", "--model", "closed", "--requests",
                                       mix("good.yaml"), url], "--requests: request mixes belong"),
        ("mix with --body", ["run", *ok, "--body", "x", "--requests", mix("good.yaml"), url],
         "--requests: -X, --body and --body-file"),
        ("scenario with a URL", ["run", "--scenario", mix("scenario.yaml"), url],
         "cannot be used with a URL argument"),
        ("scenario with -R", ["run", "-R", "10", "--scenario", mix("scenario.yaml")],
         "cannot be used with -R/--rate"),
        ("scenario with --requests", ["run", "--scenario", mix("scenario.yaml"), "--requests",
                                      mix("good.yaml")], "cannot be used with --requests"),
        ("scenario unknown key", ["run", "--scenario", mix("scenario-unknown.yaml")],
         "scenario-unknown.yaml:6: colour: unknown key"),
        ("scenario per_user with -c", ["run", "-c", "8", "--scenario", mix("scenario-per-user.yaml")],
         "-c applies only with connection: pool"),
        ("scenario step on another origin", ["run", "--scenario", mix("scenario-other-origin.yaml")],
         "scenario-other-origin.yaml:7: url:"),
        ("scenario undefined {{name}}", ["run", "--scenario", mix("scenario-undefined.yaml")],
         "scenario-undefined.yaml:7: {{nobody}} is not defined"),
        ("scenario missing file", ["run", "--scenario", mix("missing-scenario.yaml")],
         "missing-scenario.yaml: file: cannot be read"),
        ("--slo naming no name of the run", ["run", *ok, "--requests", mix("good.yaml"), "--slo", "b:p99<=1s",
                                             url], "no step, session or request named 'b' in this run"),
        ("--slo naming a name without names", ["run", *ok, "--slo", "a:p99<=1s", url],
         "only --requests and --scenario runs have names"),
        ("--slo rate of a name", ["run", *ok, "--requests", mix("good.yaml"), "--slo", "a:rate>=99%", url],
         "rate is the whole run's"),
        ("named trace, name not in the mix", ["run", "--schedule-in", mix("named.trace"), "--requests",
                                              mix("good.yaml"), url],
         "request name 'b' is not defined in --requests"),
    ]


def check_case(binary, argv, needle):
    proc = subprocess.Popen([binary, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True, errors="replace")
    try:
        stdout, stderr = proc.communicate(timeout=CASE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        stdout, stderr = proc.communicate(timeout=5)
        raise AssertionError(f"still running after {CASE_TIMEOUT_S} s; stderr {stderr[-300:]!r}") from None
    actual = f"exit {proc.returncode}, stdout {stdout[-200:]!r}, stderr {stderr[-400:]!r}"
    check(STACK_TRACE.search(stderr) is None, f"stack trace or crash: {actual}")
    check_eq(proc.returncode, 2, f"exit code ({actual})")
    lines = stderr.splitlines()
    check(len(lines) == 1 and lines[0].strip(), f"expected exactly one line on stderr ({actual})")
    check(needle in lines[0], f"error line does not contain {needle!r}: {lines[0]!r}")
    check(stdout == "", f"bad input printed on stdout ({actual})")


def main():
    binary = harness.binary_from_argv()
    url = f"http://127.0.0.1:{harness.closed_port()}/"
    folder = tempfile.mkdtemp(prefix="punctual-bad-input-")
    table = cases(url, write_traces(folder)) + mix_cases(url, folder)
    check(len(table) >= 40, "the table must hold at least 40 cases")
    names = [name for name, _, _ in table]
    check(len(set(names)) == len(names), "case names must be unique")
    checks = harness.Checks("bad input")
    for name, argv, needle in table:
        checks.run(f"{name}: {' '.join(repr(a) if (' ' in a or not a) else a for a in argv)}",
                   check_case, binary, argv, needle)
    shutil.rmtree(folder, ignore_errors=True)
    checks.finish()


if __name__ == "__main__":
    main()
