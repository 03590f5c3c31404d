#!/usr/bin/python3
"""Sharded schedules (--shard I/N): the N shards together plan exactly the 1-process schedule.

For each kind of schedule (constant, Poisson, stages, a request mix, a replayed trace, hybrid
user arrivals) and N in {1, 2, 3, 7}: every shard writes its slice with --schedule-out, and

- the multiset union of the shards' (index, offset, phase, name) entries equals the 1-process
  schedule exactly;
- shard I holds exactly the indices i with i mod N == I, and each entry's worker column is
  (i div N) mod T (docs/design.md, "Workers and connections");
- the shards' measured (planned) counts add up to the 1-process one;
- for constant arrivals the 1-process schedule itself is t_i = floor(i * 1e9 / rate), computed
  here, so the comparison is not one of punctual against itself only.

--schedule-out is written before connecting: every schedule run targets a closed loopback port
and exits 1 at once, having sent nothing.

Also: the refusals (exit 2, exactly one line on stderr naming the value), --shard env/N with
JOB_COMPLETION_INDEX, and schedule.plan_sha256 from tiny real runs against `punctual serve`:
equal across the shards of one plan and an unsharded run of it, equal when only -c, -t or
--max-queue differ, or when the --requests file has the same bytes at another path; different
when the seed, the rate, the duration or the --requests file's content differ. An RFC 3339
--start-at with a zone offset lands in schedule.start_at_unix_ns at the instant it names.

Usage: python3 test_shard_schedule.py PATH_TO_PUNCTUAL
"""

import collections
import concurrent.futures
import datetime
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, check_eq  # noqa: E402

SHARD_COUNTS = (1, 2, 3, 7)
CASE_TIMEOUT_S = 20.0
PARALLEL = 3  # processes at once: this test is untimed and may share the cores with another

MIX = """\
requests:
  - {name: home, path: /, weight: 3}
  - {name: search, path: "/search?q=x", weight: 1}
"""
# The same names with other weights: another plan.
MIX_OTHER = MIX.replace("weight: 3", "weight: 2")

SCENARIO = """\
target: http://127.0.0.1:{port}
connection: pool
arrival: poisson
seed: 9
phases:
  - {{duration: 1s, arrival_rate: 60}}
  - {{duration: 1s, arrival_rate: 60, ramp_to: 150}}
scenarios:
  - name: shop
    weight: 2
    steps:
      - {{name: login, path: /login, think: "uniform:10ms..20ms"}}
      - {{name: buy, path: /buy}}
  - name: look
    steps:
      - {{name: home, path: /}}
"""


def write_trace(path):
    """An irregular trace: bursts of equal offsets, gaps of every size, some lines named."""
    rng = random.Random(11)
    offset = 0
    lines = ["# offset_ns [name]"]
    for i in range(1500):
        offset += rng.choice((0, 0, 1, 999, 250_000, 1_000_000, 3_333_333))
        name = rng.choice(("", "", "get_item", "put-item"))
        lines.append(f"{offset} {name}".rstrip())
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def kinds(work, port):
    """(name, options, threads) of each kind of schedule; the target is given apart."""
    mix = write(os.path.join(work, "mix.yaml"), MIX)
    trace = os.path.join(work, "trace.txt")
    write_trace(trace)
    scenario = write(os.path.join(work, "scenario.yaml"), SCENARIO.format(port=port))
    return [
        ("constant", ["-R", "1000", "-d", "2s", "--warmup", "300ms", "-t", "2"], 2),
        ("poisson", ["-R", "1000", "--arrival", "poisson", "--seed", "7", "-d", "2s",
                     "--warmup", "250ms", "-t", "2"], 2),
        ("stages", ["-R", "100", "--stages", "1s:900,500ms:900,1s:50", "-d", "2500ms",
                    "--seed", "3", "-t", "2"], 2),
        ("mix", ["-R", "700", "-d", "1500ms", "--requests", mix, "--seed", "5", "-t", "1",
                 "-c", "2"], 1),
        ("trace", ["--schedule-in", trace, "-t", "3", "-c", "3"], 3),
        ("hybrid", ["--scenario", scenario, "-t", "2", "-c", "4"], 2),
    ]


def read_entries(path):
    """[(index, offset_ns, worker, phase, name or '')] and the header comment lines."""
    entries, header = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                header.append(line.rstrip("\n"))
                continue
            if not line.strip():
                continue
            fields = line.split()
            check(len(fields) in (4, 5), f"{path}: malformed line {line!r}")
            entries.append((int(fields[0]), int(fields[1]), int(fields[2]), fields[3],
                            fields[4] if len(fields) == 5 else ""))
    return entries, header


def schedule_of(binary, options, url, path, shard=None, env=None):
    """Runs one schedule-only invocation against a closed port; returns its entries."""
    cmd = [binary, "run", *options, "--schedule-out", path]
    if shard is not None:
        cmd += ["--shard", shard]
    if url:
        cmd.append(url)
    run_env = dict(os.environ)
    run_env.pop("JOB_COMPLETION_INDEX", None)
    run_env.update(env or {})
    cp = subprocess.run(cmd, capture_output=True, text=True, timeout=CASE_TIMEOUT_S, env=run_env)
    check(cp.returncode == 1 and "could not connect" in cp.stderr,
          f"{' '.join(cmd)}: expected exit 1 (closed port), got {cp.returncode}: {cp.stderr[-400:]!r}")
    check(os.path.exists(path), f"{' '.join(cmd)}: no schedule written")
    return read_entries(path)


def check_kind(binary, work, url, name, options, threads, pool):
    """One kind of schedule: the single-process schedule against every N's shards."""
    target = None if name == "hybrid" else url
    d = os.path.join(work, name)
    os.makedirs(d)
    jobs = {("single", 0): pool.submit(schedule_of, binary, options, target,
                                        os.path.join(d, "single.txt"))}
    for n in SHARD_COUNTS:
        for i in range(n):
            jobs[(n, i)] = pool.submit(schedule_of, binary, options, target,
                                       os.path.join(d, f"shard-{i}-of-{n}.txt"), f"{i}/{n}")
    results = {k: f.result() for k, f in jobs.items()}
    single, _ = results[("single", 0)]
    check(len(single) > 100, f"{name}: the 1-process schedule has only {len(single)} entries")
    check_eq([e[0] for e in single], list(range(len(single))), f"{name}: 1-process indices")
    check(all(single[k][1] <= single[k + 1][1] for k in range(len(single) - 1)),
          f"{name}: 1-process offsets decrease")
    bad_worker = [e for e in single if e[2] != e[0] % threads]
    check(not bad_worker, f"{name}: 1-process worker != i mod {threads}: {bad_worker[:3]}")
    planned = sum(1 for e in single if e[3] == "measured")
    check(planned > 0, f"{name}: nothing measured in the 1-process schedule")
    key = collections.Counter((e[0], e[1], e[3], e[4]) for e in single)
    for n in SHARD_COUNTS:
        union = collections.Counter()
        planned_sum = 0
        for i in range(n):
            entries, header = results[(n, i)]
            label = f"{name} N={n} shard {i}"
            check(any(f"shard {i} of {n}," in h for h in header),
                  f"{label}: header does not name the shard: {header}")
            wrong = [e for e in entries if e[0] % n != i]
            check(not wrong, f"{label}: {len(wrong)} entries with i mod {n} != {i}, e.g. {wrong[:3]}")
            expected_indices = [e[0] for e in single if e[0] % n == i]
            got_indices = [e[0] for e in entries]
            if got_indices != expected_indices:
                missing = sorted(set(expected_indices) - set(got_indices))
                extra = sorted(set(got_indices) - set(expected_indices))
                raise AssertionError(f"{label}: indices differ from the 1-process schedule's i mod "
                                     f"{n} == {i}: {len(got_indices)} against {len(expected_indices)}"
                                     f", missing {missing[:5]}, extra {extra[:5]}")
            bad_worker = [e for e in entries if e[2] != (e[0] // n) % threads]
            check(not bad_worker, f"{label}: worker != (i div {n}) mod {threads}: {bad_worker[:3]}")
            union.update((e[0], e[1], e[3], e[4]) for e in entries)
            planned_sum += sum(1 for e in entries if e[3] == "measured")
        if union != key:
            only_shards = list((union - key).elements())[:5]
            only_single = list((key - union).elements())[:5]
            raise AssertionError(f"{name} N={n}: the union of the shards ({sum(union.values())} "
                                 f"entries) is not the 1-process schedule ({len(single)}): only in "
                                 f"the shards {only_shards}, only in the 1-process {only_single}")
        check_eq(planned_sum, planned, f"{name} N={n}: the shards' planned (measured entries) summed")
    if name == "constant":
        # t_i = floor(i * 1e9 / rate); measured when warm-up <= t_i < warm-up + duration.
        rate, warmup, end = 1000, 300_000_000, 2_300_000_000
        expected = []
        i = 0
        while (t := i * 10**9 // rate) < end:
            expected.append((i, t, "warmup" if t < warmup else "measured"))
            i += 1
        check_eq([(e[0], e[1], e[3]) for e in single], expected,
                 "constant: the 1-process schedule against floor(i * 1e9 / rate)")
    print(f"     {name}: {len(single)} entries ({planned} measured); N in {SHARD_COUNTS} all equal "
          f"to the 1-process schedule", flush=True)


def case_schedules(binary):
    work = tempfile.mkdtemp(prefix="punctual-shard-schedule-")
    try:
        port = harness.closed_port()
        url = f"http://127.0.0.1:{port}/"
        with concurrent.futures.ThreadPoolExecutor(PARALLEL) as pool:
            failures = []
            for name, options, threads in kinds(work, port):
                try:
                    check_kind(binary, work, url, name, options, threads, pool)
                except AssertionError as e:
                    failures.append(str(e))
                    print(f"     {name}: FAILED: {e}", flush=True)
        check(not failures, "; ".join(failures))
    finally:
        shutil.rmtree(work, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# refusals


def refused(binary, args, must_contain, env=None):
    run_env = dict(os.environ)
    run_env.pop("JOB_COMPLETION_INDEX", None)
    run_env.update(env or {})
    cmd = [binary, "run", *args]
    cp = subprocess.run(cmd, capture_output=True, text=True, timeout=CASE_TIMEOUT_S, env=run_env)
    lines = harness.stderr_lines(cp.stderr)
    what = f"{' '.join(args)} (env {env or {}})"
    check(cp.returncode == 2, f"{what}: expected exit 2, got {cp.returncode}; stderr {cp.stderr!r}")
    check(len(lines) == 1, f"{what}: expected one line on stderr, got {lines!r}")
    check(must_contain in lines[0], f"{what}: the error {lines[0]!r} does not name {must_contain!r}")
    return lines[0]


def case_refusals(binary):
    url = f"http://127.0.0.1:{harness.closed_port()}/"
    ok = ["-R", "100", "-d", "1s"]
    now = time.time()
    past = f"{now - 10:.3f}"  # 10 s ago, against -d 1s; and two days ahead is a mistyped date
    cases = [
        (["--shard", "3/2"], "3/2", None),
        (["--shard", "2/2"], "2/2", None),
        (["--shard", "0/0"], "0/0", None),
        (["--shard", "x/2"], "x/2", None),
        (["--shard", "1/"], "1/", None),
        (["--shard", "env/2"], "JOB_COMPLETION_INDEX", None),
        (["--shard", "env/3"], "JOB_COMPLETION_INDEX '3'", {"JOB_COMPLETION_INDEX": "3"}),
        (["--shard", "env/3"], "JOB_COMPLETION_INDEX 'abc'", {"JOB_COMPLETION_INDEX": "abc"}),
        (["--start-at", "tomorrow"], "tomorrow", None),
        (["--start-at", "2026-13-01T00:00:00Z"], "2026-13-01T00:00:00Z", None),
        (["--start-at", "1796101200.5x"], "1796101200.5x", None),
        (["--start-at", past], "in the past", None),
        (["--start-at", f"{now + 2 * 86400:.3f}"], "more than a day away", None),
    ]
    failures = []
    for extra, text, env in cases:
        try:
            refused(binary, [*ok, *extra, url], text, env)
        except AssertionError as e:
            failures.append(str(e))
    for flag in (["--shard", "0/2"], ["--start-at", f"{now + 1:.3f}"]):
        try:
            refused(binary, ["--model", "closed", "-c", "2", "-t", "1", "-d", "1s", *flag, url],
                    "closed model")
        except AssertionError as e:
            failures.append(str(e))
    check(not failures, "\n".join(failures))


def case_start_at_accepted(binary):
    """A --start-at in the past by less than the duration is accepted (the shard is late and
    keeps the schedule): not exit 2, but 1 on the closed port."""
    url = f"http://127.0.0.1:{harness.closed_port()}/"
    for at in (f"{time.time() - 0.5:.3f}",
               datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")):
        cp = subprocess.run([binary, "run", "-R", "100", "-d", "2s", "--start-at", at, url],
                            capture_output=True, text=True, timeout=CASE_TIMEOUT_S)
        check(cp.returncode == 1 and "could not connect" in cp.stderr,
              f"--start-at {at} (0.5 s ago, -d 2s): expected exit 1 on the closed port, got "
              f"{cp.returncode}: {cp.stderr!r}")


def case_env_shard(binary):
    """--shard env/3 with JOB_COMPLETION_INDEX=2 is shard 2 of 3, entry for entry."""
    url = f"http://127.0.0.1:{harness.closed_port()}/"
    with tempfile.TemporaryDirectory(prefix="punctual-shard-env-") as d:
        opts = ["-R", "500", "--arrival", "poisson", "--seed", "7", "-d", "1s"]
        env_entries, env_header = schedule_of(binary, opts, url, os.path.join(d, "env.txt"),
                                              "env/3", {"JOB_COMPLETION_INDEX": "2"})
        explicit, _ = schedule_of(binary, opts, url, os.path.join(d, "explicit.txt"), "2/3")
    check(any("shard 2 of 3," in h for h in env_header), f"header: {env_header}")
    check(env_entries and all(e[0] % 3 == 2 for e in env_entries),
          f"env/3 with JOB_COMPLETION_INDEX=2: indices {[e[0] for e in env_entries][:10]}")
    check_eq(env_entries, explicit, "env/3 (JOB_COMPLETION_INDEX=2) against --shard 2/3")


# ---------------------------------------------------------------------------------------------
# plan_sha256, from tiny real runs


def digest_run(binary, url, options, work, label):
    """A 300 ms run whose JSON names its plan; exit 0, 3 or 4 all write it."""
    path = os.path.join(work, label + ".json")
    options = [a for o in options for a in (o() if callable(o) else [o])]
    cmd = [binary, "run", *options, "--json", path, "-q", url]
    cp = subprocess.run(cmd, capture_output=True, text=True, timeout=CASE_TIMEOUT_S)
    check(cp.returncode in (0, 4) and os.path.exists(path),
          f"{label}: {' '.join(cmd)} exited {cp.returncode}: {cp.stderr[-400:]!r}")
    report = harness.load_report(path)
    harness.assert_denominator(report)
    return report


def case_plan_digest(binary):
    work = tempfile.mkdtemp(prefix="punctual-shard-digest-")
    try:
        mix_a = write(os.path.join(work, "mix-a.yaml"), MIX)
        os.makedirs(os.path.join(work, "elsewhere"))
        mix_a_copy = write(os.path.join(work, "elsewhere", "copy.yaml"), MIX)
        mix_b = write(os.path.join(work, "mix-b.yaml"), MIX_OTHER)

        def opts(*extra, **changed):
            """The base plan's options, with CHANGED ones (-R, -d, --seed, -c, -t) replaced."""
            o = {"-R": "200", "-d": "300ms", "--seed": "7", "-t": "1", "-c": "2"}
            o.update({("--" if len(k) > 1 else "-") + k.replace("_", "-"): v
                      for k, v in changed.items()})
            return [a for kv in o.items() for a in kv] + list(extra)

        start_at = {}

        def rfc3339_soon():
            """--start-at 800 ms from when the run begins, in RFC 3339 at +01:00 (the run may
            wait in the pool's queue: a time fixed earlier could be past already)."""
            at = datetime.datetime.now(datetime.timezone(datetime.timedelta(hours=1))) + \
                datetime.timedelta(milliseconds=800)
            start_at["text"] = at.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "+01:00"
            start_at["ns"] = int(at.timestamp() * 1000) * 1_000_000
            return ["--start-at", start_at["text"]]

        runs = {
            "shard 0/2": opts("--shard", "0/2"),
            "shard 1/2": opts("--shard", "1/2"),
            "unsharded": opts(),
            "shard 0/3, RFC 3339 --start-at": opts("--shard", "0/3", rfc3339_soon),
            "-c4 -t2 --max-queue 50": opts("--max-queue", "50", "--shard", "1/2", c="4", t="2"),
            "--seed 8": opts("--shard", "0/2", seed="8"),
            "-R 300": opts("--shard", "0/2", R="300"),
            "-d 400ms": opts("--shard", "0/2", d="400ms"),
            "mix a": opts("--requests", mix_a, "--shard", "0/2"),
            "mix a, a copy elsewhere": opts("--requests", mix_a_copy, "--shard", "1/2"),
            "mix b": opts("--requests", mix_b, "--shard", "0/2"),
        }
        with harness.punctual_serve(binary, "--duration", "60s") as srv:
            with concurrent.futures.ThreadPoolExecutor(PARALLEL) as pool:
                futures = {label: pool.submit(digest_run, binary, srv.url(), options, work,
                                              label.replace("/", "_").replace(" ", "_"))
                           for label, options in runs.items()}
                reports = {label: f.result() for label, f in futures.items()}
        sha = {label: r["schedule"]["plan_sha256"] for label, r in reports.items()}
        for label, s in sha.items():
            check(len(s) == 64 and all(c in "0123456789abcdef" for c in s),
                  f"{label}: plan_sha256 {s!r} is not 64 hex digits")
        summary = "; ".join(f"{k}: {v[:12]}" for k, v in sha.items())
        same = [("shard 0/2", "shard 1/2"), ("shard 0/2", "unsharded"),
                ("shard 0/2", "shard 0/3, RFC 3339 --start-at"),
                ("shard 0/2", "-c4 -t2 --max-queue 50"), ("mix a", "mix a, a copy elsewhere")]
        differ = [("shard 0/2", "--seed 8"), ("shard 0/2", "-R 300"), ("shard 0/2", "-d 400ms"),
                  ("shard 0/2", "mix a"), ("mix a", "mix b")]
        problems = [f"{a} and {b} should have the same plan_sha256" for a, b in same if sha[a] != sha[b]]
        problems += [f"{a} and {b} should differ" for a, b in differ if sha[a] == sha[b]]
        for label, r in reports.items():
            shard = r["schedule"].get("shard")
            if label.startswith("shard "):
                want = [int(x) for x in label.split()[1].rstrip(",").split("/")]
                if shard is None or [shard["index"], shard["count"]] != want:
                    problems.append(f"{label}: schedule.shard is {shard}")
        at = reports["shard 0/3, RFC 3339 --start-at"]["schedule"]
        if at.get("start_at_unix_ns") != start_at["ns"]:
            problems.append(f"--start-at {start_at['text']}: start_at_unix_ns "
                            f"{at.get('start_at_unix_ns')}, expected {start_at['ns']}")
        elif at.get("start_unix_ns") != start_at["ns"]:  # no warm-up: the window's start is the run's
            problems.append(f"--start-at {start_at['text']}: start_unix_ns {at.get('start_unix_ns')}, "
                            f"expected {start_at['ns']}")
        check(not problems, "; ".join(problems) + f"\n     plan_sha256: {summary}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    binary = harness.binary_from_argv()
    checks = harness.Checks("shard schedules")
    checks.run("every shard's slice, unioned, is the 1-process schedule", case_schedules, binary)
    checks.run("refusals: exit 2 and one line", case_refusals, binary)
    checks.run("--start-at a little in the past is accepted", case_start_at_accepted, binary)
    checks.run("--shard env/3 with JOB_COMPLETION_INDEX=2", case_env_shard, binary)
    checks.run("plan_sha256: what is and is not the plan", case_plan_digest, binary)
    checks.finish()


if __name__ == "__main__":
    main()
