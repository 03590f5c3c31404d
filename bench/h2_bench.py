#!/usr/bin/env python3
"""HTTP/2 benchmark: punctual --http 2 against h2load, in one run, as ratios.

nginx (one worker, h2c by prior knowledge) runs on CPU 0 and every load tool on CPU 1.

1. CPU per request at 20,000 req/s over 10 connections x 10 streams: punctual
   `--precision coarse` against `h2load -c10 -m10 --rps 2000` (h2load's rate is per client).
   Target: at most 1.0x h2load's. Median of ROUNDS rounds. Each round also runs the floor
   (floor_h2_generator.cpp, coarse): the same 1 ms ticks, what is due sent at every wake-up
   (a response's too), and every response read at once, with nothing parsed or recorded, so
   `floor_over_h2load` says whether the target can be met by any generator that keeps those
   rules here. And the floor in tick mode (`floor_tick_over_h2load`), which sends only on the
   ticks: fewer writes, but a send lag spread evenly over the tick, so that its p99 sits at the
   1 ms that punctual's validity allows (bench/README.md).
2. Send precision: p99 of |arrival - intended|, arrivals from `punctual serve --http2
   --arrival-log` (CPU 0), which dates each request by the kernel's receive stamp, so the
   server's own wake-ups stay out of it. punctual runs in fine (the default) and in spin mode.
   Both tools send 2,000 req/s over 1 connection x 100 streams, so each
   has one send grid; intended times are fitted the same way for both (the grid k / rate, placed
   at the median offset), and punctual's own intended times (--schedule-out) are shown too.
   Target: punctual's p99 at least 10x smaller than h2load's. Also at 20,000 req/s over 10 x 10,
   where h2load's ten clients each keep their own timer: both tools' arrivals are held against
   one even 20,000/s grid. When tcpdump can run (root), each run is also captured on lo and the
   same fit is made of the requests' times on the wire (h2_wire.py), which a server that falls
   behind cannot blur: `serve` dates a batch of frames read together by the batch's last segment.
3. Maximum rate: punctual's highest open-loop rate that completes >= 99% of planned requests with
   a valid run (two tries a step; steps of 5% near 1.0), over 10 x 10, against h2load's
   closed-loop maximum (`-c10 -m10`, no --rps), taken before and after the ladder and averaged.
   Target: at least 1.0x. An open loop cannot hold more than the server's capacity, and the
   connection-cap check wants 1.5x headroom in stream slots, so 1.0x is the ceiling here. The
   floor climbs the same ladder, step by step with punctual (`floor_ratio`), judged by
   punctual's gating checks taken as punctual takes them or more loosely, but for one detail
   that errs against it (floor_step).

Usage: PUNCTUAL=build/punctual python3 bench/h2_bench.py   (about 5 minutes; QUICK=1: 1 minute)
SECTIONS=max_rate (or cpu_per_request, send_precision, comma-separated) runs only those.
Writes bench/results/h2-<timestamp>.json. Every load goes to 127.0.0.1 and stops by itself.
"""

import json
import math
import os
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ left in bench/
import h2_wire  # noqa: E402  (its frame walk over a pcap)
PUNCTUAL = os.path.abspath(os.environ.get("PUNCTUAL", os.path.join(HERE, "..", "build", "punctual")))
QUICK = os.environ.get("QUICK") == "1"
# Which sections run (comma-separated): cpu_per_request, send_precision, max_rate.
SECTIONS = os.environ.get("SECTIONS", "cpu_per_request,send_precision,max_rate").split(",")
DUR = 3 if QUICK else 10
ROUNDS = 1 if QUICK else 3
SERVER_CPU = os.environ.get("SERVER_CPU", "0")
TOOL_CPU = os.environ.get("TOOL_CPU", "1")
H2LOAD = shutil.which("h2load") or "/usr/bin/h2load"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"

NGINX_CONF = """worker_processes 1;
daemon off;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {dir}/body;
    keepalive_requests 100000000;
    keepalive_timeout 300s;
    http2_max_requests 100000000;
    http2_max_concurrent_streams 128;
    server {{
        listen 127.0.0.1:{port} http2;
        location / {{ default_type text/plain; return 200 "hello from punctual bench\\n"; }}
    }}
}}
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, timeout=5.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"nothing listens on {port}")


def timed(cmd, timeout):
    """Runs CMD pinned to the tool CPU; returns (stdout, CPU seconds it and its children used)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(["taskset", "-c", TOOL_CPU, *cmd], capture_output=True, text=True, timeout=timeout)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return p, cpu


def h2load_done(out):
    m = re.search(r"requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded", out)
    return int(m.group(2)) if m else 0


def punctual_run(url, rate, conns, streams, extra, dur, work):
    js = os.path.join(work, "r.json")
    p, cpu = timed([PUNCTUAL, "run", "--http", "2", "-R", str(rate), "-d", f"{dur}s", "-c", str(conns),
                    "-t", "1", "--max-streams", str(streams), "--json", js, *extra, url], dur * 3 + 30)
    report = json.load(open(js)) if os.path.exists(js) else None
    return p, cpu, report


def build_floor(work):
    path = os.path.join(work, "floor_h2_generator")
    subprocess.run(["c++", "-std=c++20", "-O2", "-o", path, os.path.join(HERE, "floor_h2_generator.cpp")],
                   check=True, timeout=120)
    return path


def cpu_section(url, work):
    floor = build_floor(work)
    port = url.rsplit(":", 1)[1].strip("/")
    ours, theirs, floors, tick_floors, sleeps, floor_wakeups = [], [], [], [], [], []
    for _ in range(ROUNDS):
        _, cpu, r = punctual_run(url, 20000, 10, 10, ["--precision", "coarse"], DUR, work)
        ok = max(r["outcomes"]["ok"], 1)
        ours.append(cpu / ok * 1e6)
        sleeps.append(sum(w["sleeps"] for w in r["generator"]["workers"]) / ok)
        p, cpu = timed([floor, "coarse", port, "20000", "10", "10", str(DUR)], DUR * 3 + 30)
        f = json.loads(p.stdout)
        floors.append(cpu / max(f["completed"], 1) * 1e6)
        floor_wakeups.append(f["wakeups"] / max(f["completed"], 1))
        p, cpu = timed([floor, "tick", port, "20000", "10", "10", str(DUR)], DUR * 3 + 30)
        tick_floors.append(cpu / max(json.loads(p.stdout)["completed"], 1) * 1e6)
        p, cpu = timed([H2LOAD, "-c10", "-m10", "--rps", "2000", "-D", str(DUR), "-t1", url], DUR * 3 + 30)
        theirs.append(cpu / max(h2load_done(p.stdout), 1) * 1e6)
    a, b, c = statistics.median(ours), statistics.median(theirs), statistics.median(floors)
    return {"punctual_us_per_request": ours, "h2load_us_per_request": theirs,
            "floor_us_per_request": floors, "floor_tick_us_per_request": tick_floors,
            "punctual_sleeps_per_request": sleeps, "floor_wakeups_per_request": floor_wakeups,
            "ratio": a / b, "floor_over_h2load": c / b, "punctual_over_floor": a / c,
            "floor_tick_over_h2load": statistics.median(tick_floors) / b, "target": "<= 1.0"}


def arrivals_of(log):
    """(arrival_ns) of every request in a `serve --arrival-log` file, sorted."""
    out = []
    for line in open(log):
        if line.startswith("#") or not line.strip():
            continue
        out.append(int(line.split()[0]))
    return sorted(out)


def grid_error_p99(arrivals, rate):
    """p99 of |arrival - (t0 + k / rate)|, t0 the median offset: the same fit for every tool."""
    step = 1e9 / rate
    offsets = [a - k * step for k, a in enumerate(arrivals)]
    t0 = statistics.median(offsets)
    errors = sorted(abs(o - t0) for o in offsets)
    return errors[int(0.99 * (len(errors) - 1))]


def serve(work, name):
    log = os.path.join(work, name + ".arrivals")
    out = open(os.path.join(work, name + ".serve"), "w")
    proc = subprocess.Popen(["taskset", "-c", SERVER_CPU, PUNCTUAL, "serve", "--http2", "--port", "0",
                             "--arrival-log", log, "--duration", "120s"], stdout=out, stderr=subprocess.STDOUT)
    for _ in range(250):
        text = open(os.path.join(work, name + ".serve")).read()
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", text)
        if m:
            return proc, int(m.group(1)), log
        time.sleep(0.02)
    raise RuntimeError("serve did not start")


TCPDUMP = shutil.which("tcpdump")


def capture(work, name, port):
    """Starts tcpdump on lo (beside the server, on its CPU) for what goes to `port`, whole
    payloads, so that h2_wire.py can find the requests' frames; None without tcpdump or root."""
    if not TCPDUMP or os.geteuid() != 0:
        return None
    pcap, err = os.path.join(work, name + ".pcap"), os.path.join(work, name + ".tcpdump")
    proc = subprocess.Popen(["taskset", "-c", SERVER_CPU, TCPDUMP, "-i", "lo", "-n", "-s", "0",
                             "-B", "131072", "--time-stamp-precision=nano", "-w", pcap,
                             f"tcp dst port {port}"], stderr=open(err, "w"))
    for _ in range(250):
        if "listening on" in open(err).read():
            return proc, pcap, port
        time.sleep(0.02)
    stop(proc)
    return None


def wire_times(cap):
    """The requests' times on the wire (CLOCK_REALTIME ns), or None without a capture."""
    if cap is None:
        return None
    proc, pcap, port = cap
    time.sleep(1)  # tcpdump drops what is still in its buffer on SIGINT
    stop(proc)
    try:
        times = h2_wire.request_times(pcap, port)
    except ValueError as e:
        print(f"h2_bench: {pcap}: {e}", file=sys.stderr)
        times = None
    os.remove(pcap)
    return times


def observed(work, name, load):
    """Runs load(port) against a fresh `serve --http2 --arrival-log`, with lo captured when it
    can be: what load returned, the log's arrivals, the wire's times (or None) and the steal."""
    proc, port, log = serve(work, name)
    cap = capture(work, name, port)
    seen = with_steal(lambda: {"result": load(port)})
    seen["wire"] = wire_times(cap)
    stop(proc)
    seen["arrivals"] = arrivals_of(log)
    return seen


def stop(proc):
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def punctual_precision(work, rate, conns, streams, mode):
    """punctual's arrivals in one --precision MODE run: the grid-fit p99 and the p99 against its
    own intended times, with its own send lag p99 beside them."""
    sched = os.path.join(work, "schedule.txt")
    seen = observed(work, "ours-" + mode, lambda port: punctual_run(
        f"http://127.0.0.1:{port}/", rate, conns, streams,
        ["--schedule-out", sched, "--precision", mode], DUR, work)[2])
    r, ours, wire = seen["result"], seen["arrivals"], seen["wire"]
    start = int(r["schedule"]["start_mono_ns"])
    intended = sorted(start + int(line.split()[1]) for line in open(sched)
                      if line.strip() and not line.startswith("#"))
    n = min(len(intended), len(ours))
    true_errors = sorted(abs(a - i) for a, i in zip(ours[:n], intended[:n]))
    return {"p99_ns_grid_fit": grid_error_p99(ours, rate),
            "p99_ns_true_intended": true_errors[int(0.99 * (n - 1))],
            "wire_p99_ns_grid_fit": grid_error_p99(wire, rate) if wire else None,
            "send_lag_p99_ns": r["latency"]["send_lag"]["percentiles_ns"]["99"],
            "steal_ms": seen["steal_ms"]}


def precision_run(work, rate, conns, streams):
    """One precision run of h2load and of punctual in fine (the default) and spin mode at RATE
    over CONNS x STREAMS (h2load: --rps RATE/CONNS per client), arrivals from `serve --http2`
    on the server CPU, dated by the kernel's receive stamps. Returns the figures."""
    seen = observed(work, "h2load", lambda port: timed(
        [H2LOAD, f"-c{conns}", f"-m{streams}", "--rps", str(rate // conns), "-D", str(DUR), "-t1",
         f"http://127.0.0.1:{port}/"], DUR * 3 + 30))
    b = grid_error_p99(seen["arrivals"], rate)
    b_wire = grid_error_p99(seen["wire"], rate) if seen["wire"] else None
    out = {"rate": rate, "connections": conns, "streams": streams, "h2load_p99_ns_grid_fit": b,
           "h2load_wire_p99_ns_grid_fit": b_wire, "h2load_steal_ms": seen["steal_ms"],
           "target": ">= 10"}
    for mode in ("fine", "spin"):
        ours = punctual_precision(work, rate, conns, streams, mode)
        out["punctual_" + mode] = ours
        out[f"ratio_h2load_over_punctual_{mode}"] = b / max(ours["p99_ns_grid_fit"], 1)
        if b_wire and ours["wire_p99_ns_grid_fit"]:
            out[f"wire_ratio_h2load_over_punctual_{mode}"] = b_wire / max(ours["wire_p99_ns_grid_fit"], 1)
    return out


def precision_section(work):
    # The configuration (h2load's ten clients keep ten timers, so its arrivals are held
    # against one even 20,000/s grid, as punctual's are), and one connection, where each tool
    # has a single grid.
    return [precision_run(work, 20000, 10, 10), precision_run(work, 2000, 1, 100)]


def h2load_max(url):
    p, _ = timed([H2LOAD, "-c10", "-m10", "-D", str(DUR), "-t1", url], DUR * 3 + 30)
    m = re.search(r"finished in [\d.]+s, ([\d.]+) req/s", p.stdout)
    return float(m.group(1)) if m else 0.0


def max_rate_section(url, work):
    # nginx's capacity drifts by 10% within minutes here, and an open loop can hold at most the
    # server's capacity: h2load's maximum is taken before and after the ladder and averaged, and
    # the steps are fine near 1.0 so that the ratio is resolved to 5%. punctual and the floor
    # climb together, step by step, so that a drift hits both.
    floor = build_floor(work)
    before = h2load_max(url)
    best, steps = {"punctual": 0, "floor": 0}, {"punctual": [], "floor": []}
    climbing = {"punctual": lambda rate: with_steal(lambda: punctual_step(url, rate, work)),
                "floor": lambda rate: with_steal(lambda: floor_step(floor, url, rate))}
    for rate in [math.ceil(before * f) for f in (0.6, 0.8, 0.9, 0.95, 1.0, 1.05, 1.1, 1.25)]:
        for tool in list(climbing):
            # Two tries a step: near the server's limit one transient backlog in nginx raises the
            # mean service time past what 100 stream slots carry (connection_cap), at any step.
            for _ in range(2):
                step = climbing[tool](rate)
                steps[tool].append(step)
                if step["kept"]:
                    break
            if step["kept"]:
                best[tool] = rate
            else:
                del climbing[tool]
        if not climbing:
            break
    after = h2load_max(url)
    theirs = (before + after) / 2
    return {"punctual_max_open_loop_req_s": best["punctual"], "h2load_closed_loop_req_s": theirs,
            "h2load_before_and_after": [before, after],
            "ratio": best["punctual"] / max(theirs, 1), "steps": steps["punctual"],
            "floor_max_open_loop_req_s": best["floor"], "floor_ratio": best["floor"] / max(theirs, 1),
            "floor_steps": steps["floor"], "target": ">= 1.0"}


def steal_ms():
    """The host's steal time so far on the server's and the tools' CPUs (ms): time it did not
    run them. A step taken while it grows measures the host, not the tools."""
    total = 0
    with open("/proc/stat") as f:
        for line in f:
            fields = line.split()
            if fields[0] in (f"cpu{SERVER_CPU}", f"cpu{TOOL_CPU}") and len(fields) > 8:
                total += int(fields[8]) * 1000 // os.sysconf("SC_CLK_TCK")
    return total


def with_steal(step):
    """Runs step() and adds the steal time it saw."""
    before = steal_ms()
    result = step()
    result["steal_ms"] = steal_ms() - before
    return result


def punctual_step(url, rate, work):
    """A step holds when >= 99% of the planned requests are ok and the run is valid."""
    _, _, r = punctual_run(url, rate, 10, 10, ["--precision", "coarse", "--timeout", "2s"], DUR, work)
    planned = r["schedule"]["planned"]
    failed = [c["name"] for c in r["validity"]["checks"] if c["level"] == "gating" and not c["pass"]]
    return {"rate": rate, "ok_share": r["outcomes"]["ok"] / max(planned, 1),
            "failed_checks": failed, "kept": r["outcomes"]["ok"] >= 0.99 * planned and r["validity"]["valid"],
            "worker_cpu_share": r["generator"]["workers"][0]["cpu_share"]}


def floor_step(floor, url, rate):
    """A step holds when the floor passes punctual's gating checks of an open run, taken as
    punctual takes them or more loosely: >= 99% of its requests complete; at most 1% of them,
    over the whole run rather than per second, were found due more than 10 ms after their
    intended second ended (schedule_kept); and 10 x 10 stream slots carry 1.5x the rate times
    its mean service time (connection_cap). That service time errs against the floor: it ends
    at the wake-up that read the response, not at the kernel's receive stamp, microseconds
    later. The floor parses and records nothing, so where it stops, up to that delay, no
    open-loop generator over 10 x 10 that reads every response at once goes further here."""
    port = url.rsplit(":", 1)[1].strip("/")
    p, _ = timed([floor, "coarse", port, str(rate), "10", "10", str(DUR), "measure"], DUR * 3 + 30)
    f = json.loads(p.stdout) if p.stdout.strip() else {"planned": 1, "completed": 0, "late": 1,
                                                        "mean_service_ns": 0}
    planned = max(f["planned"], 1)
    slots_needed = 1.5 * rate * f["mean_service_ns"] / 1e9
    failed = [name for name, bad in (("ok", f["completed"] < 0.99 * planned),
                                     ("schedule_kept", f["late"] > 0.01 * planned),
                                     ("connection_cap", slots_needed > 100)) if bad]
    return {"rate": rate, "completed_share": f["completed"] / planned,
            "late_share": f["late"] / planned, "mean_service_ns": f["mean_service_ns"],
            "failed_checks": failed, "kept": not failed}


def main():
    for tool in (PUNCTUAL, H2LOAD, NGINX):
        if not os.path.exists(tool):
            sys.exit(f"h2_bench: {tool} is missing")
    work = tempfile.mkdtemp(prefix="punctual-h2-bench-")
    port = free_port()
    with open(os.path.join(work, "nginx.conf"), "w") as f:
        f.write(NGINX_CONF.format(dir=work, port=port))
    nginx = subprocess.Popen(["taskset", "-c", SERVER_CPU, NGINX, "-p", work, "-c", "nginx.conf"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port)
        url = f"http://127.0.0.1:{port}/"
        result = {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "duration_s": DUR,
                  "rounds": ROUNDS}
        for key, run_section in (("cpu_per_request", lambda: cpu_section(url, work)),
                                 ("send_precision", lambda: precision_section(work)),
                                 ("max_rate", lambda: max_rate_section(url, work))):
            if key in SECTIONS:
                result[key] = run_section()
                print(json.dumps(result[key]), flush=True)
    finally:
        stop(nginx)
        shutil.rmtree(work, ignore_errors=True)
    out_dir = os.path.join(HERE, "results")
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "h2-" + time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + ".json")
    with open(path, "w") as f:
        json.dump(result, f, indent=2)
    print(path)


if __name__ == "__main__":
    main()
