"""`punctual run --http 2` against a hostile h2c server (h2_hostile_server.py, raw frames).

Each case runs a short bounded load at a server that misbehaves in one way, and checks the
report against what the server itself saw and did, so a client that mishandles the frame
trips an assertion:

- normal: every request ok; the request bytes the client reports are exactly the bytes of the
  HEADERS and DATA frames the server received, and the response bytes exactly the two frames
  of each response.
- GOAWAY after 20 streams of each connection: the streams above the GOAWAY's last stream id
  are sent again once on a new connection (protocol.h2.unprocessed counts them), nothing the
  server processed is sent twice, and every request ends ok. A stream left a second time is
  an error (`goaway`), rightly: that happens only when more than 20 requests wait for the next
  connection, so only when the generator or the server was held back for 20 requests' worth of
  time (40 ms; make test runs this beside an ASan build). Then the run must show that hold-up
  in its send lag or queue wait, and each stream the server left is still exactly one of
  protocol.h2.unprocessed and socket_errors.goaway.
- RST_STREAM(INTERNAL_ERROR) on every 5th stream: each reset is one socket error
  `h2_rst`, protocol.h2.rst_codes names it, the other requests are ok, and nothing is retried.
- a zero initial stream window (SETTINGS_INITIAL_WINDOW_SIZE = 0, no WINDOW_UPDATE ever): a GET
  is still answered; a POST can never send its body, so each one times out at --timeout, its
  stream cancelled by the client, and the run ends on time.
- a frame that breaks the protocol after 20 streams of each connection (DATA on stream 0,
  with the server keeping the connection open; a SETTINGS frame whose length is not a multiple
  of 6, with the server closing 100 ms later): the connection's in-flight streams fail at once,
  once each, as `h2_protocol` (not at their deadline, not as a close), the client reconnects
  and goes on.
- SETTINGS_MAX_CONCURRENT_STREAMS = 1 with responses held 3 ms: the client never has more
  than one stream open on the connection, the requests wait in its queue (queue wait shows
  it) and every one ends ok.

Every case also checks that the process did not crash, the report exists, planned ==
sum(outcomes), the socket errors add up to outcomes.socket_error, and the protocol is h2.

Usage: python3 test_h2_hostile.py PATH_TO_PUNCTUAL
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from h2_hostile_server import RST_STREAM, HostileServer, frame, response_size  # noqa: E402
from harness import check, check_eq  # noqa: E402

BODY = b"hello\n"
RESPONSE_BYTES = response_size(BODY)          # HEADERS (9 + 1) + DATA (9 + 6)
RST_BYTES = len(frame(RST_STREAM, 0, 1, bytes(4)))  # 9 + a 4-byte error code
RATE = 500
GOAWAY_AFTER = 20
RST_EVERY = 5
MALFORMED_AFTER = 20
# The gating checks an accounting test accepts failing (the validity tests judge verdicts):
# short runs cannot resolve p99 and its send lag, and this machine's lateness is not the point.
EXCUSED_PREFIXES = ("samples_beyond_", "send_lag_")


def load(binary, server, duration_s=1.0, rate=RATE, connections=2, timeout="1s", extra=(),
         excused=()):
    """Runs `punctual run --http 2` at SERVER for DURATION_S and checks what every case must
    hold: no crash, a report, an accepted verdict, the end on time, the denominator, the socket
    errors adding up, h2. EXCUSED: gating checks this case expects to fail (exit 4)."""
    timeout_s = float(timeout[:-2]) / 1000 if timeout.endswith("ms") else float(timeout[:-1])
    args = ["--http", "2", "-q", "-t", "1", "-c", str(connections), "-R", str(rate),
            "-d", f"{int(duration_s * 1000)}ms", "--timeout", timeout, *extra, server.url()]
    result = harness.run_punctual(binary, args, timeout_s=30)
    check(result.returncode >= 0, f"punctual died of signal {-result.returncode}\n{result.describe()}")
    for marker in ("AddressSanitizer", "LeakSanitizer", "runtime error:"):
        check(marker not in result.stderr, f"{marker} in stderr\n{result.describe()}")
    check(result.report is not None, f"no JSON report written\n{result.describe()}")
    report = result.report
    if result.returncode != 0 and not harness.host_lateness_only(result):
        check_eq(result.returncode, 4, f"exit status (0, or 4 for an excused verdict)\n{result.describe()}")
        failed = sorted(c["name"] for c in report["validity"]["checks"]
                        if c["level"] == "gating" and not c["pass"])
        unexcused = [n for n in failed if not n.startswith(EXCUSED_PREFIXES) and n not in excused]
        check(not unexcused, f"the run was judged invalid by {unexcused} (all failed: {failed})\n"
                             f"{result.describe()}")
    limit = duration_s + timeout_s + 1.5
    check(result.wall_s <= limit, f"the run took {result.wall_s:.2f} s > duration + timeout + 1.5 s")
    harness.assert_denominator(report)
    outcomes = report["outcomes"]
    check_eq(sum(report["socket_errors"].values()), outcomes["socket_error"],
             f"sum of socket_errors {report['socket_errors']} vs outcomes.socket_error")
    check_eq(outcomes["unfinished"], 0, "unfinished")
    check_eq(outcomes["dropped"], 0, "dropped")
    check_eq(report["protocol"]["name"], "h2", "protocol.name")
    check_eq(report["protocol"]["connections"]["http/1.1"], 0, "HTTP/1.1 connections")
    check(report["protocol"]["connections"]["h2"] >= 1, f"no h2 connection: {report['protocol']}")
    return report


def nonzero_errors(report):
    return {k: v for k, v in report["socket_errors"].items() if v}


def check_bytes(report, stats, received):
    """bytes.sent is every request frame the server received (every attempt, whatever its end);
    bytes.received what the server sent on the streams."""
    check_eq(report["bytes"]["sent"], stats.request_bytes,
             "bytes.sent vs the HEADERS and DATA frame bytes the server received")
    check_eq(report["bytes"]["received"], received, "bytes.received vs the frames the server sent on the streams")


def normal(binary):
    with HostileServer(body=BODY) as server:
        report = load(binary, server)
    st = server.stats
    planned = report["schedule"]["planned"]
    check(planned >= RATE * 0.9, f"only {planned} requests planned")
    check_eq(report["outcomes"]["ok"], planned, "ok == planned")
    check_eq(nonzero_errors(report), {}, "socket errors")
    check_eq(st.streams, planned, "streams the server saw")
    check_eq(st.answered, planned, "responses the server sent")
    check_eq(report["protocol"]["h2"]["unprocessed"], 0, "protocol.h2.unprocessed")
    check_bytes(report, st, planned * RESPONSE_BYTES)


def goaway(binary):
    # One connection: a stream sent again waits for the next connection, where it is among the
    # first; with two it could land on the other one just as that one passes its own 20 streams,
    # and a second refusal is (rightly) an error.
    with HostileServer(goaway_after=GOAWAY_AFTER, body=BODY) as server:
        report = load(binary, server, connections=1)
    st = server.stats
    planned = report["schedule"]["planned"]
    unprocessed = report["protocol"]["h2"]["unprocessed"]
    twice = report["socket_errors"]["goaway"]  # left again after being sent again: final
    # Each connection answers GOAWAY_AFTER streams at most, and all but the last end in a GOAWAY.
    check(st.goaways >= -(-st.answered // GOAWAY_AFTER) - 1,
          f"the server sent only {st.goaways} GOAWAYs for {st.answered} answers")
    check(unprocessed > 0, "protocol.h2.unprocessed is 0 after GOAWAYs")
    check_eq(unprocessed + twice, st.abandoned,
             "protocol.h2.unprocessed + socket_errors.goaway vs the streams the server left above a GOAWAY")
    if twice:
        # More than GOAWAY_AFTER requests waited for one connection: some request was held
        # back, before its send or in the queue, for GOAWAY_AFTER requests' worth of time.
        latency = report["latency"]
        held_ns = max(latency["send_lag"]["max_ns"], latency["queue_wait"]["max_ns"])
        check(held_ns >= GOAWAY_AFTER * 1e9 / RATE,
              f"{twice} streams left twice, yet no request was held back {GOAWAY_AFTER} requests' "
              f"worth (the longest send lag or queue wait was {held_ns / 1e6:.1f} ms)")
    check_eq(report["outcomes"]["ok"] + twice, planned, "ok + socket_errors.goaway == planned")
    check_eq(nonzero_errors(report), {"goaway": twice} if twice else {}, "socket errors")
    check_eq(st.answered, report["outcomes"]["ok"], "responses the server sent (nothing processed was sent twice)")
    check_eq(st.streams, planned + st.abandoned - twice, "streams the server saw")
    check(report["protocol"]["connections"]["h2"] >= st.goaways + 1,
          f"{report['protocol']['connections']['h2']} connections for {st.goaways} GOAWAYs")
    check_bytes(report, st, report["outcomes"]["ok"] * RESPONSE_BYTES)


def rst_every(binary):
    with HostileServer(rst_every=RST_EVERY, body=BODY) as server:
        report = load(binary, server)
    st = server.stats
    planned = report["schedule"]["planned"]
    check_eq(st.reset, planned // RST_EVERY, "streams the server reset")
    check_eq(nonzero_errors(report), {"h2_rst": st.reset}, "socket errors")
    check_eq(report["protocol"]["h2"]["rst_codes"], {"INTERNAL_ERROR": st.reset}, "protocol.h2.rst_codes")
    check_eq(report["outcomes"]["ok"], st.answered, "ok vs responses the server sent")
    check_eq(report["outcomes"]["ok"] + st.reset, planned, "ok + resets")
    check_eq(st.streams, planned, "streams the server saw (a reset is not retried by default)")
    check_bytes(report, st, st.answered * RESPONSE_BYTES + st.reset * RST_BYTES)


def zero_window(binary):
    with HostileServer(zero_window=True, body=BODY) as server:
        report = load(binary, server, duration_s=0.5, rate=200, timeout="300ms")
    st = server.stats
    planned = report["schedule"]["planned"]
    check_eq(report["outcomes"]["ok"], planned, "GET: ok == planned")
    check_bytes(report, st, planned * RESPONSE_BYTES)

    with HostileServer(zero_window=True, body=BODY) as server:
        report = load(binary, server, rate=200, timeout="300ms", extra=["-m", "POST", "--body", "xyz"])
    st = server.stats
    planned = report["schedule"]["planned"]
    outcomes = report["outcomes"]
    check_eq(outcomes["timeout"], planned, f"POST: timeouts == planned ({outcomes})")
    check_eq(st.client_data_frames, 0, "POST: DATA frames sent into a zero window")
    check_eq(st.streams, planned, "POST: streams the server saw")
    check_eq(st.answered, 0, "POST: responses the server sent")
    check_eq(st.client_rst, planned, "POST: streams the client cancelled at their deadline")
    check_bytes(report, st, 0)


def malformed(binary, kind, close_after_break_s):
    with HostileServer(malformed_after=MALFORMED_AFTER, malformed=kind,
                       close_after_break_s=close_after_break_s, body=BODY) as server:
        report = load(binary, server)
    st = server.stats
    planned = report["schedule"]["planned"]
    outcomes = report["outcomes"]
    errors = nonzero_errors(report)
    check(st.malformed > 0, "the server never sent its malformed frame")
    check(errors.get("h2_protocol", 0) > 0,
          f"no socket_errors.h2_protocol after {st.malformed} malformed frames: {errors}, {outcomes}")
    check_eq(outcomes["timeout"], 0,
             f"timeouts: the broken connection's streams must fail at once ({errors}, {outcomes})")
    check_eq(errors, {"h2_protocol": st.abandoned},
             "socket errors vs the streams the server left unanswered (each fails once)")
    check_eq(outcomes["ok"], st.answered, "ok vs responses the server sent")
    check_eq(outcomes["ok"] + st.abandoned, planned, "ok + h2_protocol")
    # Each connection is answered MALFORMED_AFTER times at most, so the answers show the client
    # reconnecting and going on (a break at the run's very end needs no new connection).
    connections = report["protocol"]["connections"]["h2"]
    check(connections >= max(st.malformed, -(-st.answered // MALFORMED_AFTER)),
          f"{connections} connections for {st.malformed} broken ones and {st.answered} answers: no reconnect")
    check_bytes(report, st, st.answered * RESPONSE_BYTES)


def max_concurrent(binary):
    # One connection taking one stream at a time, each answered 3 ms late, at a request every
    # 2 ms: a client that opened more streams would show it at once; this one must queue.
    with HostileServer(max_concurrent=1, delay_s=0.003, body=BODY) as server:
        report = load(binary, server, duration_s=0.5, connections=1, timeout="2s",
                      excused=("connection_cap",))
    st = server.stats
    planned = report["schedule"]["planned"]
    check_eq(st.max_open, 1, "most streams open at once on the connection")
    check_eq(report["outcomes"]["ok"], planned, "ok == planned")
    check_eq(st.answered, planned, "responses the server sent")
    queue_p99 = int(report["latency"]["queue_wait"]["percentiles_ns"]["99"])
    check(queue_p99 > 50_000_000, f"queue wait p99 {queue_p99 / 1e6:.1f} ms: the requests did not queue")
    check_bytes(report, st, planned * RESPONSE_BYTES)


def main():
    binary = harness.binary_from_argv()
    checks = harness.Checks("h2_hostile")
    checks.run("normal", normal, binary)
    checks.run("goaway", goaway, binary)
    checks.run("rst_every", rst_every, binary)
    checks.run("zero_window", zero_window, binary)
    checks.run("malformed_data_on_stream_0", malformed, binary, "data_on_stream_0", None)
    checks.run("malformed_settings_length", malformed, binary, "settings_length", 0.1)
    checks.run("max_concurrent_1", max_concurrent, binary)
    checks.finish()


if __name__ == "__main__":
    main()
