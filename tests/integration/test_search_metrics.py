"""`punctual search --metrics-listen` end to end: a short search (two steps, 100 and 200 req/s,
against `punctual serve`) scraped over plain HTTP every 50 ms while it runs and while it
lingers, held to what docs/design.md ("Live metrics") says of a search's endpoint:

- every answered scrape holds one punctual_info, whose run_id is one of the search's steps'
  (each step is a run of its own; the recovery probes between steps are not served), and the
  steps are served one after another, in order;
- within a step, no counter ever goes down (a new step starts again from zero);
- after the search, the lingering endpoint serves the last step's final values: its outcomes,
  warm-up outcomes, planned, first attempts sent, responses by code and the histograms' counts
  equal that step's run report in the search's JSON, nothing is in flight, and the target rate
  is the step's rate.

Counts, not timing: whatever the host does, each step's report and its metrics must agree.
No Prometheus: the scrapes are urllib's.

Usage: python3 test_search_metrics.py PATH_TO_PUNCTUAL
"""

import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, check_eq  # noqa: E402

SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
SCRAPE_EVERY_S = 0.05


def parse_exposition(text):
    """({(name, ((label, value), ...)): value}, {family: type}) of a Prometheus text page."""
    samples, types = {}, {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, family, kind = line.split(" ", 3)
            types[family] = kind
            continue
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        check(m, f"not a sample line: {line!r}")
        labels = tuple(sorted(LABEL.findall(m.group(2) or "")))
        samples[(m.group(1), labels)] = float(m.group(3))
    return samples, types


def is_counter(name, types):
    """A counter's sample, or a histogram's bucket or count (its _sum is a product of floats)."""
    if types.get(name) == "counter":
        return True
    for suffix in ("_bucket", "_count"):
        if name.endswith(suffix) and types.get(name[:-len(suffix)]) == "histogram":
            return True
    return False


def total(samples, name, **where):
    """The sum of NAME's series whose labels include WHERE."""
    return sum(v for (n, labels), v in samples.items()
               if n == name and all((k, w) in labels for k, w in where.items()))


def by_label(samples, name, key):
    out = {}
    for (n, labels), v in samples.items():
        if n == name:
            value = dict(labels)[key]
            out[value] = out.get(value, 0) + v
    return out


def info_of(samples):
    infos = [dict(labels) for (n, labels), v in samples.items() if n == "punctual_info" and v == 1]
    check_eq(len(infos), 1, "punctual_info samples of value 1 in a scrape")
    return infos[0]


def scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        return r.read().decode()


def scrape_search(binary, url, tmp):
    """Runs the search, scraping until it exits: ([(the JSON existed before the scrape began,
    samples, types)], the search's JSON)."""
    port = harness.free_port()
    json_path = os.path.join(tmp, "search.json")
    cmd = [binary, "search", "-t1", "--slo", "p50<=1s", "--from", "100", "--to", "200",
           "--step-warmup", "200ms", "--step-duration", "600ms", "--metrics-listen",
           f"127.0.0.1:{port}", "--metrics-linger", "1s", "-q", "--json", json_path, url]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    scrapes = []
    try:
        while proc.poll() is None:
            done = os.path.exists(json_path)
            try:
                page = scrape(port)
            except (OSError, http.client.HTTPException):  # not yet, between steps, or gone
                time.sleep(SCRAPE_EVERY_S)
                continue
            scrapes.append((done, *parse_exposition(page)))
            time.sleep(SCRAPE_EVERY_S)
        _, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=5)
    check(os.path.exists(json_path), f"search exited {proc.returncode} without its JSON: {err}")
    with open(json_path, encoding="utf-8") as f:
        doc = json.load(f)
    # Exit 4 for the generator's limit is the host's lateness at 200 req/s, twice in a step:
    # this test judges counts, not verdicts.
    check(proc.returncode == 0 or (proc.returncode == 4 and doc["search"]["limit"] == "generator"),
          f"search exited {proc.returncode} (limit {doc['search']['limit']}): {err}")
    return scrapes, doc


def steps_served_in_turn(scrapes, run_ids):
    """The scrapes' run_ids, each a step's, in contiguous blocks in the steps' order."""
    order = []
    for _, samples, _ in scrapes:
        run_id = info_of(samples)["run_id"]
        check(run_id in run_ids, f"run_id {run_id} is none of the steps' {run_ids}")
        if not order or order[-1] != run_id:
            check(run_id not in order, f"step {run_id} served again after another: {order}")
            order.append(run_id)
    indices = [run_ids.index(r) for r in order]
    check_eq(indices, sorted(indices), "the steps' order in the scrapes")
    return order


def counters_never_go_down(scrapes):
    previous = {}
    for _, samples, types in scrapes:
        run_id = info_of(samples)["run_id"]
        for key, value in samples.items():
            if not is_counter(key[0], types):
                continue
            before = previous.get((run_id, key))
            check(before is None or value >= before,
                  f"{key} of step {run_id} went down from {before} to {value}")
            previous[(run_id, key)] = value


def final_values_are_the_last_steps(samples, report):
    check_eq(info_of(samples)["run_id"], report["run_id"], "the lingering run_id")
    check_eq(by_label(samples, "punctual_requests_total", "outcome"),
             {k: float(v) for k, v in report["outcomes"].items()}, "requests by outcome")
    check_eq(by_label(samples, "punctual_warmup_requests_total", "outcome"),
             {k: float(v) for k, v in report["warmup"]["outcomes"].items()}, "warm-up by outcome")
    check_eq(total(samples, "punctual_planned_total"), report["schedule"]["planned"], "planned")
    check_eq(total(samples, "punctual_sent_total"), report["attempts"]["first"], "first attempts")
    check_eq(by_label(samples, "punctual_http_responses_total", "code"),
             {k: float(v) for k, v in report["status_counts"].items()}, "responses by code")
    for view in ("response_time", "service_time", "send_lag", "queue_wait"):
        check_eq(total(samples, f"punctual_{view}_seconds_count"),
                 report["latency"][view]["count"], f"{view} count")
    check_eq(total(samples, "punctual_requests_in_flight"), 0, "in flight at the end")
    check_eq(total(samples, "punctual_target_rate_per_second"), report["model"]["rate_per_s"],
             "target rate")
    check(report["outcomes"]["ok"] > 0, f"no ok request in the last step: {report['outcomes']}")


def search_metrics(binary):
    with harness.punctual_serve(binary) as serve, \
            tempfile.TemporaryDirectory(prefix="punctual-search-metrics-") as tmp:
        scrapes, doc = scrape_search(binary, serve.url("/"), tmp)
    steps = doc["search"]["steps"]
    check(len(steps) >= 2, f"{len(steps)} steps: the search should take two")
    run_ids = [s["report"]["run_id"] for s in steps]
    check_eq(len(set(run_ids)), len(run_ids), "each step's own run_id")
    order = steps_served_in_turn(scrapes, run_ids)
    check(len(order) >= 2, f"scrapes saw only steps {order} of {run_ids}")
    counters_never_go_down(scrapes)
    lingering = [samples for done, samples, _ in scrapes if done]
    check(lingering, "no scrape after the search's JSON was written (the linger)")
    for samples in lingering:
        final_values_are_the_last_steps(samples, steps[-1]["report"])
    print(f"     {len(scrapes)} scrapes, {len(lingering)} while lingering, steps {len(steps)}",
          flush=True)


def main():
    binary = harness.binary_from_argv()
    checks = harness.Checks("search_metrics")
    checks.run("search_metrics_follow_each_step_and_end_as_the_json", search_metrics, binary)
    checks.finish()


if __name__ == "__main__":
    main()
