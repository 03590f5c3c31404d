"""Why a worker woke late: reads an ftrace text dump (sched and hrtimer events, trace clock
mono; bench/wake_trace.sh takes one) and sorts each late timed wake-up of a punctual worker by
where the time went.

- host: the worker's timer fired late. The kernel runs a due timer at once on a vCPU that runs,
  so the vCPU itself was not running: the hypervisor had not run it yet (an idle vCPU woken
  late, or a running one taken away).
- guest: the timer fired on time, and the worker ran late: its CPU was held by another thread
  of the guest, named here (the one that ran just before the worker).

For host lateness it also says whether another worker's timer was waiting on the same vCPU at
that instant: when both workers sleep on one vCPU, both wake late together and neither can
claim for the other (docs/design.md, "Who waits for whom").

Usage: python3 wake_trace.py TRACE_TXT [THRESHOLD_US]   (default 500)
"""

import collections
import re
import sys

LINE = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+): (\w+): (.*)$")
WORKER = "punctual-w"


def field(rest, name):
    m = re.search(name + r"=(\S+)", rest)
    return m.group(1) if m else None


def late_wakeups(path):
    """Each worker timed wake-up: (expires_ns, worker, fire_late_ns, run_late_ns, cpu, ran_after,
    other workers' timers pending on that cpu when it expired)."""
    pending = {}  # hrtimer -> (expires, worker tid, cpu)
    fired = {}  # worker tid -> (expires, fire time, cpu, others pending there)
    names = {}
    last_off_cpu = {}  # cpu -> the thread that last left it
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            comm, pid, cpu = m.group(1), int(m.group(2)), int(m.group(3))
            ts = int(round(float(m.group(4)) * 1e9))
            event, rest = m.group(5), m.group(6)
            if event == "hrtimer_start" and "function=hrtimer_wakeup" in rest:
                if comm.startswith(WORKER):
                    names[pid] = comm
                    pending[field(rest, "hrtimer")] = (int(field(rest, "expires")), pid, cpu)
            elif event == "hrtimer_cancel":
                pending.pop(field(rest, "hrtimer"), None)
            elif event == "hrtimer_expire_entry" and "function=hrtimer_wakeup" in rest:
                timer = pending.pop(field(rest, "hrtimer"), None)
                if timer:
                    expires, tid, _ = timer
                    others = sum(1 for e, t, c in pending.values() if c == cpu and t != tid and e <= ts)
                    fired[tid] = (expires, ts, cpu, others)
            elif event == "sched_switch":
                last_off_cpu[cpu] = field(rest, "prev_comm")
                tid = int(field(rest, "next_pid"))
                if tid in fired:
                    expires, fire, fcpu, others = fired.pop(tid)
                    out.append((expires, names[tid], fire - expires, ts - expires, fcpu,
                                last_off_cpu[cpu], others))
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: wake_trace.py TRACE_TXT [THRESHOLD_US]")
    threshold = float(sys.argv[2]) * 1e3 if len(sys.argv) > 2 else 500e3
    wakes = late_wakeups(sys.argv[1])
    if not wakes:
        sys.exit("wake_trace: no timed wake-up of a punctual worker in the trace")
    runs = sorted(w[3] for w in wakes)
    print(f"{len(wakes)} timed wake-ups of workers: late by {runs[len(runs) // 2] / 1e3:.0f} us at p50,"
          f" {runs[int(len(runs) * 0.99)] / 1e3:.0f} us at p99, {runs[-1] / 1e3:.0f} us at most")
    late = [w for w in wakes if w[3] > threshold]
    host = [w for w in late if w[2] > threshold]
    guest = [w for w in late if w[2] <= threshold]
    shared = sum(1 for w in host if w[6] > 0)
    print(f"{len(late)} over {threshold / 1e3:.0f} us:")
    print(f"  host (the timer fired late): {len(host)}, {shared} of them with another worker's"
          f" timer due on the same vCPU")
    by_thread = collections.Counter(w[5] for w in guest)
    held = ", ".join(f"{name} {n}" for name, n in by_thread.most_common())
    print(f"  guest (fired on time, CPU held by another thread): {len(guest)}"
          + (f" ({held})" if held else ""))


if __name__ == "__main__":
    main()
