"""The Jobs `punctual k8s-manifest` prints, played as local processes against `punctual serve`.

Usage: python3 test_k8s_local.py PATH_TO_PUNCTUAL

Kubernetes cannot run here, so this test does what the cluster would: it starts the shard Job's
container command with its args once per completion index (JOB_COMPLETION_INDEX, as an Indexed
Job sets it), with the results volume's /results mapped to a scratch directory, then the merge
Job's init container (the wait for every shard's report) and its container. What it proves is
that the manifest's own command lines, not ones the test writes, make one run: every shard pod
ends with 0 (its wrapper maps exit 3 and 4 to 0), the wait finds every report, and the merge
judges the whole run with the run's --slo, its exit code the merged verdict's.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, check_eq  # noqa: E402

SHARDS = 3
RATE = 300
SLO = "p99<=2s"


def local(argv, results):
    """The container's argv with the results volume's mount point moved to `results`."""
    return [a.replace("/results", results, 1) if a.startswith("/results") else a for a in argv]


def pod_env(bin_dir, index=None):
    env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))
    if index is not None:
        env["JOB_COMPLETION_INDEX"] = str(index)
    return env


def containers(job, key="containers"):
    return job["spec"]["template"]["spec"][key]


def play(binary, folder):
    bin_dir = os.path.join(folder, "bin")  # the image's PATH: `punctual` by name
    os.makedirs(bin_dir)
    os.symlink(os.path.abspath(binary), os.path.join(bin_dir, "punctual"))
    results = os.path.join(folder, "results")
    os.makedirs(results)
    with harness.punctual_serve(binary, "--duration", "60s") as serve:
        made = subprocess.run([binary, "k8s-manifest", "--shards", str(SHARDS), "--name", "local-e2e",
                               "--lead-time", "3s", "-t1", "-c2", "-R", str(RATE), "-d", "1s",
                               "--slo", SLO, serve.url("/")],
                              capture_output=True, text=True, timeout=10)
        check_eq(made.returncode, 0, f"k8s-manifest exit code ({made.stderr!r})")
        shard_job, merge_job = [d for d in yaml.safe_load_all(made.stdout) if d is not None]
        shard = containers(shard_job)[0]
        pods = [subprocess.Popen(local(shard["command"] + shard["args"], results),
                                 env=pod_env(bin_dir, i), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
                for i in range(shard_job["spec"]["completions"])]
        for i, pod in enumerate(pods):
            out, err = pod.communicate(timeout=30)
            check_eq(pod.returncode, 0, f"shard pod {i} exit code (stderr {err[-400:]!r})")
    wait = containers(merge_job, "initContainers")[0]
    waited = subprocess.run(local(wait["command"], results) + local(wait.get("args", []), results),
                            env=pod_env(bin_dir), capture_output=True, text=True, timeout=30)
    check_eq(waited.returncode, 0, f"wait-for-shards exit code ({waited.stderr!r})")
    merge = containers(merge_job)[0]
    merged = subprocess.run(local(merge["command"] + merge["args"], results), env=pod_env(bin_dir),
                            capture_output=True, text=True, timeout=60)
    return merged, os.path.join(results, "local-e2e")


def check_jobs(binary):
    folder = tempfile.mkdtemp(prefix="punctual-k8s-local-")
    try:
        merged, run_dir = play(binary, folder)
        files = sorted(os.listdir(run_dir))
        for i in range(SHARDS):
            check(f"shard-{i}-of-{SHARDS}.json" in files and f"shard-{i}-of-{SHARDS}.hlog" in files,
                  f"shard {i}'s report and log in {files}")
        report = harness.load_report(os.path.join(run_dir, "merged.json"))
        check("merged.html" in files, f"merged.html in {files}")
        harness.assert_denominator(report)
        check_eq(report["schedule"]["planned"], RATE, "merged planned: the whole plan (1 s at -R)")
        check_eq(len(report["shards"]), SHARDS, "shards in the merged report")
        check_eq(sum(s["planned"] for s in report["shards"]), RATE, "the shards' planned counts")
        check_eq([r["expression"] for r in report["slo"]["results"]], [SLO], "the run's --slo, judged on the merge")
        slo_failed = any(not r["pass"] for r in report["slo"]["results"])
        service_failed = any(r["service_time_fails"] for r in report["slo"]["results"])
        expected = 3 if service_failed else 4 if not report["validity"]["valid"] else 3 if slo_failed else 0
        check_eq(merged.returncode, expected,
                 f"the merge's exit code against its verdict (valid {report['validity']['valid']}, "
                 f"slo failed {slo_failed}; stderr {merged.stderr[-300:]!r})")
        check("merged 3 shards" in merged.stdout, f"the merge's text: {merged.stdout[:200]!r}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main():
    binary = harness.binary_from_argv()
    checks = harness.Checks("k8s-manifest played locally")
    checks.run(f"{SHARDS} shard pods, the wait and the merge, from the manifest's own commands",
               check_jobs, binary)
    checks.finish()


if __name__ == "__main__":
    main()
