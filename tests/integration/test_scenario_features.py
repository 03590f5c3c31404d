"""Hybrid scenarios' per-user features, against nginx with an access log and `punctual serve`:
expect_body_contains, csv rows and captures reaching the requests, a cookie jar per user, and a
connection per user. Each judges what was sent and counted, not how long it took, so this file
may run beside others (tests/CMakeLists.txt); the timed truth test is test_hybrid.py.

Usage: python3 test_scenario_features.py PATH_TO_PUNCTUAL
"""

import collections
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import tls_lib  # noqa: E402
from harness import check, check_eq  # noqa: E402


def run_scenario(binary, work, name, text, *args):
    """Writes the scenario `text` to WORK/NAME and runs it (with ARGS); the run must write its
    report and keep the denominator for every name and every scenario's sessions."""
    path = os.path.join(work, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    result = harness.run_punctual(binary, ["--scenario", path, *args])
    harness.assert_session_denominators(harness.require_report(result))
    return result


BODY_SCENARIO = """\
target: http://127.0.0.1:{port}
phases:
  - {{duration: 1s, arrival_rate: 20}}
on_error: continue
graceful_stop: 5s
scenarios:
  - name: s
    steps:
      - {{name: good, path: /, expect_body_contains: "ok"}}
      - {{name: bad, path: /, expect_body_contains: "not in the body"}}
"""


def test_body_checks(binary):
    """expect_body_contains: punctual serve's body is 'ok\\n', so every 'good' step is ok and
    every 'bad' one an http_error counted as a body failure, its status 200 notwithstanding."""
    with tempfile.TemporaryDirectory(prefix="punctual-hybrid-body-") as work:
        with harness.punctual_serve(binary) as serve:
            report = run_scenario(binary, work, "body.yaml", BODY_SCENARIO.format(port=serve.port)).report
            good, bad = report["by_name"]["s.good"], report["by_name"]["s.bad"]
            check(good["planned"] >= 15, f"planned steps: {good['planned']}")
            check_eq(good["outcomes"]["ok"], good["planned"], "s.good ok")
            check_eq(bad["outcomes"]["http_error"], bad["planned"], "s.bad http_error")
            check_eq(report["http_errors"], {"status": 0, "body": bad["planned"], "capture": 0}, "http_errors")
            check_eq(report["status_counts"], {"200": good["planned"] + bad["planned"]}, "status_counts")
            check_eq(report["sessions"]["s"]["outcomes"]["http_error"], report["sessions"]["s"]["planned"],
                     "sessions failed at their bad step")


CAPTURE_SCENARIO = """\
target: {url}
phases:
  - {{duration: 1s, arrival_rate: 30}}
csv: {{file: users.csv}}
scenarios:
  - name: shop
    steps:
      - name: login
        method: POST
        path: /login?u={{{{user}}}}
        body: '{{"user": "{{{{user}}}}", "password": "{{{{password}}}}"}}'
        capture:
          token: {{json: /session/token}}
          htoken: {{header: X-Token}}
      - name: orders
        path: /orders?u={{{{user}}}}&t={{{{token}}}}&h={{{{htoken}}}}
  - name: broken
    steps:
      - name: login
        path: /login?u={{{{user}}}}
        capture: {{missing: {{header: X-Missing}}}}
      - name: after
        path: /after?m={{{{missing}}}}
"""
USERS = ["ann", "bob", "cy"]


def test_csv_and_captures(binary):
    """csv rows reach the requests (user i takes row i mod 3), captured tokens from a JSON body
    and a header reach the next step, both from one response, and a capture that finds nothing
    fails its step (http_errors.capture) and, under on_error abort, skips the rest."""
    with tempfile.TemporaryDirectory(prefix="punctual-hybrid-capture-") as work:
        with open(os.path.join(work, "users.csv"), "w", encoding="utf-8") as f:
            f.write("user,password\n" + "".join(f"{u},pw-{u}\n" for u in USERS))
        with harness.nginx_server(access_log=True) as nginx:
            before = len(nginx.access_log())
            result = run_scenario(binary, work, "capture.yaml", CAPTURE_SCENARIO.format(url=nginx.url("")))
            report = result.report
            logged = nginx.access_log()[before:]
        sessions = sum(s["planned"] for s in report["sessions"].values())
        check_eq(sessions, 30, "sessions planned")
        logins = collections.Counter(line.split("?u=")[1] for line in logged if "/login?u=" in line)
        check_eq(dict(logins), {u: len(range(i, sessions, 3)) for i, u in enumerate(USERS)},
                 "logins per csv row (user i takes row i mod 3)")
        orders = [line for line in logged if line.startswith("GET /orders?")]
        shop = report["by_name"]
        check_eq(len(orders), shop["shop.orders"]["planned"], "orders requests nginx saw")
        check_eq(shop["shop.orders"]["outcomes"]["ok"], shop["shop.orders"]["planned"], "shop.orders ok")
        for line in orders:
            m = re.fullmatch(r"GET /orders\?u=(\w+)&t=t-([0-9a-f]{32})&h=h-([0-9a-f]{32})", line)
            check(m is not None and m.group(1) in USERS and m.group(2) == m.group(3),
                  f"an orders request without its user's tokens from one login response: {line!r}")
        broken = shop["broken.login"]
        check_eq(broken["outcomes"]["http_error"], broken["planned"], "broken.login http_error")
        check_eq(shop["broken.after"]["outcomes"]["skipped"], broken["planned"], "broken.after skipped")
        check_eq(report["sessions"]["broken"]["failed_at"], {"broken.login": broken["planned"], "broken.after": 0},
                 "broken sessions failed at their login")
        check_eq(report["sessions"]["shop"]["failed_at"], {"shop.login": 0, "shop.orders": 0}, "shop sessions")
        failed_lines = [line.strip() for line in result.stdout.splitlines() if "failed at:" in line]
        check_eq(failed_lines, [f"failed at: broken.login {broken['planned']}"],
                 "the text report's 'failed at' lines (the broken scenario's only)")
        check_eq(report["http_errors"], {"status": 0, "body": 0, "capture": broken["planned"]}, "http_errors")
        check(not any("/after" in line for line in logged), "a step after a failed capture was sent")


COOKIE_SCENARIO = """\
target: {url}
phases:
  - {{duration: 1s, arrival_rate: {rate}}}
cookies: {cookies}
scenarios:
  - name: c
    steps:
      - name: login
        path: /cookie-login
        capture: {{sid: {{header: X-Sid}}}}
      - name: whoami
        path: /whoami
        capture: {{seen: {{json: /cookie}}}}
      - name: check
        path: /check?seen={{{{seen}}}}&sid={{{{sid}}}}
"""


def test_cookies(binary):
    """A cookie a user's login sets is what that user's next request carries (its own, never
    another user's: each login's cookie is unique), and `cookies: false` carries none."""
    with tempfile.TemporaryDirectory(prefix="punctual-hybrid-cookies-") as work:
        with harness.nginx_server(access_log=True) as nginx:
            for cookies, rate in (("true", 20), ("false", 5)):
                before = len(nginx.access_log())
                text = COOKIE_SCENARIO.format(url=nginx.url(""), rate=rate, cookies=cookies)
                report = run_scenario(binary, work, f"cookies-{cookies}.yaml", text).report
                checks = [line for line in nginx.access_log()[before:] if line.startswith("GET /check?")]
                check_eq(len(checks), report["by_name"]["c.check"]["planned"], f"cookies: {cookies}: checks sent")
                for line in checks:
                    m = re.fullmatch(r"GET /check\?seen=(.*)&sid=([0-9a-f]{32})", line)
                    want = f"sid={m.group(2)}" if m and cookies == "true" else ""
                    check(m is not None and m.group(1) == want,
                          f"cookies: {cookies}: the whoami request carried {m and m.group(1)!r}, not {want!r}")


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


def test_per_user_connections(binary):
    """connection: per_user (the default): each user opens its own connection, its first step
    pays the connect (connect_time has one sample per user), its second reuses it, and nginx
    accepts one connection per user (and one per thread more: its check that the target
    answers, before the start)."""
    with tempfile.TemporaryDirectory(prefix="punctual-hybrid-per-user-") as work:
        with harness.nginx_server() as nginx:
            before = nginx.accepts()
            r = run_scenario(binary, work, "per-user.yaml", PER_USER_SCENARIO.format(url=nginx.url("")))
            report = r.report
            accepted = nginx.accepts() - before - 1  # stub_status's own request
        users = report["sessions"]["u"]["planned"]
        check_eq(users, 20, "users planned")
        check_eq(report["by_name"]["u.second"]["outcomes"]["ok"], users, "second steps ok")
        check_eq(report["latency"]["connect_time"]["count"], users, "connect_time samples (first steps only)")
        check_eq(accepted, users + report["model"]["threads"], "connections nginx accepted")
        check_eq(report["model"]["scenario"]["connection"], "per_user", "model.scenario.connection")
        check("a connection per user" in r.stdout, f"the header does not say per_user: {r.stdout[:300]!r}")


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
    checks.run("expect_body_contains", test_body_checks, binary)
    checks.run("csv rows and captures reach the requests", test_csv_and_captures, binary)
    checks.run("a cookie jar per user", test_cookies, binary)
    checks.run("a connection per user", test_per_user_connections, binary)
    checks.run("a connection per user over TLS: no user resumes another's session", test_per_user_tls, binary)
    checks.finish()


if __name__ == "__main__":
    main()
