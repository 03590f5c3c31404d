"""punctual search on real sockets, kept short: the capacity of `serve --cpu-per-request`, a
generator that is its own limit against nginx (PUNCTUAL_SEARCH_NGINX=1 only), the JSON against docs/search.schema.json (each
step's run report against docs/report.schema.json), and bad input. Everything else about the
procedure is shown in the simulation (tests/sim/sim_search_test.cpp) and the unit tests.

Usage: /usr/bin/python3 test_search.py PATH_TO_PUNCTUAL
"""

import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import report_schema  # noqa: E402
from harness import check, check_eq  # noqa: E402

import jsonschema  # noqa: E402

SCHEMA_PATH = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                            "..", "..", "docs", "search.schema.json"))
SHORT = ["--step-duration", "1s", "--step-warmup", "500ms", "--resolution", "15%"]


def search(binary, args, tmp, name, timeout_s=120):
    """`taskset -c 1 punctual search ARGS --json F --html H`: (exit code, doc, stdout, stderr)."""
    json_path = os.path.join(tmp, name + ".json")
    html_path = os.path.join(tmp, name + ".html")
    cmd = ["taskset", "-c", "1", binary, "search", *args, "--json", json_path, "--html", html_path]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    doc = None
    if os.path.exists(json_path):
        with open(json_path, encoding="utf-8") as f:
            doc = json.load(f)
        check(os.path.getsize(html_path) > 0, "no --html page")
    return proc.returncode, doc, proc.stdout, proc.stderr


def validate(doc):
    with open(SCHEMA_PATH, encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(doc))
    check(not errors, "search.schema.json: " + "; ".join(e.message[:200] for e in errors[:3]))
    for step in doc["search"]["steps"]:
        report_schema.validate(step["report"])
        harness.assert_denominator(step["report"])


def pin_to_cpu0(proc):
    subprocess.run(["taskset", "-a", "-p", "-c", "0", str(proc.pid)], capture_output=True, check=False)


# serve on CPU 0 answers at most 1,000 req/s; the generator on CPU 1. p90 needs 100 samples a
# step for 10 beyond it, so 1 s steps from 400 req/s resolve it without re-runs.
def test_capacity(binary, tmp):
    with harness.punctual_serve(binary, "--threads", "1", "--cpu-per-request", "1ms") as serve:
        pin_to_cpu0(serve.proc)
        code, doc, out, err = search(binary, ["-t1", "--from", "400", "--slo", "p90<=50ms", *SHORT,
                                              serve.url("/")], tmp, "capacity")
    check_eq(code, 0, f"exit code (stderr {err[-300:]!r}, stdout {out[-1500:]!r})")
    validate(doc)
    rate = doc["search"]["sustained_rate_per_s"]
    check(750 <= rate <= 1000, f"sustained {rate} req/s, not within [750, 1000]:\n{out}")
    check(f"sustains {rate:,.0f} req/s under p90<=50ms, errors<=1%" in out, f"answer line:\n{out}")
    check_eq(doc["search"]["limit"], "server", "limit")


# nginx answers far more than one fine-precision thread can send: the generator is the limit.
def test_generator_limit(binary, tmp):
    with harness.nginx_server() as nginx:
        code, doc, out, err = search(binary, ["-t1", "--precision", "fine", "--from", "8000",
                                              "--slo", "p99<=50ms", *SHORT, nginx.url("/")],
                                     tmp, "generator")
    check_eq(code, 4, f"exit code (stdout {out[-1500:]!r})")
    validate(doc)
    check_eq(doc["search"]["limit"], "generator", "limit")
    check("the generator, not the server, is the limit" in out, f"answer line:\n{out}")


def test_refused(binary, tmp):
    for bad in (["-R", "100"], ["-d", "5s"], ["--stages", "1s:10"], ["--max-queue", "3"],
                ["--model", "closed"]):
        proc = subprocess.run([binary, "search", *bad, "--slo", "p99<=1s", "http://127.0.0.1:9/"],
                              capture_output=True, text=True, timeout=10)
        check_eq(proc.returncode, 2, f"exit code for {bad}")
        check_eq(len(proc.stderr.strip().splitlines()), 1, f"stderr lines for {bad}: {proc.stderr!r}")


def main():
    binary = harness.binary_from_argv()
    checks = harness.Checks("search")
    with tempfile.TemporaryDirectory() as tmp:
        checks.run("refused options", test_refused, binary, tmp)
        checks.run("capacity of serve --cpu-per-request 1ms", test_capacity, binary, tmp)
        # Whether one fine thread or nginx gives out first depends on the host: on a quiet
        # 2-CPU machine the generator sustained 112,000 req/s and nginx failed p99 first. So
        # this case runs on request only (the simulation shows the generator's limit, exit 4).
        if os.environ.get("PUNCTUAL_SEARCH_NGINX") == "1":
            checks.run("the generator's limit against nginx", test_generator_limit, binary, tmp)
    checks.finish()


if __name__ == "__main__":
    main()
