"""Helpers for the truth tests: run `punctual serve` with a known stall and `punctual run`
against it, then rebuild the response time every scheduled request really suffered from the
server's own logs, independently of what the generator measured.

The server's arrival log is joined to the schedule request by request: `run --request-id-header`
names each request by its schedule index and `serve --arrival-log-id-header` logs that name, so
a request that never arrived, arrived twice or out of order cannot shift its neighbours' pairs.

Python 3 standard library only. Every load goes to 127.0.0.1 and every subprocess is bounded.
"""

import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

MS = 1_000_000
US = 1_000
# The header that carries each request's schedule index from punctual run to serve's log.
ID_HEADER = "x-request-id"

# The percentiles the truth tests compare, as keys of latency.response_time.percentiles_ns.
PERCENTILES = ("50", "90", "99", "99.9")
# Requests reach the server on schedule: the median |arrival - intended| outside the stalls.
ARRIVAL_MEDIAN_LIMIT_NS = 200_000


class ConfigError(Exception):
    """The experiment itself could not be set up (server did not start, stall misplaced...)."""


# ---------------------------------------------------------------------------------------------
# processes


def start_server(binary, workdir, stall_at, safety_duration="20s", extra_args=()):
    """Starts `punctual serve` on a free loopback port with a stall log and an arrival log, and
    EXTRA_ARGS (e.g. --tls-self-signed).

    Returns (process, port). stdout goes to a file, so the server can never block on a full
    pipe. `safety_duration` makes the server exit by itself even if the caller dies.
    """
    out_path = os.path.join(workdir, "serve.out")
    out = open(out_path, "w")
    args = [binary, "serve", "--host", "127.0.0.1", "--port", "0",
            "--stall-at", stall_at,
            "--stall-log", os.path.join(workdir, "stall.jsonl"),
            "--arrival-log", os.path.join(workdir, "arrivals.txt"),
            "--arrival-log-id-header", ID_HEADER,
            "--duration", safety_duration, *extra_args]
    proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)
    out.close()
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        with open(out_path) as f:
            for line in f:
                if line.startswith("listening on 127.0.0.1:"):
                    return proc, int(line.strip().rsplit(":", 1)[1])
        if proc.poll() is not None:
            break
        time.sleep(0.005)
    stop_server(proc)
    with open(out_path) as f:
        raise ConfigError("server did not start: " + f.read())


def stop_server(proc):
    return harness.stop_process(proc, timeout_s=10.0)


def run_load(binary, workdir, port, rate, arrival, threads, connections, duration, warmup,
             timeout=60.0, extra_args=(), scheme="http"):
    """Runs `punctual run` with EXTRA_ARGS against SCHEME://127.0.0.1:PORT/ and returns
    (json_report, schedule_path, completed_process)."""
    json_path = os.path.join(workdir, "report.json")
    schedule_path = os.path.join(workdir, "schedule.txt")
    args = [binary, "run", "-R", str(rate), "--arrival", arrival,
            "-t", str(threads), "-c", str(connections),
            "-d", duration, "--warmup", warmup, "--seed", "7",
            "--json", json_path, "--schedule-out", schedule_path,
            "--request-id-header", ID_HEADER, *extra_args,
            "%s://127.0.0.1:%d/" % (scheme, port)]
    cp = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                        timeout=timeout)
    if cp.returncode != 0 or not os.path.exists(json_path):
        raise ConfigError("punctual run failed (exit %d): %s" % (cp.returncode, cp.stderr))
    return harness.load_report(json_path), schedule_path, cp


# ---------------------------------------------------------------------------------------------
# log parsing


def read_schedule(path):
    """Returns [(index, offset_ns, phase)] from a --schedule-out file, in file order."""
    entries = []
    with open(path) as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            fields = line.split()
            entries.append((int(fields[0]), int(fields[1]), fields[3]))
    return entries


def read_stalls(path):
    """Returns [(start_mono_ns, end_mono_ns)] for every stall the server actually took."""
    stalls = []
    if not os.path.exists(path):
        return stalls
    with open(path) as f:
        for line in f:
            if line.strip():
                s = json.loads(line)
                stalls.append((int(s["start_mono_ns"]), int(s["end_mono_ns"])))
    return stalls


def read_arrivals(path):
    """Returns [(arrival_mono_ns, answered_mono_ns, index)] from a serve --arrival-log file
    written with --arrival-log-id-header, sorted by arrival; index is None for a request that
    carried no id (or not a schedule index)."""
    arrivals = []
    with open(path) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                fields = line.split()
                index = int(fields[2]) if len(fields) > 2 and fields[2].isdigit() else None
                arrivals.append((int(fields[0]), int(fields[1]), index))
    arrivals.sort()
    return arrivals


class Joined:
    """The arrival log joined to the schedule by the requests' ids.

    pairs: {index: (intended_ns, arrival_ns, answered_ns)}, from the first arrival of each
    scheduled request; missing: the scheduled indices the log never saw; duplicates: the indices
    it saw more than once (a retry arrives again); strangers: arrivals whose id is none of the
    schedule's (or that had none)."""

    def __init__(self, pairs, missing, duplicates, strangers):
        self.pairs = pairs
        self.missing = missing
        self.duplicates = duplicates
        self.strangers = strangers

    def problems(self, never_sent=0):
        """What breaks "every planned request arrived exactly once", in words; NEVER_SENT
        requests (the report's attempts.never_sent) may be missing, no more."""
        out = []
        if len(self.missing) != never_sent:
            out.append("%d scheduled requests never arrived (%d never sent), e.g. %s" % (
                len(self.missing), never_sent, self.missing[:5]))
        if self.duplicates:
            out.append("%d requests arrived more than once, e.g. %s" % (
                len(self.duplicates), self.duplicates[:5]))
        if self.strangers:
            out.append("%d arrivals name no scheduled request, e.g. %s" % (
                len(self.strangers), self.strangers[:3]))
        return out


def join_arrivals(intended_by_index, arrivals):
    """Joins ARRIVALS (read_arrivals) to INTENDED_BY_INDEX ({index: intended_mono_ns})."""
    pairs, seen, duplicates, strangers = {}, {}, [], []
    for arrival, answered, index in arrivals:
        if index not in intended_by_index:
            strangers.append((arrival, answered, index))
            continue
        seen[index] = seen.get(index, 0) + 1
        if seen[index] == 2:
            duplicates.append(index)
        if index not in pairs:
            pairs[index] = (intended_by_index[index], arrival, answered)
    missing = sorted(i for i in intended_by_index if i not in pairs)
    return Joined(pairs, missing, sorted(duplicates), strangers)


# ---------------------------------------------------------------------------------------------
# the truth


def true_response_time(intended, stalls):
    """What a user sending at `intended` really waits: until the end of the stall it falls in,
    or ~0 (the server answers in microseconds) outside every stall."""
    for start, end in stalls:
        if start <= intended < end:
            return end - intended
    return 0


def hdr_value_at_percentile(sorted_values, percentile):
    """HdrHistogram's valueAtPercentile rank rule on exact values: the value at the
    max(1, round(p/100 * N))-th smallest sample."""
    n = len(sorted_values)
    if n == 0:
        return 0
    rank = int(percentile / 100.0 * n + 0.5)
    rank = min(max(rank, 1), n)
    return sorted_values[rank - 1]


def truth_percentiles(intended_times, stalls):
    values = sorted(true_response_time(t, stalls) for t in intended_times)
    return {p: hdr_value_at_percentile(values, float(p)) for p in PERCENTILES}


def within_tolerance(truth, measured):
    """The contract: ≥ 1 ms truths within [0.99·truth − 1 ms, 1.05·truth + 5 ms];
    sub-millisecond truths must measure sub-millisecond too."""
    if truth >= MS:
        return truth * 0.99 - MS <= measured <= truth * 1.05 + 5 * MS
    return measured < MS


def arrival_lags(joined, stalls, after_stall_ns=50 * MS):
    """|arrival − intended| of each joined request outside the stalls (and outside
    `after_stall_ns` after each)."""
    lags = []
    for t, a, _ in joined.pairs.values():
        if any(s <= t < e + after_stall_ns for s, e in stalls):
            continue
        lags.append(abs(a - t))
    return lags


def backlog_drain(joined, stalls):
    """Diagnostic only: how long after each stall's end the server answered the last of the
    requests intended before that end, i.e. how long the generator's backlog took to drain."""
    drains = []
    for _, end in stalls:
        answered = [ans for t, _, ans in joined.pairs.values() if t < end]
        if answered:
            drains.append(max(max(answered) - end, 0))
    return drains


def server_observed_percentiles(measured_indices, joined):
    """Diagnostic only: answered − intended of each joined request of the measured window (by
    its index). Unlike the truth, this includes the finite speed at which the backlog drains
    after a stall."""
    measured = set(measured_indices)
    values = sorted(ans - t for i, (t, _, ans) in joined.pairs.items() if i in measured)
    return {p: hdr_value_at_percentile(values, float(p)) for p in PERCENTILES}


def median(values):
    v = sorted(values)
    if not v:
        return None
    return v[len(v) // 2]


def fmt_ns(ns):
    if ns is None:
        return "-"
    if ns >= MS:
        return "%.2fms" % (ns / MS)
    return "%.1fus" % (ns / US)
