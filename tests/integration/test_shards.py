#!/usr/bin/python3
"""Sharded runs against the truth: N shards as concurrent local processes, then `punctual merge`.

One `punctual serve` logs its stalls. For N = 1, 2, 3 (and 7 with FULL=1) the N shards run as the
pods of an Indexed Job would, `punctual run OPTS --shard I/N --start-at T --out-dir DIR URL`, each
group with its own T about 1.5 s after its processes start, and a 500 ms stall of the server
inside each group's window. The groups' windows follow each other, so the next group waits for
its T while the previous one runs. Then `punctual merge DIR/*.json -o merged.json --html ...`.

For each group:
- every shard's planned == sum(outcomes) and == its slice of the schedule; its window starts at
  T exactly (schedule.start_unix_ns), its start lag is reported;
- the merge: planned == the 1-process plan (a 1-process --schedule-out), outcomes == the shards'
  sums, planned == sum(outcomes), ok == planned, the report validates against the schema, its
  `shards` list names each shard with its own planned, start lag and command line, its
  start_lag check is the worst shard's; the HTML is written;
- the merged response-time p50/p90/p99/p99.9 agree with the truth computed from the stall log
  and the union of the shards' schedules, within the truth tests' tolerance (truth_lib);
- merge --slo exits as run's rule says: an SLO the truth passes gives 0 (4 only with an invalid
  merged run), one the truth fails gives 3 (4 only when invalid), and with N = 1 the merge of
  the one shard gives the same exit, the same SLO results and the same percentiles as the
  shard's own run with the same --slo.
Then the merge's refusals, each exit 2 with one line: a shard of another plan (--seed 8), a
missing shard, a shard given twice, shards of different N.

Usage: python3 test_shards.py PATH_TO_PUNCTUAL      (FULL=1 adds N = 7)
"""

import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import truth_lib as tl  # noqa: E402
from harness import check, check_eq  # noqa: E402

MS = tl.MS
SEC = 1_000_000_000
RATE = 1000
WINDOW_NS = 2 * SEC
LEAD_S = 1.5            # from starting a group's processes to its --start-at
SLOT_S = 2.45           # from one group's T to the next: the window, then a gap for the exits
STALL_OFFSET_NS = 700 * MS   # the stall, from each group's T
STALL_LEN_NS = 500 * MS
STALL_MARGIN_NS = 100 * MS   # the stall must lie this far inside the window, or the test is void
MAX_START_LAG_NS = 100 * MS
# Far from what the stall gives (truth p99 ~ 490 ms, p90 ~ 300 ms), and checked against the truth
# afterwards: the expected verdicts are computed, not assumed.
SLO_PASS = ("p99", 2 * SEC, "p99<=2s")
SLO_FAIL = ("90", 50 * MS, "p90<=50ms")
PLAN = ["-R", str(RATE), "--arrival", "poisson", "--seed", "7", "-d", "2s"]
PER_SHARD = ["-t1", "-c4", "--slo", SLO_PASS[2], "--slo", SLO_FAIL[2]]
OUTCOMES = harness.OUTCOMES


def shard_counts():
    return (1, 2, 3, 7) if os.environ.get("FULL") == "1" else (1, 2, 3)


# ---------------------------------------------------------------------------------------------
# processes


class Pods:
    """Every process this test starts, killed in `stop_all` whatever happened."""

    def __init__(self):
        self.procs = []

    def start(self, cmd, out_path):
        with open(out_path + ".out", "w") as out, open(out_path + ".err", "w") as err:
            proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        self.procs.append(proc)
        return proc

    def stop_all(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait(timeout=5)


def start_server(binary, work, stalls_from_start, safety_s):
    """`punctual serve` with a stall log; returns (process, port)."""
    stall_at = ",".join(f"{s // MS}ms:{STALL_LEN_NS // MS}ms" for s in stalls_from_start)
    proc, port = None, None
    out_path = os.path.join(work, "serve.out")
    with open(out_path, "w") as out:
        proc = subprocess.Popen([binary, "serve", "--host", "127.0.0.1", "--port", "0",
                                 "--stall-at", stall_at,
                                 "--stall-log", os.path.join(work, "stall.jsonl"),
                                 "--duration", f"{safety_s}s"],
                                stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and port is None:
        with open(out_path) as f:
            for line in f:
                if line.startswith("listening on 127.0.0.1:"):
                    port = int(line.strip().rsplit(":", 1)[1])
        if proc.poll() is not None:
            break
        time.sleep(0.005)
    if port is None:
        harness.stop_process(proc)
        with open(out_path) as f:
            raise tl.ConfigError("server did not start: " + f.read())
    return proc, port


def schedule_measured(binary, options, path, shard=None):
    """The measured entries' offsets of a schedule (a shard's slice with SHARD), written by a run
    against a closed port: --schedule-out comes first, then the connect fails (exit 1)."""
    cmd = [binary, "run", *options, "--schedule-out", path]
    if shard:
        cmd += ["--shard", shard]
    cmd.append(f"http://127.0.0.1:{harness.closed_port()}/")
    cp = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
    check(cp.returncode == 1 and os.path.exists(path),
          f"{' '.join(cmd)}: expected exit 1 and a schedule, got {cp.returncode}: {cp.stderr!r}")
    return [off for off, phase in tl.read_schedule(path) if phase == "measured"]


def merge(binary, inputs, out_dir, name, extra=()):
    cmd = [binary, "merge", *inputs, "-o", os.path.join(out_dir, name + ".json"), *extra]
    cp = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    return cp, cmd


# ---------------------------------------------------------------------------------------------
# checks of one group


def shard_reports(out_dir, n):
    files = sorted(glob.glob(os.path.join(out_dir, "*.json")))
    check_eq([os.path.basename(f) for f in files], sorted(f"shard-{i}-of-{n}.json" for i in range(n)),
             f"N={n}: files in --out-dir")
    for i in range(n):
        check(os.path.exists(os.path.join(out_dir, f"shard-{i}-of-{n}.hlog")),
              f"N={n}: shard-{i}-of-{n}.hlog missing")
    return files, [harness.load_report(f) for f in files]


def start_lag_excuse(merged, shards):
    """Names the shards whose start lag passed 100 ms when the merge's start_lag check names
    one of them (this loaded machine may start a process late); else an empty list."""
    late = [i for i, s in enumerate(shards) if (s["schedule"]["start_lag_ns"] or 0) > MAX_START_LAG_NS]
    checks = [c for c in merged["validity"]["checks"] if c["name"] == "start_lag"]
    if late and checks and not checks[0]["pass"] and \
            any(f"shard {i} of" in checks[0]["note"] for i in late):
        return late
    return []


def acceptable_invalidity(merged, shards):
    """Why an invalid merged run is still acceptable here, or None: only the host's lateness
    (send lag at a gated percentile) or a late shard the start_lag check names."""
    failed = {c["name"] for c in merged["validity"]["checks"] if c["level"] == "gating" and not c["pass"]}
    if not failed:
        return None
    late = start_lag_excuse(merged, shards)
    rest = {f for f in failed if not f.startswith("send_lag_")} - ({"start_lag"} if late else set())
    if rest:
        return None
    return f"failed only {sorted(failed)} (late shards {late})"


def check_group(binary, n, g, stalls, single_planned, rows):
    label = f"N={n}"
    files, shards = shard_reports(g["dir"], n)
    for i, (proc, cmd) in enumerate(g["procs"]):
        check(proc.returncode in (0, 3, 4),
              f"{label} shard {i} exited {proc.returncode}: {open(g['logs'][i] + '.err').read()[-600:]}")
    start_ns = g["T_ns"]
    intended = []
    sha = set()
    for i, s in enumerate(shards):
        sched = s["schedule"]
        harness.assert_denominator(s)
        check_eq([sched["shard"]["index"], sched["shard"]["count"]], [i, n], f"{label} shard {i}: schedule.shard")
        check_eq(sched["start_at_unix_ns"], start_ns, f"{label} shard {i}: start_at_unix_ns")
        check_eq(sched["start_unix_ns"], start_ns, f"{label} shard {i}: start_unix_ns (no warm-up)")
        check(sched["start_lag_ns"] is not None and sched["start_lag_ns"] >= 0,
              f"{label} shard {i}: start_lag_ns {sched['start_lag_ns']!r}")
        offsets = g["slices"][i]
        check_eq(sched["planned"], len(offsets), f"{label} shard {i}: planned against its schedule slice")
        intended += [sched["start_mono_ns"] + off for off in offsets]
        sha.add(sched["plan_sha256"])
    check(len(sha) == 1, f"{label}: the shards name different plans: {sha}")
    g["plan_sha256"] = sha.pop()
    check_eq(len(intended), single_planned, f"{label}: the union of the shards' slices against the 1-process plan")

    # the stall of this group's window
    window_start = min(s["schedule"]["start_mono_ns"] for s in shards)
    near = [(a, b) for a, b in stalls if b > window_start - SEC // 2 and a < window_start + WINDOW_NS + SEC // 2]
    check(len(near) == 1 and near[0][0] >= window_start + STALL_MARGIN_NS and
          near[0][1] <= window_start + WINDOW_NS - STALL_MARGIN_NS,
          f"{label}: the experiment is void: expected one stall inside the window, got "
          f"{[((a - window_start) // MS, (b - window_start) // MS) for a, b in near]} ms from its start")

    merged_dir = os.path.join(g["dir"], "..", f"merged-{n}")
    os.makedirs(merged_dir, exist_ok=True)
    html = os.path.join(merged_dir, "merged.html")
    cp, cmd = merge(binary, files, merged_dir, "merged", ["--html", html])
    merged = harness.load_report(os.path.join(merged_dir, "merged.json")) \
        if os.path.exists(os.path.join(merged_dir, "merged.json")) else None
    check(merged is not None and cp.returncode in (0, 4),
          f"{label}: {' '.join(cmd)} exited {cp.returncode}: {cp.stdout[-800:]} {cp.stderr[-400:]}")
    valid = merged["validity"]["valid"]
    excuse = acceptable_invalidity(merged, shards)
    check(valid or excuse, f"{label}: the merged run is invalid: "
          f"{[c for c in merged['validity']['checks'] if c['level'] == 'gating' and not c['pass']]}"
          f"\n{cp.stdout[-1500:]}")
    if not valid:
        print(f"     {label}: accepted an invalid merged run: {excuse}", flush=True)
    check_eq(cp.returncode, 0 if valid else 4, f"{label}: merge exit (valid {valid})")
    with open(html, encoding="utf-8") as f:
        page = f.read()
    check(page.lstrip().lower().startswith("<!doctype html") and "<svg" in page,
          f"{label}: merged.html is not an HTML report with charts ({len(page)} bytes)")

    # the merged counts
    ms = merged["schedule"]
    harness.assert_denominator(merged)
    check_eq(ms["planned"], single_planned, f"{label}: merged planned against the 1-process plan")
    check_eq(ms["planned"], sum(s["schedule"]["planned"] for s in shards),
             f"{label}: merged planned against the shards'")
    for key in OUTCOMES:
        check_eq(merged["outcomes"][key], sum(s["outcomes"][key] for s in shards),
                 f"{label}: merged outcomes.{key}")
    check_eq(merged["outcomes"]["ok"], ms["planned"], f"{label}: merged ok (no request may fail here)")
    check_eq(merged["latency"]["response_time"]["count"],
             sum(s["latency"]["response_time"]["count"] for s in shards), f"{label}: merged response_time.count")
    for spoken in ("h2", "http/1.1"):
        check_eq(merged["protocol"]["connections"][spoken],
                 sum(s["protocol"]["connections"][spoken] for s in shards),
                 f"{label}: merged protocol.connections.{spoken}")
    check_eq([ms["shard"]["index"], ms["shard"]["count"]], [None, n], f"{label}: merged schedule.shard")
    check_eq(ms["plan_sha256"], g["plan_sha256"], f"{label}: merged plan_sha256")
    lags = [s["schedule"]["start_lag_ns"] for s in shards]
    check_eq(ms["start_lag_ns"], max(lags), f"{label}: merged start_lag_ns (the largest shard's)")
    listed = merged["shards"]
    check_eq([x["index"] for x in listed], list(range(n)), f"{label}: shards listed")
    for i, x in enumerate(listed):
        check_eq(x["planned"], shards[i]["schedule"]["planned"], f"{label}: shards[{i}].planned")
        check_eq(x["start_lag_ns"], lags[i], f"{label}: shards[{i}].start_lag_ns")
        check_eq(x["valid"], shards[i]["validity"]["valid"], f"{label}: shards[{i}].valid")
        check_eq(x["command_line"][1:], g["procs"][i][1][1:], f"{label}: shards[{i}].command_line")

    # the truth
    truth = tl.truth_percentiles(intended, stalls)
    got = {p: int(merged["latency"]["response_time"]["percentiles_ns"][p]) for p in tl.PERCENTILES}
    misses = [f"p{p}: truth {tl.fmt_ns(truth[p])}, merged {tl.fmt_ns(got[p])}"
              for p in tl.PERCENTILES if not tl.within_tolerance(truth[p], got[p])]
    rows.append((label, truth, got, lags, valid))
    check(not misses, f"{label}: merged percentiles outside the truth's tolerance: {'; '.join(misses)}")
    g.update(merged=merged, shards=shards, files=files, truth=truth, merged_dir=merged_dir)


def slo_expectations(truth):
    """The verdict of each SLO by the truth, or a ConfigError when the truth's tolerance band
    straddles a threshold (then the stall did not give what the SLOs were chosen for)."""
    p_pass = SLO_PASS[0].lstrip("p")
    hi = truth[p_pass] * 1.05 + 5 * MS
    if hi >= SLO_PASS[1]:
        raise tl.ConfigError(f"truth p{p_pass} {tl.fmt_ns(truth[p_pass])} is too close to {SLO_PASS[2]}")
    lo = truth[SLO_FAIL[0]] * 0.99 - MS
    if lo <= SLO_FAIL[1]:
        raise tl.ConfigError(f"truth p{SLO_FAIL[0]} {tl.fmt_ns(truth[SLO_FAIL[0]])} is too close to {SLO_FAIL[2]}")
    return {SLO_PASS[2]: True, SLO_FAIL[2]: False}


def check_slos(binary, n, g):
    label = f"N={n}"
    expected = slo_expectations(g["truth"])
    verdicts = {}
    for name, slos in (("pass", [SLO_PASS[2]]), ("fail", [SLO_FAIL[2]]), ("both", [SLO_PASS[2], SLO_FAIL[2]])):
        cp, cmd = merge(binary, g["files"], g["merged_dir"], "slo-" + name,
                        [a for s in slos for a in ("--slo", s)])
        path = os.path.join(g["merged_dir"], f"slo-{name}.json")
        check(os.path.exists(path), f"{label}: {' '.join(cmd)} wrote no report: {cp.stderr!r}")
        report = harness.load_report(path)
        valid = report["validity"]["valid"]
        results = {r["expression"]: r["pass"] for r in report["slo"]["results"]}
        check_eq(results, {s: expected[s] for s in slos}, f"{label}: merge --slo {slos}: SLO results")
        failing = not all(expected[s] for s in slos)
        want = 4 if not valid else (3 if failing else 0)
        if not valid and not acceptable_invalidity(report, g["shards"]):
            failed = [c for c in report["validity"]["checks"] if c["level"] == "gating" and not c["pass"]]
            raise AssertionError(f"{label}: merge --slo {slos} judged the run invalid: {failed}")
        check(cp.returncode == want, f"{label}: merge --slo {slos} exited {cp.returncode}, expected {want} "
              f"(merged valid {valid}, SLO results {results})\n{cp.stdout[-1200:]}")
        verdicts[name] = (cp.returncode, report)
        print(f"     {label}: merge --slo {' --slo '.join(slos)}: exit {cp.returncode} (merged valid {valid})",
              flush=True)
    if n == 1:
        # The one shard is the whole plan in one process, run with the same two --slo: its own
        # verdict, SLO results and figures must be the merge's.
        own = g["shards"][0]
        code, merged = verdicts["both"]
        print(f"     N=1: the run with the same --slo exited {g['procs'][0][0].returncode}", flush=True)
        check_eq(code, g["procs"][0][0].returncode, "N=1: merge --slo exit against the run's own exit")
        check_eq([(r["expression"], r["pass"], r["figure"]) for r in merged["slo"]["results"]],
                 [(r["expression"], r["pass"], r["figure"]) for r in own["slo"]["results"]],
                 "N=1: SLO results of the merge against the run's")
        check_eq(merged["validity"]["valid"], own["validity"]["valid"],
                 "N=1: validity of the merge against the run's")
        for view in ("response_time", "service_time"):
            check_eq(merged["latency"][view]["percentiles_ns"], own["latency"][view]["percentiles_ns"],
                     f"N=1: {view} percentiles of the merge against the run's")


def check_start_lag_check(n, g):
    """The merged start_lag check is the worst shard's figure, as schedule.start_lag_ns is."""
    checks = [c for c in g["merged"]["validity"]["checks"] if c["name"] == "start_lag"]
    check_eq(len(checks), 1, f"N={n}: start_lag checks in the merge")
    lags = [s["schedule"]["start_lag_ns"] for s in g["shards"]]
    check_eq(checks[0]["figure"], float(max(lags)),
             f"N={n}: merged start_lag check figure (shards' lags {lags}, schedule.start_lag_ns "
             f"{g['merged']['schedule']['start_lag_ns']})")
    check_eq(checks[0]["pass"], max(lags) <= MAX_START_LAG_NS, f"N={n}: merged start_lag pass")


# ---------------------------------------------------------------------------------------------
# refusals


def refused(binary, inputs, work, must_contain):
    cp, cmd = merge(binary, inputs, work, "refused")
    lines = harness.stderr_lines(cp.stderr)
    what = "merge " + " ".join(os.path.relpath(p, work) for p in inputs)
    check(cp.returncode == 2, f"{what}: expected exit 2, got {cp.returncode}: {cp.stderr!r}")
    check(len(lines) == 1, f"{what}: expected one line on stderr, got {lines!r}")
    check(must_contain in lines[0], f"{what}: {lines[0]!r} does not say {must_contain!r}")


def check_refusals(binary, groups, other_dir, work):
    two = groups[2]["files"]
    three = groups[3]["files"]
    other = os.path.join(other_dir, "shard-1-of-2.json")
    problems = []
    dup_dir = os.path.join(work, "dup")
    os.makedirs(dup_dir)
    for ext in ("json", "hlog"):
        shutil.copy(three[1][:-4] + ext, os.path.join(dup_dir, "shard-1-of-3." + ext))
    cases = [
        ([two[0], other], "ran another plan"),
        ([three[0], three[1]], "shard 2 of 3 is missing"),
        ([three[0], three[1], three[2], os.path.join(dup_dir, "shard-1-of-3.json")], "given twice"),
        ([two[0], three[1], three[2]], "is a shard of 3"),
        # A merged report is no shard's (it has no interval log beside it either).
        ([os.path.join(groups[2]["merged_dir"], "merged.json"), two[1]], "merged.json"),
    ]
    for inputs, text in cases:
        try:
            refused(binary, inputs, work, text)
        except AssertionError as e:
            problems.append(str(e))
    check(not problems, "\n".join(problems))


# ---------------------------------------------------------------------------------------------


def main():
    binary = harness.binary_from_argv()
    began = time.monotonic()
    checks = harness.Checks("shards")
    counts = shard_counts()
    work = tempfile.mkdtemp(prefix="punctual-shards-")
    pods = Pods()
    server = None
    groups = {}
    rows = []
    other_dir = os.path.join(work, "other-seed")
    try:
        now = time.time()
        t_first = now + 0.25 + LEAD_S
        for k, n in enumerate(counts):
            T = round(t_first + k * SLOT_S, 3)
            groups[n] = {"T": T, "T_ns": int(round(T * 1000)) * MS, "dir": os.path.join(work, f"out-{n}"),
                         "procs": [], "logs": []}
        server_start = time.time()
        server, port = start_server(
            binary, work,
            [int((g["T"] - server_start) * SEC) + STALL_OFFSET_NS for g in groups.values()],
            safety_s=int(SLOT_S * len(counts) + 20))
        url = f"http://127.0.0.1:{port}/"
        with harness.punctual_serve(binary, "--duration", "30s") as other_server:
            slices_done = False
            for n, g in groups.items():
                while time.time() < g["T"] - LEAD_S:
                    time.sleep(0.01)
                for i in range(n):
                    cmd = [binary, "run", *PLAN, *PER_SHARD, "--shard", f"{i}/{n}",
                           "--start-at", f"{g['T']:.3f}", "--out-dir", g["dir"], url]
                    log = os.path.join(work, f"pod-{i}-of-{n}")
                    g["procs"].append((pods.start(cmd, log), cmd))
                    g["logs"].append(log)
                if n == counts[0]:
                    # A shard of another plan (--seed 8), beside the first group, to its own server.
                    other_plan = [("8" if k > 0 and PLAN[k - 1] == "--seed" else a)
                                  for k, a in enumerate(PLAN)]
                    pods.start([binary, "run", *other_plan, *PER_SHARD, "--shard", "1/2", "--start-at",
                                f"{g['T']:.3f}", "--out-dir", other_dir, other_server.url()],
                               os.path.join(work, "other-seed"))
                if not slices_done:
                    # The schedules, while the first group waits for its start.
                    single = schedule_measured(binary, PLAN + PER_SHARD, os.path.join(work, "single.txt"))
                    for m, h in groups.items():
                        h["slices"] = [schedule_measured(binary, PLAN + PER_SHARD,
                                                         os.path.join(work, f"slice-{i}-of-{m}.txt"),
                                                         f"{i}/{m}") for i in range(m)]
                    slices_done = True
            for p in pods.procs:
                p.wait(timeout=max(1.0, groups[counts[-1]]["T"] + 2 + 15 - time.time()))
        tl.stop_server(server)
        server = None
        stalls = tl.read_stalls(os.path.join(work, "stall.jsonl"))
        print(f"     runs done in {time.monotonic() - began:.1f} s; {len(stalls)} stalls logged; "
              f"1-process plan: {len(single)} planned", flush=True)
        for n, g in groups.items():
            checks.run(f"N={n}: shards, merge and the truth", check_group, binary, n, g, stalls,
                       len(single), rows)
        for n, g in groups.items():
            if "merged" in g:
                checks.run(f"N={n}: merge --slo exits as run's rule says", check_slos, binary, n, g)
        for n, g in groups.items():
            if "merged" in g:
                checks.run(f"N={n}: the merged start_lag check is the worst shard's",
                           check_start_lag_check, n, g)
        if all("merged" in groups[n] for n in (2, 3)):
            checks.run("merge refusals: exit 2 and one line", check_refusals, binary, groups, other_dir, work)
        else:
            checks.run("merge refusals: exit 2 and one line", check, False, "groups N=2 and N=3 did not complete")
    except Exception as e:  # noqa: BLE001 - the experiment itself failed
        def failed():
            raise e
        checks.run("the sharded runs ran", failed)
    finally:
        pods.stop_all()
        if server is not None:
            tl.stop_server(server)
        print()
        print("%-6s %-36s %s" % ("group", "start lags",
                                 "  ".join("p%-5s truth/merged" % p for p in tl.PERCENTILES)))
        for label, truth, got, lags, valid in rows:
            print("%-6s %-36s %s%s" % (label, " ".join(tl.fmt_ns(x) for x in lags),
                                       "  ".join("%9s/%-9s" % (tl.fmt_ns(truth[p]), tl.fmt_ns(got[p]))
                                                 for p in tl.PERCENTILES),
                                       "" if valid else "  (merged run invalid)"))
        print(f"total {time.monotonic() - began:.1f} s", flush=True)
        shutil.rmtree(work, ignore_errors=True)
    checks.finish()


if __name__ == "__main__":
    main()
