#!/usr/bin/python3
"""truth_lib's join of serve's arrival log to the schedule, on synthetic logs: what test_truth.py
concludes from real ones rests on it. A request that arrived late behind others must show its
own lag, not lend it to its neighbours; one that never arrived, or arrived twice, must be
named, even when the log's line count matches the schedule's. Pairing the sorted intended times
with the sorted arrivals one to one, as the truth test once did, saw none of this.

Usage: test_truth_lib.py [PATH_TO_PUNCTUAL]  (the binary is not used: nothing runs)
"""

import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import truth_lib as tl  # noqa: E402
from harness import check, check_eq  # noqa: E402

US = tl.US
MS = tl.MS
START = 1_000 * MS
GAP = 100 * US  # 10,000 requests per second
N = 100


def schedule():
    return {i: START + i * GAP for i in range(N)}


def on_time(intended, skip=(), lag=10 * US):
    """Every request but SKIP's arriving LAG after its intended time, answered 20 us later."""
    return [(t + lag, t + lag + 20 * US, i) for i, t in intended.items() if i not in skip]


def a_late_request_shows_its_own_lag():
    # Request 10 reaches the server 5 ms late, behind the 49 requests intended after it. Paired
    # by sorted order, each of those would lend it 100 us and the largest lag would be 100 us.
    intended = schedule()
    arrivals = sorted(on_time(intended, skip=(10,)) + [(intended[10] + 5 * MS, intended[10] + 5 * MS, 10)])
    joined = tl.join_arrivals(intended, arrivals)
    check_eq(joined.problems(), [], "problems of a complete log")
    lags = tl.arrival_lags(joined, stalls=[])
    check_eq(max(lags), 5 * MS, "the largest lag")
    check_eq(sorted(lags)[-2], 10 * US, "the next largest lag")


def a_missing_and_a_repeated_request_are_named():
    # Request 3 never arrived and request 7 arrived twice (say, retried): as many lines as
    # planned requests, which a count of lines cannot tell from a complete log.
    intended = schedule()
    arrivals = on_time(intended, skip=(3,)) + [(intended[7] + 2 * MS, intended[7] + 2 * MS, 7)]
    arrivals.sort()
    check_eq(len(arrivals), len(intended), "log lines against scheduled requests")
    joined = tl.join_arrivals(intended, arrivals)
    check_eq(joined.missing, [3], "the missing requests")
    check_eq(joined.duplicates, [7], "the repeated requests")
    problems = joined.problems()
    check_eq(len(problems), 2, f"problems: {problems}")
    # A request the report says was never sent may be missing, and only then.
    check_eq(len(tl.join_arrivals(intended, on_time(intended, skip=(3,))).problems(1)), 0,
             "problems with one request never sent")
    # The pair of a repeated request is its first arrival.
    check_eq(joined.pairs[7][1], intended[7] + 10 * US, "request 7's arrival")


def swapped_requests_keep_their_own_times():
    # Two workers: request 6 reached the server before request 5, which was 190 us late.
    intended = schedule()
    arrivals = on_time(intended, skip=(5,)) + [(intended[5] + 190 * US, intended[5] + 210 * US, 5)]
    arrivals.sort()
    joined = tl.join_arrivals(intended, arrivals)
    check_eq(joined.pairs[5][1] - intended[5], 190 * US, "request 5's lag")
    check_eq(joined.pairs[6][1] - intended[6], 10 * US, "request 6's lag")
    # Answered - intended, per request: request 5's 210 us is its own.
    seen = tl.server_observed_percentiles(range(N), joined)
    check_eq(seen["99.9"], 210 * US, "server-observed p99.9")


def the_drain_is_the_last_answer_of_requests_due_in_the_stall():
    # A stall over requests 20-29: the last answered of them (20 and 27) 3 ms after its end,
    # though request 29 arrived last.
    intended = schedule()
    end = intended[30]
    held = {i: (end + (i % 7) * 500 * US) for i in range(20, 30)}
    arrivals = on_time(intended, skip=held) + [(intended[i] + 10 * US, a, i) for i, a in held.items()]
    joined = tl.join_arrivals(intended, sorted(arrivals))
    check_eq(tl.backlog_drain(joined, [(intended[20], end)]), [3 * MS], "the drain")


def the_log_and_the_schedule_are_read_with_their_ids():
    with tempfile.TemporaryDirectory(prefix="punctual-truth-lib-") as tmp:
        log = os.path.join(tmp, "arrivals.txt")
        with open(log, "w") as f:
            f.write("# arrival_mono_ns answered_mono_ns x-request-id\n"
                    "30 40 000000000002\n10 20 -\n20 30 000000000001\n50 60 a%20b\n")
        check_eq(tl.read_arrivals(log), [(10, 20, None), (20, 30, 1), (30, 40, 2), (50, 60, None)],
                 "arrivals")
        sched = os.path.join(tmp, "schedule.txt")
        with open(sched, "w") as f:
            f.write("# punctual schedule\n# index offset_ns worker phase\n"
                    "0 0 0 warmup\n2 500 0 measured\n")
        check_eq(tl.read_schedule(sched), [(0, 0, "warmup"), (2, 500, "measured")], "schedule")
        joined = tl.join_arrivals({0: 5, 2: 25}, tl.read_arrivals(log))
        check_eq(joined.missing, [0], "missing")
        check_eq(len(joined.strangers), 3, "arrivals of no scheduled request")


def main():
    checks = harness.Checks("truth_lib")
    for name, fn in (("a_late_request_shows_its_own_lag", a_late_request_shows_its_own_lag),
                     ("a_missing_and_a_repeated_request_are_named",
                      a_missing_and_a_repeated_request_are_named),
                     ("swapped_requests_keep_their_own_times", swapped_requests_keep_their_own_times),
                     ("the_drain_is_the_last_answer_of_requests_due_in_the_stall",
                      the_drain_is_the_last_answer_of_requests_due_in_the_stall),
                     ("the_log_and_the_schedule_are_read_with_their_ids",
                      the_log_and_the_schedule_are_read_with_their_ids)):
        checks.run(name, fn)
    checks.finish()


if __name__ == "__main__":
    main()
