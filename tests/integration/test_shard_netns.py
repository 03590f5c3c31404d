#!/usr/bin/python3
"""A "multi-host" sharded run on this machine: the server and each of 3 shards in a network
namespace of its own, joined by veth pairs to a bridge in the server's namespace.

    server namespace: bridge 198.18.0.1/24 (RFC 2544's benchmarking range), `punctual serve`
    shard namespace I: eth0 198.18.0.(11+I)/24, the other end of its veth on the bridge

No namespace has a default route or any link outside these, so no packet can leave them. The
three shards run `punctual run OPTS --shard I/3 --start-at T --out-dir DIR URL` at once, each in
its namespace, then `punctual merge DIR/*.json` in the host's. Checks: every shard's planned ==
sum(outcomes) and ok == planned (no stalls here); the merged planned is the global plan (a
1-process --schedule-out) and its outcomes the shards' sums; every shard reports its start lag,
under 100 ms (a shard later than that on a loaded machine is accepted only when the merge names
it in its failed start_lag check); the merged report validates against the schema; the server
counted exactly the planned requests (its --arrival-log), and each shard's link carried at least
its requests (the veth's packet counters).

Everything (processes, namespaces, with them the links) is torn down on every way out. Without
root, `ip` or permission for namespaces the test prints "SKIP: ..." and exits 0, or 1 when
CI=true (there a skip is a failure; .ci/run sets CI=true itself, and test_ci_rules checks both).

Usage: python3 test_shard_netns.py PATH_TO_PUNCTUAL
"""

import atexit
import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import truth_lib as tl  # noqa: E402
from harness import check, check_eq  # noqa: E402

SHARDS = 3
SERVER_ADDR = "198.18.0.1"
SHARD_ADDR = "198.18.0.{}"  # 11, 12, 13
PREFIX = 24
PORT = 8080  # the server's namespace is new: nothing else listens there
PLAN = ["-R", "1000", "--arrival", "poisson", "--seed", "7", "-d", "2s"]
PER_SHARD = ["-t1", "-c4"]
LEAD_S = 1.5
MAX_START_LAG_NS = 100 * tl.MS
SUFFIX = str(os.getpid())
SERVER_NS = f"pct-srv-{SUFFIX}"
SHARD_NS = [f"pct-sh{i}-{SUFFIX}" for i in range(SHARDS)]


class Skip(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# namespaces


class Net:
    """The namespaces and the processes in them; `teardown` removes all, and runs once."""

    def __init__(self):
        self.namespaces = []
        self.procs = []
        self.torn_down = False

    def ip(self, *args, ns=None):
        cmd = (["ip", "netns", "exec", ns] if ns else []) + ["ip", *args]
        cp = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
        if cp.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)}: exit {cp.returncode}: {cp.stderr.strip()}")
        return cp.stdout

    def add_namespace(self, name):
        cp = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True, timeout=10)
        if cp.returncode != 0:
            raise Skip(f"cannot create a network namespace (ip netns add {name}): {cp.stderr.strip()}")
        self.namespaces.append(name)
        self.ip("link", "set", "lo", "up", ns=name)

    def build(self):
        self.add_namespace(SERVER_NS)
        self.ip("link", "add", "br0", "type", "bridge", ns=SERVER_NS)
        self.ip("addr", "add", f"{SERVER_ADDR}/{PREFIX}", "dev", "br0", ns=SERVER_NS)
        self.ip("link", "set", "br0", "up", ns=SERVER_NS)
        for i, ns in enumerate(SHARD_NS):
            self.add_namespace(ns)
            # Both ends are made inside the namespaces: nothing appears in the host's.
            self.ip("link", "add", "eth0", "type", "veth", "peer", "name", f"port{i}", "netns", SERVER_NS, ns=ns)
            self.ip("addr", "add", f"{SHARD_ADDR.format(11 + i)}/{PREFIX}", "dev", "eth0", ns=ns)
            self.ip("link", "set", "eth0", "up", ns=ns)
            self.ip("link", "set", f"port{i}", "master", "br0", ns=SERVER_NS)
            self.ip("link", "set", f"port{i}", "up", ns=SERVER_NS)
        for ns in self.namespaces:
            routes = self.ip("route", "show", ns=ns)
            check("default" not in routes, f"{ns} has a default route: {routes!r}")

    def start(self, ns, cmd, log):
        with open(log + ".out", "w") as out, open(log + ".err", "w") as err:
            proc = subprocess.Popen(["ip", "netns", "exec", ns, *cmd], stdout=out, stderr=err)
        self.procs.append(proc)
        return proc

    def teardown(self):
        if self.torn_down or (not self.namespaces and not self.procs):
            return
        self.torn_down = True
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                try:
                    p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    pass
        for ns in reversed(self.namespaces):
            # Whatever this test started in the namespace and is still there (by pid), then the
            # namespace itself, and with it its links.
            cp = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True, timeout=10)
            for pid in cp.stdout.split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (OSError, ValueError):
                    pass
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=10)
        if not self.namespaces:
            return
        left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=10).stdout
        mine = [ns for ns in self.namespaces if ns in left.split()]
        if mine:
            print(f"WARNING: namespaces left behind: {mine}", flush=True)


def preflight():
    # Lets test_ci_rules check the skip rule on a machine that can make namespaces.
    pretend = os.environ.get("PUNCTUAL_NETNS_PRETEND_UNAVAILABLE")
    if pretend:
        raise Skip(pretend)
    if os.geteuid() != 0:
        raise Skip("network namespaces need root")
    if shutil.which("ip") is None:
        raise Skip("no `ip` command (iproute2)")


# ---------------------------------------------------------------------------------------------
# the run


def wait_until_answers(timeout_s=5.0):
    """From shard 0's namespace, one HTTP request to the server, until it answers 200."""
    probe = ("import socket,sys,time\n"
             "deadline=time.monotonic()+%f\n"
             "while time.monotonic()<deadline:\n"
             "  try:\n"
             "    s=socket.create_connection(('%s',%d),timeout=0.5)\n"
             "    s.sendall(b'GET / HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n')\n"
             "    d=s.recv(100)\n"
             "    if d.startswith(b'HTTP/1.1 200'): sys.exit(0)\n"
             "  except OSError: pass\n"
             "  time.sleep(0.05)\n"
             "sys.exit(1)\n") % (timeout_s, SERVER_ADDR, PORT)
    cp = subprocess.run(["ip", "netns", "exec", SHARD_NS[0], sys.executable, "-c", probe],
                        capture_output=True, text=True, timeout=timeout_s + 5)
    check(cp.returncode == 0, f"the server at {SERVER_ADDR}:{PORT} did not answer from {SHARD_NS[0]}: "
          f"{cp.stderr[-300:]}")


def link_packets(net, ns):
    """(rx, tx) packets of eth0 in NS."""
    out = net.ip("-s", "link", "show", "eth0", ns=ns).splitlines()
    rx = tx = None
    for k, line in enumerate(out):
        if line.strip().startswith("RX:"):
            rx = int(out[k + 1].split()[1])
        if line.strip().startswith("TX:"):
            tx = int(out[k + 1].split()[1])
    return rx, tx


def global_planned(binary, work):
    """The 1-process plan's measured requests, from --schedule-out against a closed loopback
    port of the host (it writes the schedule, then fails to connect: nothing is sent)."""
    path = os.path.join(work, "single.txt")
    cp = subprocess.run([binary, "run", *PLAN, *PER_SHARD, "--schedule-out", path,
                         f"http://127.0.0.1:{harness.closed_port()}/"],
                        capture_output=True, text=True, timeout=20)
    check(cp.returncode == 1 and os.path.exists(path), f"schedule run exited {cp.returncode}: {cp.stderr!r}")
    return sum(1 for _, _, phase in tl.read_schedule(path) if phase == "measured")


def run_all(binary, net, work):
    began = time.monotonic()
    try:
        net.build()
    except RuntimeError as e:  # e.g. no veth or bridge support, or no permission for them
        raise Skip(f"cannot build the namespaces' links: {e}") from e
    print(f"     namespaces up in {time.monotonic() - began:.2f} s: {SERVER_NS} ({SERVER_ADDR}), "
          + ", ".join(f"{ns} ({SHARD_ADDR.format(11 + i)})" for i, ns in enumerate(SHARD_NS)), flush=True)
    arrivals = os.path.join(work, "arrivals.txt")
    server = net.start(SERVER_NS, [binary, "serve", "--host", SERVER_ADDR, "--port", str(PORT),
                                   "--duration", "30s", "--arrival-log", arrivals],
                       os.path.join(work, "serve"))
    wait_until_answers()
    before = {ns: link_packets(net, ns) for ns in SHARD_NS}
    T = round(time.time() + LEAD_S, 3)
    out_dir = os.path.join(work, "out")
    url = f"http://{SERVER_ADDR}:{PORT}/"
    shards = []
    for i, ns in enumerate(SHARD_NS):
        cmd = [binary, "run", *PLAN, *PER_SHARD, "--shard", f"{i}/{SHARDS}", "--start-at", f"{T:.3f}",
               "--out-dir", out_dir, url]
        shards.append((net.start(ns, cmd, os.path.join(work, f"pod-{i}")), cmd))
    planned_global = global_planned(binary, work)
    for p, _ in shards:
        p.wait(timeout=max(1.0, T + 2 + 20 - time.time()))
    print(f"     shards done {time.monotonic() - began:.1f} s after the start", flush=True)
    after = {ns: link_packets(net, ns) for ns in SHARD_NS}
    harness.stop_process(server, timeout_s=10)
    return T, out_dir, shards, planned_global, arrivals, before, after


def check_results(binary, work, T, out_dir, shards, planned_global, arrivals, before, after):
    problems = []
    reports = []
    for i, (p, cmd) in enumerate(shards):
        path = os.path.join(out_dir, f"shard-{i}-of-{SHARDS}.json")
        with open(os.path.join(work, f"pod-{i}.err")) as f:
            err = f.read()
        check(p.returncode in (0, 4) and os.path.exists(path),
              f"shard {i} ({' '.join(cmd)}) exited {p.returncode}: {err[-600:]}")
        r = harness.load_report(path)
        harness.assert_denominator(r)
        s = r["schedule"]
        check_eq([s["shard"]["index"], s["shard"]["count"]], [i, SHARDS], f"shard {i}: schedule.shard")
        check_eq(s["start_at_unix_ns"], int(round(T * 1000)) * tl.MS, f"shard {i}: start_at_unix_ns")
        if r["outcomes"]["ok"] != s["planned"]:
            problems.append(f"shard {i}: ok {r['outcomes']['ok']} != planned {s['planned']}: {r['outcomes']}, "
                            f"socket errors {r['socket_errors']}")
        check(s["start_lag_ns"] is not None, f"shard {i}: no start lag reported")
        rx, tx = (after[SHARD_NS[i]][k] - before[SHARD_NS[i]][k] for k in (0, 1))
        if tx < s["planned"] or rx < s["planned"]:
            problems.append(f"shard {i}: its link carried rx {rx} / tx {tx} packets for {s['planned']} requests")
        reports.append(r)
    lags = [r["schedule"]["start_lag_ns"] for r in reports]
    print("     start lags: " + ", ".join(f"shard {i} {tl.fmt_ns(x)}" for i, x in enumerate(lags)), flush=True)
    check_eq(len({r["schedule"]["plan_sha256"] for r in reports}), 1, "distinct plan_sha256 over the shards")

    files = sorted(glob.glob(os.path.join(out_dir, "*.json")))
    merged_path = os.path.join(work, "merged.json")
    cp = subprocess.run([binary, "merge", *files, "-o", merged_path], capture_output=True, text=True, timeout=30)
    check(os.path.exists(merged_path), f"merge exited {cp.returncode} without a report: {cp.stderr!r}")
    merged = harness.load_report(merged_path)
    harness.assert_denominator(merged)
    m = merged["schedule"]
    check_eq(m["planned"], planned_global, "merged planned against the 1-process plan")
    check_eq(m["planned"], sum(r["schedule"]["planned"] for r in reports), "merged planned against the shards'")
    for key in harness.OUTCOMES:
        check_eq(merged["outcomes"][key], sum(r["outcomes"][key] for r in reports), f"merged outcomes.{key}")
    check_eq(m["start_lag_ns"], max(lags), "merged start_lag_ns (the largest shard's)")
    with open(arrivals) as f:
        served = sum(1 for line in f if line.strip() and not line.startswith("#"))
    if served != m["planned"] + 1:  # and the readiness probe's one request
        problems.append(f"the server logged {served} requests, the merged plan has {m['planned']} "
                        f"(+1 for the readiness probe)")

    late = [i for i, x in enumerate(lags) if x > MAX_START_LAG_NS]
    gating_failed = [c for c in merged["validity"]["checks"] if c["level"] == "gating" and not c["pass"]]
    start_check = [c for c in merged["validity"]["checks"] if c["name"] == "start_lag"]
    check_eq(len(start_check), 1, "start_lag checks in the merged report")
    if late:
        named = [i for i in late if f"shard {i} of {SHARDS}" in start_check[0]["note"]]
        print(f"     shards {late} started more than 100 ms late; the merge's start_lag check: {start_check[0]}",
              flush=True)
        if start_check[0]["pass"] or not named:
            problems.append(f"shards {late} started late (lags {lags}) but the merge's start_lag check "
                            f"does not name them: {start_check[0]}")
    elif not start_check[0]["pass"]:
        problems.append(f"no shard was late (lags {lags}) yet the merged start_lag check failed: {start_check[0]}")
    excused = {"start_lag"} if late else set()
    other = [c for c in gating_failed if c["name"] not in excused and not c["name"].startswith("send_lag_")]
    if other:
        problems.append(f"the merged run is invalid: {other}")
    want = 0 if merged["validity"]["valid"] else 4
    if cp.returncode != want:
        problems.append(f"merge exited {cp.returncode}, expected {want} "
                        f"(merged valid {merged['validity']['valid']})")
    print(f"     merged: {m['planned']} planned (global plan {planned_global}), ok {merged['outcomes']['ok']}, "
          f"server logged {served} (with the probe), valid {merged['validity']['valid']}, merge exit "
          f"{cp.returncode}" + "".join(f"; failed {c['name']}: {c['figure']:g} {c['relation']} {c['threshold']:g}"
                                       for c in gating_failed), flush=True)
    for i, r in enumerate(reports):
        print(f"     shard {i}: send lag p99 per second (us) "
              f"{[round(x['send_lag_p99_ns'] / 1000) for x in r['series']['per_second']]}", flush=True)
    check(not problems, "\n".join(problems) + f"\n--- merge output\n{cp.stdout[-1500:]}")


def main():
    binary = harness.binary_from_argv()
    began = time.monotonic()
    net = Net()
    atexit.register(net.teardown)
    # A SIGTERM (ctest's timeout) or SIGHUP must still tear down: exit through the finally.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: sys.exit(128 + signum))
    work = tempfile.mkdtemp(prefix="punctual-netns-")
    checks = harness.Checks("shards in network namespaces")
    try:
        try:
            preflight()
            results = run_all(binary, net, work)
        except Skip as e:
            if os.environ.get("CI") == "true":
                print(f"FAIL: SKIP is a failure with CI=true: {e}", flush=True)
                sys.exit(1)
            print(f"SKIP: {e}", flush=True)
            sys.exit(0)
        except Exception as e:  # noqa: BLE001 - the set-up or the runs failed
            def failed():
                raise e
            checks.run("3 shards in 3 namespaces against a server in a fourth", failed)
        else:
            checks.run("3 shards in 3 namespaces against a server in a fourth", check_results,
                       binary, work, *results)
    finally:
        net.teardown()
        shutil.rmtree(work, ignore_errors=True)
        print(f"total {time.monotonic() - began:.1f} s", flush=True)
    checks.finish()


if __name__ == "__main__":
    main()
