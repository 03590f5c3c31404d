"""`punctual k8s-manifest`: the Jobs of a sharded run, as YAML.

Usage: python3 test_k8s_manifest.py PATH_TO_PUNCTUAL

Checks the refusals (exit 2, one line on stderr, nothing on stdout), what the
manifest holds (the user's run options verbatim and in order, then --shard env/N,
an RFC 3339 --start-at lead-time from now, and --out-dir; resources from -t; the
merge Job's inputs), that every argument survives the YAML (a YAML 1.1 reader,
PyYAML, parses it back to the same bytes), that the two shell scripts it embeds
do what they say under /bin/sh, and that deploy/kubernetes/ holds what the
generator prints for the command its comment names.
"""

import calendar
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import time

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, check_eq  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEPLOY = os.path.join(ROOT, "deploy", "kubernetes")
URL = "http://my-service.default.svc:8080/"  # in-cluster: it need not resolve here
SETTLE_S = 600  # what the deadline allows beyond the run for scheduling, pulls and writes
RFC3339_MS = re.compile(r"^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)\.(\d{3})Z$")


def punctual(binary, argv, timeout=10):
    return subprocess.run([binary, *argv], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, errors="surrogateescape")


def manifest(binary, argv):
    """(shard Job, merge Job, seconds before, seconds after) of a k8s-manifest call that works."""
    before = time.time()
    proc = punctual(binary, ["k8s-manifest", *argv])
    after = time.time()
    check_eq(proc.returncode, 0, f"k8s-manifest {argv} exit code (stderr {proc.stderr!r})")
    check_eq(proc.stderr, "", "stderr of a manifest that works")
    docs = [d for d in yaml.safe_load_all(proc.stdout) if d is not None]
    check_eq([d["kind"] for d in docs], ["Job", "Job"], "documents")
    return docs[0], docs[1], before, after


def container(job, init=False):
    spec = job["spec"]["template"]["spec"]
    containers = spec["initContainers"] if init else spec["containers"]
    check_eq(len(containers), 1, "containers in the pod")
    return containers[0]


def unix_seconds(text):
    m = RFC3339_MS.match(text)
    check(m, f"--start-at {text!r} is not RFC 3339 UTC with milliseconds")
    y, mo, d, h, mi, s, ms = (int(g) for g in m.groups())
    return calendar.timegm((y, mo, d, h, mi, s)) + ms / 1000


# ---------------------------------------------------------------------------
# Refusals

def refusal_cases(folder):
    """(name, argv after k8s-manifest, text the one error line must contain)."""
    ok = ["--shards", "3", "-R", "1000", "-d", "30s"]
    return [
        ("--shards 0", ["--shards", "0", "-R", "1000", URL], "--shards"),
        ("no --shards", ["-R", "1000", URL], "--shards is required"),
        ("--shards beyond the shard limit", ["--shards", "200000", "-R", "1000", URL], "200000"),
        ("--shard given", [*ok, "--shard", "0/3", URL], "--shard: k8s-manifest sets"),
        ("--shard=env/3 given", [*ok, "--shard=env/3", URL], "--shard: k8s-manifest sets"),
        ("--start-at given", [*ok, "--start-at", "2026-12-01T05:00:00Z", URL], "--start-at: k8s-manifest"),
        ("--out-dir given", [*ok, "--out-dir", folder, URL], "--out-dir: k8s-manifest sets"),
        ("--json given", [*ok, "--json", os.path.join(folder, "x.json"), URL], "--json: k8s-manifest"),
        ("--json - given", [*ok, "--json", "-", URL], "--json: k8s-manifest sets"),
        ("--hlog given", [*ok, "--hlog", os.path.join(folder, "x.hlog"), URL], "--hlog: k8s-manifest"),
        ("--html given", [*ok, "--html", os.path.join(folder, "x.html"), URL], "--html: k8s-manifest"),
        ("name with capitals", [*ok, "--name", "Load-Test", URL], "--name 'Load-Test'"),
        ("name with underscore", [*ok, "--name", "load_test", URL], "--name 'load_test'"),
        ("name starting with -", [*ok, "--name=-load", URL], "--name '-load'"),
        ("name of 58 characters", [*ok, "--name", "a" * 58, URL], "at most 57"),
        ("namespace with a dot", [*ok, "--namespace", "a.b", URL], "--namespace 'a.b'"),
        ("claim with capitals", [*ok, "--claim", "Results", URL], "--claim 'Results'"),
        ("memory 0", [*ok, "--memory", "0Mi", URL], "--memory '0Mi'"),
        ("memory MB", [*ok, "--memory", "512MB", URL], "--memory '512MB'"),
        ("image with a space", [*ok, "--image", "punctual 0.1", URL], "--image 'punctual 0.1'"),
        ("cpu 0", [*ok, "--cpu", "0", URL], "--cpu"),
        ("lead time 0", [*ok, "--lead-time", "0s", URL], "--lead-time: must be more than 0"),
        ("lead time not a duration", [*ok, "--lead-time", "soon", URL], "soon"),
        ("lead time within the warm-up", [*ok, "--warmup", "2m", URL],
         "--lead-time 2m must be longer than --warmup 2m"),
        ("closed model (no schedule to shard)", ["--shards", "2", "--model", "closed", "-d", "1s", URL],
         "the closed model has no schedule to share out"),
        ("missing --requests file", [*ok, "--requests", os.path.join(folder, "none.yaml"), URL], "none.yaml"),
        ("unknown option", [*ok, "--bogus", URL], "--bogus"),
        ("header not UTF-8", [*ok, "-H", "X-A: caf\udce9", URL], "is not UTF-8 text"),
    ]


# Options `punctual run` refuses: k8s-manifest must refuse them with run's very line.
RUN_REFUSES = [
    ["-R", "1000", "-d", "30s", "-t", "4", "-c", "2"],
    ["-R", "abc", "-d", "30s"],
    ["-d", "30s"],
    ["-R", "1000", "-d", "30s", "--timeout", "0s"],
    ["-R", "1000", "-d", "30s", "--retries", "1", "--retry-on", "5xx,404"],
    ["-R", "1000", "-d", "30s", "--slo", "p99<=banana"],
    ["-R", "1000", "-d", "30s", "--expected-interval", "1ms"],
]


def check_refused(binary, argv, needle):
    proc = punctual(binary, ["k8s-manifest", *argv])
    actual = f"exit {proc.returncode}, stdout {proc.stdout[:200]!r}, stderr {proc.stderr!r}"
    check_eq(proc.returncode, 2, f"exit code ({actual})")
    lines = proc.stderr.splitlines()
    check(len(lines) == 1 and lines[0].startswith("punctual: "), f"expected one error line ({actual})")
    check(needle in lines[0], f"error line lacks {needle!r}: {lines[0]!r}")
    check_eq(proc.stdout, "", "stdout of a refusal")


def check_refused_as_run(binary, options, url):
    ours = punctual(binary, ["k8s-manifest", "--shards", "2", *options, url])
    theirs = punctual(binary, ["run", *options, url])
    check_eq(theirs.returncode, 2, f"punctual run {options} exit code (stderr {theirs.stderr!r})")
    check_eq(ours.returncode, 2, f"k8s-manifest exit code (stderr {ours.stderr!r})")
    check_eq(ours.stderr, theirs.stderr, "k8s-manifest's error line against run's")
    check_eq(ours.stdout, "", "stdout of a refusal")


# ---------------------------------------------------------------------------
# What the manifest holds

def check_run_args(binary):
    """The user's run options in order; k8s-manifest's own options, in any form, are not among them."""
    run_opts = ["-R", "1000", "-d", "30s", "--warmup", "5s", "-t", "3", "-c", "30",
                "--slo", "p99<=200ms", "--slo", "errors<=0.1%", URL]
    own = ["--name", "checkout-7", "--lead-time=90s", "--image", "registry.example/punctual:9",
           "--claim=results.shared", "--memory", "1Gi", "--namespace", "load"]
    argv = ["--shards", "4", *run_opts[:4], *own[:5], *run_opts[4:10], *own[5:], *run_opts[10:]]
    shard, merge, before, after = manifest(binary, argv)
    args = container(shard)["args"]
    check_eq(args[0], "run", "the shards' subcommand")
    check_eq(args[1:1 + len(run_opts)], run_opts, "the user's run options, in order")
    tail = args[1 + len(run_opts):]
    check_eq(len(tail), 6, f"options after the user's: {tail}")
    check_eq(tail[0:2], ["--shard", "env/4"], "--shard")
    check_eq(tail[2], "--start-at", "--start-at")
    start = unix_seconds(tail[3])
    check(before + 90 - 1 <= start <= after + 90 + 1,
          f"--start-at {tail[3]} is not 90 s (--lead-time) after the call ({before:.3f}..{after:.3f})")
    check_eq(tail[4:6], ["--out-dir", "/results/checkout-7"], "--out-dir")
    # The merge: every shard's report, then the outputs, then the user's --slo.
    files = [f"/results/checkout-7/shard-{i}-of-4.json" for i in range(4)]
    check_eq(container(merge)["args"], ["merge", *files, "-o", "/results/checkout-7/merged.json",
                                        "--html", "/results/checkout-7/merged.html",
                                        "--slo", "p99<=200ms", "--slo", "errors<=0.1%"], "merge args")
    for job in (shard, merge):
        check_eq(job["metadata"]["namespace"], "load", "namespace")
        check_eq(container(job)["image"], "registry.example/punctual:9", "image")
        check_eq(container(job)["resources"]["requests"]["memory"], "1Gi", "memory request")
        check_eq(job["spec"]["template"]["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"],
                 "results.shared", "claim")
    check_eq(merge["metadata"]["name"], "checkout-7-merge", "merge Job name")
    deadline = 90 + 30 + 10 + SETTLE_S  # lead + window + default --timeout (the warm-up is in the lead)
    check_eq(shard["spec"]["activeDeadlineSeconds"], deadline, "shards' deadline")
    check_eq(container(merge, init=True)["command"][-3:], ["/results/checkout-7", "4", str(deadline)],
             "wait-for-shards arguments")


def check_job_shape(binary):
    """Indexed, N at once, never retried; resources from -t; the defaults."""
    for threads, shards in ((1, 1), (3, 5)):
        shard, merge, before, after = manifest(
            binary, ["--shards", str(shards), "-t", str(threads), "-c", "10", "-R", "100", "-d", "10s", URL])
        spec = shard["spec"]
        check_eq(spec["completionMode"], "Indexed", "completionMode")
        check_eq((spec["parallelism"], spec["completions"]), (shards, shards), "parallelism, completions")
        check_eq(spec["backoffLimit"], 0, "backoffLimit")
        check_eq(merge["spec"]["backoffLimit"], 0, "merge backoffLimit")
        for job in (shard, merge):
            check_eq(job["spec"]["template"]["spec"]["restartPolicy"], "Never", "restartPolicy")
            check("namespace" not in job["metadata"], "namespace without --namespace")
            check_eq(job["spec"]["template"]["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"],
                     "punctual-results", "default claim")
        c = container(shard)
        want = {"cpu": str(threads), "memory": "512Mi"}
        check_eq(c["resources"], {"requests": want, "limits": want}, f"resources with -t {threads}")
        check_eq(c["image"], "punctual:0.1.0", "default image")
        check_eq(c["volumeMounts"], [{"name": "results", "mountPath": "/results"}], "mount")
        name = shard["metadata"]["name"]
        m = re.fullmatch(r"punctual-(\d{8}-\d{6})", name)
        check(m, f"default name {name!r}")
        stamp = calendar.timegm(time.strptime(m.group(1), "%Y%m%d-%H%M%S"))
        check(int(before) - 1 <= stamp <= after + 1, f"default name {name} is not the UTC time of the call")
        check_eq(c["args"][-1], f"/results/{name}", "--out-dir of the default name")
    shard, _, _, _ = manifest(binary, ["--shards", "2", "-t", "2", "-c", "4", "--cpu", "3", "-R", "10", URL])
    check_eq(container(shard)["resources"]["limits"]["cpu"], "3", "--cpu overrides -t")


def check_targets(binary, folder):
    """In-cluster names, address literals and a scenario's target all pass without DNS."""
    scenario = os.path.join(folder, "journeys.yaml")
    with open(scenario, "w", encoding="utf-8") as f:
        f.write("target: http://checkout.shop.svc.cluster.local:8080\nphases:\n"
                "  - {duration: 10s, arrival_rate: 5}\n"
                "scenarios:\n  - name: s\n    steps:\n      - {name: a, path: /}\n")
    for target in (["https://api.internal.invalid/"], ["http://[fd00::1]:8080/"],
                   ["http://10.0.0.7:8080/"], ["--scenario", scenario]):
        rate = [] if target[0] == "--scenario" else ["-R", "100"]
        shard, _, _, _ = manifest(binary, ["--shards", "2", *rate, *target])
        check_eq(container(shard)["args"][1:1 + len(rate) + len(target)], [*rate, *target],
                 f"run args for {target}")


def check_double_dash(binary):
    """After "--" every token is a positional to CLI11: the added options go before it."""
    shard, _, _, _ = manifest(binary, ["--shards", "2", "-R", "10", "--", URL])
    args = container(shard)["args"]
    check_eq(args[-2:], ["--", URL], "the URL after --")
    check_eq(args[3:5], ["--shard", "env/2"], "--shard before --")


def check_round_trip(binary):
    """Quotes, backslashes, controls and YAML 1.1 line breaks come back as the same bytes."""
    header = 'X-Odd: "a\\b" caf\u00e9 #x {y} [z] &*!|> %s: - ? @`'
    body = "line 1\n\tline 2 \u2028 \u2029 \u0085 \u00a0 \u0007 \ufeff end\\"
    shard, _, _, _ = manifest(binary, ["--shards", "2", "-R", "10", "-H", header, "--body", body,
                                       "-m", "POST", URL])
    args = container(shard)["args"]
    check_eq(args[args.index("-H") + 1], header, "header")
    check_eq(args[args.index("--body") + 1], body, "body")


# ---------------------------------------------------------------------------
# The embedded shell scripts, run as the pods would run them

def check_wait_script(binary, folder):
    _, merge, _, _ = manifest(binary, ["--shards", "3", "-R", "10", URL])
    command = container(merge, init=True)["command"]
    check_eq(command[:2], ["/bin/sh", "-c"], "wait-for-shards runs a shell")
    script = command[2]
    run_dir = os.path.join(folder, "run")
    os.makedirs(run_dir)
    for i in (0, 2):
        open(os.path.join(run_dir, f"shard-{i}-of-3.json"), "w").close()
    proc = subprocess.run(["/bin/sh", "-c", script, "wait-for-shards", run_dir, "3", "0"],
                          capture_output=True, text=True, timeout=10)
    check_eq(proc.returncode, 1, f"one report missing, no time left (stderr {proc.stderr!r})")
    check("1 of 3 shard reports missing" in proc.stderr, f"message: {proc.stderr!r}")
    open(os.path.join(run_dir, "shard-1-of-3.json"), "w").close()
    started = time.monotonic()
    proc = subprocess.run(["/bin/sh", "-c", script, "wait-for-shards", run_dir, "3", "60"],
                          capture_output=True, text=True, timeout=10)
    check_eq(proc.returncode, 0, f"all three reports there (stderr {proc.stderr!r})")
    check(time.monotonic() - started < 2, "it waited although every report was there")


def check_shard_script(binary, folder):
    """Exit 3 and 4 leave a report: the pod ends with 0. Others pass through. "$@" is kept."""
    shard, _, _, _ = manifest(binary, ["--shards", "2", "-R", "10", URL])
    command = container(shard)["command"]
    bin_dir = os.path.join(folder, "bin")
    os.makedirs(bin_dir)
    fake = os.path.join(bin_dir, "punctual")
    with open(fake, "w", encoding="utf-8") as f:
        f.write('#!/bin/sh\nprintf "%s\\n" "$@" > "$ARGS_OUT"\nexit "$FAKE_EXIT"\n')
    os.chmod(fake, os.stat(fake).st_mode | stat.S_IXUSR)
    args = ["run", "-H", "X-A: two words", "", URL]
    for code, expected in ((0, 0), (1, 1), (2, 2), (3, 0), (4, 0), (130, 130)):
        out = os.path.join(folder, f"args-{code}")
        env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ["PATH"],
                   FAKE_EXIT=str(code), ARGS_OUT=out)
        proc = subprocess.run([*command, *args], capture_output=True, text=True, timeout=10, env=env)
        check_eq(proc.returncode, expected, f"pod exit for punctual exit {code} (stderr {proc.stderr!r})")
        with open(out, encoding="utf-8") as f:
            check_eq(f.read().split("\n")[:-1], args, "arguments punctual received")


# ---------------------------------------------------------------------------
# deploy/kubernetes/ against the generator

def documented_command():
    """The k8s-manifest command shards-job.yaml's comment names (its '#   ' lines)."""
    with open(os.path.join(DEPLOY, "shards-job.yaml"), encoding="utf-8") as f:
        lines = f.read().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("#   punctual k8s-manifest"))
    text = ""
    for line in lines[start:]:
        text += line[1:].strip() + " "
        if not line.rstrip().endswith("\\"):
            break
    words = shlex.split(text.replace("\\ ", " "))
    check_eq(words[:2], ["punctual", "k8s-manifest"], "documented command")
    return words[2:]


def without_start_at(job):
    """The Job with its --start-at value masked: the one value that depends on the clock."""
    for c in job["spec"]["template"]["spec"]["containers"]:
        args = c.get("args", [])
        if "--start-at" in args:
            args[args.index("--start-at") + 1] = "START"
    return job


def check_examples(binary):
    shard, merge, _, _ = manifest(binary, documented_command())
    for path, generated in (("shards-job.yaml", shard), ("merge-job.yaml", merge)):
        with open(os.path.join(DEPLOY, path), encoding="utf-8") as f:
            example = [d for d in yaml.safe_load_all(f) if d is not None]
        check_eq(len(example), 1, f"{path} documents")
        check_eq(without_start_at(example[0]), without_start_at(generated),
                 f"{path} against what k8s-manifest prints")


def main():
    binary = harness.binary_from_argv()
    folder = tempfile.mkdtemp(prefix="punctual-k8s-")
    checks = harness.Checks("k8s-manifest")
    for name, argv, needle in refusal_cases(folder):
        checks.run(f"refused: {name}", check_refused, binary, argv, needle)
    loopback = f"http://127.0.0.1:{harness.closed_port()}/"
    for options in RUN_REFUSES:
        checks.run(f"refused as run refuses it: {' '.join(options)}", check_refused_as_run, binary,
                   options, loopback)
    checks.run("run args: the user's in order, then --shard, --start-at, --out-dir", check_run_args, binary)
    checks.run("Job shape, resources from -t, defaults", check_job_shape, binary)
    checks.run("targets need no DNS here", check_targets, binary, folder)
    checks.run("added options go before --", check_double_dash, binary)
    checks.run("arguments survive the YAML byte for byte", check_round_trip, binary)
    checks.run("wait-for-shards script under /bin/sh", check_wait_script, binary, folder)
    checks.run("shard script: exit 3 and 4 end the pod with 0", check_shard_script, binary, folder)
    checks.run("deploy/kubernetes examples match the generator", check_examples, binary)
    shutil.rmtree(folder, ignore_errors=True)
    checks.finish()


if __name__ == "__main__":
    main()
