"""Fault modes: `punctual serve --fault KIND:FRACTION` against `punctual run`.

Each fault must become the right counted outcome (and socket error reason), in about
the right share of requests, with the denominator intact and the run ending on time.
A separate check proves a late response is never given to a later request.

Usage: python3 test_faults.py PATH_TO_PUNCTUAL
"""

import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, check_eq  # noqa: E402
from faults_lib import nonzero, read_arrival_log, within_binomial  # noqa: E402

DURATION_S = 2.0
RATE = 200
FRACTION = 0.2


def run_against(binary, serve_args, run_args, arrival_log=None):
    """Starts `serve SERVE_ARGS`, runs `run RUN_ARGS URL`; returns (result, report, arrivals)."""
    if arrival_log:
        serve_args = [*serve_args, "--arrival-log", arrival_log]
    with harness.punctual_serve(binary, *serve_args) as serve:
        result = harness.run_punctual(binary, [*run_args, serve.url("/")], timeout_s=30)
    report = harness.require_report(result)
    harness.assert_denominator(report)
    arrivals = read_arrival_log(arrival_log) if arrival_log else None
    return result, report, arrivals


def check_wall(result, timeout_s):
    limit = DURATION_S + timeout_s + 1.0
    check(result.wall_s <= limit, f"run took {result.wall_s:.2f} s > duration + timeout + 1 s = {limit} s")


def fault_run(binary, fault, timeout="1s", timeout_s=1.0, connections=4, tmp=None):
    log = os.path.join(tmp, "arrivals.log")
    result, report, arrivals = run_against(
        binary, ["--fault", f"{fault}:{FRACTION}", "--seed", "3"],
        ["-t1", f"-c{connections}", f"-R{RATE}", "-d2s", "--timeout", timeout], log)
    check_wall(result, timeout_s)
    o = report["outcomes"]
    check_eq(o["dropped"], 0, "dropped")
    check_eq(o["unfinished"], 0, "unfinished")
    check_eq(report["status_counts"].get("200", 0), o["ok"], "status 200 count vs ok")
    return report, arrivals


def errors_only(report, allowed):
    errors = nonzero(report["socket_errors"])
    extra = {k: v for k, v in errors.items() if k not in allowed}
    check(not extra, f"unexpected socket errors {extra} (all: {errors})")
    return errors


def expect_socket_error(reason_options, fault, tmp, binary):
    """Every faulted request fails with one reason; every other one is ok."""
    def case():
        report, arrivals = fault_run(binary, fault, tmp=tmp)
        o = report["outcomes"]
        planned = report["schedule"]["planned"]
        reason = next((r for r in reason_options if r in report["socket_errors"]), None)
        check(reason is not None, f"no reason among {reason_options} in {report['socket_errors']}")
        errors_only(report, {reason})
        failed = report["socket_errors"][reason]
        check_eq(o["socket_error"], failed, f"socket_error vs {reason}")
        check_eq(o["ok"] + failed, planned, f"ok + {reason} vs planned ({o})")
        check_eq(o["timeout"], 0, "timeouts")
        check_eq(len(arrivals), planned, "requests that reached the server")
        check(within_binomial(failed, planned, FRACTION),
              f"{failed} of {planned} failed with {reason}; expected about {FRACTION * planned:.0f}")
    return case


def expect_all_ok(fault, tmp, binary):
    """The fault is legal HTTP: every request is ok."""
    def case():
        report, arrivals = fault_run(binary, fault, tmp=tmp)
        planned = report["schedule"]["planned"]
        errors_only(report, set())
        check_eq(report["outcomes"]["ok"], planned, f"ok vs planned ({report['outcomes']})")
        check_eq(len(arrivals), planned, "requests that reached the server")
    return case


def close_after(tmp, binary):
    """The server closes after 20% of responses without saying so.

    Each response is whole and framed by Content-Length, so it is ok; the engine sees the
    close on an idle connection and reconnects. The one legitimate failure is the race
    where a request is written to a connection whose FIN is already on its way: that
    request was never answered, so `closed` (or `reset`/`write`) is its true outcome.
    It must stay rare: at most 2% of requests here."""
    report, arrivals = fault_run(binary, "close-after", tmp=tmp)
    planned = report["schedule"]["planned"]
    errors = errors_only(report, {"closed", "reset", "write"})
    failed = sum(errors.values())
    check_eq(report["outcomes"]["ok"] + failed, planned, f"ok + races vs planned ({report['outcomes']})")
    check(failed <= 0.02 * planned, f"{failed} requests lost to close races: {errors}")
    check_eq(len(arrivals), planned, "requests that reached the server")


def slow_fault_exact(fault, tmp, binary):
    """`never` and `trickle` with --timeout 300ms: each faulted request times out.

    With -c4 a faulted request holds its connection for the whole 300 ms, so others time
    out waiting in the queue, never reaching the server. The server's arrival log tells
    them apart: timeouts = (planned - requests that reached the server) + faulted ones."""
    report, arrivals = fault_run(binary, fault, timeout="300ms", timeout_s=0.3, tmp=tmp)
    o = report["outcomes"]
    planned = report["schedule"]["planned"]
    errors_only(report, set())  # a late trickled byte read as a new response would be `parse`
    reached = len(arrivals)
    check(reached <= planned, f"{reached} arrivals > planned {planned}")
    faulted = o["timeout"] - (planned - reached)
    check_eq(o["ok"] + faulted, reached, f"ok + faulted vs requests that reached the server ({o})")
    if fault == "never":
        unanswered = sum(1 for _, answered in arrivals if answered == 0)
        check_eq(faulted, unanswered, "timeouts among sent requests vs never-answered in the log")
    check(within_binomial(faulted, reached, FRACTION),
          f"{faulted} of {reached} sent requests timed out; expected about {FRACTION * reached:.0f}")


def trickle_within_timeout(tmp, binary):
    """A trickled body takes 500 ms: with a 1 s timeout it completes ok."""
    report, _ = fault_run(binary, "trickle", connections=32, tmp=tmp)
    errors_only(report, set())
    check_eq(report["outcomes"]["ok"], report["schedule"]["planned"], f"ok ({report['outcomes']})")
    ok_max = report["latency"]["response_time_ok"]["max_ns"]
    check(ok_max >= 500_000_000, f"slowest ok {ok_max} ns: no trickled response was waited for")


def idle_close(tmp, binary):
    """`--idle-close 50ms` with each connection idle ~200 ms between requests: nearly every
    request finds its connection closed by the server and reopened by the engine. A
    request written as the server closes is lost (closed/reset/write), which must be rare."""
    result, report, _ = run_against(
        binary, ["--idle-close", "50ms"],
        ["-t1", "-c4", "-R20", "-d2s", "--timeout", "1s"])
    check_wall(result, 1.0)
    planned = report["schedule"]["planned"]
    errors = errors_only(report, {"closed", "reset", "write"})
    check_eq(report["outcomes"]["ok"] + sum(errors.values()), planned, f"outcomes {report['outcomes']}")
    check(report["outcomes"]["ok"] >= 0.9 * planned, f"too few ok: {report['outcomes']}, {errors}")


def late_responses_are_never_reattributed(tmp, binary):
    """Exponential service times (mean 250 ms) against --timeout 300ms; the server answers
    `299 Late` when a response is due 320 ms or more after its request arrived. Since a
    request arrives after its intended time, a 299 always reaches punctual more than 20 ms
    past its own deadline: it can never legitimately complete any request. If the engine
    kept a timed-out connection and gave its late bytes to the next request there, that
    request would complete with status 299, so no 299 may ever be counted.

    This engine closes a timed-out connection abortively (RST), so the server logs those
    requests as never answered (answered 0) and never even writes the 299; the check
    requires that this situation really arose for at least 15% of the requests."""
    log = os.path.join(tmp, "late.log")
    result, report, arrivals = run_against(
        binary, ["--service-time", "exp:250ms", "--mark-late", "320ms", "--seed", "5"],
        ["-t1", "-c64", "-R100", "-d2s", "--timeout", "300ms"], log)
    check_wall(result, 0.3)
    o = report["outcomes"]
    planned = report["schedule"]["planned"]
    given_up = sum(1 for _, answered in arrivals if answered == 0)
    late_written = sum(1 for a, answered in arrivals if answered and answered - a >= 320_000_000)
    in_time = sum(1 for a, answered in arrivals if answered and answered - a < 300_000_000)
    check(given_up + late_written >= 0.15 * planned,
          f"only {given_up + late_written} of {planned} requests outlived the timeout: "
          "the check would prove little")
    check_eq(report["status_counts"].get("299", 0), 0, "late (299) responses counted for a request")
    check(o["timeout"] >= given_up + late_written,
          f"{given_up + late_written} requests outlived the timeout but only {o['timeout']} timeouts: {o}")
    check(o["ok"] <= in_time, f"{o['ok']} ok but only {in_time} responses left the server in time")
    ok_max = report["latency"]["response_time_ok"]["max_ns"]
    check(ok_max < 300_000_000 * 1.001, f"an ok response took {ok_max} ns, past the timeout")
    errors_only(report, set())


def closed_model_reconnects(binary):
    """The server goes away mid-run. The closed model keeps trying to reopen every connection
    (each try a counted connect failure, 10 ms apart) instead of running on quietly with none."""
    import subprocess
    import threading
    import time
    serve = subprocess.Popen([binary, "serve", "--port", "0", "--service-time", "1ms"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        port = harness.read_listening_port(serve, 5.0)
        stopper = threading.Timer(0.5, harness.stop_process, [serve])
        stopper.start()
        started = time.monotonic()
        result = harness.run_punctual(binary, ["--model", "closed", "-t1", "-c4", "--think", "5ms",
                                               "-d1500ms", f"http://127.0.0.1:{port}/"], timeout_s=30)
        stopper.join()
        stopped_after_s = time.monotonic() - started
    finally:
        harness.stop_process(serve)
    report = harness.require_report(result)
    harness.assert_denominator(report)
    o = report["outcomes"]
    connect = report["socket_errors"]["connect"]
    check(o["ok"] > 0, f"nothing answered before the server went away: {o}")
    # ~1 s without a server, 4 connections, one reconnect each per 10 ms backoff: ~400 tries.
    check(connect >= 40, f"only {connect} connect failures counted after the server went away "
                         f"({stopped_after_s:.1f} s into the run): the connections were not reopened")
    check_eq(o["socket_error"], sum(report["socket_errors"].values()), "socket_error vs its reasons")


def main():
    binary = harness.binary_from_argv()
    checks = harness.Checks("faults")
    tmp = tempfile.mkdtemp(prefix="punctual-faults-")
    try:
        checks.run("reset", expect_socket_error(["reset"], "reset", tmp, binary))
        checks.run("reset=20", expect_socket_error(["reset"], "reset=20", tmp, binary))
        checks.run("garbage", expect_socket_error(["parse"], "garbage", tmp, binary))
        checks.run("huge-headers",
                   expect_socket_error(["header_too_large", "parse"], "huge-headers", tmp, binary))
        for fault in ("close-delimited", "continue", "chunked", "http10"):
            checks.run(fault, expect_all_ok(fault, tmp, binary))
        checks.run("close-after", close_after, tmp, binary)
        checks.run("never (300 ms timeout)", slow_fault_exact, "never", tmp, binary)
        checks.run("trickle (300 ms timeout)", slow_fault_exact, "trickle", tmp, binary)
        checks.run("trickle (1 s timeout)", trickle_within_timeout, tmp, binary)
        checks.run("idle-close", idle_close, tmp, binary)
        checks.run("late responses are never reattributed", late_responses_are_never_reattributed,
                   tmp, binary)
        checks.run("closed model reopens lost connections, counting each failure",
                   closed_model_reconnects, binary)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    checks.finish()


if __name__ == "__main__":
    main()
