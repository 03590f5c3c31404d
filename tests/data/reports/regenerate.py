"""Makes the sample reports of this folder again with a punctual binary, as README.md describes:
each against a fresh `punctual serve --port 0 SERVER_ARGS` on 127.0.0.1, argv[0] `punctual`, in
a scratch directory, rewritten with json.dump(report, f, indent=2). Nothing runs this in the
tests; run it when the report gains a field, then check the result with test_schema.py.

Usage: python3 tests/data/reports/regenerate.py PATH_TO_PUNCTUAL [NAME ...]   (default: all)
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "integration"))
import harness  # noqa: E402

# name: (serve's arguments, run's arguments, the scheme); README.md's table, row by row.
REPORTS = {
    "open-constant": ([], ["-t1", "-c2", "-d1s", "-R200"], "http"),
    "closed": (["--service-time", "1ms"], ["--model", "closed", "-t1", "-c2", "-d1s"], "http"),
    "closed-expected-interval": (
        ["--service-time", "1ms", "--stall-at", "500ms:200ms"],
        ["--model", "closed", "-t1", "-c2", "-d1s", "--expected-interval", "10ms"], "http"),
    "closed-slo-refused": (["--service-time", "1ms"],
                           ["--model", "closed", "-t1", "-c2", "-d1s", "--slo", "p99<=100ms"], "http"),
    "open-retries": (["--fault", "503:0.3"], ["-t1", "-c4", "-d1s", "-R200", "--retries", "2"], "http"),
    "open-socket-errors": (
        ["--fault", "reset:0.1", "--fault", "garbage:0.05", "--fault", "huge-headers:0.05"],
        ["-t1", "-c4", "-d1s", "-R200"], "http"),
    "interrupted": ([], ["-t1", "-c2", "-d2s", "-R200"], "http"),
    "warmup": ([], ["-t1", "-c2", "-d1s", "-R200", "--warmup", "500ms"], "http"),
    "tls": (["--tls-self-signed"], ["-t1", "-c2", "-d1s", "-R200", "--no-keepalive", "--insecure"],
            "https"),
    "trace": ([], ["--schedule-in", "trace.txt", "-t1", "-c2", "--warmup", "200ms", "-d", "1s"], "http"),
    "slo": ([], ["-t1", "-c2", "-d1s", "-R1000", "--slo", "p99<=100ms", "--slo", "errors==0"], "http"),
    "pinned": ([], ["--pin", "-c2", "-d1s", "-R200"], "http"),
}
INTERRUPT_AFTER_S = 0.8  # interrupted.json: SIGINT this long after the start (exit 130)


def make(binary, name, scratch):
    serve_args, run_args, scheme = REPORTS[name]
    out = name + ".json"
    with harness.punctual_serve(binary, *serve_args) as serve:
        url = f"{scheme}://127.0.0.1:{serve.port}/"
        cmd = ["punctual", "run", *run_args, "--json", out, url]
        proc = subprocess.Popen(cmd, executable=binary, cwd=scratch, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        if name == "interrupted":
            time.sleep(INTERRUPT_AFTER_S)
            proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    if proc.returncode not in (0, 4, 130):
        raise SystemExit(f"{name}: run exited {proc.returncode}: {err}")
    with open(os.path.join(scratch, out), encoding="utf-8") as f:
        report = json.load(f)
    with open(os.path.join(HERE, out), "w", encoding="utf-8") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    valid = report["validity"]["valid"]
    print(f"{name}: exit {proc.returncode}, {'valid' if valid else 'INVALID'}", flush=True)


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    names = sys.argv[2:] or list(REPORTS)
    with tempfile.TemporaryDirectory(prefix="punctual-reports-") as scratch:
        with open(os.path.join(scratch, "trace.txt"), "w", encoding="utf-8") as f:
            f.writelines(f"{i * 5_000_000}\n" for i in range(300))
        for name in names:
            make(binary, name, scratch)


if __name__ == "__main__":
    main()
