#!/usr/bin/python3
"""The outputs beside the text report: --timeline, `punctual report RUN.json`, and the live
progress line, each checked as a user meets it.

- --timeline: RFC 4180 CSV, a header row, one row per series.per_second entry with the same
  figures; `punctual report RUN.json --html/--timeline` re-renders byte for byte what the run
  wrote, and `punctual report RUN.json` prints the run's text report again; bad input to
  `report` is one line and exit 2.
- progress: under a pseudo-terminal the line is redrawn and erased before the report, also on
  Ctrl-C; into a pipe nothing is drawn (no escape code), --progress prints plain lines, and
  --quiet silences it on a terminal too.

Usage: test_report_outputs.py PATH_TO_PUNCTUAL
"""

import csv
import re
import io
import os
import select
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

ERASE = b"\r\x1b[K"


def run_with_outputs(binary, srv, d):
    paths = {k: os.path.join(d, "run." + k) for k in ("json", "html", "csv")}
    # At thousands of requests a second a worker often rolls into the interval after the
    # window before it ends: that interval must not become an empty row.
    cp = subprocess.run([binary, "run", "-t1", "-c10", "-R4000", "-d2s", "--json", paths["json"],
                         "--html", paths["html"], "--timeline", paths["csv"], srv.url()],
                        capture_output=True, timeout=60)
    harness.check(cp.returncode in (0, 4), f"run exited {cp.returncode}: {cp.stderr[-500:]!r}")
    harness.check(b"\x1b" not in cp.stderr, "an escape code reached a pipe")
    return paths, harness.load_report(paths["json"]), cp.stdout


def case_timeline(binary):
    with harness.punctual_serve(binary, "--duration", "20s") as srv, \
            tempfile.TemporaryDirectory(prefix="punctual-outputs-") as d:
        paths, report, printed = run_with_outputs(binary, srv, d)
        harness.assert_denominator(report)
        window_s = report["schedule"]["window_ns"] / 1e9
        empty_after = [r["second"] for r in report["series"]["per_second"]
                       if r["offset_s"] >= window_s and not r["response_time"]["count"] and not r["sent"]]
        harness.check(not empty_after, f"empty rows after the {window_s:g} s window: {empty_after}")
        with open(paths["csv"], "rb") as f:
            raw = f.read()
        harness.check(raw.endswith(b"\r\n") and b"\n" not in raw.replace(b"\r\n", b""),
                      "RFC 4180 rows end with CRLF")
        rows = list(csv.DictReader(io.StringIO(raw.decode())))
        series = report["series"]["per_second"]
        harness.check_eq(len(rows), len(series), "CSV rows")
        for row, s in zip(rows, series):
            harness.check_eq(float(row["offset_s"]), s["offset_s"], "offset_s")
            for key in ("planned", "sent", "completed", "ok", "errors", "timeouts", "dropped", "attempts"):
                harness.check_eq(int(row[key]), s[key], key)
            harness.check_eq(row["response_p99_ms"], f"{s['response_time']['p99_ns'] / 1e6:.3f}", "p99")
            harness.check_eq(row["send_lag_p99_ms"], f"{s['send_lag_p99_ns'] / 1e6:.3f}", "send lag")
            harness.check(row["time_utc"].endswith("Z") and "T" in row["time_utc"], row["time_utc"])
        again = {k: os.path.join(d, "again." + k) for k in ("html", "csv")}
        cp = subprocess.run([binary, "report", paths["json"], "--html", again["html"],
                             "--timeline", again["csv"]], capture_output=True, timeout=30)
        harness.check_eq(cp.returncode, 0, f"report exit ({cp.stderr!r})")
        for k in ("html", "csv"):
            with open(paths[k], "rb") as a, open(again[k], "rb") as b:
                harness.check(a.read() == b.read(), f"report re-rendered a different {k}")
        # With no option, the text report again, as the run printed it.
        cp = subprocess.run([binary, "report", paths["json"]], capture_output=True, timeout=30)
        harness.check_eq(cp.returncode, 0, f"report exit ({cp.stderr!r})")
        harness.check(cp.stdout == printed and printed.startswith((b"VALID", b"INVALID")),
                      f"report RUN.json printed {cp.stdout[:200]!r}, the run {printed[:200]!r}")


def case_report_bad_input(binary):
    with tempfile.TemporaryDirectory(prefix="punctual-outputs-") as d:
        def write(name, text):
            path = os.path.join(d, name)
            with open(path, "w") as f:
                f.write(text)
            return path
        good_hlog = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data",
                                 "hdrhistogram")
        hlogs = [os.path.join(good_hlog, n) for n in sorted(os.listdir(good_hlog)) if n.endswith(".hlog")]
        cases = [
            ([write("a.json", '{"schema_version": 1'), "--html", os.path.join(d, "o.html")], "not valid JSON"),
            ([write("b.json", "{}"), "--html", os.path.join(d, "o.html")], "not a punctual run report"),
            ([write("c.json", "{}")], "give --html"),
        ]
        if hlogs:
            cases.append(([hlogs[0], "--html", os.path.join(d, "o.html")], "need a JSON run report"))
        for args, words in cases:
            cp = subprocess.run([binary, "report", *args], capture_output=True, text=True, timeout=10)
            harness.check_eq(cp.returncode, 2, f"exit of report {args}")
            lines = cp.stderr.strip().splitlines()
            harness.check(len(lines) == 1 and words in lines[0], f"stderr {cp.stderr!r} lacks {words!r}")
            harness.check(not os.path.exists(os.path.join(d, "o.html")), "a partial HTML was left")


def run_on_terminal(cmd, interrupt_after_s=None, timeout_s=60):
    """Runs CMD with stderr on a pseudo-terminal; returns (exit code, stdout, terminal bytes)."""
    master, slave = os.openpty()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    seen = b""
    started = time.monotonic()
    interrupted = False
    while True:
        if interrupt_after_s is not None and not interrupted and time.monotonic() - started > interrupt_after_s:
            proc.send_signal(signal.SIGINT)
            interrupted = True
        ready, _, _ = select.select([master], [], [], 0.05)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every writer closed the terminal
                chunk = b""
            if not chunk and proc.poll() is not None:
                break
            seen += chunk
        elif proc.poll() is not None:
            break
        harness.check(time.monotonic() - started < timeout_s, "run on a terminal did not end")
    out = proc.stdout.read()
    proc.wait(timeout=5)
    os.close(master)
    return proc.returncode, out, seen


def check_clean_end(tty, what):
    """The progress was drawn at least twice, and the last thing on the terminal that belongs
    to it is an erase, so the report (or the prompt) starts on a clean line."""
    draws = len(re.findall(re.escape(ERASE) + rb"\d+s/", tty))
    harness.check(draws >= 2, f"{what}: the line was drawn {draws} times: {tty[-300:]!r}")
    last_draw = tty.rfind(b"sent ")
    harness.check(tty.rfind(ERASE) > last_draw, f"{what}: the last line was not erased: {tty[-300:]!r}")


def case_progress_terminal(binary):
    with harness.punctual_serve(binary, "--duration", "30s") as srv:
        code, out, tty = run_on_terminal([binary, "run", "-t1", "-c4", "-R300", "-d2s", srv.url()])
        harness.check(code in (0, 4), f"exit {code}")
        check_clean_end(tty, "completed run")
        harness.check(b"model:" in out and b"\x1b" not in out, f"the report on stdout is not clean: {out[:200]!r}")
        code, out, tty = run_on_terminal([binary, "run", "-t1", "-c4", "-R300", "-d20s", srv.url()],
                                         interrupt_after_s=2.2)
        harness.check_eq(code, 130, "exit after Ctrl-C")
        check_clean_end(tty, "interrupted run")
        harness.check(b"interrupted" in out.lower(), "the report does not say interrupted")
        code, out, tty = run_on_terminal([binary, "run", "--quiet", "-t1", "-c4", "-R300", "-d2s", srv.url()])
        harness.check(b"sent " not in tty and b"\x1b" not in tty, f"--quiet drew progress: {tty[-200:]!r}")


def case_progress_pipe(binary):
    with harness.punctual_serve(binary, "--duration", "30s") as srv:
        cp = subprocess.run([binary, "run", "--progress", "-t1", "-c4", "-R300", "-d2s", srv.url()],
                            capture_output=True, timeout=60)
        harness.check(b"\x1b" not in cp.stderr and b"\r" not in cp.stderr, "control codes in a pipe")
        lines = [ln for ln in cp.stderr.decode().splitlines() if " sent " in ln]
        harness.check(len(lines) == 1, f"--progress printed {len(lines)} lines in 2 s: {cp.stderr!r}")
        cp = subprocess.run([binary, "run", "-t1", "-c4", "-R300", "-d2s", srv.url()],
                            capture_output=True, timeout=60)
        harness.check(b" sent " not in cp.stderr, "progress printed into a pipe without --progress")


def main():
    binary = harness.binary_from_argv()
    checks = harness.Checks("report_outputs")
    checks.run("--timeline CSV and report RUN.json re-rendering", case_timeline, binary)
    checks.run("report: bad input is one line, exit 2", case_report_bad_input, binary)
    checks.run("progress on a terminal: redrawn, erased at the end and on Ctrl-C", case_progress_terminal, binary)
    checks.run("progress into a pipe: none, or plain lines with --progress", case_progress_pipe, binary)
    checks.finish()


if __name__ == "__main__":
    main()
