"""--pin on real threads: while a short run against `punctual serve` is under way, the kernel's
own view of each worker thread (/proc/PID/task/TID/status, Cpus_allowed_list; the workers are
the threads named punctual-wK) says where it may run.

- `--pin -t2`: worker k may run only on the k-th CPU the process may use, and the JSON report
  says so (generator.pinned, each worker's pinned_cpu, threads 2 from the flag);
- without --pin (and without -t): every worker may run on every CPU the process may use, and
  the report says the count came from those CPUs and that nothing was pinned;
- in fine mode (the default) each worker runs with the kernel's shortest slice, 100 us
  (/proc/PID/task/TID/sched, se.slice), where the kernel keeps a slice per thread (Linux 6.12
  and later); the coordinating thread keeps the default one.

Needs two CPUs: with fewer it prints "SKIP: ..." and exits 0, or 1 when CI=true (as
test_shard_netns does).

Usage: python3 test_pin.py PATH_TO_PUNCTUAL
"""

import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, check_eq  # noqa: E402

WORKER_PREFIX = "punctual-w"
WORKER_SLICE_NS = 100_000


def parse_cpu_list(text):
    """The kernel's list format, "0-2,5", as a sorted list of CPUs."""
    cpus = []
    for part in text.strip().split(","):
        low, _, high = part.partition("-")
        cpus.extend(range(int(low), int(high or low) + 1))
    return sorted(cpus)


def slice_of(pid, tid):
    """The thread's slice in ns as the kernel shows it (se.slice), or None."""
    try:
        with open(f"/proc/{pid}/task/{tid}/sched", encoding="utf-8") as f:
            for line in f:
                if line.startswith("se.slice"):
                    return int(line.split(":", 1)[1])
    except (FileNotFoundError, PermissionError):
        pass
    return None


def worker_affinities(pid, threads, timeout_s=5.0):
    """({worker index: the CPUs its thread may use}, {worker index: its slice}, the coordinating
    thread's slice), once all THREADS workers are named: a worker names itself after it pins
    itself and sets its slice, so a named worker has done both."""
    deadline = time.monotonic() + timeout_s
    while True:
        found, slices = {}, {}
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/comm", encoding="utf-8") as f:
                    name = f.read().strip()
                if not name.startswith(WORKER_PREFIX):
                    continue
                with open(f"/proc/{pid}/task/{tid}/status", encoding="utf-8") as f:
                    status = f.read()
            except FileNotFoundError:  # the thread ended meanwhile
                continue
            line = next(x for x in status.splitlines() if x.startswith("Cpus_allowed_list:"))
            k = int(name[len(WORKER_PREFIX):])
            found[k] = parse_cpu_list(line.split(":", 1)[1])
            slices[k] = slice_of(pid, tid)
        if len(found) == threads:
            return found, slices, slice_of(pid, pid)
        check(time.monotonic() < deadline, f"found workers {sorted(found)}, expected {threads}")
        time.sleep(0.005)


def watched_run(binary, url, args, threads):
    """`punctual run ARGS` for half a second: the workers' affinities read while it runs, the
    process's own, and its JSON report."""
    with tempfile.TemporaryDirectory(prefix="punctual-pin-") as tmp:
        json_path = os.path.join(tmp, "report.json")
        cmd = [binary, "run", *args, "-c", "4", "-R", "200", "-d", "500ms", "-q", "--json",
               json_path, url]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            allowed = sorted(os.sched_getaffinity(proc.pid))
            workers, slices, coordinator_slice = worker_affinities(proc.pid, threads)
            _, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate(timeout=5)
        report = harness.load_report(json_path) if os.path.exists(json_path) else None
        # Counts, not verdicts: an exit 4 for the host's lateness alone is accepted.
        harness.require_report(harness.Result(cmd, proc.returncode, "", err, 0.0, report))
        return allowed, workers, report, (slices, coordinator_slice)


def kernel_keeps_slices():
    """Linux 6.12 and later take a thread's own slice (sched_setattr's sched_runtime)."""
    release = os.uname().release.split("-")[0].split(".")
    return tuple(int(x) for x in release[:2]) >= (6, 12)


def check_worker_slices(slices, threads):
    workers, coordinator = slices
    if not kernel_keeps_slices() or coordinator is None:
        return
    check_eq(workers, {k: WORKER_SLICE_NS for k in range(threads)}, "workers' slices")
    check(coordinator != WORKER_SLICE_NS, f"the coordinating thread's slice: {coordinator}")


def pinned_workers(binary, url):
    allowed, workers, report, slices = watched_run(binary, url, ["--pin", "-t", "2"], 2)
    check_eq(workers, {0: [allowed[0]], 1: [allowed[1]]}, f"workers' CPUs (allowed: {allowed})")
    g = report["generator"]
    check_eq((g["threads"], g["threads_from"], g["pinned"]), (2, "flag", True), "generator")
    check_eq([w.get("pinned_cpu") for w in g["workers"]], allowed[:2], "workers' pinned_cpu")
    check_worker_slices(slices, 2)


def unpinned_workers(binary, url):
    cpus = len(os.sched_getaffinity(0))
    threads = min(max(cpus, 2), 4)  # -t's default
    allowed, workers, report, slices = watched_run(binary, url, [], threads)
    check_eq(workers, {k: allowed for k in range(threads)}, "workers' CPUs")
    g = report["generator"]
    check_eq((g["threads"], g["threads_from"], g["pinned"]), (threads, "cpus_allowed", False),
             "generator")
    check(not any("pinned_cpu" in w for w in g["workers"]), f"a pinned_cpu: {g['workers']}")
    check_worker_slices(slices, threads)


def main():
    binary = harness.binary_from_argv()
    if len(os.sched_getaffinity(0)) < 2:
        if os.environ.get("CI") == "true":
            print("FAIL: SKIP is a failure with CI=true: --pin -t2 needs two CPUs", flush=True)
            sys.exit(1)
        print("SKIP: --pin -t2 needs two CPUs", flush=True)
        sys.exit(0)
    checks = harness.Checks("pin")
    with harness.punctual_serve(binary) as serve:
        checks.run("pin_puts_worker_k_on_the_kth_cpu", pinned_workers, binary, serve.url("/"))
        checks.run("without_pin_workers_may_run_anywhere", unpinned_workers, binary, serve.url("/"))
    checks.finish()


if __name__ == "__main__":
    main()
