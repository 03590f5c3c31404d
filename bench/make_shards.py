#!/usr/bin/env python3
"""Synthesise the shard reports of a long distributed run from a short real one, for
bench/merge_scale.sh.

    make_shards.py TEMPLATE_DIR OUT_DIR --shards N --rate R --seconds S

TEMPLATE_DIR holds the shard-I-of-M.json and .hlog files of a real `punctual run --shard I/M
--start-at T --out-dir TEMPLATE_DIR` (any M, a few seconds long, the open model at a constant
rate). OUT_DIR gets shard-K-of-N.json and shard-K-of-N.hlog for K = 0..N-1: shard K is made from
template shard K mod M, stretched to S seconds, as if the global plan were R req/s for S s.

What is exact and what is borrowed:
- The counts are those of the plan: request i of second s (i in [s*R, (s+1)*R)) belongs to
  shard i mod N, so each shard's per-second planned (schedule.per_second_planned, the rows of
  series.per_second) and its planned total are what `punctual run --shard K/N` would plan, and
  the shards' planned totals add up to R * S. Every request is ok, with status 200.
- The .hlog's per-second histograms are the template's, reused as they are (second s takes the
  template's second s mod its length, start stamp moved to s), and the JSON's whole-run
  histograms are the template's too. So the merged latency figures are the template's shape with
  the template's sample counts, not R/N per second: this is a measure of what the merge costs,
  not of a server. A histogram's encoded size grows only with the spread of its values, so a
  template run at a realistic per-shard rate gives realistic payloads.
- The checks a merge carries from the shards (connection_cap, start_lag, worst_second_send_lag)
  are the template's, as is worst_interval. Every shard gets the same plan_sha256 (a digest of
  this synthetic plan, not of any real options).
"""
import argparse
import copy
import glob
import hashlib
import json
import os
import re
import sys

NS = 1_000_000_000


def planned_in(second, rate, shards, index):
    """Requests i in [second*rate, (second+1)*rate) with i mod shards == index."""
    def below(x):  # how many i < x have i mod shards == index
        return (x - index + shards - 1) // shards
    return below((second + 1) * rate) - below(second * rate)


def read_template(directory):
    shards = []
    for path in sorted(glob.glob(os.path.join(directory, "shard-*-of-*.json"))):
        m = re.search(r"shard-(\d+)-of-(\d+)\.json$", path)
        with open(path) as f:
            doc = json.load(f)
        with open(path[:-5] + ".hlog") as f:
            hlog = f.read().splitlines()
        shards.append((int(m.group(1)), doc, hlog))
    if not shards:
        sys.exit(f"make_shards.py: no shard-I-of-M.json in {directory}")
    shards.sort(key=lambda s: s[0])
    return [(doc, hlog) for _, doc, hlog in shards]


def hlog_seconds(lines):
    """The header lines, and the interval lines grouped by their whole start second."""
    header, by_second = [], {}
    for line in lines:
        if line.startswith("#") or line.startswith('"'):
            header.append(line)
            continue
        fields = line.split(",")
        first = 1 if fields[0].startswith("Tag=") else 0
        second = int(round(float(fields[first])))
        by_second.setdefault(second, []).append((fields, first))
    return header, [by_second[s] for s in sorted(by_second)]


def stretched_hlog(lines, seconds):
    header, template = hlog_seconds(lines)
    out = list(header)
    for s in range(seconds):
        for fields, first in template[s % len(template)]:
            f = list(fields)
            f[first] = f"{s:.3f}"
            out.append(",".join(f))
    return "\n".join(out) + "\n"


def stretched_json(doc, index, shards, rate, seconds, plan_sha256):
    d = copy.deepcopy(doc)
    per_second = [planned_in(s, rate, shards, index) for s in range(seconds)]
    planned = sum(per_second)
    sch = d["schedule"]
    window_ns = seconds * NS
    tail = max(len(sch["per_second_planned"]) - sch["duration_ns"] // NS, 0)  # the drain's seconds
    sch.update(duration_ns=window_ns, window_ns=window_ns, planned=planned,
               shard={"index": index, "count": shards}, plan_sha256=plan_sha256,
               per_second_planned=per_second + [0] * tail,
               per_second_late=[0] * (seconds + tail))
    d["command_line"] = ["punctual", "run", "-R", str(rate), "-d", f"{seconds}s", "--shard",
                         f"{index}/{shards}", "(synthesised by bench/make_shards.py)"]
    d["model"]["rate_per_s"] = float(rate)
    d["model"]["schedule"] = f"constant arrivals, {rate} req/s"
    d["outcomes"] = {k: (planned if k == "ok" else 0) for k in d["outcomes"]}
    d["status_counts"] = {"200": planned}
    r = planned / seconds
    d["rates_per_s"] = {"planned": r, "sent": r, "completed": r}
    old = max(doc["schedule"]["planned"], 1)
    d["bytes"] = {k: v * planned // old for k, v in doc["bytes"].items()}
    a = d["attempts"]
    a.update(total=planned, first=planned, retries=0, amplification=1.0)
    rows, template_rows = [], doc["series"]["per_second"]
    start = sch["start_unix_ns"] / NS
    for s in range(seconds):
        row = copy.deepcopy(template_rows[s % len(template_rows)])
        n = per_second[s]
        row.update(second=s, offset_s=float(s), unix_s=start + s, planned=n, sent=n, attempts=n,
                   completed=n, ok=n, errors=0, timeouts=0, dropped=0)
        rows.append(row)
    d["series"]["per_second"] = rows
    return d


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("template_dir")
    ap.add_argument("out_dir")
    ap.add_argument("--shards", type=int, required=True)
    ap.add_argument("--rate", type=int, required=True, help="the global plan's req/s")
    ap.add_argument("--seconds", type=int, default=600)
    o = ap.parse_args()
    template = read_template(o.template_dir)
    plan = hashlib.sha256(f"synthetic constant {o.rate} req/s for {o.seconds}s".encode()).hexdigest()
    os.makedirs(o.out_dir, exist_ok=True)
    hlogs = [stretched_hlog(hlog, o.seconds) for _, hlog in template]
    total = 0
    for k in range(o.shards):
        doc, _ = template[k % len(template)]
        d = stretched_json(doc, k, o.shards, o.rate, o.seconds, plan)
        total += d["schedule"]["planned"]
        stem = os.path.join(o.out_dir, f"shard-{k}-of-{o.shards}")
        with open(stem + ".json", "w") as f:
            json.dump(d, f, indent=2)
            f.write("\n")
        with open(stem + ".hlog", "w") as f:
            f.write(hlogs[k % len(hlogs)])
    print(total)


if __name__ == "__main__":
    main()
